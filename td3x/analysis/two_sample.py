"""Comparisons of one group of seeds with another: of their means, for the fidelity and peer sections (Welch's
two-sample test with its 95% interval of the difference and the TOST equivalence margin, the held-out yardstick,
the same test between the authors' own seeds, and Holm's adjustment of a family of p-values); and of their spreads,
for the seed-sources section (the SD's chi-square interval, the F interval of a ratio of SDs, the Brown-Forsythe
test).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from td3x.algo.seed_statistics import CONFIDENCE

ALPHA = 0.05  # the primary test's level, and TOST's


@dataclass(frozen=True)
class Welch:
    """Welch's two-sample comparison of ``x`` (ours) against ``y`` (the reference group's).

    Attributes:
        difference: mean(x) − mean(y).
        low: the 95% Welch interval's lower bound.
        high: its upper bound.
        p: the two-sided p-value of Welch's t-test.
        margin: the equivalence margin: the smallest Δ for which TOST at ``ALPHA`` rejects |difference| ≥ Δ.
        df: the Welch-Satterthwaite degrees of freedom.
    """

    difference: float
    low: float
    high: float
    p: float
    margin: float
    df: float


@dataclass(frozen=True, eq=False)  # holds arrays
class Comparison:
    """One statistic of our seeds against the authors', with the held-out yardstick: how unusual our p would be for
    a draw of as many of the authors' own seeds.

    Attributes:
        ours: our seeds' values of the statistic.
        authors: the authors' 10 seeds' values.
        test: the Welch comparison of ours against theirs.
        held_out: the p-value of every split of the authors' seeds into ``len(ours)`` held out and the rest kept.
        holm_p: the p-value Holm-adjusted over the row's envs (the primary statistic only; NaN otherwise).
    """

    ours: np.ndarray
    authors: np.ndarray
    test: Welch
    held_out: np.ndarray
    holm_p: float = float("nan")

    @property
    def at_or_below(self) -> int:
        """How many held-out splits have a p at or below ours."""
        return int(np.sum(self.held_out <= self.test.p)) if np.isfinite(self.test.p) else 0

    @property
    def share(self) -> float:
        """The share of held-out splits whose p is at or below ours (NaN without splits or without our p)."""
        if not len(self.held_out) or not np.isfinite(self.test.p):
            return float("nan")
        return self.at_or_below / len(self.held_out)


def welch(x: np.ndarray, y: np.ndarray, alpha: float = ALPHA, confidence: float = CONFIDENCE) -> Welch:
    """Welch's comparison of two samples: difference of means, its interval, p-value and TOST margin.

    NaN throughout when a sample has fewer than 2 values; p and the bounds are NaN when neither sample spreads.

    Args:
        x: the first sample (ours).
        y: the second sample (the authors').
        alpha: TOST's level (the margin comes from the 1 − 2α interval).
        confidence: the level of the reported interval.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    nan = float("nan")
    if len(x) < 2 or len(y) < 2:
        difference = float(x.mean() - y.mean()) if len(x) and len(y) else nan
        return Welch(difference, nan, nan, nan, nan, nan)
    difference = float(x.mean() - y.mean())
    vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    se = math.sqrt(vx + vy)
    if se == 0:
        return Welch(difference, nan, nan, nan, nan, nan)
    df = (vx + vy) ** 2 / (vx**2 / (len(x) - 1) + vy**2 / (len(y) - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se
    tost_half = float(stats.t.ppf(1 - alpha, df)) * se  # the 1 - 2α interval's half-width
    p = float(2 * stats.t.sf(abs(difference) / se, df))
    margin = abs(difference) + tost_half  # = max(|low|, |high|) of the 1 - 2α interval
    return Welch(difference, difference - half, difference + half, p, margin, float(df))


def welch_p(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Welch's two-sided p-values of rows of ``x`` against rows of ``y`` (the last axis holds the samples)."""
    with warnings.catch_warnings():  # groups without spread (a solved task): NaN p, no warning
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(stats.ttest_ind(x, y, axis=-1, equal_var=False).pvalue, dtype=np.float64)


def held_out_p(authors: np.ndarray, n: int) -> np.ndarray:
    """The yardstick: for every split of the authors' seeds into ``n`` held out and the rest kept, Welch's p of the
    held-out values against the kept ones. Empty when no split leaves 2 seeds on each side.

    Args:
        authors: one statistic's value per authors' seed.
        n: how many seeds to hold out (our number of seeds).
    """
    authors = np.asarray(authors, dtype=np.float64)
    if n < 2 or len(authors) - n < 2:
        return np.empty(0)
    held = np.array(list(itertools.combinations(range(len(authors)), n)))
    kept = np.array([np.setdiff1d(np.arange(len(authors)), split) for split in held])
    return welch_p(authors[held], authors[kept])


def holm(p_values: Iterable[float]) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (NaN ones are left out of the family and stay NaN).

    The k-th smallest of m p-values becomes max over j ≤ k of min(1, (m − j + 1) · p_(j)).
    """
    p = np.asarray(list(p_values), dtype=np.float64)
    adjusted = np.full_like(p, np.nan)
    finite = np.flatnonzero(np.isfinite(p))
    order = finite[np.argsort(p[finite], kind="stable")]
    m = len(order)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p[index])))
        adjusted[index] = running
    return adjusted


def holm_by_row(rows: list[str], p_values: list[float]) -> list[float]:
    """Holm's adjustment within each row's family of p-values (one per env), in the order given."""
    adjusted = [float("nan")] * len(rows)
    for row in dict.fromkeys(rows):
        members = [i for i, name in enumerate(rows) if name == row]
        for i, p in zip(members, holm(p_values[i] for i in members), strict=True):
            adjusted[i] = float(p)
    return adjusted


def compare(ours: np.ndarray, authors: np.ndarray) -> Comparison:
    """One statistic of our seeds against the authors' seeds (the reference group), with the held-out yardstick.

    Args:
        ours: our seeds' values.
        authors: the authors' seeds' values.
    """
    return Comparison(ours, authors, welch(ours, authors), held_out_p(authors, len(ours)))


# ---------------------------------------------------------------------------------------------------- spreads
@dataclass(frozen=True)
class Spread:
    """A sample's spread beside a reference sample's (a seed-sources condition's beside all-vary's)."""

    n: int
    mean: float
    sd: float
    sd_interval: tuple[float, float]
    ratio: float  # sd / the reference's sd
    ratio_interval: tuple[float, float]
    p_value: float  # Brown-Forsythe against the reference (NaN for the reference itself or without spread)


def sd_interval(sd: float, n: int) -> tuple[float, float]:
    """The 95% chi-square interval of a normal population's SD from a sample SD ``sd`` of ``n`` values."""
    if n < 2:
        return (math.nan, math.nan)
    alpha = 1 - CONFIDENCE
    dof = n - 1
    return (
        sd * math.sqrt(dof / stats.chi2.ppf(1 - alpha / 2, dof)),
        sd * math.sqrt(dof / stats.chi2.ppf(alpha / 2, dof)),
    )


def ratio_interval(ratio: float, n: int, m: int) -> tuple[float, float]:
    """The 95% interval of σ_1/σ_2 from a sample SD ratio of ``n`` and ``m`` normal values (F distribution)."""
    if n < 2 or m < 2:
        return (math.nan, math.nan)
    alpha = 1 - CONFIDENCE
    high, low = stats.f.ppf(1 - alpha / 2, n - 1, m - 1), stats.f.ppf(alpha / 2, n - 1, m - 1)
    return (ratio / math.sqrt(high), ratio / math.sqrt(low))


def spread_against(values: np.ndarray, base: np.ndarray, is_reference: bool) -> Spread:
    """The spread of ``values`` (SD, ddof = 1, with its chi-square interval) beside that of ``base``: the ratio of
    the SDs with its F interval, and the Brown-Forsythe test of equal spread (Levene's test on deviations from the
    median), not run when ``values`` is the reference itself.
    """
    sd = float(values.std(ddof=1)) if len(values) > 1 else math.nan
    base_sd = float(base.std(ddof=1)) if len(base) > 1 else math.nan
    ratio = sd / base_sd if base_sd > 0 else math.nan
    p_value = math.nan
    if not is_reference and len(values) > 1 and len(base) > 1:
        with warnings.catch_warnings():  # two groups without spread: scipy warns and returns NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            p_value = float(stats.levene(values, base, center="median").pvalue)
    return Spread(
        len(values),
        float(values.mean()),
        sd,
        sd_interval(sd, len(values)),
        ratio,
        ratio_interval(ratio, len(values), len(base)),
        p_value,
    )
