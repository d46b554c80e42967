"""The columns of TOST at a bound, the MDD, the reach of the 90% interval and the exact permutation test in the
fidelity and peer tables, display (text) and CSV (numbers), with the sentence per column their Markdown gives."""

from __future__ import annotations

import numpy as np

from td3x.analysis.render.tables import number, p_text
from td3x.analysis.stats.equivalence import Tost
from td3x.analysis.stats.two_sample import MAX_LISTED, Permutation, Welch

EQUIVALENT, NOT_SHOWN = "equivalent within ±{bound}", "equivalence not shown"
BOUND_COLUMN, INTERVAL_COLUMN, REACH_COLUMN = "bound ±", "90% CI [inside ±bound?]", "90% CI reaches"
TOST_COLUMN, HOLM_TOST_COLUMN, MDD_COLUMN = "TOST p", "Holm TOST p", "MDD (80%)"
PERMUTATION_COLUMN, DECISION_COLUMN = "permutation p (smallest possible)", "equivalence"
ORIGIN_COLUMN = "bound from"  # the same long text down most tables: the Markdown shows it as a note (tables.Notes)


def decision(result: Tost) -> str:
    """``equivalent within ±bound`` when TOST shows it (:attr:`Tost.shown`), else ``equivalence not shown``."""
    return EQUIVALENT.format(bound=number(result.bound.value)) if result.shown else NOT_SHOWN


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
        columns[DECISION_COLUMN] = [decision(r) for r in results]
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
        f"{statistic}_equivalence": [decision(r) for r in results],
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
