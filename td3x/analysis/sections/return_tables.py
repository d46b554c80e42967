"""The returns' section: the paper's Table 2 and Table 1 beside our cells, the return at a step and the area under
the curve, the learning-curve plots; and the report's record of its cells and runs: ``cells.csv``, ``runs.csv`` and
the runs not averaged (the report's last section of numbers).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from td3x.algo.seed_statistics import last10_return
from td3x.analysis.reading.cell_stats import CellStats
from td3x.analysis.reading.cells import Grid
from td3x.analysis.reading.paper import PAPER_STEPS, paper_env, table1_score, table2_score
from td3x.analysis.render import plots, tables
from td3x.analysis.render.plots import Curve, Figures, Panel, Style
from td3x.analysis.render.tables import EMPTY, SHORT_MARK, STEP0_MARK, Stats, difference, estimate_text, number
from td3x.analysis.sections.bias import run_mean
from td3x.analysis.sections.fidelity import Fidelity, authors_band_until, curve_title
from td3x.analysis.stats.metrics import MIN_BOOTSTRAP_SEEDS, Band, Estimate

UNTRAINED_PEAK = "— (no evaluation after step 0 beats step 0)"
# the curve figure's legend entries: a panel's own row, and the other rows' means behind it, for comparison
ROW_CURVE = "the panel's row: mean over seeds, 95% interval"
OTHER_ROWS = "the other rows' means"
OTHER_ROWS_STYLE = Style("#cccccc")  # light: behind the row's own curve, apart from the authors' black
# (name, title, what the table holds): the display tables in the report's order; "return_at" is named by its step
SECTIONS = (
    (
        "table2",
        "Table 2 layout: average return over the last 10 evaluations",
        "Per seed the mean of its last 10 evaluations, then the mean over seeds [95% interval] and the number of "
        "seeds. *paper*: Table 2 of Fujimoto et al. (2018) for the gym -v1 task of the same name (other dynamics "
        "than Gymnasium v5), Δ = ours − paper.",
    ),
    (
        "table1",
        "Table 1: max average return",
        "The max over evaluations 1..end (step 0 excluded) of the seed-averaged curve ± the std across seeds "
        "(ddof=0) at that evaluation, @ its env step. *paper*: Table 1 (TD3 with its std; DDPG; AHE as Our DDPG). "
        "Where no evaluation after step 0 beats step 0 the maximum would be the untrained policy's return (the "
        "policy is not updated during the random warm-up): it is not printed.",
    ),
    ("return_at", "Return at {at_step} env steps", "Interpolated between evaluations; n/a when runs stop earlier."),
    (
        "auc",
        "Area under the learning curve",
        "Per seed the area under its evaluation curve divided by the run's length in steps (the return averaged over "
        "training), then the mean over seeds: how fast a row learns, comparable between runs of one length.",
    ),
)
LATEX_CAPTIONS = {
    "table2": "Average return over the last 10 evaluations: mean over seeds [95\\% interval], beside the paper's "
    "Table 2 (Fujimoto et al., 2018).",
    "table1": "Max average return: max of the seed-averaged curve $\\pm$ std across seeds at that evaluation, "
    "beside the paper's Table 1; not printed where no evaluation after step 0 beats step 0.",
}


# ---------------------------------------------------------------------------------------------------- cell text
def table2_text(stats: CellStats) -> str:
    """Table 2's cell: the last-10 mean with CI (``†`` when it takes in step 0), then the paper's number and our
    difference where it has one."""
    paper = table2_score(stats.cell.paper_row, stats.cell.env_id)
    beside = "" if paper is None else beside_paper(stats, number(paper), stats.last10.value - paper)
    return estimate_text(stats.last10) + (STEP0_MARK if stats.last10_has_step0 else "") + beside


def table1_text(stats: CellStats) -> str:
    """Table 1's cell: max of the mean curve ± std at that step, then the paper's number where it has one. Where
    that max is the untrained policy's (no evaluation after step 0 beats step 0), the metric is not printed."""
    if stats.peak is None:
        return EMPTY
    if stats.peak_untrained:
        ours = f"{UNTRAINED_PEAK} n={len(stats.curves)}"
    else:
        ours = f"{number(stats.peak.value)} ± {number(stats.peak.std)} @{stats.peak.step} n={len(stats.curves)}"
    paper = table1_score(stats.cell.paper_row, stats.cell.env_id)
    if paper is None:
        return ours
    std = "" if paper[1] is None else f" ± {number(paper[1])}"
    return ours + beside_paper(stats, f"{number(paper[0])}{std}", stats.peak.value - paper[0])


def beside_paper(stats: CellStats, paper: str, ours_minus_paper: float) -> str:
    """The paper's number after a cell's text, with our difference Δ when the cell's runs are as long as the
    paper's; runs that end earlier get the number for scale, marked ``‡``, and no Δ."""
    if len(stats.steps) == 0 or stats.steps[-1] < PAPER_STEPS:
        return f"; paper {paper}{SHORT_MARK}"
    return f"; paper {paper} (Δ {difference(ours_minus_paper)})"


