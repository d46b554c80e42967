"""scripts/bench_rows.py, each Table 2 row's cost against the TD3 row: the costs, its refusals, and a short run."""

from __future__ import annotations

import argparse
import subprocess
import sys
from types import ModuleType

import pytest
from helpers.scripts import SCRIPTS, load_script


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(SCRIPTS))  # it imports bench_sps from beside it
    return load_script("bench_rows")


def test_a_row_costs_the_td3_rows_rate_over_its_own_in_the_same_repetition(bench: ModuleType) -> None:
    costs = bench.costs({"none": [100.0, 50.0], "dq_ac": [50.0, 40.0], "ddpg": [200.0, 50.0]})
    assert costs == {"none": [1.0, 1.0], "dq_ac": [2.0, 1.25], "ddpg": [0.5, 1.0]}


def test_the_default_rows_are_table2s_eleven_in_its_order(bench: ModuleType) -> None:
    rows = bench.TABLE2_ROWS
    assert rows[0] == bench.TD3_ROW and rows[-1] == "ddpg" and len(set(rows)) == 11


def test_each_problem_of_a_command_line_is_one_line(bench: ModuleType) -> None:
    args = argparse.Namespace(env="walk", rows=["none", "nodelay"], seeds=0, steps=300, repeats=1)
    problems = bench.argument_problems(args)
    assert [problem.split(":")[0:2] for problem in problems] == [
        ["--env", " walk is not an option of conf/env"],
        ["--rows", " nodelay is not an option of conf/ablation"],
        ["--seeds", " 0 is not a positive count"],
    ]
    assert bench.argument_problems(argparse.Namespace(env="hopper", rows=["ddpg"], seeds=1, steps=1, repeats=1)) == []


@pytest.mark.slow
def test_a_short_run_prints_each_rows_cost_and_their_sum() -> None:
    arguments = ["--env", "pendulum", "--seeds", "1", "--steps", "3", "--repeats", "2", "--rows", "ddpg"]
    result = subprocess.run(
        [sys.executable, "bench_rows.py", *arguments], cwd=SCRIPTS, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    table = [line.split() for line in result.stdout.splitlines() if line.startswith(("TD3 ", "DDPG "))]
    assert [row[:2] for row in table] == [["TD3", "none"], ["DDPG", "ddpg"]]
    assert table[0][3] == "1.00" and all(float(row[2]) > 0 and float(row[3]) > 0 for row in table)
    total = float(result.stdout.splitlines()[-1].split(" cost ")[1].split()[0])
    assert total == pytest.approx(sum(float(row[3]) for row in table), abs=0.015)
