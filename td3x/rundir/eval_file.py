"""A run's ``eval.csv`` read and checked once for every reader: the report's runs (td3x.analysis.reading.runs) and the
tuner's scores (td3x.tuning.scores). A file that cannot be a run's evaluations is refused with one line naming it:
not CSV, without the ``step`` or ``return_mean`` column, a value there that is no number, empty or not finite
(``nan``, ``inf``: it would poison every mean), or steps that do not increase (a repeated row would count one
evaluation twice in every statistic)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from td3x.rundir.layout import RunFileError


def read_evals(path: Path) -> pd.DataFrame:
    """eval.csv's rows (none when it is missing or empty); RunFileError naming the file when it is unreadable,
    lacks the step or return_mean column, or holds a value there that is not a finite number."""
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame({"step": [], "return_mean": []})
    checked = ("step", "return_mean")
    try:  # the checked columns as their text, so that a problem is shown as written ("nan", not an empty cell)
        text = path.read_text()
        evals = pd.read_csv(io.StringIO(text), converters=dict.fromkeys(checked, str))
    except (OSError, UnicodeDecodeError, ValueError) as error:  # pandas' ParserError is a ValueError
        raise RunFileError(f"{path} is not a readable CSV file: {' '.join(str(error).split())}") from error
    _refuse_a_cut_last_line(path, text)
    missing = [name for name in checked if name not in evals.columns]
    if missing:
        raise RunFileError(f"{path} lacks the {' and '.join(missing)} column{'s' * (len(missing) > 1)}")
    for name in checked:  # step first: a return_mean problem is then named by its step
        numbers = pd.to_numeric(evals[name], errors="coerce")
        wrong = np.flatnonzero(~np.isfinite(numbers.to_numpy(dtype=np.float64)))
        if len(wrong):
            raise RunFileError(_cell_problem(path, evals, name, int(wrong[0]), numbers))
        evals[name] = numbers
    steps = evals["step"].to_numpy()
    repeated = np.flatnonzero(np.diff(steps) <= 0)
    if len(repeated):  # a run evaluates at increasing steps: a repeated row would be counted twice in a statistic
        row = int(repeated[0]) + 1  # the first row that does not increase; the file's line row + 2 (a header)
        raise RunFileError(
            f"{path} has step {steps[row]:g} on line {row + 2} after step {steps[row - 1]:g} on line {row + 1}: "
            "its steps must increase"
        )
    return evals


def _cell_problem(path: Path, evals: pd.DataFrame, name: str, row: int, numbers: pd.Series) -> str:
    """One line naming the file, the column, the line (and the step, for return_mean) and the value of a cell of
    ``name`` that is no finite number (``numbers``: the column read as numbers): text that is no number, an empty
    cell, or nan, inf, -inf."""
    text = str(evals[name].iloc[row]).strip()
    line = f"line {row + 2}" + ("" if name == "step" else f", step {evals['step'].iloc[row]:g}")
    if not text:
        return f"{path} has an empty cell in its {name} column ({line}), not a number"
    if pd.isna(numbers.iloc[row]) and text.lower().lstrip("+-") != "nan":
        return f"{path} has {text!r} in its {name} column, not a number"
    return f"{path} has {text!r} in its {name} column ({line}), not a finite number"


def _refuse_a_cut_last_line(path: Path, text: str) -> None:
    """Refuse a last line that lacks its newline and some of the header's fields: a write cut by a crash (or an
    edit), whose last number may be cut too (``-1258.94`` read as ``-84``), which pandas would take in silence with
    the missing fields empty. A whole last line without a newline (a hand-written file) is read."""
    lines = text.splitlines()
    if text.endswith("\n") or len(lines) < 2:
        return
    fields, header = lines[-1].count(",") + 1, lines[0].count(",") + 1
    if fields < header:
        raise RunFileError(
            f"{path} line {len(lines)} is cut short ({fields} of the header's {header} fields, no newline): a write "
            "stopped mid-line, so its last value may be cut too"
        )
