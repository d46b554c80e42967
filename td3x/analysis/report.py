"""The report: run dirs → cells → numbers (``build_report``), then tables, plots and Markdown (``write_report``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from td3x.analysis import plots, tables
from td3x.analysis.aggregates import Normaliser, RowAggregate, aggregate_rows, make_normalisers, row_profiles
from td3x.analysis.cell_stats import BIAS_COLUMNS, CellStats, cell_stats
from td3x.analysis.cells import Grid, make_grid
from td3x.analysis.compute import compute_frame
from td3x.analysis.fidelity import (
    ALPHA,
    PEER_OF,
    PEER_ROW,
    PRIMARY,
    STATISTICS,
    Fidelity,
    PeerComparison,
    authors_band,
    fidelities,
    peer_comparisons,
)
from td3x.analysis.metrics import MIN_BOOTSTRAP_SEEDS, Band
from td3x.analysis.paper import AUTHORS_EVAL_EVERY, paper_env
from td3x.analysis.runs import Run, find_runs
from td3x.analysis.seed_study import (
    MixedLaunchesError,
    SourceStudy,
    condition,
    plot_study,
    samples_frame,
    sources_section,
    spread_frame,
    study_sources,
)
from td3x.analysis.seeds import MIN_SEEDS, SeedStudy, study_seeds
from td3x.seed_statistics import last10_return

PLOTS_DIR = "plots"
# a bias plot draws each row in its colour, and each of its estimates in a line style of its own
BIAS_DASHES: dict[str, plots.Dash] = {"bias_q1": "-", "bias_min_q": "--"}


class ReportError(RuntimeError):
    """A report that cannot be made (no run dirs found)."""


@dataclass(frozen=True)
class Settings:
    """How the report computes its statistics.

    Attributes:
        reps: bootstrap replications per CI (rliable's default is 50000; 2000 gives CI bounds stable to about 1%);
            used by cells with 5 or more seeds (fewer get Student-t intervals).
        seed: seeds every bootstrap, so the same runs give the same report.
        at_step: the env step of the "return at" table.
    """

    reps: int = 2000
    seed: int = 0
    at_step: int = 100_000


@dataclass(frozen=True, eq=False)
class Report:
    """Everything the report shows, computed once."""

    sources: list[Path]
    runs: list[Run]
    grid: Grid
    stats: dict[tuple[str, str], CellStats]
    normalisers: dict[str, Normaliser]
    aggregates: list[RowAggregate]
    studies: list[SeedStudy]
    fidelity: list[Fidelity]
    settings: Settings
    source_studies: list[SourceStudy] = field(default_factory=list)  # seed studies by source (seed_study.py)
    peers: list[PeerComparison] = field(default_factory=list)  # rows against the peer row (fidelity.py)


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
        ReportError: no run dir was found.
        FileNotFoundError: a path does not exist.
    """
    runs = find_runs(paths)
    if not runs:
        raise ReportError(f"no run dirs (directories holding td3x's config.yaml) under {', '.join(map(str, paths))}")
    try:
        source_studies = study_sources(runs)
    except MixedLaunchesError as error:
        raise ReportError(f"{', '.join(map(str, paths))}: {error}") from error
    grid = make_grid(runs)
    stats = {}  # in display order (rows, then envs): every table, plot and study follows it
    for key in ((row, env_id) for row in grid.rows for env_id in grid.envs if (row, env_id) in grid.cells):
        numbers = cell_stats(grid.cells[key], settings.at_step, settings.reps, settings.seed)
        if numbers is not None:
            stats[key] = numbers
    scores = {key: numbers.scores for key, numbers in stats.items()}
    normalisers = make_normalisers(grid, scores, _untrained(stats))
    studies = [
        study_seeds(s.cell.row, s.cell.env_id, s.cell.seeds, last10_return(s.curves), settings.reps, settings.seed)
        for s in stats.values()
        if len(s.cell.runs) >= MIN_SEEDS
    ]
    aggregates = aggregate_rows(grid, scores, normalisers, settings.reps, settings.seed)
    against_authors = fidelities(stats.values())
    return Report(
        list(paths),
        runs,
        grid,
        stats,
        normalisers,
        aggregates,
        studies,
        against_authors,
        settings,
        source_studies,
        peer_comparisons(against_authors, [row for row in grid.rows if grid.paper_row(row) == PEER_OF]),
    )


def _untrained(stats: dict[tuple[str, str], CellStats]) -> dict[str, float]:
    """Per env, the mean step-0 return of its complete runs: the untrained policies' level."""
    by_env: dict[str, list[float]] = {}
    for (_, env_id), numbers in stats.items():
        by_env.setdefault(env_id, []).extend(numbers.curves[:, 0])
    return {env_id: float(np.mean(values)) for env_id, values in by_env.items()}


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
    written.files += write_tables(written.frames, out)
    figures = write_plots(report, out / PLOTS_DIR, plotly_js)
    written.files += figures.files
    written.not_drawn = figures.not_drawn
    written.files.append(out / "report.md")
    relative = [path.relative_to(out) for path in written.files]
    written.markdown = render_markdown(report, written.frames, relative, written.not_drawn)
    written.files[-1].write_text(written.markdown)
    return written


def report_frames(report: Report) -> dict[str, pd.DataFrame]:
    """Every table of the report by name: display tables (text) and tidy ones (numbers).

    Args:
        report: from ``build_report``.
    """
    grid, stats, at_step = report.grid, report.stats, report.settings.at_step
    frames = {
        "table2": tables.grid_frame(grid, stats, tables.table2_text),
        "table1": tables.grid_frame(grid, stats, tables.table1_text),
        f"return_at_{at_step}": tables.grid_frame(grid, stats, lambda s: tables.estimate_text(s.at_step)),
        "auc": tables.grid_frame(grid, stats, lambda s: tables.estimate_text(s.auc)),
        "bias": tables.grid_frame(grid, stats, tables.bias_text),
        "cells": tables.cells_csv_frame(grid, stats, at_step),
        "runs": tables.runs_csv_frame(grid),
        "not_averaged": tables.left_out_frame(grid),
    }
    if report.aggregates:
        frames["normalisers"] = tables.normalisers_frame(report.normalisers)
        frames["aggregates"] = tables.aggregates_frame(report.aggregates)
    if report.studies:
        frames["seed_study"] = tables.seed_study_frame(report.studies)
        frames["seed_study_welch"] = tables.welch_csv_frame(report.studies)
    if report.fidelity:
        frames["fidelity"] = tables.fidelity_frame(report.fidelity)
    if report.peers:
        frames["peer"] = tables.peer_frame(report.peers)
    if report.source_studies:
        frames["seed_sources"] = spread_frame(report.source_studies)
        frames["seed_sources_runs"] = samples_frame(report.source_studies)
    if not (compute := compute_frame(grid)).empty:
        frames["compute"] = compute
    return frames


LATEX_CAPTIONS = {
    "table2": "Average return over the last 10 evaluations: mean over seeds [95\\% interval], beside the paper's "
    "Table 2 (Fujimoto et al., 2018).",
    "table1": "Max average return: max of the seed-averaged curve $\\pm$ std across seeds at that evaluation, "
    "beside the paper's Table 1; not printed where no evaluation after step 0 beats step 0.",
    "aggregates": "Scores normalised per env, aggregated over envs: IQM and mean [95\\% interval: stratified "
    "bootstrap from 5 seeds per env; below, Student-t for the mean and none for the IQM], and the probability of "
    "improvement over the TD3 row.",
}


def write_tables(frames: dict[str, pd.DataFrame], out: Path) -> list[Path]:
    """Every table as CSV, and the paper-shaped ones also as LaTeX (booktabs).

    Args:
        frames: the tables by name (the file names).
        out: the output directory.
    """
    files = [tables.write_csv(frame, out / f"{name}.csv") for name, frame in frames.items()]
    files += [
        tables.write_latex(frames[name], out / f"{name}.tex", " ".join([caption, *_latex_notes(frames[name])]))
        for name, caption in LATEX_CAPTIONS.items()
        if name in frames
    ]
    return files


def _latex_notes(frame: pd.DataFrame) -> list[str]:
    """``_mark_notes`` for a LaTeX caption, whose text pandas does not escape (a bare % starts a comment)."""
    return [note.replace("%", r"\%") for note in _mark_notes(frame)]


def _mark_notes(frame: pd.DataFrame) -> list[str]:
    """What ``†`` and ``‡`` mean, each for a table that has a cell marked with it."""
    cells = [str(text) for text in frame.to_numpy().ravel()]
    return [note for mark, note in tables.MARK_NOTES.items() if any(mark in cell for cell in cells)]


@dataclass
class Figures:
    """The plots of a report being written: the files so far, and one line per figure not drawn saying why.

    Attributes:
        directory: where the PNG and HTML files go.
        plotly_js: how the HTML pages get plotly.js (a key of ``plots.PLOTLY_JS``).
        styles: per row, its colour and line style, the same in every figure.
    """

    directory: Path
    plotly_js: str
    styles: dict[str, plots.Style]
    files: list[Path] = field(default_factory=list)
    not_drawn: list[str] = field(default_factory=list)

    def bands(
        self,
        bands: dict[str, tuple[Band, plots.Style]],
        name: str,
        title: str,
        labels: tuple[str, str],
        empty: str,
    ) -> None:
        """Draw a band plot of the entries that hold a number; with none, note why it is not drawn.

        Args:
            bands: per legend entry, its curve and band, and how it is drawn.
            name: the file name without suffix.
            title: the figure's title.
            labels: the x-axis and y-axis labels.
            empty: why every entry would be NaN, for the note.
        """
        drawable = {label: band for label, (band, _) in bands.items() if np.isfinite(band.mean).any()}
        if not drawable:
            self.not_drawn.append(f"`{PLOTS_DIR}/{name}` is not drawn because {empty}.")
            return
        styles = {label: bands[label][1] for label in drawable}
        self.files += plots.band_plot(drawable, self.directory / name, title, labels, styles, self.plotly_js)


def write_plots(report: Report, plots_dir: Path, plotly_js: str = "directory") -> Figures:
    """Learning curves and overestimation bias per env, the seed study's CI widths, and rliable's aggregate plots.

    Args:
        report: from ``build_report``.
        plots_dir: where the PNG and HTML files go.
        plotly_js: how the HTML plots get plotly.js (a key of ``plots.PLOTLY_JS``).
    """
    figures = Figures(plots_dir, plotly_js, plots.row_styles(list(report.grid.rows)))
    for env_id in report.grid.envs:
        _curve_plots(report, env_id, figures)
        _bias_plots(report, env_id, figures)
        _seed_plots(report, env_id, figures)
    figures.files += _aggregate_plots(report, figures)
    for study in report.source_studies:
        figures.files += plot_study(study, plots_dir)
    return figures


def _env_stats(report: Report, env_id: str) -> list[CellStats]:
    return [report.stats[(row, env_id)] for row in report.grid.rows if (row, env_id) in report.stats]


def _curve_plots(report: Report, env_id: str, figures: Figures) -> None:
    cells = _env_stats(report, env_id)
    if not cells:
        return
    tests = {f.row: f for f in report.fidelity if f.env_id == env_id}
    bands = {_curve_label(s.cell.row, tests.get(s.cell.row)): (s.band, figures.styles[s.cell.row]) for s in cells}
    reference = _authors_band(env_id, max(int(s.steps[-1]) for s in cells))
    if reference is not None:
        bands[plots.reference_label(paper_env(env_id) or env_id)] = (reference, plots.REFERENCE_STYLE)
    title = f"{env_id}: evaluation return, mean over seeds, 95% interval (Student-t below {MIN_BOOTSTRAP_SEEDS} seeds)"
    if tests:
        title += "\nbeside a row: p against the authors' (Welch, mean over 5k..T), points within their mean ± 2 std"
    figures.bands(bands, f"curves_{env_id}", title, ("env steps", "average return"), "no run has a finite return")


def _curve_label(row: str, test: Fidelity | None) -> str:
    """A row's legend entry: its name, and where it was tested against the authors' curve, the outcome's numbers."""
    if test is None:
        return row
    p = tables.p_text(test.run_mean.test.p)
    relation = f"< {p[1:]}" if p.startswith("<") else f"= {p}"  # p < 0.001, not p = <0.001
    return f"{row}: p {relation}, {test.text} points"


def _authors_band(env_id: str, max_step: int) -> Band | None:
    """The authors' TD3 mean ± 2 std over our runs' range of steps (at least their first two evaluations)."""
    band = authors_band(env_id)
    if band is None:
        return None
    keep = band.x <= max(max_step, AUTHORS_EVAL_EVERY)
    return Band(band.x[keep], band.mean[keep], band.low[keep], band.high[keep])


def _bias_plots(report: Report, env_id: str, figures: Figures) -> None:
    bands = {
        f"{s.cell.row}: {BIAS_COLUMNS[column]}": (band, replace(figures.styles[s.cell.row], dash=BIAS_DASHES[column]))
        for s in _env_stats(report, env_id)
        for column, band in s.bias.items()
    }
    if not bands:
        return  # runs logged no overestimation columns
    figures.bands(
        bands,
        f"bias_{env_id}",
        f"{env_id}: overestimation bias, Q(s, a) minus the discounted return",
        ("env steps", "estimation bias"),
        "every bias value is NaN: no evaluation episode terminated, and none was long enough for the discounted "
        "return of its early states to be known (γ^remaining < 0.01), so no state was counted",
    )


def _seed_plots(report: Report, env_id: str, figures: Figures) -> None:
    studies = [study for study in report.studies if study.env_id == env_id]
    bands = {study.row: (study.ci_width, figures.styles[study.row]) for study in studies}
    if not bands:
        return
    figures.bands(
        bands,
        f"seed_ci_width_{env_id}",
        f"{env_id}: 95% bootstrap CI width of the mean vs number of seeds (band: 10th-90th percentile over subsets)",
        ("seeds", "CI width (return)"),
        "no CI width is finite",
    )


def _aggregate_plots(report: Report, figures: Figures) -> list[Path]:
    if not report.aggregates:
        return []
    plots_dir, styles = figures.directory, figures.styles
    plots_dir.mkdir(parents=True, exist_ok=True)
    settings = report.settings
    estimates = {a.row: (a.iqm, a.mean) for a in report.aggregates}
    files = [plots.interval_plot(estimates, plots_dir / "aggregates.png", styles)]
    improvements = {(a.row, a.reference): a.improvement for a in report.aggregates if a.improvement and a.reference}
    if improvements:
        files.append(plots.improvement_plot(improvements, plots_dir / "probability_of_improvement.png", styles))
    taus, profiles, cis = row_profiles(report.aggregates, settings.reps, settings.seed)
    files.append(plots.profile_plot(taus, profiles, cis, plots_dir / "performance_profiles.png", styles))
    return files


# ---------------------------------------------------------------------------------------------------- Markdown
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
    (
        "bias",
        "Overestimation bias",
        "The critics' estimation bias as td3x measures it: at each evaluation, over the states the noise-free "
        "policy's episodes visit, the mean of Q(s, a) minus the discounted return that followed in that episode "
        "(`eval.csv`'s `bias_q1` and `bias_min_q`). The paper's §4.1 (Figs. 1-2) measured it otherwise: the value "
        "estimate averaged over 10,000 replay-buffer states, against the average discounted return of 1,000 "
        "rollouts from such states; other states, and another comparator. Per estimate, the mean over seeds at the "
        "last evaluation [95% interval], then the seed-mean curve averaged over evaluations 1..end. Positive: the "
        "critic overestimates. The bias plots draw the whole curves.",
    ),
)


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
    at_step = report.settings.at_step
    parts = [_header(report)]
    for name, title, text in SECTIONS:
        frame = frames[f"return_at_{at_step}" if name == "return_at" else name]
        section = [f"## {title.format(at_step=at_step)}", text, tables.markdown(frame), *_mark_notes(frame)]
        parts.append("\n\n".join(piece for piece in section if piece))
    parts += [_fidelity_section(report, frames), _aggregates_section(report, frames), _seed_section(report, frames)]
    parts.append(sources_section(report.source_studies))
    parts.append(_compute_section(frames))
    parts.append(_not_averaged_section(frames))
    plots = [path for path in files if path.suffix == ".png"]
    if plots:  # shown where the report is read (a Markdown viewer, the docs site), each under its file name
        parts.append("## Plots\n\n" + "\n\n".join(f"![{path.stem}]({path.as_posix()})" for path in plots))
    parts.append("## Files\n\n" + ", ".join(f"[`{path}`]({path.as_posix()})" for path in files))
    parts += not_drawn or []
    return "\n\n".join(part for part in parts if part) + "\n"


