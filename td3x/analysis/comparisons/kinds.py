"""The tests a comparison may name, each with its power before the runs (at the assumed means and SDs) and its
judgement after them. Adding a test is a class here, a line in ``KINDS`` and its rule in the schema's ``TESTS``.

Every power is at the comparison's level: α over its Holm family's size (Holm's first step, the hardest), so the
plan never promises more than Holm's adjustment lets the judgement give.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from scipy import stats

from td3x.analysis.comparisons.schema import GREATER, Comparison, Registration
from td3x.analysis.comparisons.sides import Assumption, Values
from td3x.analysis.render.tables import difference
from td3x.analysis.stats.equivalence import tost_p
from td3x.analysis.stats.power import mdd, one_sided_mdd, one_sided_power, smallest_bound, tost_power, welch_power
from td3x.analysis.stats.spread_tests import bf_tost_p, ratio_interval
from td3x.analysis.stats.two_sample import MAX_POOLED, Welch, mean_difference_permutation_test, welch_moments


@dataclass(frozen=True)
class Power:
    """A design's power and the smallest effect it detects.

    Attributes:
        power: the probability the test claims its result when the assumptions hold.
        detectable: the MDD (difference, directional), the narrowest bound at the file's power (equivalence), or NaN.
        at: the truth the power is computed at, in words.
    """

    power: float
    detectable: float
    at: str


@dataclass(frozen=True)
class Judgement:
    """A comparison's result on its runs.

    Attributes:
        estimate: the difference of means (first minus second), Kendall's τ, or the difference of counts.
        low: the interval's lower end (NaN where none).
        high: its upper end.
        interval: the interval's name.
        p: the test's p-value, before any Holm adjustment.
        shown: the verdict when the (Holm-adjusted) p is below α.
        not_shown: the verdict otherwise.
        permutation_p: ``difference``: the exact permutation test of the difference of means over every relabelling
            of the pooled seeds, a check on Welch's p that assumes no normality (NaN for a published side, or above
            MAX_POOLED seeds).
    """

    estimate: float
    low: float
    high: float
    interval: str
    p: float
    shown: str
    not_shown: str
    permutation_p: float = math.nan


class Kind(Protocol):
    """A test; each test here subclasses it for its default: no detectable effect to name."""

    detectable_name: str = "-"  # what ``Power.detectable`` is

    def power(self, comparison: Comparison, sides: list[Assumption], alpha: float, registration: Registration) -> Power:
        """The design's power at level ``alpha``; ``registration.power`` is the power its detectable effect is
        computed at, ``registration.simulation`` the draws of a simulated power."""

    def judge(self, comparison: Comparison, values: list[Values], alpha: float) -> Judgement:
        """The test on the sides' values (each with at least 2 seeds)."""


def _pair(sides: list[Assumption]) -> tuple[float, int, float, int]:
    """(SD, n) of both sides for the power formulas: a constant (SD 0) counts as 2 seeds, which then drop out of
    Welch's df."""
    (sd_x, n_x), (sd_y, n_y) = ((side.sd, side.n) if side.sd > 0 else (0.0, 2) for side in sides)
    return sd_x, n_x, sd_y, n_y


def _welch(values: list[Values], alpha: float) -> Welch:
    x, y = values
    return welch_moments((x.mean, x.sd, x.n), (y.mean, y.sd if y.sd > 0 else 0.0, max(y.n, 2)), alpha)


def _mean_test_power(
    sides: list[Assumption], alpha: float, target: float,
    power_of: Callable[..., float], detectable_of: Callable[..., float], direction: float = 1.0,
) -> Power:
    """A test of means' power at the assumed difference ``delta`` (first minus second; NaN without assumed means)
    and its MDD; ``direction`` -1 for a one-sided test of the first side below the second: its power is at −delta."""
    delta, moments = sides[0].mean - sides[1].mean, _pair(sides)
    detectable = detectable_of(*moments, alpha, target)
    if math.isnan(delta):
        return Power(math.nan, detectable, "no assumed means (the MDD alone)")
    return Power(power_of(direction * delta, *moments, alpha), detectable, f"a difference of {difference(delta)}")


class Equivalence(Kind):
    """TOST: equivalent within ±bound when both one-sided Welch tests at α reject (the 1 − 2α interval inside)."""

    detectable_name = "smallest bound"

    def power(self, comparison: Comparison, sides: list[Assumption], alpha: float, registration: Registration) -> Power:
        delta = sides[0].mean - sides[1].mean
        delta, at = (0.0, "no difference") if math.isnan(delta) else (delta, f"a difference of {difference(delta)}")
        bound = float(comparison.bound or 0)
        moments = _pair(sides)
        return Power(tost_power(delta, bound, *moments, alpha), smallest_bound(*moments, alpha, registration.power), at)

    def judge(self, comparison: Comparison, values: list[Values], alpha: float) -> Judgement:
        test = _welch(values, alpha)
        bound = float(comparison.bound or 0)
        p = tost_p(test, bound)
        level = f"{100 * (1 - 2 * alpha):g}% CI"
        return Judgement(test.difference, test.low90, test.high90, level, p, f"equivalent within ±{bound:g}",
                         "equivalence not shown")


