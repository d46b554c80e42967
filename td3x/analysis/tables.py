"""The report's tables as pandas DataFrames, and their Markdown, CSV and LaTeX renderings.

Display tables (rows × envs) hold text: a cell reads ``mean [95% interval] n=seeds`` with the paper's number and
our difference beside it; ``§`` marks a Student-t interval (fewer than 5 seeds: ``metrics.interval_method``),
``(!)`` a cell that rests on fewer runs than were meant to be there (the report's "Runs not averaged" section says
which and why), and ``†`` a last-10 mean that takes in the untrained policy's step-0 evaluation (runs with 10 or
fewer evaluations). Tidy CSVs hold the numbers, one line per cell or run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from td3x.analysis.aggregates import Normaliser, RowAggregate
from td3x.analysis.cell_stats import BIAS_COLUMNS, CellStats
from td3x.analysis.cells import Grid
from td3x.analysis.fidelity import ALPHA, PEER_ROW, PRIMARY, SPREAD, Comparison, Fidelity, PeerComparison, Welch
from td3x.analysis.metrics import MIN_BOOTSTRAP_SEEDS, STUDENT_T, Band, Estimate
from td3x.analysis.paper import PAPER_STEPS, paper_env, table1_score, table2_score
from td3x.analysis.seeds import SeedStudy
from td3x.seed_statistics import last10_return

FLAG = " (!)"
STEP0_MARK = " †"
STEP0_NOTE = (
    "† These runs have 10 or fewer evaluations, so their last-10 mean takes in the step-0 evaluation of the "
    "untrained policy (the paper's runs have 201 evaluations)."
)
SHORT_MARK = " ‡"
SHORT_NOTE = (
    "‡ These runs end before the paper's 1M env steps: the paper's number, taken after 1M steps, is beside them "
    "for scale, with no difference."
)
T_MARK = "§"
T_NOTE = (
    f"§ Fewer than {MIN_BOOTSTRAP_SEEDS} seeds: a Student-t 95% interval, mean ± t(0.975, n−1)·s/√n, where a "
    "percentile bootstrap would be too narrow (with 3 seeds its 2.5% and 97.5% points are the min and max of the "
    "seeds)."
)
UNTRAINED_PEAK = "— (no evaluation after step 0 beats step 0)"
MARK_NOTES = {T_MARK: T_NOTE, STEP0_MARK: STEP0_NOTE, SHORT_MARK: SHORT_NOTE}  # notes in this order
EMPTY = "—"
# pdflatex knows no Greek or ± in text mode: math-mode forms of the symbols the cells use
LATEX_SYMBOLS = {
    "Δ": r"$\Delta$",
    "±": r"$\pm$",
    "—": "---",
    "†": r"$^\dagger$",
    "‡": r"$^\ddagger$",
    "§": r"\S{}",
    "−": "-",
    "·": r"$\cdot$",
    "√": r"$\surd$",
}
Stats = dict[tuple[str, str], CellStats]


# ---------------------------------------------------------------------------------------------------- cell text
def number(value: float, digits: int = 2) -> str:
    """A number for a table with ``digits`` decimals, or ``n/a`` when it is NaN."""
    return f"{value:.{digits}f}" if np.isfinite(value) else "n/a"


def difference(value: float) -> str:
    """A signed difference at the tables' 2 decimals (a difference that rounds to zero reads +0.00, not -0.00)."""
    text = f"{value:+.2f}"
    return "+0.00" if text == "-0.00" else text


def estimate_text(estimate: Estimate, digits: int = 2, with_n: bool = True) -> str:
    """``mean [low, high] n=seeds``, the interval marked ``§`` when it is Student-t's; it is left out when there is
    none (fewer than 2 seeds, or a statistic without a Student-t form below 5 seeds).

    Args:
        estimate: the estimate.
        digits: decimals.
        with_n: whether to add the sample size.
    """
    ci = ""
    if np.isfinite(estimate.low):
        mark = T_MARK if estimate.method == STUDENT_T else ""
        ci = f" [{number(estimate.low, digits)}, {number(estimate.high, digits)}]{mark}"
    return f"{number(estimate.value, digits)}{ci}" + (f" n={estimate.n}" if with_n else "")


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


