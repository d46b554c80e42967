"""The spread tests of the registered comparisons (``test: spread``) and the seed-sources section's power:
Brown-Forsythe's two-sided test is scipy's Levene on the median, each half of its TOST is scipy's one-sided Welch
t-test of the deviations, and a tiny case is worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from td3x.analysis.stats.spread_tests import bf_one_sided_p, bf_p, bf_tost_p, deviations, welch_t_df

RNG = np.random.default_rng(7)
X, Y = RNG.normal(0.0, 1.0, (4, 8)), RNG.normal(3.0, 1.7, (4, 11))  # four replicates of 8 against 11 runs


def test_the_two_sided_brown_forsythe_p_is_scipys_levene_on_the_median() -> None:
    expected = [stats.levene(x, y, center="median").pvalue for x, y in zip(X, Y, strict=True)]
    assert bf_p(X, Y) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize(("ratio", "alternative"), [(2.0, "less"), (0.5, "greater"), (1.3, "less")])
def test_each_tost_half_is_scipys_one_sided_welch_test_of_the_deviations(ratio: float, alternative: str) -> None:
    expected = [
        stats.ttest_ind(deviations(x), ratio * deviations(y), equal_var=False, alternative=alternative).pvalue
        for x, y in zip(X, Y, strict=True)
    ]
    assert bf_one_sided_p(X, Y, ratio, alternative) == pytest.approx(expected, rel=1e-10)
    with pytest.raises(ValueError, match="alternative must be 'less' or 'greater'"):
        bf_one_sided_p(X, Y, ratio, "two-sided")


def test_the_tost_p_is_the_larger_half_row_by_row_and_one_sample_gives_one_number() -> None:
    halves = np.maximum(bf_one_sided_p(X, Y, 2.0, "less"), bf_one_sided_p(X, Y, 0.5, "greater"))
    assert bf_tost_p(X, Y, 0.5, 2.0).tolist() == halves.tolist()
    single = bf_tost_p(X[0], Y[0], 0.5, 2.0)
    assert single.shape == () and float(single) == halves[0]


def test_a_tiny_case_by_hand() -> None:
    # deviations from the medians 1.5 and 3: x's [1.5, .5, .5, 1.5] (mean 1, variance 1/3), y's [3, 1, 1, 3]
    # (mean 2, variance 4/3): x spreads exactly half as much as y, on the TOST's low bound
    x, y = np.array([0.0, 1.0, 2.0, 3.0]), np.array([0.0, 2.0, 4.0, 6.0])
    assert deviations(x).tolist() == [1.5, 0.5, 0.5, 1.5]
    pooled = (3 / 3 + 3 * 4 / 3) / 6  # the pooled variance of the deviations, 5/6
    assert float(bf_p(x, y)) == pytest.approx(2 * stats.t.sf(1 / math.sqrt(pooled / 2), 6), rel=1e-12)
    # at the low bound 0.5 the deviations are equal: t = 0, p = 1/2; at the high bound 2: t = -3 / sqrt(17/12)
    t, df = welch_t_df(deviations(x), 2.0 * deviations(y))
    assert float(t) == pytest.approx(-3 / math.sqrt(17 / 12)) and float(df) == pytest.approx(3 * 289 / 257)
    assert float(bf_one_sided_p(x, y, 0.5, "greater")) == pytest.approx(0.5)
    assert float(bf_tost_p(x, y, 0.5, 2.0)) == pytest.approx(0.5)  # on the bound: never equivalent