class Difference(Kind):
    """Welch's two-sided test of equal means."""

    detectable_name = "MDD"

    def power(self, comparison: Comparison, sides: list[Assumption], alpha: float, registration: Registration) -> Power:
        return _mean_test_power(sides, alpha, registration.power, welch_power, mdd)

    def judge(self, comparison: Comparison, values: list[Values], alpha: float) -> Judgement:
        x, y = values
        test = welch_moments((x.mean, x.sd, x.n), (y.mean, y.sd, max(y.n, 2)), alpha, 1 - alpha)
        level = f"{100 * (1 - alpha):g}% CI"
        exact = x.values is not None and y.values is not None and x.n + y.n <= MAX_POOLED
        permutation = mean_difference_permutation_test(x.values, y.values).p if exact else math.nan  # type: ignore[arg-type]
        words = ("difference detected", "no difference detected")
        return Judgement(test.difference, test.low, test.high, level, test.p, *words, permutation)


class Directional(Kind):
    """Welch's one-sided test: the first side's mean above the second's (``alternative: less``: below)."""

    detectable_name = "MDD"

    def power(self, comparison: Comparison, sides: list[Assumption], alpha: float, registration: Registration) -> Power:
        sign = 1.0 if comparison.alternative == GREATER else -1.0  # the power of the claimed direction
        return _mean_test_power(sides, alpha, registration.power, one_sided_power, one_sided_mdd, sign)

    def judge(self, comparison: Comparison, values: list[Values], alpha: float) -> Judgement:
        test = _welch(values, alpha)
        greater = comparison.alternative == GREATER
        t = test.difference / test.se if test.se > 0 else math.nan
        p = float(stats.t.sf(t, test.df) if greater else stats.t.cdf(t, test.df)) if math.isfinite(t) else math.nan
        # the one-sided 1 − α bound: test.low90 and test.high90 are the ends of the 1 − 2α interval
        low, high = (test.low90, math.inf) if greater else (-math.inf, test.high90)
        first, second = comparison.sides
        word = "above" if greater else "below"
        return Judgement(test.difference, low, high, f"one-sided {100 * (1 - alpha):g}% bound", p,
                         f"{first} {word} {second}", "not shown")


@functools.cache
def kendall_null(n: int) -> np.ndarray:
    """P(S ≥ s) under independence for Kendall's S = concordant − discordant pairs of n untied values, indexed by
    inversions k (S = n(n−1)/2 − 2k): the Mahonian numbers, counted by dynamic programming."""
    counts = np.array([1.0])
    for size in range(2, n + 1):  # inserting the size-th value adds 0 .. size − 1 inversions
        counts = np.convolve(counts, np.ones(size))
    return np.asarray(np.cumsum(counts) / counts.sum())  # P(inversions <= k) = P(S >= n(n−1)/2 − 2k)


