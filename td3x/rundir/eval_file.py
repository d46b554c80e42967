"""A run's ``eval.csv`` read and checked once for every reader: the report's runs (td3x.analysis.runs) and the
tuner's scores (td3x.tuning.scores). A file that cannot be a run's evaluations is refused with one line naming it:
not CSV, without the ``step`` or ``return_mean`` column, a value there that is no number, or steps that do not
increase (a repeated row would count one evaluation twice in every statistic)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from td3x.rundir.layout import RunFileError


def read_evals(path: Path) -> pd.DataFrame:
    """eval.csv's rows (none when it is missing or empty); RunFileError naming the file when it is unreadable,
    lacks the step or return_mean column, or holds a value that is not a number there."""
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame({"step": [], "return_mean": []})
    try:
        evals = pd.read_csv(path)
    except (OSError, UnicodeDecodeError, ValueError) as error:  # pandas' ParserError is a ValueError
        raise RunFileError(f"{path} is not a readable CSV file: {' '.join(str(error).split())}") from error
    missing = [name for name in ("step", "return_mean") if name not in evals.columns]
    if missing:
        raise RunFileError(f"{path} lacks the {' and '.join(missing)} column{'s' * (len(missing) > 1)}")
    for name in ("step", "return_mean"):
        numbers = pd.to_numeric(evals[name], errors="coerce")
        bad = evals[name][numbers.isna() & evals[name].notna()]
        if len(bad) or evals[name].isna().any():
            shown = bad.iloc[0] if len(bad) else "an empty cell"
            raise RunFileError(f"{path} has {shown!r} in its {name} column, not a number")
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
