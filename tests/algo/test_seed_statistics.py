"""The paper's last-10 metric and the Student-t interval: one definition, the same number for every user."""

from __future__ import annotations

import math

import numpy as np
import pytest

from td3x.algo.seed_statistics import last10_return, t_interval
from td3x.rundir.layout import RunSummary
from td3x.tuning.scores import METRICS, mean_interval

T_975_DF1 = 12.706205  # Student-t's 97.5% quantile with 1 degree of freedom (2 seeds), from any table


def test_last10_is_the_mean_of_the_last_ten_evaluations_or_of_all_of_a_shorter_run() -> None:
    returns = [float(i) for i in range(15)]  # 0..14: the last ten are 5..14
    assert float(last10_return(returns)) == 9.5
    assert float(last10_return([1.0, 2.0, 6.0])) == 3.0
    curves = np.array([returns, [2.0 * r for r in returns]])
    np.testing.assert_array_equal(last10_return(curves), [9.5, 19.0])  # per seed, along the evaluations


def test_the_summary_the_report_and_td3x_tune_score_a_run_alike(tmp_path) -> None:
    returns = list(np.random.default_rng(0).normal(100.0, 30.0, size=23))
    summary = RunSummary.of("complete", returns, 23_000, 20_000, 1.0, 0.9, tmp_path)
    assert summary.last10_return == METRICS["last10_return"](returns) == float(last10_return(np.array([returns]))[0])
    assert RunSummary.of("complete", [], 0, 0, 1.0, 0.9, tmp_path).last10_return is None


def test_t_interval_by_hand_and_its_float_form_for_td3x_tune() -> None:
    mean, low, high = t_interval(np.array([[1.0, 5.0], [3.0, 5.0]]))  # column 0: sd √2, standard error 1
    np.testing.assert_allclose([mean[0], low[0], high[0]], [2.0, 2.0 - T_975_DF1, 2.0 + T_975_DF1], rtol=1e-6)
    assert (low[1], high[1]) == (5.0, 5.0)  # no spread, no width
    assert mean_interval([1.0, 3.0]) == (float(mean[0]), float(low[0]), float(high[0]))
    one = mean_interval([4.0])
    assert one[0] == 4.0 and math.isnan(one[1]) and math.isnan(one[2])


def test_t_interval_is_nan_where_a_column_holds_a_nan() -> None:
    _, low, high = t_interval(np.array([[1.0, np.nan], [2.0, 3.0], [4.0, 5.0]]))
    assert np.isfinite(low[0]) and np.isnan(low[1]) and np.isnan(high[1])
    assert low[0] == pytest.approx(7 / 3 - 4.302653 * math.sqrt(7 / 3) / math.sqrt(3), rel=1e-6)
