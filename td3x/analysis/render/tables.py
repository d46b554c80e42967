"""What every report section shares to show its numbers: cell text and marks, rows × envs display grids, and the
Markdown, CSV and LaTeX renderings of a table.

Display tables hold text: a cell reads ``mean [95% interval] n=seeds`` with the paper's number and our difference
beside it; ``§`` marks a Student-t interval (fewer than 10 seeds: ``metrics.interval_method``), ``(!)`` a cell that
rests on fewer runs than were meant to be there (the report's "Runs not averaged" section says which and why), and
``†`` a last-10 mean that takes in the untrained policy's step-0 evaluation (runs with 10 or fewer evaluations).
A report gives each note once, under the first table that needs it (``Notes``). Tidy CSVs hold the numbers, one
line per cell or run. Each section's own tables are in its module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from td3x.analysis.reading.cell_stats import CellStats
from td3x.analysis.reading.cells import Grid
from td3x.analysis.stats.metrics import MIN_BOOTSTRAP_SEEDS, STUDENT_T, Estimate

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
    'percentile bootstrap would be too narrow (at 5 seeds its "95%" interval covers a normal mean about 86% of '
    "the time; with 3 seeds its 2.5% and 97.5% points are the min and max of the seeds)."
)
MARK_NOTES = {T_MARK: T_NOTE, STEP0_MARK: STEP0_NOTE, SHORT_MARK: SHORT_NOTE}  # notes in this order
SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")  # a repeated cell text's numbered mark
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


def signed(value: float) -> str:
    """A signed number at the tables' 2 decimals, or ``n/a``."""
    return difference(value) if np.isfinite(value) else "n/a"


def estimate_text(estimate: Estimate, digits: int = 2, with_n: bool = True) -> str:
    """``mean [low, high] n=seeds``, the interval marked ``§`` when it is Student-t's; it is left out when there is
    none (fewer than 2 seeds, or a statistic without a Student-t form below 5 seeds)."""
    ci = ""
    if np.isfinite(estimate.low):
        mark = T_MARK if estimate.method == STUDENT_T else ""
        ci = f" [{number(estimate.low, digits)}, {number(estimate.high, digits)}]{mark}"
    return f"{number(estimate.value, digits)}{ci}" + (f" n={estimate.n}" if with_n else "")


def p_text(p: float) -> str:
    """A p-value: 3 decimals below 0.1 (``<0.001`` below that), else 2; ``n/a`` when NaN."""
    if not np.isfinite(p):
        return "n/a"
    if p < 0.001:
        return "<0.001"
    return f"{p:.3f}" if p < 0.1 else f"{p:.2f}"


def statistic_or_nan(values: np.ndarray, statistic: Callable[[np.ndarray], float]) -> float:
    return float(statistic(values)) if len(values) else float("nan")


def range_text(values: np.ndarray) -> str:
    """``mean [min, max]`` of a few runs' returns."""
    if len(values) == 0:
        return EMPTY
    return f"{number(values.mean())} [{number(values.min())}, {number(values.max())}]"


def spread_text(values: np.ndarray) -> str:
    """``mean ± std`` (population std, as the band) of the authors' returns."""
    return f"{number(values.mean())} ± {number(values.std())}" if len(values) else EMPTY


# ---------------------------------------------------------------------------------------------------- display tables
def grid_frame(grid: Grid, stats: Stats, text: Callable[[CellStats], str]) -> pd.DataFrame:
    """A rows × envs table of cell texts; ``(!)`` on flagged cells, ``—`` where a cell has no complete run."""
    data = {env_id: [_cell_text(grid, stats, row, env_id, text) for row in grid.rows] for env_id in grid.envs}
    return pd.DataFrame(data, index=pd.Index(grid.rows, name="row"))


def _cell_text(grid: Grid, stats: Stats, row: str, env_id: str, text: Callable[[CellStats], str]) -> str:
    cell = grid.cell(row, env_id)
    if cell is None:
        return EMPTY
    body = text(stats[(row, env_id)]) if (row, env_id) in stats else EMPTY
    return body + (FLAG if cell.flagged else "")


