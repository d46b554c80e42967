"""Markdown tables as the report writes them and the results pages quote them, read back: each table's header, and
the verdict columns that sit past the columns a narrow page shows first."""

from __future__ import annotations

import itertools
import re

# the columns a reader looks for: each section's verdict, decision or outcome in words
VERDICT_COLUMNS = {"outcome", "equivalence", "difference", "verdict"}
# the columns that name a line (a row and an env), then two verdicts: a page shows these before any scroll box
VISIBLE_COLUMNS = 4
NARROW_COLUMNS = 8  # a table this narrow shows whole on a page 1400 px wide (the results page's glance table)
RULE = re.compile(r"\|(\s*:?-+:?\s*\|)+")  # a table's |---|---| line, under its header


def cells(line: str) -> list[str]:
    """A table line's cells (a ``\\|`` inside a cell is text, not a border)."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def markdown_tables(markdown: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every table's header cells and its lines' cells, in the order of the tables."""
    lines = markdown.splitlines()
    found = []
    for i, line in enumerate(lines):
        if i and RULE.fullmatch(line.strip()):
            body = [cells(row) for row in itertools.takewhile(lambda row: row.startswith("|"), lines[i + 1 :])]
            found.append((cells(lines[i - 1]), body))
    return found


def table_headers(markdown: str) -> list[list[str]]:
    """Every table's header cells, in the order of the tables."""
    return [header for header, _ in markdown_tables(markdown)]


def late_verdicts(markdown: str) -> list[tuple[str, int, list[str]]]:
    """(column, its place, the header) of every verdict column that a page may hide in its table's scroll box: past
    the first ``VISIBLE_COLUMNS`` of a table wider than ``NARROW_COLUMNS``."""
    return [
        (column, place, header)
        for header in table_headers(markdown)
        for place, column in enumerate(header)
        if column in VERDICT_COLUMNS and place >= VISIBLE_COLUMNS and len(header) > NARROW_COLUMNS
    ]
