"""Comparisons of the means of one group of seeds and another's, for the fidelity and peer sections and the
registrations: Welch's two-sample test with its 95% interval of the difference and how far its 90% interval reaches,
the exact permutation test of the pooled seeds on Welch's t, a registration's exact permutation test of the
difference of means, and Holm's adjustment of a family of p-values. (Their spreads: ``spread_tests``.)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from td3x.algo.seed_statistics import CONFIDENCE
from td3x.analysis.stats.power import welch_df, welch_se

ALPHA = 0.05  # the primary test's level, and TOST's


@dataclass(frozen=True)
class Welch:
    """Welch's two-sample comparison of ``x`` (ours) against ``y`` (the reference group's).

    Attributes:
        difference: mean(x) − mean(y).
        low: the 95% Welch interval's lower bound.
        high: its upper bound.
        p: the two-sided p-value of Welch's t-test.
        low90: the 1 − 2·``ALPHA`` (90%) Welch interval's lower bound, TOST's interval.
        high90: its upper bound.
        df: the Welch-Satterthwaite degrees of freedom.
        se: the standard error of the difference.
    """

    difference: float
    low: float
    high: float
    p: float
    low90: float
    high90: float
    df: float
    se: float

    @property
    def reach(self) -> float:
        """How far the 90% interval reaches from 0, max(|low90|, |high90|): a summary of this draw, not a bound
        fixed in advance."""
        return max(abs(self.low90), abs(self.high90))


@dataclass(frozen=True)
class Permutation:
    """The exact permutation test of two groups' means on Welch's t: every relabelling of the pooled seeds into
    groups of the two sizes, the observed one included.

    Attributes:
        p: the two-sided p: the share of relabellings whose |t| is at least the observed |t|.
        smallest: the smallest p any labelling of these pooled values could give (the share of relabellings at the
            largest |t|): a cell whose ``smallest`` is not below its level can never reject there.
        relabellings: C(n + m, n).
    """

    p: float
    smallest: float
    relabellings: int


def welch(x: np.ndarray, y: np.ndarray, alpha: float = ALPHA, confidence: float = CONFIDENCE) -> Welch:
    """Welch's comparison of two samples: difference of means, its interval, p-value and the reach of its 1 − 2α
    interval.

    NaN throughout when a sample has fewer than 2 values; p and the bounds are NaN when neither sample spreads.

    Args:
        x: the first sample (ours).
        y: the second sample (the authors').
        alpha: each one-sided level of the 1 − 2α interval whose reach is reported.
        confidence: the level of the reported interval.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(x) < 2 or len(y) < 2:
        difference = float(x.mean() - y.mean()) if len(x) and len(y) else float("nan")
        return Welch(difference, *[float("nan")] * 7)
    moments_x = (float(x.mean()), float(x.std(ddof=1)), len(x))
    return welch_moments(moments_x, (float(y.mean()), float(y.std(ddof=1)), len(y)), alpha, confidence)


def welch_moments(
    x: tuple[float, float, int], y: tuple[float, float, int], alpha: float = ALPHA, confidence: float = CONFIDENCE
) -> Welch:
    """Welch's comparison from each sample's (mean, SD, n), at least 2 seeds a side: a published mean with an SD
    compared as a sample, and a published mean without one as a constant (SD 0: Welch's df is then n_x − 1 and its
    test is the one-sample t-test).

    Args:
        x: the first sample's mean, SD (ddof 1) and size.
        y: the second's.
        alpha: each one-sided level of the 1 − 2α interval whose reach is reported.
        confidence: the level of the reported interval.
    """
    nan = float("nan")
    difference = x[0] - y[0]
    sizes_and_sds = (x[1], x[2], y[1], y[2])
    se = welch_se(*sizes_and_sds)
    if se == 0:
        return Welch(difference, nan, nan, nan, nan, nan, nan, 0.0)
    df = welch_df(*sizes_and_sds)
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se
    tost_half = float(stats.t.ppf(1 - alpha, df)) * se  # the 1 - 2α interval's half-width
    p = float(2 * stats.t.sf(abs(difference) / se, df))
    return Welch(
        difference, difference - half, difference + half, p, difference - tost_half, difference + tost_half, df, se
    )


def welch_t(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Welch's t of rows of ``x`` against rows of ``y`` (the last axis holds the samples); NaN without spread."""
    vx, vy = x.var(axis=-1, ddof=1) / x.shape[-1], y.var(axis=-1, ddof=1) / y.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray((x.mean(axis=-1) - y.mean(axis=-1)) / np.sqrt(vx + vy), dtype=np.float64)


MAX_LISTED = 5_000_000  # relabellings the Welch-t permutation test lists (C(25, 10) = 3268760 for 15 against 10)
_CHUNK = 100_000  # relabellings whose t is computed at a time: memory stays in the tens of MB


def permutation_test(x: np.ndarray, y: np.ndarray) -> Permutation:
    """The exact two-sided permutation test of mean(x) = mean(y) on Welch's t over all C(n + m, n) relabellings of
    the pooled values (NaN p below 2 values a side, when the observed t is undefined, or when there are more than
    MAX_LISTED relabellings to list: 32 seeds against 10 have 1.5 billion)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n, m = len(x), len(y)
    if n < 2 or m < 2:
        return Permutation(float("nan"), float("nan"), 0)
    total = math.comb(n + m, n)
    if total > MAX_LISTED:
        return Permutation(float("nan"), float("nan"), total)
    pooled = np.concatenate([x, y])
    labellings = lexicographic_subsets(n + m, n)  # the observed labelling is the first: range(n)
    t = np.concatenate([np.abs(_relabelled_t(pooled, labellings[i : i + _CHUNK])) for i in range(0, total, _CHUNK)])
    if not np.isfinite(t[0]):
        return Permutation(float("nan"), float("nan"), len(t))
    tolerance = 1e-9 * np.max(t[np.isfinite(t)])  # ties in exact arithmetic stay ties in floating point
    t = np.where(np.isfinite(t), t, np.inf)  # a labelling without spread: as extreme as a t can be
    return Permutation(float(np.mean(t >= t[0] - tolerance)), float(np.mean(t >= t.max() - tolerance)), len(t))


def lexicographic_subsets(size: int, k: int) -> np.ndarray:
    """Every k-subset of ``range(size)`` as a row of ascending indices, in ``itertools.combinations``' order, built
    with NumPy (listing them through Python took half the test's time): the subsets starting at i are i followed
    by the (k - 1)-subsets of the ``size - i - 1`` indices after it.

    Args:
        size: the number of indices (at most 127: int8 rows).
        k: the subsets' size.
    """

    @functools.cache
    def subsets(size: int, k: int) -> np.ndarray:
        if k == 0:
            return np.zeros((1, 0), dtype=np.int8)
        blocks = []
        for first in range(size - k + 1):
            rest = subsets(size - first - 1, k - 1) + np.int8(first + 1)
            blocks.append(np.hstack([np.full((len(rest), 1), first, dtype=np.int8), rest]))
        return np.vstack(blocks) if blocks else np.zeros((0, k), dtype=np.int8)

    return subsets(size, k)


def _relabelled_t(pooled: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Welch's t of each row's first group (``first``'s indices) against the rest of ``pooled``."""
    rest_mask = np.ones((len(first), len(pooled)), dtype=bool)
    rest_mask[np.arange(len(first))[:, None], first] = False
    rest = np.broadcast_to(pooled, rest_mask.shape)[rest_mask].reshape(len(first), -1)  # in index order
    return welch_t(pooled[first], rest)


MAX_POOLED = 40  # the exact difference-of-means test enumerates 2^20 subsets of each half of the pooled values


def mean_difference_permutation_test(x: np.ndarray, y: np.ndarray) -> Permutation:
    """The exact two-sided permutation test of mean(x) = mean(y) on the difference of means, over all C(n + m, n)
    relabellings of the pooled values (NaN p below 2 values a side).

    The relabellings are counted, not listed: a relabelling's difference of means is s·(1/n + 1/m) − total/m, a
    function of the sum s of the values it puts in the first group, and the sums of every n-subset are those of a
    k-subset of the pooled values' first half plus an (n − k)-subset of the second (meet in the middle): C(40, 20),
    138 billion relabellings, are counted from two halves of 2^20 subsets each.

    Args:
        x: the first sample (ours), n values.
        y: the second sample (the other side's), m values, n + m at most MAX_POOLED.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n, m = len(x), len(y)
    if n + m > MAX_POOLED:
        raise ValueError(f"the exact permutation test takes at most {MAX_POOLED} pooled values, not {n + m}")
    total = math.comb(n + m, n)
    if n < 2 or m < 2:
        return Permutation(math.nan, math.nan, total)
    pooled = np.concatenate([x, y])
    scale = 1 / n + 1 / m  # difference = sum_x * scale - pooled.sum() / m
    offset = pooled.sum() / m
    tolerance = 1e-9 * (np.abs(pooled).max() + 1.0)  # ties in exact arithmetic stay ties in floating point
    observed = abs(x.sum() * scale - offset)
    ordered = np.sort(pooled)
    largest = max(abs(ordered[-n:].sum() * scale - offset), abs(ordered[:n].sum() * scale - offset))
    halves = (_subset_sums(pooled[: (n + m) // 2]), _subset_sums(pooled[(n + m) // 2 :]))

    def share_as_extreme(difference: float) -> float:
        if difference <= tolerance:  # every relabelling is at least as far from equal means
            return 1.0
        above, below = (offset + difference - tolerance) / scale, (offset - difference + tolerance) / scale
        return _count_sums_outside(halves, n, below, above) / total

    return Permutation(share_as_extreme(observed), share_as_extreme(largest), total)


def _subset_sums(values: np.ndarray) -> dict[int, np.ndarray]:
    """The sums of every subset of ``values``, sorted, by subset size."""
    sums, sizes = np.zeros(1), np.zeros(1, dtype=np.int64)
    for value in values:
        sums, sizes = np.concatenate([sums, sums + value]), np.concatenate([sizes, sizes + 1])
    return {size: np.sort(sums[sizes == size]) for size in range(len(values) + 1)}


def _count_sums_outside(
    halves: tuple[dict[int, np.ndarray], dict[int, np.ndarray]], n: int, below: float, above: float
) -> int:
    """How many n-subsets of the pooled values sum to at most ``below`` or at least ``above`` (below < above)."""
    first, second = halves
    count = 0
    for k, sums in first.items():
        rest = second.get(n - k)
        if rest is None:
            continue
        count += int(np.sum(len(rest) - np.searchsorted(rest, above - sums, side="left")))
        count += int(np.sum(np.searchsorted(rest, below - sums, side="right")))
    return count


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
