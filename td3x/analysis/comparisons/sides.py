"""Each side of a registration as numbers: its runs found among the run dirs given (a selector's match, seed by
seed), or the authors' curves, or a published mean; and, for the plan, what the design assumes of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from td3x.analysis.comparisons.schema import Registration
from td3x.analysis.comparisons.side_entries import Selector, Side
from td3x.analysis.comparisons.statistics import Statistic
from td3x.analysis.reading.paper import authors_curves, authors_steps
from td3x.analysis.reading.runs import Run, find_runs

MISSING_VALUE = object()


def recorded(config: dict[str, Any], dotted: str) -> Any:
    """The value a run's config.yaml records at ``dotted`` (``choices.agent``, ``run.total_steps``)."""
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return MISSING_VALUE
        node = node[part]
    return node


def matches(selector: Selector, run: Run) -> bool:
    """Whether the run is one of the selector's: below its folder, recording each of its config values."""
    if selector.folder is not None and not run.path.resolve().is_relative_to(selector.folder.resolve()):
        return False
    return all(recorded(run.config, key) == value for key, value in selector.config)


@dataclass(frozen=True)
class Found:
    """A runs side's runs, seed by seed.

    Attributes:
        complete: the complete runs of registered seeds, in the registered seeds' order.
        registered: how many seeds the side registers.
        problems: why a registered seed has no complete run (missing, unfinished, two complete runs), one line each.
        reruns: the seeds with more than one run dir, one of them complete (a failed or lost run rerun with the
            same seed and config): the complete one counts, and the report lists the seed.
    """

    complete: tuple[Run, ...]
    registered: int
    problems: tuple[str, ...]
    reruns: tuple[int, ...] = ()

    @property
    def is_complete(self) -> bool:
        return not self.problems


def find_side_runs(selector: Selector, runs: Sequence[Run]) -> Found:
    """The selector's complete run for each registered seed: a seed with none (no run, or an unfinished one), or
    with two complete runs (the selector must say which), is a problem; one complete among others is a rerun."""
    by_seed: dict[int, list[Run]] = {}
    for run in runs:
        if matches(selector, run) and run.seed in selector.seeds:
            by_seed.setdefault(run.seed, []).append(run)
    complete, problems, reruns = [], [], []
    for seed in selector.seeds:
        found = by_seed.get(seed, [])
        done = [run for run in found if run.problem is None]
        if len(done) > 1:
            problems.append(f"seed {seed}: {len(done)} complete runs match ({', '.join(str(r.path) for r in done)})")
        elif not found:
            problems.append(f"seed {seed}: no run")
        elif not done:
            problems.append(f"seed {seed}: {found[0].problem}")
        else:
            complete.append(done[0])
            reruns += [seed] if len(found) > 1 else []
    return Found(tuple(complete), len(selector.seeds), tuple(problems), tuple(reruns))


@dataclass(frozen=True, eq=False)  # holds an array
class Values:
    """A side's per-seed values of one statistic, or its published summary.

    Attributes:
        side: the side.
        values: one value per seed (None for a published mean).
        mean: the mean.
        sd: the SD over seeds (ddof 1); 0 for a published mean without one (taken as a constant).
        n: the seeds.
        found: a runs side's runs (None for a reference).
    """

    side: Side
    values: np.ndarray | None
    mean: float
    sd: float
    n: int
    found: Found | None = None

    @property
    def complete(self) -> bool:
        return self.found is None or self.found.is_complete


def side_values(side: Side, statistic: Statistic, runs: Sequence[Run]) -> Values:
    """The side's values of ``statistic`` (a runs side: its complete runs' so far)."""
    if side.runs is not None:
        found = find_side_runs(side.runs, runs)
        if side.reruns:  # declared reruns whose lost runs left no dir: listed with those found
            found = replace(found, reruns=tuple(sorted({*found.reruns, *side.reruns})))
        values = np.array([statistic.of_run(run) for run in found.complete], dtype=np.float64)
        return _of(side, values, found)
    if side.authors_env is not None:
        return _of(side, authors_values(side.authors_env, statistic))
    if side.published_count is not None and side.published_n is not None:  # k of n counted: each run's 0 or 1
        counted = np.arange(side.published_n) < side.published_count
        return _of(side, counted.astype(np.float64))
    mean, sd, n = side.published_mean, side.published_sd, side.published_n
    return Values(side, None, float(mean if mean is not None else np.nan), sd or 0.0, n or 0)


def _of(side: Side, values: np.ndarray, found: Found | None = None) -> Values:
    n = len(values)
    mean = float(values.mean()) if n else float("nan")
    sd = float(values.std(ddof=1)) if n > 1 else float("nan")
    return Values(side, values, mean, sd, n, found)


def authors_values(env_id: str, statistic: Statistic) -> np.ndarray:
    """The statistic over the authors' seeds of the env (schema checks they published curves for it)."""
    curves = authors_curves(env_id)
    assert curves is not None  # the schema refuses an env without curves
    values = statistic.of_curves(authors_steps(curves.shape[1]), curves)
    return np.asarray(values if values is not None else np.full(len(curves), np.nan))


# ------------------------------------------------------------------------------------------------ the design
@dataclass(frozen=True)
class Assumption:
    """What the plan assumes of a side: mean, SD and seeds (n = 0: a constant, the published mean without SD), and
    where the SD comes from."""

    mean: float
    sd: float
    n: int
    rate: float
    source: str
    count: int | None = None  # a published count: fixed, not drawn

    def scaled(self, factor: float) -> Assumption:
        return Assumption(self.mean, self.sd * factor, self.n, self.rate, self.source, self.count)


def assumption(registration: Registration, side: Side, statistic: Statistic, n: int | None = None) -> Assumption:
    """The design's view of a side: a runs side's assumed mean and SD at ``n`` seeds (its registered count
    unless given), the authors' or a published side's own numbers."""
    nan = float("nan")
    if side.runs is None:
        values = side_values(side, statistic, ())
        rate = values.mean if side.published_count is not None else nan
        return Assumption(values.mean, values.sd, values.n, rate, values.side.source, side.published_count)
    assumed = side.assumed
    seeds = len(side.runs.seeds) if n is None else n
    if assumed is None:
        return Assumption(nan, nan, seeds, nan, "nothing assumed (the file's sides.<name>.assumed)")
    sd = assumed.sd if assumed.sd is not None else _sd_from_data(registration, side)
    rate = nan if assumed.rate is None else assumed.rate
    mean = nan if assumed.mean is None else assumed.mean
    return Assumption(mean, nan if sd is None else sd, seeds, rate, assumed.source)


def _sd_from_data(registration: Registration, side: Side) -> float | None:
    """An assumed SD computed from the authors' curves or from pilot runs, with the statistic the file names."""
    assumed = side.assumed
    if assumed is None or assumed.sd_statistic is None:
        return None
    statistic = registration.statistics[assumed.sd_statistic]
    if assumed.sd_from_authors is not None:
        values = authors_values(assumed.sd_from_authors, statistic)
    elif assumed.sd_from_runs is not None:
        folder = assumed.sd_from_runs.folder or registration.path.parent
        found = find_side_runs(assumed.sd_from_runs, find_runs([Path(folder)]))
        values = np.array([statistic.of_run(run) for run in found.complete])
    else:
        return None
    return float(np.std(values, ddof=1)) if len(values) > 1 else None
