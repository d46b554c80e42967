"""scripts/bench_sps.py, the per-core benchmark against Stable-Baselines3, at a few steps: its table and a profile
per precision asked for."""

from __future__ import annotations

import subprocess
import sys
from types import ModuleType

import pytest
import torch
from helpers.scripts import SCRIPTS, load_script

from td3x.algo.precision import problems
from td3x.config.enums import Precision
from td3x.host.provenance import cpu_flags


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(SCRIPTS))  # it imports cleanrl_reference from beside it
    return load_script("bench_sps")


def test_bf16_rates_are_set_against_fp32_of_the_same_repetition_preset_and_k(bench: ModuleType) -> None:
    cell = bench.Cell
    fp32_k1, fp32_k10 = cell("td3", 1, 1, "fp32", [100.0, 50.0]), cell("td3", 1, 10, "fp32", [200.0, 100.0])
    bf16_k1, bf16_k10 = cell("td3", 1, 1, "bf16", [150.0, 60.0]), cell("td3", 1, 10, "bf16", [320.0, 180.0])
    lone_bf16 = cell("td3_paper", 1, 10, "bf16", [300.0, 300.0])  # no fp32 partner measured: no row
    rows = bench.precision_rows([fp32_k1, bf16_k1, fp32_k10, bf16_k10, lone_bf16])
    assert [(row_cell, ratios) for row_cell, ratios in rows] == [(bf16_k1, [1.5, 1.2]), (bf16_k10, [1.6, 1.8])]
    assert bench.precision_rows([fp32_k1, fp32_k10]) == []


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
    *rows, over_fp32 = [line.split() for line in result.stdout.splitlines() if line.startswith("td3_paper ")]
    assert [" ".join(row[1:-8]) for row in rows] == ["fp32", bf16]
    for row in rows:
        td3x_rate, sb3_rate, ratio = (float(cell) for cell in row[-6:-3])
        assert td3x_rate > 0 and sb3_rate > 0 and ratio == pytest.approx(td3x_rate / sb3_rate, abs=0.01)
    fp32_rate, bf16_rate = (float(row[-6]) for row in rows)
    assert " ".join(over_fp32[1:-4]) == bf16 and float(over_fp32[-2]) == pytest.approx(bf16_rate / fp32_rate, abs=0.01)
    profiles = [line for line in result.stdout.splitlines() if line.startswith("where a loop step's time goes")]
    assert [line.split(", ")[1] for line in profiles] == ["fp32", bf16]
