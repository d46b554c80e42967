"""scripts/bench_denormals.py on a short K-seeds run's checkpoint."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from helpers.runs import TINY_COMMAND_LINE

import td3x

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_denormals.py"


def test_it_counts_the_moments_and_times_both_modes_from_the_checkpoint(tmp_path: Path) -> None:
    overrides = [*TINY_COMMAND_LINE, "run.num_seeds=2", "run.keep_buffer=true"]
    td3x.train(td3x.compose(overrides), str(tmp_path / "run"))  # keep_buffer: the checkpoint keeps Adam's moments
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "run"), "--updates", "2"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    for name in ("actor_optimizer", "critic_optimizer"):
        assert re.search(rf"^{name}: \d+ of \d+ moment entries denormal", result.stdout, re.M), result.stdout
    assert re.search(r"^weights after 2 updates: \d+ of \d+ bit-identical between the two", result.stdout, re.M)
    assert re.search(r"^Pendulum-v1, K=2 seed\(s\), env step 300: kept / flushed = [\d.]+$", result.stdout, re.M)


def test_a_missing_checkpoint_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"bench_denormals: {tmp_path / 'checkpoint.pt'} does not exist (RUN_DIR must hold a td3x checkpoint.pt)"
    ]
