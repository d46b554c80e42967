"""td3x's layers, read from its source: folders on floors with arrows only downward, no import cycle, no command
importing another, Hydra's public API only, and an ``import td3x`` that loads nothing heavy.

A module's floor is its folder's (docs: Development, "Layers"). A module may import its own folder and the folders
on floors below its own, never one beside or above it:

0. ``config``: what a run is (the schema, its Hydra registration, the override checks);
1. ``algo``: TD3 and its parts; ``host``: the machine a run computes on;
2. ``rundir``: a run dir on disk;
3. ``training``: one process training one run dir; ``analysis``: run dirs turned into the report;
4. ``sweeps``: many runs; ``tuning``: td3x-tune's study;
5. ``commands``: one module per console script; ``api``: td3x from Python.

``analysis`` has floors of its own, by the same rule (``ANALYSIS_FLOORS``):

0. ``stats``: statistics on arrays (intervals, tests, power), no run and no table;
1. ``reading``: run dirs and the files named on the command line read, runs grouped into cells;
2. ``render``: tables and plots drawn, nothing computed;
3. ``comparisons``: registration files, planned and judged;
4. ``sections``: the report's sections, one interface each;
5. ``report``: the report built and written, looping over the sections.

Every import counts, at module level or inside a function (a deferred import is an arrow too), and so does one
under ``if TYPE_CHECKING``. The package's ``__init__`` is left out: it imports nothing of td3x at run time (checked
below) and only names the public objects, loaded on first use.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "td3x"

FLOORS = {
    "config": 0,
    "algo": 1,
    "host": 1,
    "rundir": 2,
    "training": 3,
    "analysis": 3,
    "sweeps": 4,
    "tuning": 4,
    "commands": 5,
    "api": 5,
    "entrypoint": 6,  # python -m td3x.entrypoint: td3x-train's module path before the folders, for queued jobs
}
ANALYSIS_FLOORS = {"stats": 0, "reading": 1, "render": 2, "comparisons": 3, "sections": 4, "report": 5}
ANALYSIS_PACKAGE = "td3x.analysis"  # its __init__ names report's public objects: above every floor
COMMAND_HELPERS = {"td3x.commands.common", "td3x.commands.train_and_report"}  # what the commands share
MAX_LINES = 400


def folder(module: str) -> str:
    """``td3x.algo.td3`` -> ``algo``; a plain module beside the package's ``__init__`` is its own folder."""
    return module.split(".")[1]


