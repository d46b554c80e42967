"""The report's Markdown read at a glance: a note is given once however many tables use its mark, a long text that
the rows of a column repeat (a bound's origin) is a numbered mark with the text given once as its note, and every
table's verdicts come right after the columns that name its line."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers.report_markdown import VISIBLE_COLUMNS, cells, late_verdicts, markdown_tables, table_headers
from helpers.report_runs import REPS, curve, write_run

from td3x.analysis import Settings, build_report, write_report
from td3x.analysis.render.comparison_columns import DECISION_COLUMN, ORIGIN_COLUMN, OUTCOME_COLUMN
from td3x.analysis.render.tables import MARK_NOTES, SHORT_MARK, SHORT_NOTE, T_MARK, T_NOTE, Notes
from td3x.analysis.report import Written

AUTHORS_ORIGIN = "post hoc: 0.2 × the authors' mean (the default rule)"  # every fidelity cell's bound, no file
PEER_ROW = "SB3 TD3"  # a folder of runs of another implementation, named the peer by td3x-report --peer
PEER_ORIGIN = "post hoc: 0.2 × the peer's mean (the default rule)"  # every peer cell's


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Written:
    """Hopper-v5 and Walker2d-v5: TD3, AHE and the peer row, 3 seeds each of 1100 steps: every cell marked § (Student-t
    at 3 seeds) and ‡ (shorter than the paper's runs) in Table 2 and Table 1, a fidelity line per row and env, and
    a peer line per env."""
    root = tmp_path_factory.mktemp("markdown")
    for env_id in ("Hopper-v5", "Walker2d-v5"):
        for base, row in ((1000, "TD3"), (900, "AHE"), (1100, PEER_ROW)):
            for seed in range(3):
                write_run(root / f"{env_id}/{row}/{seed}", env_id, row, seed, curve(base, seed))
    report = build_report([root], Settings(reps=REPS, peer=PEER_ROW))
    return write_report(report, root.parent / "out", "none")


def paragraphs(markdown: str) -> list[str]:
    return [piece.strip() for piece in markdown.split("\n\n")]


def test_a_note_is_given_once_however_many_tables_use_its_mark(written: Written) -> None:
    table2, table1 = written.frames["table2"].loc["TD3"], written.frames["table1"].loc["TD3"]
    assert all(SHORT_MARK in text and T_MARK in text for text in table2)  # Student-t at 3 seeds; runs < 1M steps
    assert all(SHORT_MARK in text for text in table1)
    notes = [piece for piece in paragraphs(written.markdown) if piece[:1] in "§†‡¹²³⁴⁵⁶⁷⁸⁹"]
    assert len(notes) == len(set(notes))
    assert paragraphs(written.markdown).count(SHORT_NOTE) == 1
    # § marks the header's interval rule, stated there once: no note repeats it under the tables
    header = written.markdown.split("\n## ")[0]
    assert f"marked {T_MARK}" in header and T_NOTE not in written.markdown


def test_a_bound_origin_repeated_down_the_tables_is_a_mark_and_its_text_one_note(written: Written) -> None:
    fidelity = written.markdown.split("## Fidelity to the authors' TD3 curves")[1].split("\n## ")[0]
    authors, peer = fidelity.split("**Against the peer", 1)
    for section, mark, count in ((authors, "¹", 3), (peer, "²", 2)):  # primary, secondary, sensitivity; the peer's two
        tables = [(header, lines) for header, lines in markdown_tables(section) if ORIGIN_COLUMN in header]
        assert [{line[header.index(ORIGIN_COLUMN)] for line in lines} for header, lines in tables] == [{mark}] * count
    assert paragraphs(written.markdown).count(f"¹ {AUTHORS_ORIGIN}") == 1
    assert paragraphs(written.markdown).count(f"² {PEER_ORIGIN}") == 1
    assert written.markdown.count(AUTHORS_ORIGIN) == written.markdown.count(PEER_ORIGIN) == 1  # the notes alone
    assert set(pd.read_csv(written.files[0].parent / "fidelity.csv")["run_mean_bound_from"]) == {AUTHORS_ORIGIN}


def test_notes_are_numbered_in_the_order_met_and_each_given_under_the_first_table_that_needs_it() -> None:
    notes = Notes()
    first = pd.DataFrame({"x": ["1 §", "2"], "from": ["a long origin", "another origin"]}, index=["r", "s"])
    second = pd.DataFrame({"x": ["3 §"], "from": ["another origin"]}, index=["t"])
    shown = notes.table(first, ["from"]).split("\n\n")
    assert [cells(line)[2] for line in shown[0].splitlines()[2:]] == ["¹", "²"]
    assert shown[1:] == [MARK_NOTES[T_MARK], "¹ a long origin", "² another origin"]
    again = notes.table(second, ["from"])
    assert "\n\n" not in again  # its notes are given: the table alone
    assert cells(again.splitlines()[2])[2] == "²"  # the same text, the same mark


def test_every_verdict_comes_right_after_the_columns_that_name_the_line(written: Written) -> None:
    headers = table_headers(written.markdown)
    primary = next(header for header in headers if OUTCOME_COLUMN in header)
    assert primary[:4] == ["row", "env", OUTCOME_COLUMN, DECISION_COLUMN]
    assert sum(DECISION_COLUMN in header for header in headers) == 2  # the authors' and the peer's primary tables
    assert late_verdicts(written.markdown) == [], f"a verdict past the first {VISIBLE_COLUMNS} columns"
