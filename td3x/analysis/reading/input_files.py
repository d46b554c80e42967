"""Reading a file the user names on ``td3x-report``'s command line (a registration file, a coverage table:
``read_coverage``): what can be wrong with it before its format is checked (a folder, no permission, a binary file,
no text at all) as one line, and its text whatever byte-order mark it starts with (Windows editors and PowerShell's
``>`` save UTF-16 with one, others UTF-8 with one), so that a valid file is never refused for its encoding.

YAML is read with :class:`UniqueKeyLoader`: a key written twice in one mapping is refused (PyYAML keeps the last in
silence, so a hand-edited registration would judge by a value its reader never sees).
"""

from __future__ import annotations

import codecs
import io
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

# scripts/aggregate_coverage.py's CSV: the columns the report reads, and which line measures which row
COVERAGE_COLUMNS = ["row", "envs", "seeds_per_env", "statistic", "interval", "coverage", "replicates"]
COVERAGE_SCRIPT = "scripts/aggregate_coverage.py"
# the byte-order marks that name their encoding; a file without one is read as UTF-8
BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


class InputFileError(ValueError):
    """A file named on the command line that cannot be read as text: ``problem`` is one line, without the path."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.problem = problem


def read_text(path: Path, kind: str) -> str:
    """The text of ``path``, decoded by its byte-order mark (UTF-8 without one).

    Args:
        path: the file.
        kind: what the file should be, for the problem's words (``a registration file (YAML)``).

    Raises:
        InputFileError: a folder, a file that cannot be read, or bytes that are no text in its encoding.
    """
    try:
        data = path.read_bytes()
    except IsADirectoryError as error:
        raise InputFileError(path, f"is a directory: name {kind}") from error
    except OSError as error:
        hint = " (a quoted ~ is not your home here: write $HOME)" if str(path).startswith("~") else ""
        raise InputFileError(path, f"cannot be read: {error.strerror or error}{hint}") from error
    encoding = next((name for bom, name in BOMS if data.startswith(bom)), "utf-8")
    if encoding == "utf-8" and b"\0" in data:  # UTF-8 text holds no NUL byte: an image, an archive, a checkpoint
        raise InputFileError(path, f"is a binary file, not text: name {kind}")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        raise InputFileError(path, f"is not {encoding.upper()} text (byte {error.start}): save it as UTF-8") from error


class UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key repeated in one mapping (a ``<<`` merge may still be overridden)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
            if not isinstance(key, Hashable):
                continue  # a list or mapping as a key: the safe loader refuses it itself
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is written twice in one mapping: keep one", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep)  # type: ignore[no-untyped-call,no-any-return]


def load_yaml(text: str) -> Any:
    """``text`` parsed as YAML by :class:`UniqueKeyLoader`.

    Raises:
        yaml.YAMLError: no YAML, or a key repeated in a mapping.
    """
    return yaml.load(text, Loader=UniqueKeyLoader)  # a SafeLoader underneath: no Python object is built


def yaml_problem(error: yaml.YAMLError) -> str:
    """A YAML error in one line: where it is in the file and what the parser found."""
    mark, reason = getattr(error, "problem_mark", None), getattr(error, "problem", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"is not valid YAML{where}" + (f": {reason}" if reason else "")


def read_coverage(path: Path) -> pd.DataFrame:
    """The coverage table of ``scripts/aggregate_coverage.py``.

    Raises:
        ValueError: it cannot be read as CSV text, or lacks a column the report reads (one line naming the file).
    """
    text = read_text(path, f"a coverage table of {COVERAGE_SCRIPT} (CSV)")
    if not text.strip():
        raise ValueError(f"{path} is empty: name a coverage table of {COVERAGE_SCRIPT} (CSV)")
    try:  # from the text td3x read, not the path: pandas would expand a ~ that td3x does not (nor would the shell)
        table = pd.read_csv(io.StringIO(text), keep_default_na=False)
    except ValueError as error:  # pandas' EmptyDataError and ParserError are ValueErrors
        reason = " ".join(str(error).split())
        raise ValueError(f"{path} is not a coverage table of {COVERAGE_SCRIPT}: {reason}") from error
    missing = [column for column in COVERAGE_COLUMNS if column not in table.columns]
    if missing:
        raise ValueError(f"{path} is not a coverage table of {COVERAGE_SCRIPT}: no column {', '.join(missing)}")
    return table
