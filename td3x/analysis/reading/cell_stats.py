"""The numbers of one table cell, from its complete runs' eval.csv files: the paper's metrics with 95% intervals
(by the interval rule of ``metrics.interval_method``: Student-t below 10 seeds, percentile bootstrap from 10), the
learning curve with its band, and the critics' overestimation bias when the runs logged it."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from td3x.algo.seed_statistics import PAPER_LAST_EVALUATIONS, last10_return
from td3x.analysis.reading.cells import Cell
from td3x.analysis.reading.runs import Run
from td3x.analysis.stats.metrics import (
    Band,
    Estimate,
    Peak,
    area_under_curve,
    curve_bands,
    interval_method,
    max_average_return,
    mean_estimates,
    return_at,
)

# eval.csv's overestimation columns: mean Q(s, a) minus the discounted return that followed, per critic estimate
BIAS_COLUMNS = {"bias_q1": "Q1", "bias_min_q": "min over critics"}


@dataclass(frozen=True, eq=False)
class CellStats:
    """One cell's numbers.

    Attributes:
        cell: the cell (its complete runs are the ones used).
        steps: the evaluation steps every complete run has.
        curves: the runs' returns at those steps, shape (seeds, steps), in seed order.
        last10: Table 2's metric: mean over seeds of the last-10 mean, with its 95% interval.
        peak: Table 1's metric (None with no evaluation after step 0).
        at_step: the return at the report's ``at_step``, with its interval (NaN when runs stop earlier).
        auc: the area under the curve per step (the return averaged over training), with its interval.
        band: the mean learning curve with a pointwise 95% interval.
        bias: per overestimation column logged by every run, its mean curve with a pointwise 95% interval.
    """

    cell: Cell
    steps: np.ndarray
    curves: np.ndarray
    last10: Estimate
    peak: Peak | None
    at_step: Estimate
    auc: Estimate
    band: Band
    bias: dict[str, Band]

    @property
    def scores(self) -> dict[int, float]:
        """Each seed's last-10 mean."""
        return dict(zip(self.cell.seeds, map(float, last10_return(self.curves)), strict=True))

    @property
    def interval(self) -> str:
        """How the cell's 95% intervals were made (``metrics.interval_method`` of its number of seeds)."""
        return interval_method(len(self.curves))

    @property
    def peak_untrained(self) -> bool:
        """Whether Table 1's maximum is the untrained policy's: no evaluation after step 0 has a seed-mean return
        above step 0's (on Ant, for one, the policy is still the untrained one at 5k steps, scoring what it scored
        at step 0)."""
        return bool(self.peak is not None and self.steps[0] == 0 and self.peak.value <= self.curves[:, 0].mean())

    @property
    def last10_has_step0(self) -> bool:
        """Whether the last-10 mean takes in the untrained policy's step-0 evaluation (10 or fewer evaluations)."""
        return bool(len(self.steps) <= PAPER_LAST_EVALUATIONS and self.steps[0] == 0)


def shared_steps(runs: tuple[Run, ...]) -> np.ndarray:
    """The evaluation steps all runs have (one grid for runs of one config; resumed runs may add steps)."""
    return functools.reduce(np.intersect1d, (run.steps for run in runs))


def column_matrix(runs: tuple[Run, ...], steps: np.ndarray, column: str) -> np.ndarray | None:
    """One eval.csv column of every run at ``steps``, shape (runs, steps); None when a run lacks the column.

    Args:
        runs: runs that all evaluated at ``steps``.
        steps: the evaluation steps to take.
        column: an eval.csv column, e.g. ``return_mean`` or ``bias_q1``.
    """
    rows = []
    for run in runs:
        values = run.column(column)
        if values is None:
            return None
        rows.append(values[np.searchsorted(run.steps, steps)])
    return np.array(rows)


def bias_columns(cell: Cell) -> list[str]:
    """The bias columns worth showing for a cell: the min over critics only with two or more critics (with one,
    it is Q1 again)."""
    n_critics = int(cell.runs[0].config.get("agent", {}).get("n_critics", 2))
    return [column for column in BIAS_COLUMNS if column != "bias_min_q" or n_critics > 1]


def cell_stats(cell: Cell, at_step: int, reps: int, seed: int) -> CellStats | None:
    """A cell's numbers from its complete runs, or None when it has none (or they share no evaluation step).

    Args:
        cell: the cell.
        at_step: the env step for the "return at" column, e.g. 100_000.
        reps: bootstrap replications (cells with 10 or more seeds).
        seed: seeds the resampling.
    """
    if not cell.runs:
        return None
    steps = shared_steps(cell.runs)
    curves = column_matrix(cell.runs, steps, "return_mean")
    if curves is None or len(steps) == 0:
        return None
    returns_at = [return_at(steps, curve, at_step) for curve in curves]
    areas = [float(area_under_curve(steps, curve)) for curve in curves]
    per_seed = np.column_stack([last10_return(curves), returns_at, areas])
    last10, at_step_estimate, auc = mean_estimates(per_seed, reps, seed)
    found = {column: column_matrix(cell.runs, steps, column) for column in bias_columns(cell)}
    bias = {column: matrix for column, matrix in found.items() if matrix is not None}
    band, *bias_bands = curve_bands(np.stack([curves, *bias.values()], axis=1), steps, reps, seed)
    peak = max_average_return(curves, steps) if len(steps) > 1 else None
    return CellStats(
        cell, steps, curves, last10, peak, at_step_estimate, auc, band, dict(zip(bias, bias_bands, strict=True))
    )
