"""The registered tests' arithmetic, checked against scipy's own tests and hand-countable cases: each judgement's p,
each power at the truth where it is known (α at no effect), the Kendall null distribution, and Holm within a
family."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from td3x.analysis.comparisons.kinds import KINDS, kendall_null, kendall_p, kendall_s
from td3x.analysis.comparisons.schema import Comparison, Simulation
from td3x.analysis.comparisons.side_entries import Side
from td3x.analysis.comparisons.sides import Assumption, Values
from td3x.analysis.stats.power import one_sided_mdd, one_sided_power


def values(name: str, data: list[float]) -> Values:
    array = np.array(data, dtype=np.float64)
    return Values(Side(name), array, float(array.mean()), float(array.std(ddof=1)), len(array))


def constant(name: str, mean: float) -> Values:
    return Values(Side(name, published_mean=mean, published_n=10), None, mean, 0.0, 10)


DESIGN = SimpleNamespace(power=0.8, simulation=Simulation())  # what a kind's power reads of a registration
X = [10.0, 12.5, 11.0, 13.2, 9.8]
Y = [8.1, 9.0, 7.5, 10.2, 8.8, 9.9]


def test_directional_p_is_welchs_one_sided_t_test() -> None:
    comparison = Comparison("x above y", "directional", ("x", "y"), "s")
    result = KINDS["directional"].judge(comparison, [values("x", X), values("y", Y)], 0.05)
    expected = stats.ttest_ind(X, Y, equal_var=False, alternative="greater").pvalue
    assert result.p == pytest.approx(expected, rel=1e-10)
    below = Comparison("x below y", "directional", ("x", "y"), "s", alternative="less")
    assert KINDS["directional"].judge(below, [values("x", X), values("y", Y)], 0.05).p == pytest.approx(1 - expected)
    assert result.shown == "x above y" and math.isinf(result.high) and result.low < np.mean(X) - np.mean(Y)


def test_difference_p_and_interval_are_welchs() -> None:
    comparison = Comparison("d", "difference", ("x", "y"), "s")
    result = KINDS["difference"].judge(comparison, [values("x", X), values("y", Y)], 0.05)
    expected = stats.ttest_ind(X, Y, equal_var=False)
    assert result.p == pytest.approx(expected.pvalue, rel=1e-10)
    low, high = expected.confidence_interval(0.95)
    assert (result.low, result.high) == (pytest.approx(low), pytest.approx(high))


def test_equivalence_p_is_the_larger_one_sided_p_at_the_bound() -> None:
    """TOST by hand: shift y by ±bound and take scipy's one-sided Welch p-values."""
    bound = 4.0
    comparison = Comparison("e", "equivalence", ("x", "y"), "s", bound=bound)
    result = KINDS["equivalence"].judge(comparison, [values("x", X), values("y", Y)], 0.05)
    lower = stats.ttest_ind(X, np.array(Y) - bound, equal_var=False, alternative="greater").pvalue
    upper = stats.ttest_ind(X, np.array(Y) + bound, equal_var=False, alternative="less").pvalue
    assert result.p == pytest.approx(max(lower, upper), rel=1e-9)
    assert result.shown == "equivalent within ±4"


def test_a_published_mean_without_sd_is_a_constant_one_sample_test() -> None:
    comparison = Comparison("e", "equivalence", ("x", "paper"), "s", bound=1.0)
    result = KINDS["equivalence"].judge(comparison, [values("x", X), constant("paper", 11.0)], 0.05)
    lower = stats.ttest_1samp(X, 11.0 - 1.0, alternative="greater").pvalue
    upper = stats.ttest_1samp(X, 11.0 + 1.0, alternative="less").pvalue
    assert result.p == pytest.approx(max(lower, upper), rel=1e-9)


@pytest.mark.parametrize("n", [3, 4, 5, 7])
def test_kendall_null_counts_every_permutation(n: int) -> None:
    """P(S >= s) from the Mahonian numbers against all n! orderings listed."""
    reference = np.arange(n, dtype=np.float64)
    orders = np.array(list(itertools.permutations(range(n))), dtype=np.float64)
    listed = kendall_s(orders, reference)
    for s in np.unique(listed):
        assert kendall_p(np.array(s), n) == pytest.approx(np.mean(listed >= s))
    assert kendall_null(n)[-1] == pytest.approx(1.0)


