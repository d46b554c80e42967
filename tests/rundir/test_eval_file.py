"""A run's eval.csv read and checked (td3x.rundir.eval_file): a step or return_mean cell that is no finite number is
refused with one line naming the file, the column, the line (and step) and the value as written."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.report_runs import curve, write_run

from td3x.analysis.reading.runs import find_runs
from td3x.rundir.eval_file import read_evals
from td3x.rundir.layout import RunFileError


def _with_cell(run_dir: Path, column: str, text: str) -> Path:
    """The run's eval.csv with ``text`` in ``column`` on line 4 (its third row, step 200), as written."""
    path = run_dir / "eval.csv"
    lines = path.read_text().splitlines()
    cells = lines[3].split(",")
    cells[lines[0].split(",").index(column)] = text
    lines[3] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("column", "text", "problem"),
    [
        ("return_mean", "nan", "has 'nan' in its return_mean column (line 4, step 200), not a finite number"),
        ("return_mean", "NaN", "has 'NaN' in its return_mean column (line 4, step 200), not a finite number"),
        ("return_mean", "inf", "has 'inf' in its return_mean column (line 4, step 200), not a finite number"),
        ("return_mean", "-inf", "has '-inf' in its return_mean column (line 4, step 200), not a finite number"),
        ("return_mean", "", "has an empty cell in its return_mean column (line 4, step 200), not a number"),
        ("return_mean", "abc", "has 'abc' in its return_mean column, not a number"),
        ("step", "nan", "has 'nan' in its step column (line 4), not a finite number"),
        ("step", "inf", "has 'inf' in its step column (line 4), not a finite number"),
    ],
)
def test_a_cell_that_is_no_finite_number_is_refused_naming_it(
    tmp_path: Path, column: str, text: str, problem: str
) -> None:
    """Before: nan read as "'an empty cell'", inf and -inf read as returns and averaged."""
    path = _with_cell(write_run(tmp_path / "run", "Hopper-v5", "TD3", 0, curve(100, 0)), column, text)
    with pytest.raises(RunFileError) as refused:
        read_evals(path)
    assert str(refused.value) == f"{path} {problem}"


def test_a_run_with_an_infinite_return_is_left_out_of_the_averages_named(tmp_path: Path) -> None:
    good = write_run(tmp_path / "good", "Hopper-v5", "TD3", 0, curve(100, 0))
    path = _with_cell(write_run(tmp_path / "inf", "Hopper-v5", "TD3", 1, curve(100, 1)), "return_mean", "inf")
    problems = {run.path: run.problem for run in find_runs([tmp_path])}
    assert problems == {
        good: None,
        path.parent: f"unreadable: {path} has 'inf' in its return_mean column (line 4, step 200), not a finite number",
    }