def signed(value: float) -> str:
    """A signed number at the tables' 2 decimals, or ``n/a``."""
    return difference(value) if np.isfinite(value) else "n/a"


# ---------------------------------------------------------------------------------------------------- display tables
def grid_frame(grid: Grid, stats: Stats, text: Callable[[CellStats], str]) -> pd.DataFrame:
    """A rows × envs table of cell texts; ``(!)`` on flagged cells, ``—`` where a cell has no complete run.

    Args:
        grid: the report's cells.
        stats: per (row, env), the cell's numbers.
        text: renders one cell.
    """
    data = {env_id: [_cell_text(grid, stats, row, env_id, text) for row in grid.rows] for env_id in grid.envs}
    return pd.DataFrame(data, index=pd.Index(grid.rows, name="row"))


def _cell_text(grid: Grid, stats: Stats, row: str, env_id: str, text: Callable[[CellStats], str]) -> str:
    cell = grid.cell(row, env_id)
    if cell is None:
        return EMPTY
    body = text(stats[(row, env_id)]) if (row, env_id) in stats else EMPTY
    return body + (FLAG if cell.flagged else "")


def aggregates_frame(aggregates: list[RowAggregate]) -> pd.DataFrame:
    """One line per row: its envs with each cell's seeds, the seeds pooled (those complete on every env), IQM and
    mean of normalised scores, P(row > TD3 row)."""
    return pd.DataFrame(
        {
            "envs (cell seeds)": [", ".join(f"{e} ({a.cell_seeds[e]})" for e in a.envs) for a in aggregates],
            "seeds pooled per env": [len(a.seeds) for a in aggregates],
            "IQM [95% CI]": [estimate_text(a.iqm, 3) for a in aggregates],
            "mean [95% interval]": [estimate_text(a.mean, 3) for a in aggregates],
            "P(row > TD3 row) [95% CI]": [_improvement_text(a) for a in aggregates],
        },
        index=pd.Index([a.row for a in aggregates], name="row"),
    )


def _improvement_text(aggregate: RowAggregate) -> str:
    if aggregate.improvement is None:
        return EMPTY
    return f"{estimate_text(aggregate.improvement, 3, with_n=False)} vs {aggregate.reference}"


def normalisers_frame(normalisers: dict[str, Normaliser]) -> pd.DataFrame:
    """Each env's normaliser: score 1 = reference, 0 = zero."""
    return pd.DataFrame(
        {
            "zero": [number(n.zero) for n in normalisers.values()],
            "reference": [number(n.reference) for n in normalisers.values()],
            "source": [n.source for n in normalisers.values()],
        },
        index=pd.Index(list(normalisers), name="env"),
    )


def seed_study_frame(studies: list[SeedStudy]) -> pd.DataFrame:
    """One line per studied cell: the spread of per-seed scores, the CI width with all seeds and with 3, and the
    Welch false-positive rate for the largest pair of disjoint groups."""
    return pd.DataFrame(
        {
            "env": [s.env_id for s in studies],
            "seeds": [len(s.seeds) for s in studies],
            "min / median / max": [" / ".join(number(s.spread[k]) for k in ("min", "median", "max")) for s in studies],
            "std": [number(s.spread["std"]) for s in studies],
            "CI width, 3 seeds": [number(float(s.ci_width.mean[1])) for s in studies],
            "CI width, all seeds": [number(float(s.ci_width.mean[-1])) for s in studies],
            "Welch p<0.05, same config": [_welch_text(s) for s in studies],
        },
        index=pd.Index([s.row for s in studies], name="row"),
    )


def _welch_text(study: SeedStudy) -> str:
    largest = study.welch[-1]
    return f"{100 * largest.significant:.1f}% of {largest.splits} splits {largest.group_size} vs {largest.group_size}"


