"""The README and the docs site: short, self-contained, complete, and a strict build that passes."""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from td3x.config.messages import schema_keys
from td3x.config.schema import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
# what a user's checkout lacks: the workspace around the repository and its design notes
OUTSIDE_THE_REPO = re.compile(r"/work/|shared/|PAPER\.md|DESIGN\.md|ECOSYSTEM\.md")
UP_PATH = re.compile(r"(?:\.\./)+[\w.-]*")  # a relative path up from the page's folder: it must stay inside the repo
# the docs speak to users: no issue numbers, no account of how td3x was built
NOT_FOR_USERS = re.compile(r"issue #?\d+|#\d{2,}\b|these machines|\bsessions?\b|CI box", re.IGNORECASE)


def load_hook() -> ModuleType:
    """docs/hooks/config_reference.py, which mkdocs loads by path (it is not a package)."""
    spec = importlib.util.spec_from_file_location("config_reference", DOCS / "hooks" / "config_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOK = load_hook()


PAGES = ["README.md", *(str(path.relative_to(ROOT)) for path in sorted(DOCS.rglob("*.md")))]


@functools.cache
def page_text(name: str) -> str:
    """A page's Markdown with the generated tables filled in, as the built site has them."""
    return HOOK.on_page_markdown((ROOT / name).read_text())


def leaf_keys() -> list[str]:
    keys = schema_keys()
    return [key for key in keys if not any(other.startswith(f"{key}.") for other in keys)]


def test_readme_is_at_most_200_lines() -> None:
    assert len(README.read_text().splitlines()) <= 200


@pytest.mark.parametrize("name", PAGES)
def test_pages_name_nothing_outside_the_repository(name: str) -> None:
    text = page_text(name)
    assert OUTSIDE_THE_REPO.findall(text) == []
    folder = (ROOT / name).parent
    assert [path for path in UP_PATH.findall(text) if not (folder / path).resolve().is_relative_to(ROOT)] == []


@pytest.mark.parametrize("name", PAGES)
def test_pages_speak_to_users(name: str) -> None:
    assert NOT_FOR_USERS.findall(page_text(name)) == []


def test_readme_and_ci_run_the_same_test_command() -> None:
    ci_commands = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "python -m pytest -n auto" in ci_commands
    assert 'pip install -e ".[test]" && python -m pytest -n auto\n' in README.read_text()


@pytest.mark.xdist_group("suite_check")
def test_the_ci_command_keeps_its_xdist_groups(request: pytest.FixtureRequest) -> None:
    """Under that command (``-n``, with ``--dist loadgroup`` from pyproject) a test of an ``xdist_group`` carries its
    group, so that the SLURM and Ray tests never share the machine and a module's shared fixture is built once. A
    pytest that undoes it (pytest-xdist#1386: pytest 9.2) fails here instead of silently."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        pytest.skip("not run by pytest-xdist (-n): no groups to keep")
    assert request.node.nodeid.endswith("@suite_check"), request.node.nodeid


def test_the_key_reference_lists_every_leaf_key_of_the_schema() -> None:
    reference = HOOK.config_keys_markdown()
    rows = [line for line in reference.splitlines() if line.startswith("| `")]
    assert sorted(row.split("`")[1] for row in rows) == sorted(leaf_keys())
    assert HOOK.KEYS_MARKER in (DOCS / "configuration.md").read_text()


def test_the_key_reference_carries_each_fields_comment() -> None:
    rows = {row.split("`")[1]: row for row in HOOK.config_keys_markdown().splitlines() if row.startswith("| `")}
    beside = re.compile(r"^\s+(\w+): [^#\n]+#\s*(.+)$", re.MULTILINE)  # `name: type = default  # comment`
    checked = 0
    for prefix, schema in HOOK.schema_sections(TrainConfig, ""):
        for name, comment in beside.findall(inspect.getsource(schema)):
            assert HOOK._cell(comment) in rows[prefix + name], prefix + name
            checked += 1
    assert checked >= 10


def test_every_key_has_a_description_and_angle_brackets_are_text_not_html() -> None:
    rows = [row for row in HOOK.config_keys_markdown().splitlines() if row.startswith("| `")]
    assert rows and all(not row.rstrip().endswith("|  |") for row in rows), [r for r in rows if r.endswith("|  |")]
    num_seeds = next(row for row in rows if row.startswith("| `run.num_seeds`"))
    assert "seed_&lt;seed&gt;" in num_seeds  # not a tag the browser would swallow
    # code spans are kept as they are: Markdown shows their text literally
    assert HOOK._cell("run dirs `seed_<k>` in <dir> | a") == "run dirs `seed_<k>` in &lt;dir&gt; \\| a"


def test_the_generated_tables_list_every_option() -> None:
    options = HOOK.group_options_markdown()
    for group in HOOK.GROUPS:
        section = options.split(f"### `{group}`")[1].split("###")[0]
        for path in (ROOT / "conf" / group).glob("*.yaml"):
            assert f"| `{path.stem}` |" in section
    rows = HOOK.ablation_rows_markdown()
    assert rows.count("\n| `") == len(list((ROOT / "conf" / "ablation").glob("*.yaml")))
    assert "| `no_twin` | TD3 - CDQ | `1` | `2` | `0.2` | `clipped_double_q` |\n" in rows


def test_every_console_script_is_documented() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    commands = (DOCS / "index.md").read_text()
    for script in scripts:
        assert f"`{script}" in commands, f"{script} is missing from docs/index.md's commands"
        assert script in README.read_text(), f"{script} is missing from the README"


@pytest.mark.slow
def test_mkdocs_build_strict_passes(tmp_path: Path) -> None:
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    assert (tmp_path / "configuration" / "index.html").is_file()
