"""The console scripts as a user runs them (their dir, their exit codes), a two-seed run, and the repository's
scripts/ imported by path."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

import td3x
from helpers.runs import TINY_TRAINED

BIN = Path(sys.executable).parent
SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.fixture(scope="module")
def k_seed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short Pendulum run of two seeds side by side, trained through td3x.train."""
    run_dir = tmp_path_factory.mktemp("api") / "run"
    config = td3x.compose([*TINY_TRAINED, "run.num_seeds=2", "logging.wandb_mode=disabled"])
    summary = td3x.train(config, str(run_dir))
    assert summary["steps"] == 600 and len(summary["seeds"]) == 2
    return run_dir


def exit_code(main: Callable[[list[str]], int | None], argv: list[str]) -> int:
    """Run a console script's main in this process: its exit code, returned or raised as SystemExit."""
    try:
        returned = main(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return returned or 0


def load_script(name: str) -> ModuleType:
    """scripts/<name>.py, imported by path (scripts/ is no package)."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module
