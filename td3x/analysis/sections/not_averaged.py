"""The report's record of its cells and runs: every cell's numbers (``cells.csv``), every run found (``runs.csv``)
and the runs and seeds in no number (``not_averaged.csv``), whose section closes report.md."""

from __future__ import annotations

import numpy as np
import pandas as pd

from td3x.algo.seed_statistics import last10_return
from td3x.analysis.reading.cells import Grid
from td3x.analysis.reading.paper import paper_env, table1_score, table2_score
from td3x.analysis.render import tables
from td3x.analysis.render.tables import Notes, Stats
from td3x.analysis.sections.bias import run_mean
from td3x.analysis.sections.section import Frames, Report, Section
from td3x.analysis.stats.metrics import Estimate


class NotAveragedSection(Section):
    """The record of the cells and runs, and the section listing what was not averaged."""

    def frames(self, report: Report) -> Frames:
        """``cells``, ``runs`` and ``not_averaged``."""
        return {
            "cells": cells_csv_frame(report.grid, report.stats, report.at_step),
            "runs": runs_csv_frame(report.grid),
            "not_averaged": left_out_frame(report.grid),
        }

    def markdown(self, report: Report, frames: Frames, notes: Notes) -> str:
        frame = frames["not_averaged"]
        if frame.empty:
            return "## Runs not averaged\n\nNone: every cell averages all its seeds."
        return (
            "## Runs not averaged\n\nThese runs are in no number above (unfinished, failed, duplicate seeds), and "
            f"these seeds have no run dir; their cells are marked (!).\n\n{tables.markdown(frame)}"
        )


def cells_csv_frame(grid: Grid, stats: Stats, at_step: int) -> pd.DataFrame:
    """Every cell's numbers, one line per (row, env) in the order of ``stats``, with the paper's numbers and the
    cell's flags.

    Args:
        grid: the report's cells.
        stats: per (row, env), the cell's numbers.
        at_step: the env step of the "return at" columns (it names them).
    """
    return pd.DataFrame([_cell_record(grid, stats, key, at_step) for key in stats])


def _cell_record(grid: Grid, stats: Stats, key: tuple[str, str], at_step: int) -> dict[str, object]:
    s, cell = stats[key], grid.cells[key]
    peak = None if s.peak_untrained else s.peak  # the untrained policy's value is not Table 1's metric
    table1 = table1_score(cell.paper_row, cell.env_id) or (np.nan, None)
    paper2 = table2_score(cell.paper_row, cell.env_id)
    return {
        "row": cell.row,
        "paper_row": cell.paper_row,
        "env": cell.env_id,
        "paper_env": paper_env(cell.env_id),
        "seeds": " ".join(map(str, cell.seeds)),
        "interval": s.interval,
        **_estimate_columns("last10", s.last10),
        "last10_has_step0": s.last10_has_step0,
        "paper_table2": paper2,
        "max_is_untrained": s.peak_untrained,
        "max_mean": peak.value if peak else np.nan,
        "max_std": peak.std if peak else np.nan,
        "max_step": peak.step if peak else None,
        "paper_table1": table1[0],
        "paper_table1_std": table1[1],
        **_estimate_columns(f"return_at_{at_step}", s.at_step),
        **_estimate_columns("auc", s.auc),
        **{f"{column}_last": band.mean[-1] for column, band in s.bias.items()},
        **{f"{column}_run_mean": run_mean(band) for column, band in s.bias.items()},
        "flagged": cell.flagged,
        "not_averaged": "; ".join(cell.notes()),
    }


def _estimate_columns(name: str, estimate: Estimate) -> dict[str, float | int]:
    return {
        name: estimate.value,
        f"{name}_ci_low": estimate.low,
        f"{name}_ci_high": estimate.high,
        f"{name}_n": estimate.n,
    }


def runs_csv_frame(grid: Grid) -> pd.DataFrame:
    """Every run found, by path: its row, env, seed, status, its actor's gradient norm at its last log row (0: an
    actor that no longer learns), and why it was not averaged (empty when it was)."""
    rows_runs = sorted(
        ((cell.row, run) for cell in grid.cells.values() for run in (*cell.runs, *cell.left_out)),
        key=lambda row_run: str(row_run[1].path),
    )
    runs = [run for _, run in rows_runs]
    return pd.DataFrame(
        {
            "path": [str(run.path) for run in runs],
            "row": [row for row, _ in rows_runs],
            "env": [run.env_id for run in runs],
            "seed": [run.seed for run in runs],
            "status": [(run.summary or {}).get("status") for run in runs],
            "evaluations": [len(run.evals) for run in runs],
            "last_step": [int(run.steps[-1]) if len(run.evals) else None for run in runs],
            "last10_return": [float(last10_return(run.returns)) if len(run.evals) else None for run in runs],
            "actor_grad_norm_last": [run.actor_grad_norm for run in runs],
            "problem": [run.problem or "" for run in runs],
        }
    )


def left_out_frame(grid: Grid) -> pd.DataFrame:
    """One line per flagged cell and reason: which runs were not averaged, which seeds have no run."""
    lines = [(cell.row, cell.env_id, note) for cell in grid.cells.values() for note in cell.notes()]
    return pd.DataFrame(lines, columns=["row", "env", "not averaged"]).set_index("row")