def left_out_frame(grid: Grid) -> pd.DataFrame:
    """One line per flagged cell and reason: which runs were not averaged, which seeds have no run."""
    lines = [(cell.row, cell.env_id, note) for cell in grid.cells.values() for note in cell.notes()]
    return pd.DataFrame(lines, columns=["row", "env", "not averaged"]).set_index("row")


# ---------------------------------------------------------------------------------------------------- tidy CSVs
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
    """Every run found, by path: its row, env, seed, status, and why it was not averaged (empty when it was)."""
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
            "problem": [run.problem or "" for run in runs],
        }
    )


def fidelity_frame(results: list[Fidelity]) -> pd.DataFrame:
    """``fidelity.csv``: one line per cell of an env with the authors' curves. Per statistic (``run_mean``, the
    primary: each seed's mean return over the evaluations 5k..T; ``final``: the return at T), our and the authors'
    means, the difference with its 95% Welch interval, Welch's p (and Holm's for the primary), the TOST margin and
    the held-out yardstick; then the band count and the returns at the first and last step both evaluated."""
    return pd.DataFrame(
        {
            "env": [f.env_id for f in results],
            "authors_env": [f.paper_env for f in results],
            "seeds": [f.seeds for f in results],
            "authors_seeds": [len(f.authors) for f in results],
            "steps": [len(f.steps) for f in results],
            "first_step": [int(f.steps[0]) if len(f.steps) else None for f in results],
            "last_step": [int(f.steps[-1]) if len(f.steps) else None for f in results],
            "outcome": [outcome(f) for f in results],
            **{
                name: values
                for statistic in ("run_mean", "final")
                for name, values in _test_columns([f.comparisons[statistic] for f in results], statistic).items()
            },
            "within": [f.within for f in results],
            "points": [f.points for f in results],
            f"within mean ± {SPREAD:g} std": [f.text for f in results],
            **{name: values for end in ("first", "last") for name, values in _ends_columns(results, end).items()},
        },
        index=pd.Index([f.row for f in results], name="row"),
    )


def welch_csv_columns(statistic: str, tests: list[Welch]) -> dict[str, list[float]]:
    """A csv's columns of Welch comparisons of one statistic: the difference, its 95% interval and p."""
    return {
        f"{statistic}_difference": [t.difference for t in tests],
        f"{statistic}_ci_low": [t.low for t in tests],
        f"{statistic}_ci_high": [t.high for t in tests],
        f"{statistic}_p": [t.p for t in tests],
    }


MARGIN_COLUMN = f"ruled out beyond (TOST, α = {ALPHA:g})"


def difference_text(test: Welch) -> str:
    """``+d [low, high]``: a Welch comparison's difference of means with its 95% interval."""
    return f"{signed(test.difference)} [{number(test.low)}, {number(test.high)}]"


def margin_text(test: Welch) -> str:
    """``±Δ``: the TOST margin beyond which differences are ruled out; ``n/a`` without one."""
    return f"±{number(test.margin)}" if np.isfinite(test.margin) else "n/a"


def _test_columns(comparisons: list[Comparison], statistic: str) -> dict[str, list[float | int]]:
    columns: dict[str, list[float | int]] = {
        f"{statistic}_ours": [float(c.ours.mean()) for c in comparisons],
        f"{statistic}_authors": [float(c.authors.mean()) for c in comparisons],
        **welch_csv_columns(statistic, [c.test for c in comparisons]),
    }
    if statistic == PRIMARY:
        columns[f"{statistic}_holm_p"] = [c.holm_p for c in comparisons]
    columns |= {
        f"{statistic}_margin": [c.test.margin for c in comparisons],
        f"{statistic}_held_out_splits": [len(c.held_out) for c in comparisons],
        f"{statistic}_held_out_at_or_below": [c.at_or_below for c in comparisons],
        f"{statistic}_held_out_share": [c.share for c in comparisons],
    }
    return columns