def analysis_floor(module: str) -> int:
    """The floor of a module of ``analysis``: its folder's (``td3x.analysis.stats.power`` -> ``stats``, 0), or for
    ``report.py`` its own; the package itself is above them all."""
    if module == ANALYSIS_PACKAGE:
        return len(ANALYSIS_FLOORS)
    return ANALYSIS_FLOORS[module.split(".")[2]]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def td3x_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """Every module ``path`` imports, anywhere in the file (``from td3x.x import name`` is ``td3x.x``, or
    ``td3x.x.name`` when that is a module)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x, from .x import y
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}
    return found


def import_graph() -> dict[str, set[str]]:
    """td3x module -> the td3x modules it imports (the package itself left out, see the module docstring)."""
    modules = td3x_modules()
    return {
        name: {target for target in imported_modules(path, set(modules)) if target in modules and target != "td3x"}
        for name, path in modules.items()
        if name != "td3x"
    }


def test_every_module_lives_on_a_floor() -> None:
    missing = sorted(name for name in import_graph() if folder(name) not in FLOORS)
    assert not missing, f"put these modules in a folder of FLOORS: {missing}"


def test_the_package_is_folders_and_at_most_three_plain_modules() -> None:
    plain = sorted(path.name for path in PACKAGE.glob("*.py") if path.name != "__init__.py")
    assert len(plain) <= 3, plain
    for name in [*FLOORS, *(f"analysis/{floor}" for floor in ANALYSIS_FLOORS)]:
        init = PACKAGE / name / "__init__.py"
        if init.parent.is_dir():
            docstring = ast.get_docstring(ast.parse(init.read_text()))
            assert docstring and "import" in docstring.lower(), f"{init}: say what lives here and what it may import"


def test_no_module_is_over_the_line_cap() -> None:
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_no_import_cycle() -> None:
    graph = import_graph()
    cycles = []
    state: dict[str, str] = {}  # "open" while on the DFS path, "done" after

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for target in sorted(graph[name]):
            if state.get(target) == "open":
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_arrows_run_downward_and_no_command_imports_another() -> None:
    wrong = [
        f"{source} (floor {FLOORS[folder(source)]}) imports {target} (floor {FLOORS[folder(target)]})"
        for source, targets in sorted(import_graph().items())
        for target in sorted(targets)
        if folder(source) != folder(target) and FLOORS[folder(target)] >= FLOORS[folder(source)]
    ]
    wrong += [
        f"{source} imports another command, {target}"
        for source, targets in sorted(import_graph().items())
        for target in sorted(targets - COMMAND_HELPERS)
        if folder(source) == folder(target) == "commands" and source not in COMMAND_HELPERS
    ]
    assert not wrong, "arrows against the layers:\n" + "\n".join(wrong)


def test_analysis_arrows_run_down_its_own_floors() -> None:
    graph = import_graph()
    missing = sorted(
        name
        for name in graph
        if folder(name) == "analysis" and name != ANALYSIS_PACKAGE and name.split(".")[2] not in ANALYSIS_FLOORS
    )
    assert not missing, f"put these modules in a folder of ANALYSIS_FLOORS: {missing}"
    wrong = [
        f"{source} (floor {analysis_floor(source)}) imports {target} (floor {analysis_floor(target)})"
        for source, targets in sorted(graph.items())
        if folder(source) == "analysis"
        for target in sorted(targets)
        if folder(target) == "analysis"
        and target.split(".")[:3] != source.split(".")[:3]
        and analysis_floor(target) >= analysis_floor(source)
    ]
    assert not wrong, "arrows against analysis' floors:\n" + "\n".join(wrong)


def test_no_module_imports_hydra_internals() -> None:
    """Hydra's private modules change without notice (``get_overrides_dirname`` is gone from Hydra 1.4)."""
    modules = td3x_modules()
    internal = sorted(
        f"{name} imports {target}"
        for name, path in modules.items()
        for target in imported_modules(path, set(modules))
        if target == "hydra._internal" or target.startswith("hydra._internal.")
    )
    assert not internal, internal


def test_the_package_imports_nothing_of_td3x_at_run_time() -> None:
    """td3x/__init__.py names the public objects; each is imported on first use (``TYPE_CHECKING`` imports aside)."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom):
                assert not (inner.module or "").startswith("td3x"), ast.unparse(inner)
            if isinstance(inner, ast.Import):
                assert not any(alias.name.startswith("td3x") for alias in inner.names), ast.unparse(inner)


@pytest.mark.parametrize(
    "statement",
    [
        "import td3x; td3x.__version__",
        # torch's import takes seconds: not paid for a status, a report, or a command line td3x-train refuses
        "import td3x.commands.sweep",
        "import td3x.commands.report",
        "import td3x.commands.train",
        "import td3x.commands.resume",
        "import td3x.commands.tune",
    ],
)
def test_what_trains_nothing_loads_no_torch(statement: str) -> None:
    """``import td3x`` (and its version) stays light: torch loads when a name that needs it is first used; and
    ``td3x-sweep``, ``td3x-report``, ``td3x-train``, ``td3x-resume`` and ``td3x-tune`` start without it (it loads
    when a run trains, or a config asks for CUDA or bf16)."""
    code = f"import sys; {statement}; assert 'torch' not in sys.modules, 'torch loaded'; print('ok')"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr


@pytest.mark.parametrize(
    ("name", "home"),
    [
        ("TD3", "td3x.algo.td3"),
        ("ReplayBuffer", "td3x.algo.replay_buffer"),
        ("TrainConfig", "td3x.config.schema"),
        ("run", "td3x.training.run"),
        ("train", "td3x.api"),
        ("compose", "td3x.api"),
        ("load", "td3x.api"),
        ("Policy", "td3x.api"),
    ],
)
def test_every_public_name_resolves_on_first_use(name: str, home: str) -> None:
    import td3x

    assert name in td3x.__all__ and name in dir(td3x)
    assert getattr(td3x, name) is getattr(importlib.import_module(home), name)
