"""MkDocs hook: tables generated at build time from td3x's own sources, so the pages cannot drift from them.

* ``<!-- td3x:config-keys -->``: every key of ``TrainConfig`` (``td3x/config/schema.py``) with its type, its default and
  the comment written beside it in the source (for an enum, its values and their comments).
* ``<!-- td3x:group-options -->``: every option of every config group in ``conf/``, with the file's opening comment.
* ``<!-- td3x:ablation-rows -->``: each ``ablation`` option composed as ``td3x-train`` would, with the ``agent.``
  values of the three components and the target rule that the row ends with.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import html
import inspect
import io
import itertools
import textwrap
import tokenize
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from td3x.api import compose
from td3x.config.hydra import CONF_DIR
from td3x.config.schema import TrainConfig

KEYS_MARKER = "<!-- td3x:config-keys -->"
GROUPS_MARKER = "<!-- td3x:group-options -->"
ROWS_MARKER = "<!-- td3x:ablation-rows -->"

# the config groups in the order a user meets them; `experiment` is chosen with `+experiment=NAME`
GROUPS = ("env", "agent", "noise", "ablation", "experiment")
# the values that make one Table 2 row differ from another (paper §6.2: CDQ, DP, TPS, and Eqs. 8-10)
ROW_KEYS = ("n_critics", "policy_delay", "target_policy_noise", "target_rule")


def _source_comments(source: str) -> dict[int, str]:
    """Line number -> the text of the ``#`` comment on that line."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {token.start[0]: token.string.lstrip("#").strip() for token in tokens if token.type == tokenize.COMMENT}