def outcome(result: Fidelity) -> str:
    """The primary test's outcome in words."""
    if not np.isfinite(result.run_mean.holm_p):
        return "no test"
    return "differs" if result.differs else "no difference detected"


def p_text(p: float) -> str:
    """A p-value: 3 decimals below 0.1 (``<0.001`` below that), else 2; ``n/a`` when NaN."""
    if not np.isfinite(p):
        return "n/a"
    if p < 0.001:
        return "<0.001"
    return f"{p:.3f}" if p < 0.1 else f"{p:.2f}"


def held_out_text(comparison: Comparison) -> str:
    """``k of N (x%)``: how many of the held-out splits have a p at or below ours; ``—`` without splits."""
    if not len(comparison.held_out) or not np.isfinite(comparison.test.p):
        return EMPTY
    return f"{comparison.at_or_below} of {len(comparison.held_out)} ({100 * comparison.share:.1f}%)"


def fidelity_test_frame(results: list[Fidelity], statistic: str) -> pd.DataFrame:
    """The report's display table of one statistic's test: per row and env, our and the authors' means, the
    difference [95% Welch interval], Welch's p (Holm's too, and the outcome, for the primary statistic), the margin
    beyond which differences are ruled out (TOST at α), and the held-out yardstick.

    Args:
        results: the cells against the authors' curves.
        statistic: ``run_mean`` (the primary) or ``final``.
    """
    comparisons = [f.comparisons[statistic] for f in results]
    columns: dict[str, list[object]] = {
        "env": [f.env_id for f in results],
        "seeds": [f.seeds for f in results],
        "T": [int(f.steps[-1]) if len(f.steps) else EMPTY for f in results],
        "ours": [number(float(c.ours.mean())) for c in comparisons],
        "authors'": [number(float(c.authors.mean())) for c in comparisons],
        "ours − authors [95% CI]": [difference_text(c.test) for c in comparisons],
        "Welch p": [p_text(c.test.p) for c in comparisons],
    }
    if statistic == PRIMARY:
        columns["Holm p"] = [p_text(c.holm_p) for c in comparisons]
    columns[MARGIN_COLUMN] = [margin_text(c.test) for c in comparisons]
    columns["held-out splits with p ≤ ours"] = [held_out_text(c) for c in comparisons]
    if statistic == PRIMARY:
        columns["outcome"] = [outcome(f) for f in results]
    return pd.DataFrame(columns, index=pd.Index([f.row for f in results], name="row"))


def peer_frame(peers: list[PeerComparison]) -> pd.DataFrame:
    """``peer.csv``: per row and env with a peer, the row's and the peer's mean of the primary statistic, the
    difference with its 95% Welch interval, Welch's and Holm's p and the TOST margin."""
    return pd.DataFrame(
        {
            "env": [c.env_id for c in peers],
            "peer": [PEER_ROW] * len(peers),
            "seeds": [len(c.ours) for c in peers],
            "peer_seeds": [len(c.peer) for c in peers],
            f"{PRIMARY}_ours": [float(c.ours.mean()) for c in peers],
            f"{PRIMARY}_peer": [float(c.peer.mean()) for c in peers],
            **welch_csv_columns(PRIMARY, [c.test for c in peers]),
            f"{PRIMARY}_holm_p": [c.holm_p for c in peers],
            f"{PRIMARY}_margin": [c.test.margin for c in peers],
        },
        index=pd.Index([c.row for c in peers], name="row"),
    )


def peer_test_frame(peers: list[PeerComparison]) -> pd.DataFrame:
    """The report's display table of the rows against the peer (see :func:`peer_frame`)."""
    return pd.DataFrame(
        {
            "env": [c.env_id for c in peers],
            "seeds": [len(c.ours) for c in peers],
            "peer's seeds": [len(c.peer) for c in peers],
            "ours": [number(float(c.ours.mean())) for c in peers],
            "peer's": [number(float(c.peer.mean())) for c in peers],
            "ours − peer [95% CI]": [difference_text(c.test) for c in peers],
            "Welch p": [p_text(c.test.p) for c in peers],
            "Holm p": [p_text(c.holm_p) for c in peers],
            MARGIN_COLUMN: [margin_text(c.test) for c in peers],
        },
        index=pd.Index([c.row for c in peers], name="row"),
    )


