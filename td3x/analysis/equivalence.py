"""Equivalence at a bound, for the fidelity and peer sections: where each cell's bound comes from (a rule stated as
post hoc, or a bound given per env), TOST at that bound with its 90% Welch interval, the minimum detectable
difference (MDD) of the difference test beside it, and the display and CSV columns both sections share.

- **The bound** (return units): ``DEFAULT_FRACTION`` (0.2) × the reference's mean: the authors' (fidelity), the
  peer's (peer) or, with ``td3x-report --peer-bound-of ours``, the compared row's. A peer env given a bound
  (``--peer-bound ENV=BOUND``, one fixed before the runs, say by a registration) takes it instead on every row. The
  tests here are all post hoc, and the tables say so: a registered comparison is judged by ``--registration``.
- **TOST**: two one-sided Welch tests of H0: difference ≤ −bound and H0: difference ≥ +bound, each at α; the TOST p
  is the larger one-sided p; equivalently, the 90% Welch interval lies inside (−bound, +bound). Equivalence is
  claimed only where the (Holm-adjusted) TOST p is below α; a non-rejection of the difference test never is.
- **The MDD**: the true difference Welch's two-sided test at α detects with 80% power (noncentral t,
  ``td3x.analysis.power``) at the cell's seeds against the reference's, at the SDs the design assumes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from td3x.analysis.power import mdd
from td3x.analysis.tables import number, p_text
from td3x.analysis.two_sample import ALPHA, MAX_LISTED, Permutation, Welch

POWER = 0.8  # the power of every MDD
DEFAULT_FRACTION = 0.2  # the post-hoc bound: 0.2 × the reference's mean
PEER_MEANS = {"peer": "the peer's", "ours": "td3x's"}  # whose mean a post-hoc peer bound is a share of, as named
EQUIVALENT, NOT_SHOWN = "equivalent within ±{bound}", "equivalence not shown"


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
    def decision_p(self) -> float:
        """The p the decision reads: Holm's where the family adjusts it, else the TOST p."""
        return self.holm_p if np.isfinite(self.holm_p) else self.p

    @property
    def decision(self) -> str:
        """``equivalent within ±bound`` when the decision's p is below α, else ``equivalence not shown``."""
        if np.isfinite(self.decision_p) and self.decision_p < ALPHA:
            return EQUIVALENT.format(bound=number(self.bound.value))
        return NOT_SHOWN


def tost(test: Welch, bound: Bound, detectable: float) -> Tost:
    """TOST of a Welch comparison at ``bound``, on its 90% interval (NaN p and interval where Welch has none).

    Args:
        test: the Welch comparison.
        bound: the bound.
        detectable: the design's MDD (see :func:`detectable_difference`).
    """
    if not (np.isfinite(test.se) and test.se > 0 and np.isfinite(test.df)):
        return Tost(bound, math.nan, math.nan, math.nan, detectable)
    below = float(stats.t.sf((test.difference + bound.value) / test.se, test.df))  # H0: difference <= -bound
    above = float(stats.t.cdf((test.difference - bound.value) / test.se, test.df))  # H0: difference >= +bound
    return Tost(bound, test.low90, test.high90, max(below, above), detectable)


def detectable_difference(sd_x: float, n_x: int, sd_y: float, n_y: int, alpha: float = ALPHA) -> float:
    """The MDD at 80% power of Welch's two-sided test at ``alpha``; NaN below 2 seeds a side or without spread."""
    if min(n_x, n_y) < 2 or not (np.isfinite(sd_x) and np.isfinite(sd_y)) or sd_x + sd_y <= 0:
        return math.nan
    return mdd(sd_x, n_x, sd_y, n_y, alpha, POWER)


# ---------------------------------------------------------------------------------------------------- columns
BOUND_COLUMN, INTERVAL_COLUMN, REACH_COLUMN = "bound ±", "90% CI [inside ±bound?]", "90% CI reaches"
TOST_COLUMN, HOLM_TOST_COLUMN, MDD_COLUMN = "TOST p", "Holm TOST p", "MDD (80%)"
PERMUTATION_COLUMN, DECISION_COLUMN = "permutation p (smallest possible)", "equivalence"
ORIGIN_COLUMN = "bound from"  # the same long text down most tables: the Markdown shows it as a note (tables.Notes)


def interval_text(result: Tost) -> str:
    """``[low, high] yes|no``: the 90% interval and whether it lies inside the bound."""
    if not np.isfinite(result.low):
        return "n/a"
    return f"[{number(result.low)}, {number(result.high)}] {'yes' if result.inside else 'no'}"


