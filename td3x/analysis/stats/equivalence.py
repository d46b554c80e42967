"""A group of seeds against a reference group's, for the fidelity and peer sections (``Comparison``): Welch's test,
the exact permutation test, Holm's adjustment within a row's envs, and equivalence at a bound: where each cell's bound
comes from (a rule stated as post hoc, or a bound given per env), TOST at that bound with its 90% Welch interval,
the minimum detectable difference (MDD) of the difference test beside it (their columns in the tables:
``render.comparison_columns``).

- **The bound** (return units): ``DEFAULT_FRACTION`` (0.2) × the reference's mean: the authors' (fidelity), the
  peer's (peer) or, with ``td3x-report --peer-bound-of ours``, the compared row's. A peer env given a bound
  (``--peer-bound ENV=BOUND``, one fixed before the runs, say by a registration) takes it instead on every row. The
  tests here are all post hoc, and the tables say so: a registered comparison is judged by ``--registration``.
- **TOST**: two one-sided Welch tests of H0: difference ≤ −bound and H0: difference ≥ +bound, each at α; the TOST p
  is the larger one-sided p; equivalently, the 90% Welch interval lies inside (−bound, +bound). Equivalence is
  claimed only where the (Holm-adjusted) TOST p is below α; a non-rejection of the difference test never is.
- **The MDD**: the true difference Welch's two-sided test at α detects with 80% power (noncentral t,
  ``td3x.analysis.stats.power``) at the cell's seeds against the reference's, at the SDs the design assumes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from td3x.analysis.stats.power import mdd
from td3x.analysis.stats.two_sample import ALPHA, Permutation, Welch, holm_by_row, permutation_test, welch

POWER = 0.8  # the power of every MDD
DEFAULT_FRACTION = 0.2  # the post-hoc bound: 0.2 × the reference's mean
PEER_MEANS = {"peer": "the peer's", "ours": "td3x's"}  # whose mean a post-hoc peer bound is a share of, as named


@dataclass(frozen=True)
class BoundRule:
    """Where the bounds come from.

    Attributes:
        fraction: the post-hoc bound as a share of the reference's mean.
        given: per peer env, a bound in return units (``--peer-bound``), used on every row of the env.
        peer_of: whose mean the post-hoc peer bound is a share of, a key of ``PEER_MEANS``.
    """

    fraction: float = DEFAULT_FRACTION
    given: tuple[tuple[str, float], ...] = ()
    peer_of: str = "peer"


@dataclass(frozen=True)
class Bound:
    """One cell's equivalence bound: its value (return units) and where it comes from."""

    value: float
    origin: str


def post_hoc_bound(rule: BoundRule, reference_mean: float, whose: str, chosen_by: str = "the default rule") -> Bound:
    """``fraction`` × |the reference's mean|, a post-hoc bound (``whose``: "the authors'", "td3x's", ...;
    ``chosen_by``: what chose that reference, for the origin's text)."""
    origin = f"post hoc: {rule.fraction:g} × {whose} mean ({chosen_by})"
    return Bound(rule.fraction * abs(reference_mean), origin)


def peer_bound(rule: BoundRule, env_id: str, means: tuple[float, float]) -> Bound:
    """A peer cell's bound: the one given for the env, else post hoc on the mean ``rule.peer_of`` names.

    Args:
        rule: the bound rule.
        env_id: the env.
        means: td3x's and the peer's means of the statistic.
    """
    given = dict(rule.given)
    if env_id in given:  # the test over these runs is still post hoc: only the bound was fixed elsewhere
        return Bound(given[env_id], f"given: --peer-bound {env_id}={given[env_id]:g}; post hoc test")
    if rule.peer_of == "ours":
        return post_hoc_bound(rule, means[0], PEER_MEANS["ours"], "--peer-bound-of ours")
    return post_hoc_bound(rule, means[1], PEER_MEANS["peer"])


