"""The tables of the fidelity and peer sections: a statistic's comparisons of rows against a reference group (the
authors', the peer's), display (text: ``test_frame``) and CSV (numbers: ``csv_columns``), with the sentence per column
their Markdown gives (``columns_text``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from td3x.analysis.render.tables import number, p_text, signed, verdicts_first
from td3x.analysis.stats.equivalence import Comparison, Tost
from td3x.analysis.stats.two_sample import ALPHA, MAX_LISTED, Permutation, Welch

EQUIVALENT, NOT_SHOWN = "equivalent within ±{bound}", "equivalence not shown"
BOUND_COLUMN, INTERVAL_COLUMN, REACH_COLUMN = "bound ±", "90% CI [inside ±bound?]", "90% CI reaches"
TOST_COLUMN, HOLM_TOST_COLUMN, MDD_COLUMN = "TOST p", "Holm TOST p", "MDD (80%)"
PERMUTATION_COLUMN, DECISION_COLUMN = "permutation p (smallest possible)", "equivalence"
ORIGIN_COLUMN = "bound from"  # the same long text down most tables: the Markdown shows it as a note (tables.Notes)
OUTCOME_COLUMN = "outcome"  # the difference test's verdict (the fidelity tables'), shown first with equivalence's


def decision(result: Tost) -> str:
    """``equivalent within ±bound`` when TOST shows it (:attr:`Tost.shown`), else ``equivalence not shown``."""
    return EQUIVALENT.format(bound=number(result.bound.value)) if result.shown else NOT_SHOWN


def difference_text(test: Welch) -> str:
    """``+d [low, high]``: a Welch comparison's difference of means with its 95% interval."""
    return f"{signed(test.difference)} [{number(test.low)}, {number(test.high)}]"


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


def test_frame(
    rows: list[str], envs: list[str], comparisons: list[Comparison], reference: tuple[str, str], primary: bool,
    after_seeds: Mapping[str, Sequence[object]], outcome: Sequence[str] = (),
) -> pd.DataFrame:
    """The display table of one statistic's comparisons: per row and env, the seeds, our and the reference's means,
    the difference [95% Welch interval], Welch's p (Holm's too for the primary statistic), the equivalence columns
    (:func:`tost_columns`), the verdicts first.

    Args:
        rows: each comparison's row.
        envs: each comparison's env.
        comparisons: the statistic's comparisons, in the same order.
        reference: the reference group's name and its possessive, e.g. ``("authors", "authors'")``.
        primary: whether the statistic is the primary one.
        after_seeds: more columns by name, after the seeds (the authors' last step T, the peer's seeds).
        outcome: the difference test's verdict per comparison, after Holm's p (the primary statistic's; none: left
            out).
    """
    name, possessive = reference
    columns: dict[str, Sequence[object]] = {
        "env": envs,
        "seeds": [len(c.ours) for c in comparisons],
        **after_seeds,
        "ours": [number(float(c.ours.mean())) for c in comparisons],
        possessive: [number(float(c.theirs.mean())) for c in comparisons],
        f"ours − {name} [95% CI]": [difference_text(c.test) for c in comparisons],
        "Welch p": [p_text(c.test.p) for c in comparisons],
    }
    if primary:
        columns["Holm p"] = [p_text(c.holm_p) for c in comparisons]
    if outcome:
        columns[OUTCOME_COLUMN] = outcome
    levels = [ALPHA / rows.count(row) if primary else ALPHA for row in rows]  # Holm's first step for the primary
    frame = pd.DataFrame(columns | tost_columns(comparisons, levels, primary), index=pd.Index(rows, name="row"))
    return verdicts_first(frame, [OUTCOME_COLUMN, DECISION_COLUMN], keys=1)


def tost_columns(comparisons: list[Comparison], levels: list[float], primary: bool) -> dict[str, list[object]]:
    """The display columns of TOST at each cell's bound, the MDD, the reach of the 90% interval and the exact
    permutation test (``levels``: the level each cell's permutation test would have to beat); for the primary
    statistic the Holm-adjusted TOST p and the equivalence decision too."""
    results = [c.equivalence for c in comparisons]
    columns: dict[str, list[object]] = {
        BOUND_COLUMN: [number(r.bound.value) for r in results],
        ORIGIN_COLUMN: [r.bound.origin for r in results],
        INTERVAL_COLUMN: [interval_text(r) for r in results],
        TOST_COLUMN: [p_text(r.p) for r in results],
    }
    if primary:
        columns[HOLM_TOST_COLUMN] = [p_text(r.holm_p) for r in results]
    columns[MDD_COLUMN] = [number(r.mdd) for r in results]
    columns[REACH_COLUMN] = [f"±{number(c.test.reach)}" if np.isfinite(c.test.reach) else "n/a" for c in comparisons]
    tests = zip(comparisons, levels, strict=True)
    columns[PERMUTATION_COLUMN] = [permutation_text(c.permutation, level) for c, level in tests]
    if primary:  # a decision for the primary statistic only: the descriptive tables show the numbers, not a verdict
        columns[DECISION_COLUMN] = [decision(r) for r in results]
    return columns


def csv_columns(
    statistic: str, comparisons: list[Comparison], reference: str, primary: bool
) -> dict[str, list[object]]:
    """The CSV columns of one statistic's comparisons, prefixed by ``statistic``: our and the reference's means, the
    difference with its 95% Welch interval and p (Holm's too for the primary statistic), TOST at the bound, the MDD,
    the reach of the 90% interval, the exact permutation test and the equivalence decision.

    Args:
        statistic: the statistic's name.
        comparisons: its comparisons.
        reference: the reference group's name in the column names, e.g. ``authors``.
        primary: whether the statistic is the primary one.
    """
    tests, results = [c.test for c in comparisons], [c.equivalence for c in comparisons]
    columns: dict[str, list[object]] = {
        f"{statistic}_ours": [float(c.ours.mean()) for c in comparisons],
        f"{statistic}_{reference}": [float(c.theirs.mean()) for c in comparisons],
        f"{statistic}_difference": [t.difference for t in tests],
        f"{statistic}_ci_low": [t.low for t in tests],
        f"{statistic}_ci_high": [t.high for t in tests],
        f"{statistic}_p": [t.p for t in tests],
    }
    if primary:
        columns[f"{statistic}_holm_p"] = [c.holm_p for c in comparisons]
    return columns | {
        f"{statistic}_bound": [r.bound.value for r in results],
        f"{statistic}_bound_from": [r.bound.origin for r in results],
        f"{statistic}_ci90_low": [r.low for r in results],
        f"{statistic}_ci90_high": [r.high for r in results],
        f"{statistic}_ci90_inside_bound": [r.inside for r in results],
        f"{statistic}_tost_p": [r.p for r in results],
        f"{statistic}_holm_tost_p": [r.holm_p for r in results],
        f"{statistic}_mdd": [r.mdd for r in results],
        f"{statistic}_ci90_reach": [t.reach for t in tests],
        f"{statistic}_permutation_p": [c.permutation.p for c in comparisons],
        f"{statistic}_permutation_smallest_p": [c.permutation.smallest for c in comparisons],
        f"{statistic}_permutation_relabellings": [c.permutation.relabellings for c in comparisons],
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
