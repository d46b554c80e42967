"""scripts/bench_gpu.py, the GPU benchmark, in its CPU mode: td3x's real update and loop, and the table it writes."""

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


def bench(*arguments: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "bench_gpu.py", *arguments]
    return subprocess.run(command, cwd=SCRIPTS, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_cpu_mode_measures_each_stack_precision_and_the_loop(tmp_path: Path) -> None:
    out = tmp_path / "table.md"
    arguments = ["--device", "cpu", "--seeds", "1", "2", "--compile", "off", "--updates", "2", "--blocks", "1"]
    result = bench(*arguments, "--loop-seeds", "1", "--loop-compile", "off", "--loop-steps", "5", "--out", str(out))
    assert result.returncode == 0, result.stderr
    table = out.read_text()
    assert table in result.stdout  # the same table printed and written
    emulated = " (emulated)" if problems(Precision.bf16, torch.device("cpu"), cpu_flags()) else ""
    update_rows = [line for line in table.splitlines() if line.startswith("| 1 |") or line.startswith("| 2 |")]
    labels = [tuple(cell.strip() for cell in row.split("|")[1:4]) for row in update_rows]
    assert labels == [
        ("1", "fp32", "off"),
        ("1", f"bf16{emulated}", "off"),
        ("2", "fp32", "off"),
        ("2", f"bf16{emulated}", "off"),
        ("1", "fp32", "off"),  # the loop's rows: K, precision, compiled
        ("1", "bf16", "off"),
    ]
    for row in update_rows[:4]:
        k, ms, updates_per_s, seed_updates_per_s = (float(row.split("|")[i]) for i in (1, 4, 5, 6))
        assert ms > 0 and abs(updates_per_s - 1e3 / ms) <= 1 and abs(seed_updates_per_s - k * 1e3 / ms) <= k


def test_cuda_without_a_gpu_is_refused_in_one_line() -> None:
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is here")
    result = bench("--device", "cuda")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "bench_gpu.py: error: --device cuda: torch sees no CUDA device here; use --device cpu (see bench_gpu.py --help)"
    ]