def member_comments(cls: type) -> dict[str, str]:
    """The comment written beside each attribute of a class (a dataclass field or an enum member), by name.

    Args:
        cls: a class defined in a source file.

    Returns:
        Attribute name -> its comments joined by spaces ("" when it has none). The comment lines right above the
        attribute count, and so does a comment anywhere inside its statement (a default wrapped over lines).
    """
    source = textwrap.dedent(inspect.getsource(cls))
    comments = _source_comments(source)
    lines = source.splitlines()
    class_node = ast.parse(source).body[0]
    assert isinstance(class_node, ast.ClassDef)
    found: dict[str, str] = {}
    for node in class_node.body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        first = node.lineno
        while first > 1 and lines[first - 2].lstrip().startswith("#"):  # a comment block right above it
            first -= 1
        for target in targets:
            if isinstance(target, ast.Name):
                span = range(first, (node.end_lineno or node.lineno) + 1)
                found[target.id] = " ".join(comments[line] for line in span if line in comments)
    return found


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def _yaml_value(value: Any) -> str:
    """A default as one would write it on the command line."""
    if isinstance(value, enum.Enum):
        return str(value.value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _cell(text: str) -> str:
    """Table-cell safe: a pipe would end the cell, and outside code spans ``<``, ``>`` and ``&`` would be read as
    HTML (``seed_<s>`` as a tag)."""
    parts = text.split("`")
    parts[::2] = [html.escape(part, quote=False) for part in parts[::2]]  # the even parts lie outside code spans
    return "`".join(parts).replace("|", "\\|")


def _enum_values(kind: type[enum.Enum]) -> str:
    """Each value with its comment; "" when no value has one (the type column already lists them)."""
    notes = member_comments(kind)
    if not any(notes.values()):
        return ""
    return "; ".join(f"`{member.value}`" + (f": {notes[member.name]}" if notes[member.name] else "") for member in kind)


def _key_rows(schema: type, prefix: str) -> list[str]:
    hints = typing.get_type_hints(schema)
    notes = member_comments(schema)
    rows: list[str] = []
    for field in dataclasses.fields(schema):
        kind = hints[field.name]
        if dataclasses.is_dataclass(kind):
            continue  # a section of its own
        description = notes.get(field.name, "")
        type_name = str(field.type)
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            type_name = " | ".join(str(member.value) for member in kind)
            description = "; ".join(part for part in (description, _enum_values(kind)) if part)
        default = _yaml_value(_default(field))
        rows.append(f"| `{prefix}{field.name}` | {_cell(type_name)} | `{default}` | {_cell(description)} |")
    return rows


def schema_sections(schema: type, prefix: str) -> list[tuple[str, type]]:
    """(prefix, dataclass) for the schema and every dataclass below it, depth first.

    Args:
        schema: a config dataclass.
        prefix: the dotted key prefix of its fields ("" at the root, "agent." below it).
    """
    hints = typing.get_type_hints(schema)
    found = [(prefix, schema)]
    for field in dataclasses.fields(schema):
        if dataclasses.is_dataclass(hints[field.name]):
            found += schema_sections(hints[field.name], f"{prefix}{field.name}.")
    return found


def config_keys_markdown(schema: type = TrainConfig) -> str:
    """The key reference: one table per section of the schema (top-level keys, then ``env.``, ``agent.``, ...).

    Args:
        schema: the root dataclass (td3x's ``TrainConfig``).

    Returns:
        Markdown with a heading, the section's docstring and a table of key, type, default and comment.
    """
    parts: list[str] = []
    for prefix, section in schema_sections(schema, ""):
        rows = _key_rows(section, prefix)
        if not rows:
            continue
        title = f"`{prefix.rstrip('.')}`" if prefix else "Top-level keys"
        summary = (inspect.getdoc(section) or "").split("\n\n")[0].replace("\n", " ")
        header = ["| key | type | default | what it is |", "| --- | --- | --- | --- |"]
        parts.append("\n".join([f"### {title}", "", summary, "", *header, *rows]))
    return "\n\n".join(parts)


def _opening_comment(path: Path) -> str:
    """The comment block a config file opens with (after its ``# @package`` header), as one line."""
    lines = [line for line in path.read_text().splitlines() if not line.startswith("# @package")]
    block = [line.lstrip("#").strip() for line in itertools.takewhile(lambda line: line.startswith("#"), lines)]
    return " ".join(block)


def group_options_markdown(conf_dir: Path = CONF_DIR) -> str:
    """One table per config group: each option (a YAML file in ``conf/<group>/``) and its opening comment.

    Args:
        conf_dir: td3x's ``conf/`` directory.
    """
    parts = []
    for group in GROUPS:
        selector = "+experiment" if group == "experiment" else group
        rows = [
            f"| `{path.stem}` | {_cell(_opening_comment(path))} |" for path in sorted((conf_dir / group).glob("*.yaml"))
        ]
        title = f"### `{group}`: `{selector}=OPTION`"
        parts.append("\n".join([title, "", "| option | what it is |", "| --- | --- |", *rows]))
    return "\n\n".join(parts)


def ablation_rows_markdown() -> str:
    """Each ``ablation`` option composed as ``td3x-train`` composes it: its Table 2 row and the values it ends with."""
    header = "| option | Table 2 row | " + " | ".join(f"`{key}`" for key in ROW_KEYS) + " |"
    rows = [header, "|" + " --- |" * (len(ROW_KEYS) + 2)]
    for path in sorted((CONF_DIR / "ablation").glob("*.yaml")):
        config = compose([f"ablation={path.stem}"])
        values = " | ".join(f"`{_yaml_value(getattr(config.agent, key))}`" for key in ROW_KEYS)
        rows.append(f"| `{path.stem}` | {config.paper_row} | {values} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs event: fill in the generated tables where a page asks for them.

    Args:
        markdown: the page's Markdown source; MkDocs' other arguments (page, config, files) are not needed.
    """
    generators: dict[str, Callable[[], str]] = {
        KEYS_MARKER: config_keys_markdown,
        GROUPS_MARKER: group_options_markdown,
        ROWS_MARKER: ablation_rows_markdown,
    }
    for marker, generate in generators.items():
        if marker in markdown:
            markdown = markdown.replace(marker, generate())
    return markdown
