"""td3x.analysis.stats.power, the power arithmetic of the report and registration files' plans: Welch's power
and MDD give the textbook answers, TOST's power matches a simulation of Welch TOST and has the normal limit and its
size at the bound."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from td3x.analysis.stats import power


def test_welch_power_matches_the_textbook_two_sample_t_test() -> None:
    # Cohen's d = 0.5, 64 per group, two-sided alpha 0.05: power 0.8015 (G*Power, statsmodels' TTestIndPower)
    assert power.welch_power(0.5, 1.0, 64, 1.0, 64, 0.05) == pytest.approx(0.8015, abs=5e-4)
    # d = 0.8, 26 per group: 0.807
    assert power.welch_power(0.8, 1.0, 26, 1.0, 26, 0.05) == pytest.approx(0.807, abs=1e-3)
    assert power.welch_power(0.0, 1.0, 10, 2.0, 5, 0.05) == pytest.approx(0.05, abs=1e-12)  # the size, at no effect
    assert power.mdd(1.0, 64, 1.0, 64, 0.05, 0.8) == pytest.approx(0.4991, abs=5e-4)


def test_tost_power_matches_a_simulation_of_welch_tost() -> None:
    rng = np.random.default_rng(0)
    sims, n_x, n_y, sd_x, sd_y, bound, alpha = 100_000, 10, 14, 287.7, 607.2, 645.0, 0.025
    x = rng.normal(0.0, sd_x, (sims, n_x))
    y = rng.normal(0.0, sd_y, (sims, n_y))
    vx, vy = x.var(axis=1, ddof=1) / n_x, y.var(axis=1, ddof=1) / n_y
    df = (vx + vy) ** 2 / (vx**2 / (n_x - 1) + vy**2 / (n_y - 1))
    half = stats.t.ppf(1 - alpha, df) * np.sqrt(vx + vy)
    difference = x.mean(axis=1) - y.mean(axis=1)
    simulated = np.mean((difference - half > -bound) & (difference + half < bound))
    assert power.tost_power(0.0, bound, sd_x, n_x, sd_y, n_y, alpha) == pytest.approx(simulated, abs=0.005)


def test_tost_power_has_the_normal_limit_and_its_size_at_the_bound() -> None:
    se = power.welch_se(1.0, 5000, 1.0, 5000)
    z = stats.norm.ppf(0.95)
    normal_limit = 2 * stats.norm.cdf(0.05 / se - z) - 1
    assert power.tost_power(0.0, 0.05, 1.0, 5000, 1.0, 5000, 0.05) == pytest.approx(normal_limit, abs=1e-3)
    at_bound = power.tost_power(1.0, 1.0, 1.0, 200, 1.0, 200, 0.05)  # true difference on the bound: the size
    assert 0.045 < at_bound <= 0.05
    # a bound a tenth of an SD wide at 5 a side: only samples with almost no spread fit their interval inside it
    assert power.tost_power(0.0, 0.1, 1.0, 5, 1.0, 5, 0.05) < 1e-6
    assert power.tost_power(0.0, 1.0, 1.0, 200, 1.0, 200, 0.05) > 0.9999  # a bound of 10 SEs: always claimed