FIDELITY_ENDS = {"first": 0, "last": -1}  # the untrained policy (step 0) and the end of the shorter curves


def fidelity_text_columns(end: str) -> list[str]:
    """The names of the display columns of ours and the authors' returns at ``end`` (first or last)."""
    return [f"ours at {end}_step: mean [min, max]", f"authors' at {end}_step: mean ± std"]


def _ends_columns(counts: list[Fidelity], end: str) -> dict[str, list[object]]:
    """Ours and the authors' returns at the first or the last step both evaluated: numbers and texts."""
    ours = [f.ours[:, FIDELITY_ENDS[end]] if len(f.steps) else np.empty(0) for f in counts]
    authors = [f.authors[:, FIDELITY_ENDS[end]] if len(f.steps) else np.empty(0) for f in counts]
    ours_text, authors_text = fidelity_text_columns(end)
    return {
        f"ours_{end}_mean": [_stat(values, np.mean) for values in ours],
        f"ours_{end}_min": [_stat(values, np.min) for values in ours],
        f"ours_{end}_max": [_stat(values, np.max) for values in ours],
        f"authors_{end}_mean": [_stat(values, np.mean) for values in authors],
        f"authors_{end}_std": [_stat(values, np.std) for values in authors],
        ours_text: [_range_text(values) for values in ours],
        authors_text: [_spread_text(values) for values in authors],
    }


def _stat(values: np.ndarray, statistic: Callable[[np.ndarray], float]) -> float:
    return float(statistic(values)) if len(values) else float("nan")


def _range_text(values: np.ndarray) -> str:
    """``mean [min, max]`` of a few runs' returns."""
    if len(values) == 0:
        return EMPTY
    return f"{number(values.mean())} [{number(values.min())}, {number(values.max())}]"


def _spread_text(values: np.ndarray) -> str:
    """``mean ± std`` (population std, as the band) of the authors' returns."""
    return f"{number(values.mean())} ± {number(values.std())}" if len(values) else EMPTY


def welch_csv_frame(studies: list[SeedStudy]) -> pd.DataFrame:
    """The seed study in full: per cell, its spread, and per group size the Welch false-positive rate."""
    return pd.DataFrame(
        [
            {"row": s.row, "env": s.env_id, "seeds": len(s.seeds), **s.spread, **vars(rate)}
            for s in studies
            for rate in s.welch
        ]
    )


# ---------------------------------------------------------------------------------------------------- renderings
def markdown(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of a frame's index and columns."""
    header = [str(frame.index.name or ""), *map(str, frame.columns)]
    lines = [_md_line(header), _md_line(["---"] * len(header))]
    rows = zip(frame.index, frame.to_numpy(), strict=True)
    lines += [_md_line([str(label), *map(str, values)]) for label, values in rows]
    return "\n".join(lines)


def _md_line(cells: list[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def write_latex(frame: pd.DataFrame, path: Path, caption: str) -> Path:
    """A booktabs LaTeX table (text escaped for LaTeX) of a display frame.

    Args:
        frame: a display table.
        path: the .tex file to write.
        caption: the table's caption.
    """
    # the row labels as a first column, so the header is one line
    styler = frame.reset_index().style.hide(axis="index").format(escape="latex").format_index(escape="latex", axis=1)
    latex = styler.to_latex(hrules=True, caption=caption, position_float="centering")
    for symbol, command in LATEX_SYMBOLS.items():
        latex = latex.replace(symbol, command)
    path.write_text(latex)
    return path


def write_csv(frame: pd.DataFrame, path: Path) -> Path:
    """A CSV of a frame (its index as the first column when it is named).

    Args:
        frame: a table.
        path: the .csv file to write.
    """
    frame.to_csv(path, index=frame.index.name is not None)
    return path