def _header(report: Report) -> str:
    averaged = sum(len(cell.runs) for cell in report.grid.cells.values())
    flagged = sum(cell.flagged for cell in report.grid.cells.values())
    return (
        f"# td3x report\n\n{len(report.runs)} run dirs under {', '.join(map(str, report.sources))}: {averaged} "
        f"averaged into {len(report.grid.cells)} cells, {len(report.runs) - averaged} not averaged. "
        f"{flagged} cells are marked (!): they have runs not averaged or seeds missing (see the last section). "
        f"Intervals are 95% over seeds: a percentile bootstrap (rliable, {report.settings.reps} resamples, seed "
        f"{report.settings.seed}) for a cell with {MIN_BOOTSTRAP_SEEDS} or more seeds; for a cell with fewer, a "
        f"Student-t interval, mean ± t(0.975, n−1)·s/√n, marked {tables.T_MARK}: with 3 seeds a percentile "
        "bootstrap's 2.5% and 97.5% points are the min and max of the seeds, the range rather than a 95% interval."
    )


FIDELITY_TITLE = "## Fidelity to the authors' TD3 curves"


def _fidelity_section(report: Report, frames: dict[str, pd.DataFrame]) -> str:
    if not report.fidelity:
        return (
            f"{FIDELITY_TITLE}\n\nNo row on an env with the authors' published curves (HalfCheetah, Hopper, "
            "Walker2d, Ant, Reacher, InvertedPendulum, InvertedDoublePendulum)."
        )
    frame = frames["fidelity"]
    primary, secondary = (tables.fidelity_test_frame(report.fidelity, name) for name in STATISTICS)
    counts = frame[["env", "authors_env", "seeds", "steps", "last_step", "within mean ± 2 std"]]
    ends = ["first_step", *tables.fidelity_text_columns("first"), "last_step", *tables.fidelity_text_columns("last")]
    returns = frame[["env", *ends]]
    alpha = f"{ALPHA:g}"
    return (
        f"{FIDELITY_TITLE}\n\nThe authors' published TD3 curves (sfujim/TD3, `learning_curves/`) are 10 seeds on "
        "the gym v1 MuJoCo tasks (mujoco-py, other dynamics than Gymnasium v5), evaluated every 5000 env steps. "
        "Every row on an env with those curves is compared with them over the env steps both evaluated, 0..T: TD3 "
        "rows, and any other row as a control that the test should tell apart. A difference may be the task's (v5 "
        "against v1) as much as the code's.\n\n"
        f"**The primary test**, named before the runs it judges: Welch's two-sample t-test, at α = {alpha}, of each "
        f"seed's {STATISTICS[PRIMARY]} (every shared evaluation after step 0) against the same statistic of the "
        "authors' 10 seeds. The many comparisons are read per row: its envs' p-values are Holm-adjusted (*Holm p*), "
        f"and the row *differs* from the authors on an env when its Holm p is below {alpha}. The return at T is "
        "a secondary test, descriptive, unadjusted. Beside each p: the difference of means (ours − authors) with "
        "its 95% Welch interval; *ruled out beyond*, the equivalence margin: the smallest Δ that two one-sided "
        f"tests (TOST) at α = {alpha} accept, the largest |bound| of the 90% Welch interval, so differences beyond "
        "±Δ are ruled out and smaller ones are not (no difference detected is not equivalence); and the held-out "
        "yardstick: for n = our seeds, every split of the authors' 10 seeds into n held out and 10 − n kept, the "
        "same test of the held-out seeds against the kept ones, and how many of those splits have a p at or below "
        "ours. A small share says our p is rarer than a draw of the authors' own seeds gives; about half, that it "
        "is typical of one. `fidelity.csv` has every number."
        f"\n\n**Primary: {STATISTICS[PRIMARY]}**\n\n{tables.markdown(primary)}\n\n"
        f"**Secondary (descriptive): {STATISTICS['final']}**\n\n{tables.markdown(secondary)}\n\n"
        "The curve plots draw the authors' 10-seed mean ± 2 std (population std) in black and count our evaluation "
        "points (every seed at every step both evaluated) within it, bounds included. The count is a picture, not a "
        "test: a curve at half the authors' mean can stay inside a wide band."
        f"\n\n{tables.markdown(counts)}\n\n"
        "The returns at the first and the last step both evaluated: the untrained policy (step 0) and the end of "
        "our runs, our seeds' mean [min, max] beside the authors' 10-seed mean ± std. A gap at step 0 "
        "comes before any learning: it points to a difference between the tasks or the initial policies."
        f"\n\n{tables.markdown(returns)}{_peer_part(report)}"
    )


