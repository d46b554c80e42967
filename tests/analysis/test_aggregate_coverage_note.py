"""The aggregates section quotes the measured coverage of its bootstrap CIs (``td3x-report --coverage``), says
it is not measured without it, and refuses a file that is not a coverage table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers.report_runs import curve, write_run

from td3x.analysis import report
from td3x.analysis.reading.input_files import COVERAGE_COLUMNS, read_coverage
from td3x.analysis.sections.aggregates import RowAggregate, coverage_note
from td3x.analysis.stats.metrics import BOOTSTRAP, NO_INTERVAL, Estimate
from td3x.commands.report import main


def row(seeds: int, method: str) -> RowAggregate:
    low, high = (0.9, 1.1) if method == BOOTSTRAP else (np.nan, np.nan)
    estimate = Estimate(1.0, low, high, seeds, method)
    envs = ["Hopper-v5", "Walker2d-v5"]
    return RowAggregate("AHE", envs, {}, list(range(seeds)), np.ones((seeds, 2)), estimate, estimate, None, None)


def coverage_table(rows: list[tuple[str, int, str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "row": r,
                "envs": "Hopper-v5 Walker2d-v5",
                "seeds_per_env": n,
                "statistic": s,
                "interval": i,
                "coverage": c,
                "replicates": 4000,
            }
            for r, n, s, i, c in rows
        ],
        columns=COVERAGE_COLUMNS,
    )


def test_the_note_quotes_the_lines_of_the_rows_with_a_bootstrap_ci() -> None:
    table = coverage_table(
        [
            ("AHE", 5, "IQM", "stratified percentile bootstrap", 0.8185),
            ("AHE", 5, "mean", "Student-t (stratified)", 0.9493),
            ("AHE + CDQ", 5, "IQM", "stratified percentile bootstrap", 0.9010),  # not a row of this report
            ("AHE", 6, "IQM", "stratified percentile bootstrap", 0.5),  # another design
        ]
    )
    note = coverage_note([row(5, BOOTSTRAP)], table)
    assert "IQM by stratified percentile bootstrap: 82%;" in note and "mean by Student-t (stratified): 95%." in note
    assert "4000 simulated samples" in note and "90%" not in note and "50%" not in note


def test_without_a_table_or_its_design_the_note_says_not_measured() -> None:
    assert "is not measured for this report" in coverage_note([row(5, BOOTSTRAP)], None)
    assert "is not measured" in coverage_note([row(5, BOOTSTRAP)], coverage_table([]))
    assert coverage_note([row(3, NO_INTERVAL)], None) == ""  # no bootstrap CI printed: nothing to say


def test_the_cli_refuses_a_coverage_file_that_is_missing_or_is_not_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_run(tmp_path / "runs/seed_0", "Hopper-v5", "TD3", 0, curve(1000, 0))
    (tmp_path / "other.csv").write_text("row,coverage\nAHE,0.9\n")
    for name in ("missing.csv", "other.csv"):
        assert main([str(tmp_path / "runs"), "--out", str(tmp_path / "out"), "--coverage", str(tmp_path / name)]) == 2
        error = capsys.readouterr().err.strip()
        assert error.startswith("report error:") and name in error and len(error.splitlines()) == 1
    assert not (tmp_path / "out").exists()  # nothing half-written


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "{path}: is a directory: name a coverage table of scripts/aggregate_coverage.py (CSV)"),
        (b"", "{path} is empty: name a coverage table of scripts/aggregate_coverage.py (CSV)"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "{path}: is a binary file, not text: name a coverage table"),
        (b"registration: 1\ntitle: a\nsides:\n  a: {x: 1, y: 2}\n", "{path} is not a coverage table of"),
    ],
)
def test_a_coverage_file_of_the_wrong_kind_is_one_line_before_any_run_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes | None, expected: str
) -> None:
    """A folder, an empty file, an image or a YAML file (before: a traceback, or pandas' words without the file)."""
    path = tmp_path / "coverage.csv"
    path.mkdir() if content is None else path.write_bytes(content)
    monkeypatch.setattr(report, "find_runs", lambda paths: pytest.fail("runs read before the coverage file"))
    with pytest.raises(report.ReportError) as refused:
        report.build_report([tmp_path], report.Settings(coverage=path))
    assert str(refused.value).startswith(expected.format(path=path)) and "\n" not in str(refused.value)


def test_a_coverage_table_saved_as_utf16_reads(tmp_path: Path) -> None:
    path = tmp_path / "coverage.csv"
    table = coverage_table([("AHE", 5, "IQM", "stratified percentile bootstrap", 0.9)])
    path.write_text(table.to_csv(index=False), encoding="utf-16")
    assert list(read_coverage(path)["coverage"]) == [0.9]
