"""A registration judged against run dirs: each comparison whose runs are all complete gets its test, its
Holm-adjusted p within its family (once every claim of the family is complete) and its verdict, beside the power
and detectable effect the design registered and the same at the spreads the runs showed. A comparison with a
missing or unfinished run says "incomplete: k of n runs" and shows no number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from td3x.analysis.comparisons.kinds import KINDS, Judgement
from td3x.analysis.comparisons.plan import Planned, planned
from td3x.analysis.comparisons.schema import Comparison, Registration
from td3x.analysis.comparisons.sides import Assumption, Values, matches, side_values
from td3x.analysis.reading.cells import Registered, row_labels
from td3x.analysis.reading.runs import Run
from td3x.analysis.stats.two_sample import holm

DESCRIPTIVE_STATUS = "descriptive (no claim)"


@dataclass(frozen=True)
class Judged:
    """One comparison on its runs.

    Attributes:
        planned: the registered design.
        values: each side's values.
        judgement: the test's result; None while a run of it is missing or unfinished.
        status: the verdict, "descriptive (no claim)", or why there is none yet.
        holm_p: the p adjusted within its Holm family (NaN outside one, or while the family is incomplete).
        observed: the design recomputed at the SDs the runs showed (and the seeds they have).
    """

    planned: Planned
    values: tuple[Values, ...]
    judgement: Judgement | None
    status: str
    holm_p: float = math.nan
    observed: Planned | None = None


@dataclass(frozen=True)
class Verdicts:
    registration: Registration
    rows: tuple[Judged, ...]
    runs_complete: int
    runs_registered: int


def judge(registration: Registration, runs: Sequence[Run]) -> Verdicts:
    """Every comparison of ``registration`` on ``runs`` (run dirs found anywhere: each side's selector picks its
    own)."""
    rows = [_judged(registration, comparison, runs) for comparison in registration.comparisons]
    rows = _holm(registration, rows)
    counted = {name: judged.values[i] for judged in rows for i, name in enumerate(judged.planned.comparison.sides)}
    found = [values.found for values in counted.values() if values.found is not None]
    return Verdicts(registration, tuple(rows), sum(len(f.complete) for f in found), sum(f.registered for f in found))


def _judged(registration: Registration, comparison: Comparison, runs: Sequence[Run]) -> Judged:
    statistic = registration.statistics[comparison.statistic]
    values = tuple(side_values(registration.sides[name], statistic, runs) for name in comparison.sides)
    design = planned(registration, comparison)
    found = [v.found for v in values if v.found is not None]
    if not all(v.complete for v in values):
        complete, registered = sum(len(f.complete) for f in found), sum(f.registered for f in found)
        return Judged(design, values, None, f"incomplete: {complete} of {registered} runs")
    too_few = [v.side.name for v in values if v.values is not None and len(v.values) < 2]
    if too_few:
        return Judged(design, values, None, f"not testable: fewer than 2 seeds in {', '.join(too_few)}")
    judgement = KINDS[comparison.test].judge(comparison, list(values), registration.alpha)
    if comparison.verdict is not None:
        judgement = replace(judgement, shown=comparison.verdict[0], not_shown=comparison.verdict[1])
    status = DESCRIPTIVE_STATUS if not comparison.claim else _verdict(judgement, judgement.p, registration.alpha)
    return Judged(design, values, judgement, status, observed=_observed(registration, design, values))


def _verdict(judgement: Judgement, p: float, alpha: float) -> str:
    return judgement.shown if math.isfinite(p) and p < alpha else judgement.not_shown


def _observed(registration: Registration, design: Planned, values: tuple[Values, ...]) -> Planned:
    """The design at the runs' own SDs and seeds (a reference side as registered): what the runs could see."""
    sides = [
        Assumption(assumed.mean, value.sd, value.n, assumed.rate, "observed") if value.found is not None else assumed
        for assumed, value in zip(design.sides, values, strict=True)
    ]
    kind = KINDS[design.comparison.test]
    power = kind.power(design.comparison, sides, design.alpha, registration)
    return replace(design, sides=tuple(sides), power=power, scaled=power)


def _holm(registration: Registration, rows: list[Judged]) -> list[Judged]:
    """Holm's adjustment within each family of claims, once all of the family is judged; until then its judged
    claims wait."""
    families: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        comparison = row.planned.comparison
        if comparison.claim and comparison.family:
            families.setdefault(comparison.family, []).append(index)
    for members in families.values():
        judged = [index for index in members if rows[index].judgement is not None]
        if len(judged) < len(members):
            for index in judged:
                rows[index] = replace(rows[index], status=f"waiting for its Holm family: {len(judged)} of "
                                      f"{len(members)} comparisons complete", judgement=None)
            continue
        adjusted = holm([rows[index].judgement.p for index in members])  # type: ignore[union-attr]
        for index, p in zip(members, adjusted, strict=True):
            judgement = rows[index].judgement
            assert judgement is not None
            status = _verdict(judgement, float(p), registration.alpha)
            rows[index] = replace(rows[index], holm_p=float(p), status=status)
    return rows


def registered_facts(registration: Registration, runs: Sequence[Run]) -> dict[Path, Registered]:
    """What the registration says of each run a runs side selects, for the report's general tables: the seeds its
    cell expects (its sides' registered seeds), and, where runs of two sides would share a cell (the same config,
    say, but other code or another folder), the side's name, which then ends the row's name."""
    sides = [side for side in registration.sides.values() if side.runs is not None]
    chosen = {side.name: [run for run in runs if side.runs and matches(side.runs, run) and run.seed in side.runs.seeds]
              for side in sides}
    labels = dict(zip((run.path for run in runs), row_labels(list(runs)), strict=True)) if runs else {}
    cells: dict[tuple[str, str], set[frozenset[Path]]] = {}  # each cell's sides, by the runs they choose
    for found in chosen.values():
        for run in found:
            cells.setdefault((labels[run.path], run.env_id), set()).add(frozenset(r.path for r in found))
    facts: dict[Path, Registered] = {}
    for side in sides:
        assert side.runs is not None
        for run in chosen[side.name]:
            shared = len(cells[(labels[run.path], run.env_id)]) > 1
            seeds = facts[run.path].seeds if run.path in facts else frozenset()
            facts[run.path] = Registered(seeds | frozenset(side.runs.seeds), side.name if shared else None)
    return facts