def _peer_part(report: Report) -> str:
    if not report.peers:
        return ""
    return (
        f"\n\n**Against the peer, {PEER_ROW}**: Stable-Baselines3's TD3 trained and evaluated under the same "
        "protocol on the same v5 task (`scripts/sb3_reference.py`). Against the authors a difference may be the "
        f"task's as much as the code's; against the peer it is the implementation's. Each {PEER_OF} row (another "
        "algorithm would differ for its own reasons), by the same primary test: Welch's "
        f"t-test of each seed's {STATISTICS[PRIMARY]}, ours against the peer's seeds, Holm-adjusted per row over "
        "its envs with a peer, and the margin beyond which differences are ruled out (TOST). `peer.csv` has every "
        f"number.\n\n{tables.markdown(tables.peer_test_frame(report.peers))}"
    )


def _compute_section(frames: dict[str, pd.DataFrame]) -> str:
    if "compute" not in frames:
        return ""
    return (
        "## Compute\n\nWhat each cell's complete runs cost, from their `summary.json`, `config.yaml` and "
        "`provenance.json`: the processes that trained them (in the K-seeds mode one process trains several seeds), "
        "the median wall time of a process, core-hours (wall time × threads, summed over processes) and env steps "
        "per core-second; the CPU, its capability (the fp32 kernels torch dispatched to: `AVX512`, `AVX2`, ...) and "
        "the code commit they ran on. Wall times depend on what else the machine ran. The same seed gives the same "
        "numbers bit for bit on the same CPU capability, not across capabilities: a cell marked `MIXED:` holds runs "
        "from different ones."
        f"\n\n{tables.markdown(frames['compute'])}"
    )