def verdicts_first(frame: pd.DataFrame, verdicts: Sequence[str], keys: int = 0) -> pd.DataFrame:
    """The frame with its verdict columns (those of ``verdicts`` it has, in that order) right after its first ``keys``
    columns (the env, say): where a screen cannot show the whole table, the verdicts show, the numbers scroll.

    Args:
        frame: a display table.
        verdicts: the names of its verdict columns.
        keys: how many leading columns name the line, before the verdicts.
    """
    first = [column for column in verdicts if column in frame.columns]
    rest = [column for column in frame.columns if column not in first]
    return frame[[*rest[:keys], *first, *rest[keys:]]]


def mark_notes(frame: pd.DataFrame) -> list[str]:
    """What ``†``, ``‡`` and ``§`` mean, each for a table that has a cell marked with it."""
    cells = [str(text) for text in frame.to_numpy().ravel()]
    return [note for mark, note in MARK_NOTES.items() if any(mark in cell for cell in cells)]


@dataclass
class Notes:
    """A report's notes under its tables, each given once, under the first table that needs it (a later table's mark
    refers back to it): one note per mark the cells use (``mark_notes``), and one per long text that the rows of a
    column repeat (a bound's origin, say), which becomes a numbered mark (¹, ², ...) in the cells.

    Attributes:
        given: the notes the report already gives (the header states the Student-t rule that ``§`` marks).
        marks: each marked cell text's mark, numbered in the order met, the same in every table of the report.
    """

    given: set[str] = field(default_factory=set)
    marks: dict[str, str] = field(default_factory=dict)

    def table(self, frame: pd.DataFrame, marked: Sequence[str] = ()) -> str:
        """A table's Markdown, the texts of its ``marked`` columns shown as their marks, and then the notes that the
        report has not given yet.

        Args:
            frame: a display table.
            marked: the columns whose texts become marks.
        """
        shown = frame.assign(**{column: [self._mark(str(text)) for text in frame[column]] for column in marked})
        used = {str(text) for column in marked for text in frame[column]}
        notes = [*mark_notes(frame), *(f"{mark} {text}" for text, mark in self.marks.items() if text in used)]
        new = [note for note in notes if note not in self.given]
        self.given.update(new)
        return "\n\n".join([markdown(shown), *new])

    def _mark(self, text: str) -> str:
        return self.marks.setdefault(text, str(len(self.marks) + 1).translate(SUPERSCRIPTS))


def table_section(title: str, text: str, frame: pd.DataFrame, notes: Notes) -> str:
    """A report section of one table: its heading, what the table holds, the table, and the notes of its marks that
    the report has not given yet."""
    return "\n\n".join(piece for piece in (f"## {title}", text, notes.table(frame)) if piece)


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
    """A booktabs LaTeX table (text escaped for LaTeX) of a display frame, its caption followed by the notes of its
    marks (``mark_notes``: pandas does not escape a caption, where a bare % starts a comment)."""
    caption = " ".join([caption, *(note.replace("%", r"\%") for note in mark_notes(frame))])
    # the row labels as a first column, so the header is one line
    styler = frame.reset_index().style.hide(axis="index").format(escape="latex").format_index(escape="latex", axis=1)
    latex = styler.to_latex(hrules=True, caption=caption, position_float="centering")
    for symbol, command in LATEX_SYMBOLS.items():
        latex = latex.replace(symbol, command)
    path.write_text(latex)
    return path


def write_tables(frames: dict[str, pd.DataFrame], captions: dict[str, str], out: Path) -> list[Path]:
    """Every table as CSV, and those with a caption (the paper-shaped ones) also as LaTeX (booktabs).

    Args:
        frames: the tables by name (the file names).
        captions: per table to write as LaTeX too, its caption (the notes of its marks are added).
        out: the output directory.
    """
    files = [out / f"{name}.csv" for name in frames]
    for path, frame in zip(files, frames.values(), strict=True):
        frame.to_csv(path, index=frame.index.name is not None)  # a named index: the first column
    latex = {name: caption for name, caption in captions.items() if name in frames}
    files += [write_latex(frames[name], out / f"{name}.tex", caption) for name, caption in latex.items()]
    return files
