"""The overestimation-bias section: per cell the critics' estimation bias as td3x measures it (``eval.csv``'s
``bias_q1`` and ``bias_min_q``), at the last evaluation and averaged over the run, and its curves.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from td3x.analysis.reading.cell_stats import BIAS_COLUMNS, CellStats
from td3x.analysis.render import tables
from td3x.analysis.render.plots import Curve, Dash, Figures, Panel
from td3x.analysis.render.tables import EMPTY, T_MARK, Notes, number, signed
from td3x.analysis.sections.section import Frames, Report, Section
from td3x.analysis.stats.metrics import STUDENT_T, Band

# a bias plot draws each row in its colour, and each of its estimates in a line style of its own
BIAS_DASHES: dict[str, Dash] = {"bias_q1": "-", "bias_min_q": "--"}
TITLE = "Overestimation bias"
TEXT = (
    "The critics' estimation bias as td3x measures it: at each evaluation, over the states the noise-free "
    "policy's episodes visit, the mean of Q(s, a) minus the discounted return that followed in that episode "
    "(`eval.csv`'s `bias_q1` and `bias_min_q`). The paper's §4.1 (Figs. 1-2) measured it otherwise: the value "
    "estimate averaged over 10,000 replay-buffer states, against the average discounted return of 1,000 "
    "rollouts from such states; other states, and another comparator. Per estimate, the mean over seeds at the "
    "last evaluation [95% interval], then the seed-mean curve averaged over evaluations 1..end. Positive: the "
    "critic overestimates. The bias plots draw the whole curves."
)


def bias_text(stats: CellStats) -> str:
    """The overestimation bias of each estimate the runs logged (Q1, and the min over critics with two or more):
    the seed-mean at the last evaluation [95% interval, ``§`` when Student-t's], and the mean curve's average over
    evaluations 1..end."""
    mark = T_MARK if stats.interval == STUDENT_T else ""
    parts = [
        f"{BIAS_COLUMNS[column]} {signed(band.mean[-1])} [{number(band.low[-1])}, {number(band.high[-1])}]{mark}, "
        f"run mean {signed(run_mean(band))}"
        for column, band in stats.bias.items()
    ]
    return "; ".join(parts) or EMPTY


def run_mean(band: Band) -> float:
    """A bias curve's mean over evaluations 1..end (the untrained step 0 left out), NaN points skipped."""
    after_start = band.mean[1:]
    return float(np.nanmean(after_start)) if np.isfinite(after_start).any() else float("nan")


class BiasSection(Section):
    """The bias table (rows × envs) and per env the bias curves."""

    def frames(self, report: Report) -> Frames:
        """``bias``: rows × envs of the bias texts."""
        return {"bias": tables.grid_frame(report.grid, report.stats, bias_text)}

    def markdown(self, report: Report, frames: Frames, notes: Notes) -> str:
        return tables.table_section(TITLE, TEXT, frames["bias"], notes)

    def plot_env(self, report: Report, env_id: str, figures: Figures) -> None:
        """The bias curves of the env's cells, a panel per row (none where no run logged them), each estimate in its
        own line style."""
        panels = []
        for s in report.env_cells(env_id):
            style = figures.styles[s.cell.row]
            curves = [Curve(BIAS_COLUMNS[c], band, replace(style, dash=BIAS_DASHES[c])) for c, band in s.bias.items()]
            panels += [Panel(s.cell.row, curves)] if curves else []
        if not panels:
            return  # runs logged no overestimation columns
        figures.bands(
            panels,
            f"bias_{env_id}",
            f"{env_id}: overestimation bias, Q(s, a) minus the discounted return",
            ("env steps", "estimation bias"),
            "every bias value is NaN: no evaluation episode terminated, and none was long enough for the discounted "
            "return of its early states to be known (γ^remaining < 0.01), so no state was counted",
        )
