"""The report: run dirs → cells → every section's numbers (``build_report``), then the sections' tables, plots and
Markdown assembled in the report's order (``write_report``).

Each section is one module holding its numbers, tables, Markdown and plots: ``return_tables`` (Tables 2 and 1,
return at a step, area under the curve, learning curves, the cells and runs and what was not averaged), ``bias``,
``fidelity`` with ``fidelity_tables`` and ``peer`` (printed as one section), ``aggregates``, ``seed_spread`` (the
"Seed study" of cells with many seeds), ``seed_sources`` (with ``seed_sources_text``), ``stalled`` and ``compute``;
a registration file's comparisons (``comparisons``) come first. This module only calls them in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from td3x.analysis.comparisons import render
from td3x.analysis.comparisons.judge import Verdicts, judge, registered_facts
from td3x.analysis.comparisons.schema import RegistrationError
from td3x.analysis.comparisons.schema import read_registration as read_comparisons
from td3x.analysis.reading.cell_stats import CellStats, cell_stats
from td3x.analysis.reading.cells import Grid, make_grid
from td3x.analysis.reading.runs import Run, find_runs
from td3x.analysis.render import plots, tables
from td3x.analysis.sections import (
    aggregates,
    bias,
    compute,
    fidelity,
    fidelity_tables,
    peer,
    return_tables,
    seed_sources,
    seed_sources_text,
    seed_spread,
    stalled,
)
from td3x.analysis.sections.aggregates import Normaliser, RowAggregate
from td3x.analysis.sections.fidelity import Fidelity
from td3x.analysis.sections.peer import PeerComparison
from td3x.analysis.sections.seed_sources import SourceStudy
from td3x.analysis.sections.seed_spread import SeedStudy
from td3x.analysis.stats.equivalence import BoundRule
from td3x.analysis.stats.metrics import MIN_BOOTSTRAP_SEEDS
from td3x.rundir.outputs import REPORT_FILE, REPORT_TITLE

# the paper-shaped tables, also written as LaTeX (booktabs) with these captions
LATEX_CAPTIONS = {**return_tables.LATEX_CAPTIONS, "aggregates": aggregates.LATEX_CAPTION}


class ReportError(RuntimeError):
    """A report that cannot be made (no run dirs found, or a ``--at-step`` no run reaches)."""


@dataclass(frozen=True)
class Settings:
    """How the report computes its statistics.

    Attributes:
        reps: bootstrap replications per CI (rliable's default is 50000; 2000 gives CI bounds stable to about 1%);
            used by means over 10 or more seeds (fewer get Student-t intervals) and by the aggregates.
        seed: seeds every bootstrap, so the same runs give the same report.
        at_step: the env step of the "return at" table (None: the shortest run's ``run.total_steps``, a horizon
            every run reaches).
        bounds: where the fidelity and peer tables' equivalence bounds come from (the default rule, or the peer
            bounds td3x-report is given).
        coverage: a coverage table of scripts/aggregate_coverage.py, which the aggregates section quotes (None:
            it says the coverage is not measured).
        registration: a registration file (docs: Registered comparisons), its comparisons judged on the runs
            (None: nothing is judged).
    """

    reps: int = 2000
    seed: int = 0
    at_step: int | None = None
    bounds: BoundRule = field(default_factory=BoundRule)
    coverage: Path | None = None
    registration: Path | None = None


@dataclass(frozen=True, eq=False)
class Report:
    """Everything the report shows, computed once."""

    sources: list[Path]
    runs: list[Run]
    grid: Grid
    stats: dict[tuple[str, str], CellStats]
    normalisers: dict[str, Normaliser]
    aggregates: list[RowAggregate]
    studies: list[SeedStudy]  # cells with many seeds (seed_spread.py)
    fidelity: list[Fidelity]
    settings: Settings
    at_step: int  # the "return at" table's env step: settings.at_step, or the shortest run's total steps
    source_studies: list[SourceStudy] = field(default_factory=list)  # seed studies by source (seed_sources.py)
    peers: list[PeerComparison] = field(default_factory=list)  # rows against the peer row (peer.py)
    peer_sensitivity: list[PeerComparison] = field(default_factory=list)  # the same, the mean after the warm-up
    coverage: pd.DataFrame | None = None  # the aggregates' measured coverage (aggregates.read_coverage)
    verdicts: Verdicts | None = None  # a registration file's comparisons judged (comparisons/judge.py)


@dataclass
class Written:
    """What ``write_report`` produced: the Markdown, the tables by name, every file written, and one line per
    figure not drawn saying why."""

    markdown: str = ""
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    not_drawn: list[str] = field(default_factory=list)

    @property
    def images(self) -> list[Path]:
        return [path for path in self.files if path.suffix == ".png"]


def build_report(paths: list[Path], settings: Settings) -> Report:
    """Find the runs below ``paths`` and compute every number of the report.

    Args:
        paths: sweep dirs, run dirs, or folders above them.
        settings: bootstrap and table settings.

    Raises:
        ReportError: no run dir was found, the coverage table is not one, or ``settings.at_step`` is past every
            complete run's last evaluation.
        FileNotFoundError: a path (or the coverage table) does not exist.
    """
    try:  # the files named beside the runs first: a mistake in one is refused before every run is read
        coverage = None if settings.coverage is None else aggregates.read_coverage(settings.coverage)
        comparisons = None if settings.registration is None else read_comparisons(settings.registration)
    except RegistrationError:
        raise  # one line per problem, as td3x-report --plan prints them
    except ValueError as error:
        raise ReportError(str(error)) from error
    runs = find_runs(paths)
    if not runs:
        raise ReportError(f"no run dirs (directories holding td3x's config.yaml) under {', '.join(map(str, paths))}")
    try:
        source_studies = seed_sources.study_sources(runs)
    except seed_sources.MixedLaunchesError as error:
        raise ReportError(f"{', '.join(map(str, paths))}: {error}") from error
    try:
        verdicts = None if comparisons is None else judge(comparisons, runs)
    except ValueError as error:
        raise ReportError(str(error)) from error
    grid = make_grid(runs, {} if comparisons is None else registered_facts(comparisons, runs))
    at_step = min(run.total_steps for run in runs) if settings.at_step is None else settings.at_step
    problem = at_step_problem(runs, at_step)
    if problem:  # refused before the bootstraps: the "return at" table would be n/a in every cell
        raise ReportError(problem)
    stats = {}  # in display order (rows, then envs): every table, plot and study follows it
    for key in ((row, env_id) for row in grid.rows for env_id in grid.envs if (row, env_id) in grid.cells):
        numbers = cell_stats(grid.cells[key], at_step, settings.reps, settings.seed)
        if numbers is not None:
            stats[key] = numbers
    scores = {key: numbers.scores for key, numbers in stats.items()}
    normalisers = aggregates.make_normalisers(grid, scores, aggregates.untrained_levels(stats))
    studies = seed_spread.study_cells(stats.values(), settings.reps, settings.seed)
    rows = aggregates.aggregate_rows(grid, scores, normalisers, settings.reps, settings.seed)
    against_authors = fidelity.fidelities(stats.values(), settings.bounds)
    peer_rows = [row for row in grid.rows if grid.paper_row(row) == peer.PEER_OF]
    return Report(
        list(paths),
        runs,
        grid,
        stats,
        normalisers,
        rows,
        studies,
        against_authors,
        settings,
        at_step,
        source_studies,
        peer.peer_comparisons(against_authors, peer_rows, settings.bounds),
        peer.peer_comparisons(against_authors, peer_rows, settings.bounds, peer.SENSITIVITY),
        coverage,
        verdicts,
    )


def at_step_problem(runs: list[Run], at_step: int) -> str | None:
    """Why no run can give a return at ``at_step`` (a step past the last evaluation of every complete run), or
    None; a step only some runs reach is fine: the others' cells show n/a.

    Args:
        runs: the report's runs (only complete ones are averaged, so only theirs count).
        at_step: the env step of the "return at" table.
    """
    complete = [run for run in runs if run.problem is None]
    if not complete:  # no cell has numbers at all, at any step: the report says why each run is left out
        return None
    longest = max(complete, key=lambda run: int(run.steps[-1]))
    last_step = int(longest.steps[-1])
    if at_step <= last_step:
        return None
    return (
        f"--at-step {at_step}: must be <= {last_step}, the last evaluated step of the longest complete run "
        f"({longest.path})"
    )


# ---------------------------------------------------------------------------------------------------- writing
def write_report(report: Report, out: Path, plotly_js: str = "directory") -> Written:
    """Write the tables (CSV, LaTeX), plots (PNG, HTML) and ``report.md`` into ``out``.

    Args:
        report: from ``build_report``.
        out: the output directory (created).
        plotly_js: how the HTML plots get plotly.js (a key of ``plots.PLOTLY_JS``; ``none``: no HTML plots).
    """
    out.mkdir(parents=True, exist_ok=True)
    written = Written(frames=report_frames(report))
    written.files += tables.write_tables(written.frames, LATEX_CAPTIONS, out)
    figures = write_plots(report, out / plots.PLOTS_DIR, plotly_js)
    written.files += figures.files
    written.not_drawn = figures.not_drawn
    written.files.append(out / REPORT_FILE)
    relative = [path.relative_to(out) for path in written.files]
    written.markdown = render_markdown(report, written.frames, relative, written.not_drawn)
    written.files[-1].write_text(written.markdown)
    return written


def report_frames(report: Report) -> dict[str, pd.DataFrame]:
    """Every table of the report by name, in the order of its files: display tables (text) and tidy ones (numbers).

    Args:
        report: from ``build_report``.
    """
    grid, stats, at_step = report.grid, report.stats, report.at_step
    verdicts = (
        {}
        if report.verdicts is None
        else {
            "registration": render.verdicts_frame(report.verdicts),
            "registration_sides": render.sides_records(report.verdicts),
        }
    )
    return {
        **verdicts,
        **return_tables.display_frames(grid, stats, at_step),
        **bias.frames(grid, stats),
        **return_tables.record_frames(grid, stats, at_step),
        **aggregates.frames(report.normalisers, report.aggregates),
        **seed_spread.frames(report.studies),
        **fidelity_tables.frames(report.fidelity),
        **peer.frames(report.peers, report.peer_sensitivity),
        **seed_sources.frames(report.source_studies),
        **stalled.frames(grid),
        **compute.frames(grid),
    }


def write_plots(report: Report, plots_dir: Path, plotly_js: str = "directory") -> plots.Figures:
    """Learning curves and overestimation bias per env, the seed study's CI widths, and rliable's aggregate plots.

    Args:
        report: from ``build_report``.
        plots_dir: where the PNG and HTML files go.
        plotly_js: how the HTML plots get plotly.js (a key of ``plots.PLOTLY_JS``).
    """
    figures = plots.Figures(plots_dir, plotly_js, plots.row_styles(list(report.grid.rows)))
    for env_id in report.grid.envs:
        cells = [report.stats[(row, env_id)] for row in report.grid.rows if (row, env_id) in report.stats]
        return_tables.plot(env_id, cells, report.fidelity, figures)
        bias.plot(env_id, cells, figures)
        seed_spread.plot(env_id, report.studies, figures)
    aggregates.plot(report.aggregates, report.settings.reps, report.settings.seed, figures)
    seed_sources.plot(report.source_studies, figures)
    return figures


# ---------------------------------------------------------------------------------------------------- Markdown
def render_markdown(
    report: Report, frames: dict[str, pd.DataFrame], files: list[Path], not_drawn: list[str] | None = None
) -> str:
    """The report as Markdown: the tables, the fidelity count, the aggregates, the seed study, what was not
    averaged, the files, and the plots not drawn.

    Args:
        report: from ``build_report``.
        frames: its tables, from ``report_frames``.
        files: the files written, relative to the output directory.
        not_drawn: one line per figure not drawn, saying why.
    """
    only_source_studies = bool(report.source_studies) and all(
        seed_sources.condition(run) is not None for run in report.runs
    )
    notes = tables.Notes(given={tables.T_NOTE})  # the header states the Student-t rule that § marks
    parts = [
        _header(report),
        "" if report.verdicts is None else render.verdicts_markdown(report.verdicts),
        *return_tables.markdown(frames, report.at_step, notes),
        bias.markdown(frames, notes),
        fidelity_tables.markdown(report.fidelity, notes) + peer.markdown(report.peers, report.peer_sensitivity, notes),
        aggregates.markdown(report.grid.envs, report.normalisers, report.aggregates, report.coverage),
        seed_spread.markdown(report.studies, only_source_studies),
        seed_sources_text.markdown(report.source_studies),
        stalled.markdown(frames),
        compute.markdown(frames),
        return_tables.not_averaged_markdown(frames),
    ]
    images = [path for path in files if path.suffix == ".png"]
    if images:  # shown where the report is read (a Markdown viewer, the docs site), each under its file name
        parts.append("## Plots\n\n" + "\n\n".join(f"![{path.stem}]({path.as_posix()})" for path in images))
    parts.append("## Files\n\n" + ", ".join(f"[`{path}`]({path.as_posix()})" for path in files))
    parts += not_drawn or []
    return "\n\n".join(part for part in parts if part) + "\n"


def _header(report: Report) -> str:
    averaged = sum(len(cell.runs) for cell in report.grid.cells.values())
    flagged = sum(cell.flagged for cell in report.grid.cells.values())
    return (
        f"{REPORT_TITLE}\n\n{len(report.runs)} run dirs under {', '.join(map(str, report.sources))}: {averaged} "
        f"averaged into {len(report.grid.cells)} cells, {len(report.runs) - averaged} not averaged. "
        f"{flagged} cells are marked (!): they have runs not averaged or seeds missing (see the last section). "
        f"{stalled.summary(report.grid)} "
        f"Intervals are 95% over seeds: a percentile bootstrap (rliable, {report.settings.reps} resamples, seed "
        f"{report.settings.seed}) for a cell with {MIN_BOOTSTRAP_SEEDS} or more seeds; for a cell with fewer, a "
        f"Student-t interval, mean ± t(0.975, n−1)·s/√n, marked {tables.T_MARK}: below {MIN_BOOTSTRAP_SEEDS} seeds "
        'a percentile bootstrap is too narrow (at 5 seeds its "95%" interval covers a normal mean about 86% of the '
        "time; at 3 its 2.5% and 97.5% points are the min and max of the seeds)."
    )
