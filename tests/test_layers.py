"""td3x's layers, read from its source: three floors with arrows only downward, no import cycle, no command importing
another, Hydra's public API only, and an ``import td3x`` that loads nothing heavy.

The floors (docs: Development, "Layers"):

0. the **algorithm**: the config schema, TD3 and its parts, the envs, seeding, the evaluation rollouts;
1. the **library** that trains, resumes and evaluates a run dir and owns its layout, with the report's computation
   and what several commands share (a function two commands need lives here, never in one of them);
2. the **commands** and the Python API: they parse what the user gives and call the library.

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

ALGORITHM, LIBRARY, COMMANDS = 0, 1, 2
FLOOR_NAMES = {ALGORITHM: "algorithm", LIBRARY: "library", COMMANDS: "commands"}
FLOORS = {
    # the algorithm: nothing above it
    "td3x.callables": ALGORITHM,  # the function types modules hand each other
    "td3x.config": ALGORITHM,
    "td3x.inert_keys": ALGORITHM,
    "td3x.envs": ALGORITHM,
    "td3x.networks": ALGORITHM,
    "td3x.noise": ALGORITHM,
    "td3x.normalizer": ALGORITHM,
    "td3x.replay_buffer": ALGORITHM,
    "td3x.seeding": ALGORITHM,
    "td3x.td3": ALGORITHM,
    "td3x.precision": ALGORITHM,  # run.precision: the loss's autocast and where bf16 may run
    "td3x.overestimation": ALGORITHM,  # the paper's Figure 1 measure, on rollouts
    "td3x.rollout": ALGORITHM,  # the paper's evaluation protocol (§6.1)
    "td3x.seed_statistics": ALGORITHM,  # the last-10 metric and the Student-t interval: summary, report, td3x-tune
    # the library
    "td3x.run_dir": LIBRARY,
    "td3x.checkpoint": LIBRARY,
    "td3x.clock": LIBRARY,
    "td3x.episode_tape": LIBRARY,
    "td3x.loggers": LIBRARY,
    "td3x.progress": LIBRARY,
    "td3x.provenance": LIBRARY,
    "td3x.numerics": LIBRARY,  # run.numerics: the fp32 kernels' settings, applied before torch computes
    "td3x.video": LIBRARY,
    "td3x.export": LIBRARY,
    "td3x.seed_run": LIBRARY,
    "td3x.trainer": LIBRARY,
    "td3x.resume_plan": LIBRARY,
    "td3x.run_lock": LIBRARY,  # the run-dir lock: taken by training, probed by a run's state and td3x-tune
    "td3x.run_state": LIBRARY,  # a run's state (complete, running, stopped, stale, failed, not started)
    "td3x.training": LIBRARY,
    "td3x.evaluation": LIBRARY,
    "td3x.launches": LIBRARY,  # each launch of a sweep, recorded in its sweep dir (a Hydra callback)
    "td3x.multirun": LIBRARY,  # a multirun's jobs, their runs' states, a launch's cost and closing line
    "td3x.wandb_view": LIBRARY,  # a sweep's W&B runs gathered for wandb leet (td3x-sweep view, a Hydra callback)
    "td3x.overrides": LIBRARY,  # checking and applying overrides: td3x-train, td3x-sweep and td3x.compose
    "td3x.cli": LIBRARY,  # --version and help formatting of every command
    "td3x.cli_run": LIBRARY,  # training from a command line: td3x-train and td3x-resume
    "td3x.analysis": LIBRARY,
    "td3x.analysis.aggregates": LIBRARY,  # a report section, like bias ... seed_spread
    "td3x.analysis.bias": LIBRARY,
    "td3x.analysis.cell_stats": LIBRARY,
    "td3x.analysis.cells": LIBRARY,
    "td3x.analysis.compute": LIBRARY,
    "td3x.analysis.fidelity": LIBRARY,
    "td3x.analysis.metrics": LIBRARY,
    "td3x.analysis.paper": LIBRARY,
    "td3x.analysis.peer": LIBRARY,
    "td3x.analysis.plots": LIBRARY,
    "td3x.analysis.report": LIBRARY,  # assembles the sections
    "td3x.analysis.return_tables": LIBRARY,
    "td3x.analysis.runs": LIBRARY,
    "td3x.analysis.seed_sources": LIBRARY,  # which source of randomness makes the spread (+experiment=seed_study)
    "td3x.analysis.seed_spread": LIBRARY,  # how much a cell with many seeds spreads (the report's "Seed study")
    "td3x.analysis.tables": LIBRARY,  # what the sections share: cell text and marks, grids, renderings
    "td3x.analysis.two_sample": LIBRARY,  # Welch, TOST, Holm; the spreads' intervals and Brown-Forsythe
    "td3x.analysis.wandb_export": LIBRARY,
    "td3x.tuning": LIBRARY,  # td3x-tune's study: search spaces, the loop on Optuna, scores, the summary
    "td3x.tuning.scores": LIBRARY,
    "td3x.tuning.space": LIBRARY,
    "td3x.tuning.study": LIBRARY,
    "td3x.tuning.summary": LIBRARY,
    # the commands and the Python API
    "td3x.entrypoint": COMMANDS,  # td3x-train
    "td3x.resume": COMMANDS,  # td3x-resume
    "td3x.sweep": COMMANDS,  # td3x-sweep
    "td3x.evaluate": COMMANDS,  # td3x-eval
    "td3x.analysis.cli": COMMANDS,  # td3x-report
    "td3x.tune": COMMANDS,  # td3x-tune
    "td3x.api": COMMANDS,  # td3x.compose, td3x.train, td3x.load
}


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


def test_every_module_has_a_floor() -> None:
    missing = sorted(set(import_graph()) - set(FLOORS))
    assert not missing, f"put these modules on a floor in FLOORS: {missing}"


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
        f"{source} ({FLOOR_NAMES[FLOORS[source]]}) imports {target} ({FLOOR_NAMES[FLOORS[target]]})"
        for source, targets in sorted(import_graph().items())
        for target in sorted(targets)
        if source in FLOORS
        and target in FLOORS
        and (FLOORS[target] > FLOORS[source] or FLOORS[source] == FLOORS[target] == COMMANDS)
    ]
    assert not wrong, "arrows against the layers:\n" + "\n".join(wrong)


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


def test_import_td3x_loads_no_torch() -> None:
    """``import td3x`` (and its version) stays light: torch loads when a name that needs it is first used."""
    code = "import td3x, sys; td3x.__version__; assert 'torch' not in sys.modules, 'torch loaded'; print('ok')"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr


@pytest.mark.parametrize(
    ("name", "home"),
    [
        ("TD3", "td3x.td3"),
        ("ReplayBuffer", "td3x.replay_buffer"),
        ("TrainConfig", "td3x.config"),
        ("run", "td3x.training"),
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
