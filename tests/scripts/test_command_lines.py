"""Every script in scripts/ refuses an option it does not know, a prefix of one included, in one line naming the
option meant, with exit code 2 and no traceback, as td3x's commands do (argparse alone would take ``--seed`` for
``--seeds`` and print its whole usage on an error)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
# script -> (its arguments with a prefix of one of its options, the option meant); the rest valid where required
PREFIXES = {
    "aggregate_coverage.py": (["--replicate", "5"], "--replicates"),
    "bench_denormals.py": (["--update", "5"], "--updates"),
    "bench_rows.py": (["--repeat", "3"], "--repeats"),
    "bench_gpu.py": (["--device", "cpu", "--block", "3"], "--blocks"),
    "bench_numerics.py": (["--pair", "3"], "--pairs"),
    "bench_sps.py": (["--repeat", "3"], "--repeats"),
    "profile_update.py": (["--update", "5"], "--updates"),
    "publishable_provenance.py": (["runs", "--this-machin"], "--this-machine"),
    "sb3_reference.py": (["--env", "hopper", "--out", "runs", "--seed", "3"], "--seeds"),
}


def test_every_script_with_options_is_listed() -> None:
    with_options = {path.name for path in SCRIPTS.glob("*.py") if "add_argument(" in path.read_text()}
    assert with_options == set(PREFIXES)


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(PREFIXES))
def test_a_prefix_of_an_option_is_refused_in_one_line(script: str, tmp_path: Path) -> None:
    arguments, meant = PREFIXES[script]
    typed = next(argument for argument in arguments if meant.startswith(argument) and argument != meant)
    result = subprocess.run(
        [sys.executable, str(SCRIPTS / script), *arguments], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        f"{script}: error: {typed} is not an option; did you mean {meant}? (see {script} --help)"
    ]
    assert list(tmp_path.iterdir()) == []