def permutation_text(result: Permutation, level: float) -> str:
    """``p (smallest)``, marked ``never < level`` where no labelling could reject at ``level``."""
    if not np.isfinite(result.p):
        too_many = result.relabellings > MAX_LISTED
        return f"n/a: {result.relabellings} relabellings, too many to list" if too_many else "n/a"
    never = f"; never < {level:.3g}" if result.smallest >= level else ""
    return f"{p_text(result.p)} ({p_text(result.smallest)}{never})"


def display_columns(
    tests: list[Welch], results: list[Tost], permutations: list[Permutation], levels: list[float], holm: bool
) -> dict[str, list[object]]:
    """The display columns of TOST at each cell's bound, the MDD, the reach of the 90% interval and the exact
    permutation test (``levels``: the level each cell's permutation test would have to beat); with ``holm`` (the
    primary statistic) the Holm-adjusted TOST p and the equivalence decision too."""
    columns: dict[str, list[object]] = {
        BOUND_COLUMN: [number(r.bound.value) for r in results],
        ORIGIN_COLUMN: [r.bound.origin for r in results],
        INTERVAL_COLUMN: [interval_text(r) for r in results],
        TOST_COLUMN: [p_text(r.p) for r in results],
    }
    if holm:
        columns[HOLM_TOST_COLUMN] = [p_text(r.holm_p) for r in results]
    columns[MDD_COLUMN] = [number(r.mdd) for r in results]
    columns[REACH_COLUMN] = [f"±{number(t.reach)}" if np.isfinite(t.reach) else "n/a" for t in tests]
    columns[PERMUTATION_COLUMN] = [permutation_text(p, level) for p, level in zip(permutations, levels, strict=True)]
    if holm:  # a decision for the primary statistic only: the descriptive tables show the numbers, not a verdict
        columns[DECISION_COLUMN] = [r.decision for r in results]
    return columns


def csv_columns(
    statistic: str, tests: list[Welch], results: list[Tost], permutations: list[Permutation]
) -> dict[str, list[object]]:
    """The CSV columns of the same numbers, prefixed by ``statistic``."""
    return {
        f"{statistic}_bound": [r.bound.value for r in results],
        f"{statistic}_bound_from": [r.bound.origin for r in results],
        f"{statistic}_ci90_low": [r.low for r in results],
        f"{statistic}_ci90_high": [r.high for r in results],
        f"{statistic}_ci90_inside_bound": [r.inside for r in results],
        f"{statistic}_tost_p": [r.p for r in results],
        f"{statistic}_holm_tost_p": [r.holm_p for r in results],
        f"{statistic}_mdd": [r.mdd for r in results],
        f"{statistic}_ci90_reach": [t.reach for t in tests],
        f"{statistic}_permutation_p": [p.p for p in permutations],
        f"{statistic}_permutation_smallest_p": [p.smallest for p in permutations],
        f"{statistic}_permutation_relabellings": [p.relabellings for p in permutations],
        f"{statistic}_equivalence": [r.decision for r in results],
    }


def columns_text(reference: str, mdd_design: str) -> str:
    """One sentence per column of TOST, the MDD, the reach and the permutation test, for a section's Markdown.

    Args:
        reference: the reference group, e.g. "the authors".
        mdd_design: the SDs and seeds the MDD assumes.
    """
    return (
        f"*ours − {reference} [95% CI]*: the difference of means with its 95% Welch interval. *bound ±*: the "
        "equivalence bound in return units, and *bound from* where it comes from, a numbered mark whose note "
        "follows the first table that uses it (a bound not given to td3x-report is post hoc). *90% CI [inside "
        "±bound?]*: the 90% Welch interval of the difference and "
        "whether it lies inside (−bound, +bound). *TOST p*: two one-sided Welch tests at the bound, the larger "
        "one-sided p (below α exactly when the 90% interval lies inside), *Holm TOST p* the same Holm-adjusted "
        'per row; *equivalence* (the primary statistic only) reads "equivalent within ±bound" only when that p '
        'is below α, else "equivalence not shown": TOST can show a difference is smaller than the bound, never '
        "that there is none, and it cannot pass when the seeds' spread makes the 90% interval wider than the "
        f"bound. *MDD (80%)*: the true difference the two-sided Welch test at α detects with 80% power "
        f"({mdd_design}); a smaller true "
        "difference is likely missed, so a non-rejection says little where the MDD is large. *90% CI reaches*: "
        "the largest |end| of the 90% interval, a summary of this draw, not a bound fixed in advance. "
        "*permutation p (smallest possible)*: the exact two-sided permutation test on Welch's t over every "
        "relabelling of the pooled seeds, valid without normality, and the smallest p those labellings can give "
        f"(listed up to {MAX_LISTED} relabellings; n/a beyond: too many to list); "
        '"never < x" marks a cell that can never reject at the level it is judged at (Holm\'s first step, α over '
        "the row's envs, for the primary statistic)."
    )