def test_rank_correlation_p_is_scipys_exact_kendall() -> None:
    rng = np.random.default_rng(3)
    reference = rng.permutation(11).astype(np.float64)
    sides = [values(f"r{i}", list(rng.normal(reference[i], 2.0, size=3))) for i in range(11)]
    comparison = Comparison("order", "rank_correlation", tuple(s.side.name for s in sides), "s",
                            reference=tuple((s.side.name, r) for s, r in zip(sides, reference, strict=True)))
    result = KINDS["rank_correlation"].judge(comparison, sides, 0.05)
    expected = stats.kendalltau([s.mean for s in sides], reference, alternative="greater", method="exact")
    assert result.estimate == pytest.approx(expected.statistic)
    assert result.p == pytest.approx(expected.pvalue)
    assert result.shown == "ordering agrees with the reference"  # a registration that names no source
    named = replace(comparison, reference_source="the paper's Table 2, by row, Walker2d-v1", alternative="less")
    assert KINDS["rank_correlation"].judge(named, sides, 0.05).shown == (
        "ordering reverses the paper's Table 2, by row, Walker2d-v1"
    )


def test_rank_correlation_power_is_alpha_or_less_without_an_ordering_and_near_1_with_a_clear_one() -> None:
    names = tuple(f"r{i}" for i in range(8))
    reference = tuple((name, float(i)) for i, name in enumerate(names))
    comparison = Comparison("order", "rank_correlation", names, "s", reference=reference)
    flat = [Assumption(0.0, 1.0, 5, math.nan, "") for _ in names]
    size = KINDS["rank_correlation"].power(comparison, flat, 0.05, DESIGN).power
    assert size <= 0.05 and size > 0.02  # exact null: at most α (S is discrete)
    clear = [Assumption(100.0 * i, 1.0, 5, math.nan, "") for i in range(8)]
    assert KINDS["rank_correlation"].power(comparison, clear, 0.05, DESIGN).power == pytest.approx(1.0)


def test_one_sided_power_is_alpha_at_no_effect_and_its_mdd_reaches_the_power() -> None:
    assert one_sided_power(0.0, 2.0, 5, 3.0, 6, 0.05) == pytest.approx(0.05)
    detectable = one_sided_mdd(2.0, 5, 3.0, 6, 0.05, 0.8)
    assert one_sided_power(detectable, 2.0, 5, 3.0, 6, 0.05) == pytest.approx(0.8)


def test_directional_power_matches_a_simulation() -> None:
    """The noncentral t power against 40000 simulated Welch tests at the same truth: within 0.03 at 5 seeds a side,
    and above it (the formula takes Welch's df at the true SDs; the test's own df, from estimated SDs, is lower)."""
    comparison = Comparison("x above y", "directional", ("x", "y"), "s")
    sides = [Assumption(1.5, 1.0, 5, math.nan, ""), Assumption(0.0, 1.0, 5, math.nan, "")]
    planned = KINDS["directional"].power(comparison, sides, 0.05, DESIGN).power
    rng = np.random.default_rng(0)
    x, y = rng.normal(1.5, 1.0, (40_000, 5)), rng.normal(0.0, 1.0, (40_000, 5))
    p = stats.ttest_ind(x, y, axis=1, equal_var=False, alternative="greater").pvalue
    simulated = np.mean(p < 0.05)
    assert simulated < planned < simulated + 0.03


def test_fisher_p_is_scipys_and_its_power_is_exact() -> None:
    comparison = Comparison("f", "fisher", ("a", "b"), "stalled")
    a, b = values("a", [1, 1, 1, 1, 0, 0, 0, 0]), values("b", [0.0] * 8)
    result = KINDS["fisher"].judge(comparison, [a, b], 0.05)
    assert result.estimate == 4
    assert result.p == pytest.approx(stats.fisher_exact([[4, 4], [0, 8]]).pvalue)
    # equal rates: the test rejects at most α of the time (it is conservative)
    same = [Assumption(math.nan, math.nan, 8, 0.3, ""), Assumption(math.nan, math.nan, 8, 0.3, "")]
    assert KINDS["fisher"].power(comparison, same, 0.05, DESIGN).power <= 0.05
    # 2 runs a side, rates 1 and 0: it rejects only at counts 2 and 0, and Fisher's p there is 1/3: never
    sure = [Assumption(math.nan, math.nan, 2, 1.0, ""), Assumption(math.nan, math.nan, 2, 0.0, "")]
    assert KINDS["fisher"].power(comparison, sure, 0.05, DESIGN).power == 0.0