def _aggregates_section(report: Report, frames: dict[str, pd.DataFrame]) -> str:
    left_out = [env_id for env_id in report.grid.envs if env_id not in report.normalisers]
    note = (
        f"Left out, with no paper TD3 score and no TD3 row whose every seed beats the untrained policy: "
        f"{', '.join(left_out)}."
        if left_out
        else ""
    )
    if "aggregates" not in frames:
        return f"## Aggregates across envs\n\nNo env could be normalised. {note}"
    return (
        "## Aggregates across envs\n\nEach seed's last-10 mean, normalised per env (1 = reference, 0 = zero below), "
        "pooled over envs on the seeds every env of the row has (*envs* gives each cell's own seeds): IQM "
        "(interquartile mean) and mean, and P(row > TD3 row), the probability that a run of the row beats a run of "
        "TD3 on a random env (rliable; Agarwal et al., 2021). With "
        f"{MIN_BOOTSTRAP_SEEDS} or more seeds pooled per env each gets a 95% stratified bootstrap CI; with fewer, "
        f"the mean gets a Student-t interval ({tables.T_MARK}: the envs' variances summed, Welch-Satterthwaite "
        "degrees of freedom) and the IQM and P(row > TD3 row), which have no Student-t form, get none. Performance "
        "profiles (their bands likewise only from "
        f"{MIN_BOOTSTRAP_SEEDS} seeds) are in "
        f"`{PLOTS_DIR}/performance_profiles.png`. {note}\n\n{tables.markdown(frames['normalisers'])}\n\n"
        f"{tables.markdown(frames['aggregates'])}"
    )


