"""scripts/aggregate_coverage.py: its bootstrap is rliable's, its true values are right, a tiny run gives the
committed CSV's lines and true values, and the committed CSV is a coverage table with its arguments recorded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers.scripts import load_script
from rliable import metrics as rly_metrics

from td3x.analysis.stats.metrics import interval_estimates

coverage = load_script("aggregate_coverage")
COMMITTED = coverage.ROOT / coverage.OUT
KEY = ["report", "row", "reference", "envs", "seeds_per_env", "statistic", "interval"]


def test_the_vectorised_statistics_are_rliable_s() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(3, 5, 2)), rng.normal(0.3, 1.0, size=(3, 5, 2))
    assert coverage.iqm(x) == pytest.approx([rly_metrics.aggregate_iqm(sample) for sample in x])
    expected = [rly_metrics.probability_of_improvement(a, b) for a, b in zip(x, y, strict=True)]
    assert coverage.improvement(x, y) == pytest.approx(expected)


def test_the_vectorised_bootstrap_gives_rliable_s_interval() -> None:
    sample = np.random.default_rng(1).normal(size=(5, 2))
    reps = 20_000
    _, cis = interval_estimates({"x": sample}, lambda s: np.array([rly_metrics.aggregate_iqm(s)]), reps, 0)
    ours = coverage.percentile_interval(coverage.iqm(coverage.resample(sample, reps, np.random.default_rng(2))))
    assert ours == pytest.approx((cis["x"][0, 0], cis["x"][1, 0]), abs=0.03)  # two bootstraps' Monte Carlo error


def test_the_true_values() -> None:
    assert coverage.true_iqm(np.array([3.0]), np.array([2.0])) == pytest.approx(3.0)  # symmetric: the mean
    assert coverage.true_iqm(np.array([-1.0, 1.0]), np.array([1.0, 1.0])) == pytest.approx(0.0, abs=1e-9)
    means, sds = np.array([0.0, 4.0]), np.array([1.0, 3.0])
    rng = np.random.default_rng(3)
    draws = np.concatenate([rng.normal(m, s, 1_000_000) for m, s in zip(means, sds, strict=True)])
    low, high = np.quantile(draws, [0.25, 0.75])
    assert coverage.true_iqm(means, sds) == pytest.approx(draws[(draws > low) & (draws < high)].mean(), abs=0.01)
    same = coverage.Design("r", "x", ("a",), 5, np.array([1.0]), np.array([2.0]))
    assert coverage.true_improvement(same, same) == 0.5


def test_a_tiny_run_gives_the_committed_lines_and_true_values(tmp_path: Path) -> None:
    out = tmp_path / "coverage.csv"
    assert coverage.main(["--replicates", "3", "--reps", "50", "--out", str(out)]) == 0
    tiny, committed = pd.read_csv(out, keep_default_na=False), pd.read_csv(COMMITTED, keep_default_na=False)
    assert list(tiny.columns) == list(committed.columns) == coverage.COLUMNS
    assert tiny[KEY].equals(committed[KEY])
    assert tiny["true_value"].tolist() == committed["true_value"].tolist()  # read from the committed reports


def test_the_committed_csv_is_a_coverage_table_with_its_arguments() -> None:
    table = pd.read_csv(COMMITTED, keep_default_na=False)
    assert table["coverage"].between(0, 1).all() and (table["mc_se"] < 0.01).all()
    for column in ("replicates", "reps", "seed"):
        assert table[column].nunique() == 1
    assert table["replicates"].iloc[0] >= 1000 and table["reps"].iloc[0] == 2000
    # Student-t at one env is exact for normal scores: 95% within the simulation's error
    exact = table[(table["interval"] == coverage.STUDENT_T) & ~table["envs"].str.contains(" ")]
    assert not exact.empty and (abs(exact["coverage"] - 0.95) < 4 * exact["mc_se"] + 1e-3).all()
