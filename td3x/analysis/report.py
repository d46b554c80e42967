"""The report: run dirs → cells → every section built (``build_report``), then the sections' tables, figures and
Markdown written in the report's order (``write_report``).

The sections are ``SECTIONS``, each a ``sections.section.Section``; this module only loops over them, and writes
the report's own parts around them: the header, the list of plots and files.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from td3x.analysis.comparisons.judge import judge, registered_facts
from td3x.analysis.comparisons.schema import RegistrationError, read_registration
from td3x.analysis.reading import source_studies
from td3x.analysis.reading.cell_stats import CellStats, cell_stats
from td3x.analysis.reading.cells import Grid, make_grid
from td3x.analysis.reading.input_files import read_coverage
from td3x.analysis.reading.runs import Run, find_runs
from td3x.analysis.render import plots, tables
from td3x.analysis.sections import (
    aggregates,
    bias,
    compute,
    fidelity,
    not_averaged,
    peer,
    registration,
    returns,
    seed_sources,
    seed_spread,
    stalled,
)
from td3x.analysis.sections.section import Frames, Report, Section, Settings
from td3x.analysis.stats.metrics import MIN_BOOTSTRAP_SEEDS
from td3x.rundir.outputs import REPORT_FILE, REPORT_TITLE

# the report's sections, built and printed in this order (each env's figures, then the figures across envs, too)
SECTIONS: tuple[type[Section], ...] = (
    registration.RegistrationSection, returns.ReturnsSection, bias.BiasSection, fidelity.FidelitySection,
    peer.PeerSection, aggregates.AggregatesSection, seed_spread.SeedSpreadSection, seed_sources.SeedSourcesSection,
    stalled.StalledSection, compute.ComputeSection, not_averaged.NotAveragedSection,
)
# the sections whose tables' files come first, in this order, as every report has listed them: the record of the
# cells and runs (whose section closes report.md) right after the bias table, the aggregates and the seed study
# before the tests against the authors and the peer; the other sections' follow in SECTIONS' order
FILES_FIRST: tuple[type[Section], ...] = (
    registration.RegistrationSection, returns.ReturnsSection, bias.BiasSection, not_averaged.NotAveragedSection,
    aggregates.AggregatesSection, seed_spread.SeedSpreadSection,
)


class ReportError(RuntimeError):
    """A report that cannot be made (no run dirs found, or a ``--at-step`` no run reaches)."""


@dataclass
class Written:
    """What ``write_report`` produced: the Markdown, the tables by name, every file written, and one line per
    figure not drawn saying why."""

    markdown: str = ""
    frames: Frames = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    not_drawn: list[str] = field(default_factory=list)

    @property
    def images(self) -> list[Path]:
        return [path for path in self.files if path.suffix == ".png"]


def build_report(paths: list[Path], settings: Settings) -> Report:
    """Find the runs below ``paths``, compute every cell's numbers, and build every section from them.

    Args:
        paths: sweep dirs, run dirs, or folders above them.
        settings: bootstrap and table settings.

    Raises:
        ReportError: no run dir was found, the coverage table is not one, a seed study mixes launches, the peer row
            is none of the report's, or ``settings.at_step`` is past every complete run's last evaluation.
        RegistrationError: the registration file cannot be used (one line per problem).
        FileNotFoundError: a path (or the coverage table) does not exist.
    """
    try:  # the files named beside the runs first: a mistake in one is refused before every run is read
        coverage = None if settings.coverage is None else read_coverage(settings.coverage)
        comparisons = None if settings.registration is None else read_registration(settings.registration)
    except RegistrationError:
        raise  # one line per problem, as td3x-report --plan prints them
    except ValueError as error:
        raise ReportError(str(error)) from error
    runs = find_runs(paths)
    if not runs:
        raise ReportError(f"no run dirs (directories holding td3x's config.yaml) under {', '.join(map(str, paths))}")
    try:
        source_studies.check_launches(runs)
        verdicts = None if comparisons is None else judge(comparisons, runs)
    except source_studies.MixedLaunchesError as error:
        raise ReportError(f"{', '.join(map(str, paths))}: {error}") from error
    except ValueError as error:
        raise ReportError(str(error)) from error
    grid = make_grid(runs, {} if comparisons is None else registered_facts(comparisons, runs))
    if settings.peer is not None and settings.peer not in grid.rows:
        raise ReportError(f"--peer {settings.peer!r}: no such row; the report's rows are {', '.join(grid.rows)}")
    at_step = min(run.total_steps for run in runs) if settings.at_step is None else settings.at_step
    problem = at_step_problem(runs, at_step)
    if problem:  # refused before the bootstraps: the "return at" table would be n/a in every cell
        raise ReportError(problem)
    report = Report(list(paths), runs, grid, grid_stats(grid, at_step, settings), settings, at_step, coverage, verdicts)
    for kind in SECTIONS:  # each built from the cells and the sections before it
        report = replace(report, sections=(*report.sections, kind.build(report)))
    return report


def grid_stats(grid: Grid, at_step: int, settings: Settings) -> dict[tuple[str, str], CellStats]:
    """Each cell's numbers, in display order (rows, then envs), which every table, plot and study follows; a cell
    without them (no complete run, no shared evaluation step) is left out."""
    keys = ((row, env_id) for row in grid.rows for env_id in grid.envs if (row, env_id) in grid.cells)
    found = {key: cell_stats(grid.cells[key], at_step, settings.reps, settings.seed) for key in keys}
    return {key: numbers for key, numbers in found.items() if numbers is not None}


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
    captions = {name: caption for section in report.sections for name, caption in section.LATEX_CAPTIONS.items()}
    written.files += tables.write_tables(written.frames, captions, out)
    figures = write_plots(report, out / plots.PLOTS_DIR, plotly_js)
    written.files += figures.files
    written.not_drawn = figures.not_drawn
    written.files.append(out / REPORT_FILE)
    relative = [path.relative_to(out) for path in written.files]
    written.markdown = render_markdown(report, written.frames, relative, written.not_drawn)
    written.files[-1].write_text(written.markdown)
    return written


def report_frames(report: Report) -> Frames:
    """Every table of the report by name, in the order of its files (``FILES_FIRST``): display tables (text) and
    tidy ones (numbers)."""
    kinds = [*FILES_FIRST, *(kind for kind in SECTIONS if kind not in FILES_FIRST)]
    return {name: frame for kind in kinds for name, frame in report.section(kind).frames(report).items()}


def write_plots(report: Report, plots_dir: Path, plotly_js: str = "directory") -> plots.Figures:
    """Every section's figures: each env's, env by env, then those across envs."""
    figures = plots.Figures(plots_dir, plotly_js, plots.row_styles(list(report.grid.rows)))
    for env_id in report.grid.envs:
        for section in report.sections:
            section.plot_env(report, env_id, figures)
    for section in report.sections:
        section.plot(report, figures)
    return figures


# ---------------------------------------------------------------------------------------------------- Markdown
def render_markdown(report: Report, frames: Frames, files: list[Path], not_drawn: list[str] | None = None) -> str:
    """The report as Markdown: the header, every section's part in order, the plots, the files, and the plots not
    drawn."""
    notes = tables.Notes(given={tables.T_NOTE})  # the header states the Student-t rule that § marks
    parts = [_header(report), *(section.markdown(report, frames, notes) for section in report.sections)]
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