def _seed_section(report: Report, frames: dict[str, pd.DataFrame]) -> str:
    if "seed_study" not in frames:
        # a folder of a seed study alone (N = 5 runs a condition) has its own section: no word on what it lacks
        only_studies = report.source_studies and all(condition(run) is not None for run in report.runs)
        return "" if only_studies else f"## Seed study\n\nNo cell has {MIN_SEEDS} or more complete seeds."
    return (
        f"## Seed study (cells with {MIN_SEEDS} or more seeds)\n\nThe spread of per-seed last-10 means, the mean "
        "width of the 95% bootstrap CI of the mean with 3 seeds and with all of them (every size in "
        f"`{PLOTS_DIR}/seed_ci_width_*.png`), and how often a Welch t-test finds two disjoint groups of seeds of the "
        "same config different at p < 0.05: every such finding is a false positive (5% is the nominal rate; all "
        "group sizes in `seed_study_welch.csv`). With 2 or 3 seeds the percentile bootstrap CI is too narrow: it "
        f"cannot reach beyond the few scores it resamples.\n\n{tables.markdown(frames['seed_study'])}"
    )


def _not_averaged_section(frames: dict[str, pd.DataFrame]) -> str:
    frame = frames["not_averaged"]
    if frame.empty:
        return "## Runs not averaged\n\nNone: every cell averages all its seeds."
    return (
        "## Runs not averaged\n\nThese runs are in no number above (unfinished, failed, duplicate seeds), and "
        f"these seeds have no run dir; their cells are marked (!).\n\n{tables.markdown(frame)}"
    )