@dataclass(frozen=True)
class Tost:
    """TOST of one Welch comparison at a bound, with the design's MDD beside it.

    Attributes:
        bound: the bound and where it comes from.
        low: the 90% (1 − 2α) Welch interval's lower end.
        high: its upper end.
        p: the TOST p, the larger of the two one-sided Welch p-values.
        mdd: the true difference Welch's two-sided test at α detects with 80% power.
        holm_p: the TOST p Holm-adjusted within the row's family (NaN where no family adjusts it).
    """

    bound: Bound
    low: float
    high: float
    p: float
    mdd: float
    holm_p: float = float("nan")

    @property
    def inside(self) -> bool:
        """Whether the 90% interval lies inside (−bound, +bound)."""
        return bool(-self.bound.value < self.low and self.high < self.bound.value)

    @property
    def shown(self) -> bool:
        """Whether equivalence within ±bound is shown: the p it reads (Holm's where the family adjusts it, else the
        TOST p) is below α."""
        p = self.holm_p if np.isfinite(self.holm_p) else self.p
        return bool(np.isfinite(p) and p < ALPHA)


def tost(test: Welch, bound: Bound, detectable: float) -> Tost:
    """TOST of a Welch comparison at ``bound``, on its 90% interval (NaN p and interval where Welch has none).

    Args:
        test: the Welch comparison.
        bound: the bound.
        detectable: the design's MDD (see :func:`detectable_difference`).
    """
    p = tost_p(test, bound.value)
    if math.isnan(p):
        return Tost(bound, math.nan, math.nan, math.nan, detectable)
    return Tost(bound, test.low90, test.high90, p, detectable)


def tost_p(test: Welch, bound: float) -> float:
    """TOST's p at ±``bound``: the larger of the two one-sided Welch p-values (NaN where Welch has no spread)."""
    if not (np.isfinite(test.se) and test.se > 0 and np.isfinite(test.df)):
        return math.nan
    below = float(stats.t.sf((test.difference + bound) / test.se, test.df))  # H0: difference <= -bound
    above = float(stats.t.cdf((test.difference - bound) / test.se, test.df))  # H0: difference >= +bound
    return max(below, above)


def detectable_difference(sd_x: float, n_x: int, sd_y: float, n_y: int, alpha: float = ALPHA) -> float:
    """The MDD at 80% power of Welch's two-sided test at ``alpha``; NaN below 2 seeds a side or without spread."""
    if min(n_x, n_y) < 2 or not (np.isfinite(sd_x) and np.isfinite(sd_y)) or sd_x + sd_y <= 0:
        return math.nan
    return mdd(sd_x, n_x, sd_y, n_y, alpha, POWER)


@dataclass(frozen=True, eq=False)  # holds arrays
class Comparison:
    """One statistic of a group's seeds (ours) against a reference group's (the authors', the peer's).

    Attributes:
        ours: our seeds' values of the statistic.
        theirs: the reference seeds' values.
        test: Welch's comparison of ours against theirs.
        permutation: the exact permutation test of the same two groups.
        equivalence: TOST at the cell's bound, with the design's MDD.
        holm_p: Welch's p Holm-adjusted within the row's envs (the primary statistic only; NaN otherwise).
    """

    ours: np.ndarray
    theirs: np.ndarray
    test: Welch
    permutation: Permutation
    equivalence: Tost
    holm_p: float = math.nan


def sd(values: np.ndarray) -> float:
    """The SD over seeds (ddof 1); NaN below 2 seeds."""
    return float(values.std(ddof=1)) if len(values) > 1 else math.nan


def compare(ours: np.ndarray, theirs: np.ndarray, bound: Bound, sds: tuple[float, float]) -> Comparison:
    """Our seeds against the reference's: Welch, the exact permutation test, and TOST at ``bound`` with the MDD at
    the SDs the design assumes (``sds``: ours and theirs) (Holm's adjustment not yet applied: :func:`holm_adjusted`).
    """
    test = welch(ours, theirs)
    detectable = detectable_difference(sds[0], len(ours), sds[1], len(theirs))
    return Comparison(ours, theirs, test, permutation_test(ours, theirs), tost(test, bound, detectable))


def holm_adjusted(rows: list[str], comparisons: list[Comparison]) -> list[Comparison]:
    """The comparisons with their Welch p and their TOST p Holm-adjusted within each row's family (its envs).

    Args:
        rows: each comparison's row.
        comparisons: the primary statistic's comparisons, in the same order.
    """
    adjusted = holm_by_row(rows, [c.test.p for c in comparisons])
    adjusted_tost = holm_by_row(rows, [c.equivalence.p for c in comparisons])
    return [
        replace(c, holm_p=p, equivalence=replace(c.equivalence, holm_p=tost_p))
        for c, p, tost_p in zip(comparisons, adjusted, adjusted_tost, strict=True)
    ]