# ---------------------------------------------------------------------------------------------------- tables
def display_frames(grid: Grid, stats: Stats, at_step: int) -> dict[str, pd.DataFrame]:
    """The display tables by name: ``table2``, ``table1``, ``return_at_<at_step>`` and ``auc``.

    Args:
        grid: the report's cells.
        stats: per (row, env), the cell's numbers.
        at_step: the env step of the "return at" table (it names it).
    """
    return {
        "table2": tables.grid_frame(grid, stats, table2_text),
        "table1": tables.grid_frame(grid, stats, table1_text),
        f"return_at_{at_step}": tables.grid_frame(grid, stats, lambda s: estimate_text(s.at_step)),
        "auc": tables.grid_frame(grid, stats, lambda s: estimate_text(s.auc)),
    }


def record_frames(grid: Grid, stats: Stats, at_step: int) -> dict[str, pd.DataFrame]:
    """The report's record of its cells and runs by name: ``cells``, ``runs`` and ``not_averaged``."""
    return {
        "cells": cells_csv_frame(grid, stats, at_step),
        "runs": runs_csv_frame(grid),
        "not_averaged": left_out_frame(grid),
    }


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


# ---------------------------------------------------------------------------------------------------- Markdown
def markdown(frames: dict[str, pd.DataFrame], at_step: int, notes: tables.Notes) -> list[str]:
    """The report's sections of the display tables from :func:`display_frames`, in order, with the notes the report
    has not given yet."""
    return [
        tables.table_section(
            title.format(at_step=at_step), text, frames[f"return_at_{at_step}" if name == "return_at" else name], notes
        )
        for name, title, text in SECTIONS
    ]


def not_averaged_markdown(frames: dict[str, pd.DataFrame]) -> str:
    """The report's last section of numbers: the runs and seeds in no number, from :func:`record_frames`."""
    frame = frames["not_averaged"]
    if frame.empty:
        return "## Runs not averaged\n\nNone: every cell averages all its seeds."
    return (
        "## Runs not averaged\n\nThese runs are in no number above (unfinished, failed, duplicate seeds), and "
        f"these seeds have no run dir; their cells are marked (!).\n\n{tables.markdown(frame)}"
    )


# ---------------------------------------------------------------------------------------------------- plots
def plot(env_id: str, cells: list[CellStats], against_authors: list[Fidelity], figures: Figures) -> None:
    """One env's learning curves with their 95% bands, a panel per row (:func:`curve_panels`).

    Args:
        env_id: the env.
        cells: its cells' numbers, in display order.
        against_authors: every cell's fidelity result (those of this env title their rows' panels).
        figures: the report's figures so far.
    """
    if not cells:
        return
    title = f"{env_id}: evaluation return, mean over seeds, 95% interval (Student-t below {MIN_BOOTSTRAP_SEEDS} seeds)"
    if any(f.env_id == env_id for f in against_authors):
        title += (
            "\nunder a row's name: p against the authors' (Welch, mean over 5k..T), points within their mean ± 2 std"
        )
    panels = curve_panels(env_id, cells, against_authors, figures.styles)
    figures.bands(panels, f"curves_{env_id}", title, ("env steps", "average return"), "no run has a finite return")


def curve_panels(
    env_id: str, cells: list[CellStats], against_authors: list[Fidelity], styles: dict[str, Style]
) -> list[Panel]:
    """A panel per row: its mean curve and band in its colour, on top of the other rows' means in grey (for
    comparison) and, where the authors published curves, their band up to the row's own last step.

    Args:
        env_id: the env.
        cells: its cells' numbers, in display order.
        against_authors: every cell's fidelity result (those of this env title their rows' panels).
        styles: per row, its colour and line style.
    """
    tests = {f.row: f for f in against_authors if f.env_id == env_id}
    authors = plots.reference_label(paper_env(env_id) or env_id)
    panels = []
    for s in cells:
        others = [Curve(OTHER_ROWS, _mean_line(o.band), OTHER_ROWS_STYLE) for o in cells if o is not s]
        reference = authors_band_until(env_id, int(s.steps[-1]))
        authors_curve = [] if reference is None else [Curve(authors, reference, plots.REFERENCE_STYLE)]
        row = Curve(ROW_CURVE, s.band, styles[s.cell.row])
        panels.append(Panel(curve_title(s.cell.row, tests.get(s.cell.row)), [*others, *authors_curve, row]))
    return panels


def _mean_line(band: Band) -> Band:
    """A band's mean curve alone (NaN bounds: no band drawn)."""
    nan = np.full_like(band.mean, np.nan, dtype=float)
    return Band(band.x, band.mean, nan, nan)
