"""scripts/bench_sps.py, the per-core benchmark against Stable-Baselines3, at a few steps: its table and a profile
per precision asked for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from td3x.algo.precision import problems
from td3x.config.enums import Precision
from td3x.host.provenance import cpu_flags

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.mark.slow
def test_the_table_has_a_row_per_precision_and_each_precision_is_profiled() -> None:
    arguments = ["--seeds", "1", "--threads", "1", "--presets", "td3_paper", "--precisions", "fp32", "bf16"]
    arguments += ["--steps", "4", "--sb3-steps", "4", "--repeats", "1", "--no-sb3-two"]
    result = subprocess.run(
        [sys.executable, "bench_sps.py", *arguments], cwd=SCRIPTS, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    assert "denormals flushed to zero, as td3x-train does" in result.stdout.splitlines()[0]
    bf16 = "bf16 (emulated)" if problems(Precision.bf16, torch.device("cpu"), cpu_flags()) else "bf16"
    rows = [line.split() for line in result.stdout.splitlines() if line.startswith("td3_paper ")]
    assert [" ".join(row[1:-8]) for row in rows] == ["fp32", bf16]
    for row in rows:
        td3x_rate, sb3_rate, ratio = (float(cell) for cell in row[-6:-3])
        assert td3x_rate > 0 and sb3_rate > 0 and ratio == pytest.approx(td3x_rate / sb3_rate, abs=0.01)
    profiles = [line for line in result.stdout.splitlines() if line.startswith("where a loop step's time goes")]
    assert [line.split(", ")[1] for line in profiles] == ["fp32", bf16]
