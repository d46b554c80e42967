"""Markdown tables as the report writes them and the results pages quote them, read back: each table's header and
its lines' cells."""

from __future__ import annotations

import itertools
import re

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
