"""The returns' section: the paper's Table 2 and Table 1 beside our cells, the return at a step and the area under
the curve, and the learning-curve plots (the record of the cells and runs is ``not_averaged``'s).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from td3x.analysis.reading.cell_stats import CellStats
from td3x.analysis.reading.paper import PAPER_STEPS, authors_band, paper_env, table1_score, table2_score
from td3x.analysis.render import plots, tables
from td3x.analysis.render.plots import Curve, Figures, Panel, Style
from td3x.analysis.render.tables import EMPTY, SHORT_MARK, STEP0_MARK, Notes, difference, estimate_text, number
from td3x.analysis.sections.fidelity import Fidelity, FidelitySection, curve_title
from td3x.analysis.sections.section import Frames, Report, Section
from td3x.analysis.stats.metrics import MIN_BOOTSTRAP_SEEDS, Band

UNTRAINED_PEAK = "— (no evaluation after step 0 beats step 0)"
# the curve figure's legend entries: a panel's own row, and the other rows' means behind it, for comparison
ROW_CURVE = "the panel's row: mean over seeds, 95% interval"
OTHER_ROWS = "the other rows' means"
OTHER_ROWS_STYLE = Style("#cccccc")  # light: behind the row's own curve, apart from the authors' black
CURVES_TITLE = f"evaluation return, mean over seeds, 95% interval (Student-t below {MIN_BOOTSTRAP_SEEDS} seeds)"
AUTHORS_LINE = "\nunder a row's name: p against the authors' (Welch, mean over 5k..T), points within their mean ± 2 std"
# (name, title, what the table holds): the display tables in the report's order; "return_at" is named by its step
TABLES = (
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


class ReturnsSection(Section):
    """Tables 2 and 1, the return at the report's step and the area under the curve (rows × envs), and per env the
    learning curves."""

    LATEX_CAPTIONS: ClassVar[dict[str, str]] = {
        "table2": "Average return over the last 10 evaluations: mean over seeds [95\\% interval], beside the paper's "
        "Table 2 (Fujimoto et al., 2018).",
        "table1": "Max average return: max of the seed-averaged curve $\\pm$ std across seeds at that evaluation, "
        "beside the paper's Table 1; not printed where no evaluation after step 0 beats step 0.",
    }

    def frames(self, report: Report) -> Frames:
        """``table2``, ``table1``, ``return_at_<at_step>`` and ``auc``."""
        grid, stats = report.grid, report.stats
        return {
            "table2": tables.grid_frame(grid, stats, table2_text),
            "table1": tables.grid_frame(grid, stats, table1_text),
            f"return_at_{report.at_step}": tables.grid_frame(grid, stats, lambda s: estimate_text(s.at_step)),
            "auc": tables.grid_frame(grid, stats, lambda s: estimate_text(s.auc)),
        }

    def markdown(self, report: Report, frames: Frames, notes: Notes) -> str:
        at_step = report.at_step
        named = {"return_at": f"return_at_{at_step}"}  # the table named by its step
        return "\n\n".join(
            tables.table_section(title.format(at_step=at_step), text, frames[named.get(name, name)], notes)
            for name, title, text in TABLES
        )

    def plot_env(self, report: Report, env_id: str, figures: Figures) -> None:
        """The env's learning curves with their 95% bands, a panel per row (:func:`curve_panels`)."""
        cells = report.env_cells(env_id)
        if not cells:
            return
        against_authors = report.section(FidelitySection).results
        title = f"{env_id}: {CURVES_TITLE}" + (AUTHORS_LINE if any(f.env_id == env_id for f in against_authors) else "")
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
    band = authors_band(env_id)
    for s in cells:
        others = [Curve(OTHER_ROWS, _mean_line(o.band), OTHER_ROWS_STYLE) for o in cells if o is not s]
        # the authors' band up to the row's last step, as its curve ends
        until = [] if band is None else [Curve(authors, band.until(int(s.steps[-1])), plots.REFERENCE_STYLE)]
        row = Curve(ROW_CURVE, s.band, styles[s.cell.row])
        panels.append(Panel(curve_title(s.cell.row, tests.get(s.cell.row)), [*others, *until, row]))
    return panels


def _mean_line(band: Band) -> Band:
    """A band's mean curve alone (NaN bounds: no band drawn)."""
    nan = np.full_like(band.mean, np.nan, dtype=float)
    return Band(band.x, band.mean, nan, nan)