def kendall_s(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Kendall's S of each row of ``values`` against ``reference`` (concordant minus discordant pairs)."""
    i, j = np.triu_indices(len(reference), k=1)
    return np.asarray(np.sum(np.sign(values[..., i] - values[..., j]) * np.sign(reference[i] - reference[j]), axis=-1))


def kendall_p(s: np.ndarray, n: int) -> np.ndarray:
    """The exact one-sided p, P(S' ≥ s) under independence (no ties)."""
    pairs = n * (n - 1) // 2
    inversions = np.floor((pairs - np.asarray(s)) / 2 + 1e-9).astype(int)
    return np.asarray(kendall_null(n)[np.clip(inversions, 0, pairs)])


class RankCorrelation(Kind):
    """Kendall's τ between the sides' means and a reference ordering (the paper's numbers), one-sided, exact; its
    power simulated: each side's mean drawn around its assumed mean with its SD over √n."""

    def power(self, comparison: Comparison, sides: list[Assumption], alpha: float, registration: Registration) -> Power:
        reference, sign = self._reference(comparison)
        means = np.array([side.mean for side in sides])
        spread = np.array([side.sd / math.sqrt(side.n) for side in sides])
        if not (np.isfinite(means).all() and np.isfinite(spread).all()):
            return Power(math.nan, math.nan, "assumed means and SDs of every side (the file lacks some)")
        simulation = registration.simulation
        draws = np.random.default_rng(simulation.seed).standard_normal((simulation.replicates, len(sides)))
        p = kendall_p(sign * kendall_s(means + draws * spread, reference), len(sides))
        return Power(float(np.mean(p < alpha)), math.nan, "the assumed means")

    def judge(self, comparison: Comparison, values: list[Values], alpha: float) -> Judgement:
        reference, sign = self._reference(comparison)
        means = np.array([value.mean for value in values])
        s = float(kendall_s(means, reference))
        pairs = len(values) * (len(values) - 1) / 2
        p = float(kendall_p(np.array(sign * s), len(values)))
        direction = "agrees with" if sign > 0 else "reverses"
        reference_name = comparison.reference_source or "the reference"  # what the registration names it
        return Judgement(s / pairs, math.nan, math.nan, "", p, f"ordering {direction} {reference_name}", "not shown")

    @staticmethod
    def _reference(comparison: Comparison) -> tuple[np.ndarray, float]:
        sign = 1.0 if comparison.alternative == GREATER else -1.0
        return np.array([value for _, value in comparison.reference]), sign


class Fisher(Kind):
    """Fisher's exact test, two-sided, of two counts (runs whose statistic is 1 among each side's runs); its power
    exact, summed over both sides' binomial counts at the assumed rates (a published count is fixed as published)."""

    def power(self, comparison: Comparison, sides: list[Assumption], alpha: float, registration: Registration) -> Power:
        (a, b), (n_a, n_b) = (side.rate for side in sides), (side.n for side in sides)
        if math.isnan(a) or math.isnan(b):
            return Power(math.nan, math.nan, "assumed rates of both sides (the file lacks one)")
        weights = np.outer(_count_weights(sides[0]), _count_weights(sides[1]))
        rejects = np.array([[_fisher_p(x, n_a, y, n_b) < alpha for y in range(n_b + 1)] for x in range(n_a + 1)])
        return Power(float(np.sum(weights * rejects)), math.nan, f"rates {a:g} and {b:g}")

    def judge(self, comparison: Comparison, values: list[Values], alpha: float) -> Judgement:
        counts = [int(np.nansum(value.values)) if value.values is not None else 0 for value in values]
        p = _fisher_p(counts[0], values[0].n, counts[1], values[1].n)
        return Judgement(counts[0] - counts[1], math.nan, math.nan, "", p, "counts differ", "no difference shown")


def _count_weights(side: Assumption) -> np.ndarray:
    """The probability of each count 0..n of a side: binomial at its rate, or all on a published count."""
    if side.count is not None:
        return np.asarray(np.arange(side.n + 1) == side.count, dtype=np.float64)
    return np.asarray(stats.binom.pmf(np.arange(side.n + 1), side.n, side.rate))


class Spread(Kind):
    """Brown-Forsythe TOST of the SD ratio (first side over second) within [1/bound, bound]: each one-sided Welch
    test of the first side's absolute deviations from its median against the bound times the second's; its power
    simulated with normal runs at the assumed SDs' ratio (1 without assumed SDs)."""

    def power(self, comparison: Comparison, sides: list[Assumption], alpha: float, registration: Registration) -> Power:
        bound = float(comparison.bound or 0)
        ratio = sides[0].sd / sides[1].sd
        ratio, at = (1.0, "an SD ratio of 1") if not math.isfinite(ratio) else (ratio, f"an SD ratio of {ratio:.3g}")
        rng = np.random.default_rng(registration.simulation.seed)
        shape = (registration.simulation.replicates,)
        x = ratio * rng.standard_normal((*shape, sides[0].n))
        y = rng.standard_normal((*shape, sides[1].n))
        return Power(float(np.mean(bf_tost_p(x, y, 1 / bound, bound) < alpha)), math.nan, at)

    def judge(self, comparison: Comparison, values: list[Values], alpha: float) -> Judgement:
        x, y = values
        bound = float(comparison.bound or 0)
        ratio = x.sd / y.sd
        low, high = ratio_interval(ratio, x.n, y.n, 1 - 2 * alpha)
        p = float(bf_tost_p(np.asarray(x.values), np.asarray(y.values), 1 / bound, bound))
        return Judgement(ratio, low, high, f"{100 * (1 - 2 * alpha):g}% F interval", p,
                         f"spread as large as {comparison.sides[1]}'s within a factor of {bound:g}", "not shown")


def _fisher_p(x: int, n_x: int, y: int, n_y: int) -> float:
    return float(stats.fisher_exact([[x, n_x - x], [y, n_y - y]]).pvalue)


KINDS: dict[str, Kind] = {
    "equivalence": Equivalence(),
    "difference": Difference(),
    "directional": Directional(),
    "rank_correlation": RankCorrelation(),
    "fisher": Fisher(),
    "spread": Spread(),
}
