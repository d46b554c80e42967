"""Finding and loading run dirs: each is a directory holding td3x's ``config.yaml``, whatever its name.

A run is *complete* when its ``summary.json`` says so and its ``eval.csv`` reaches ``run.total_steps``.
Every other run carries a ``problem`` (unfinished, failed, files missing or unreadable) and the report lists it
instead of averaging it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np
import pandas as pd

from td3x.run_dir import (
    CONFIG_FILE,
    EVAL_FILE,
    PROVENANCE_FILE,
    SUMMARY_FILE,
    WANDB_DIR,
    RunFileError,
    config_int,
    read_json_mapping,
    read_yaml_mapping,
)

# these hold config.yaml files that are not a run's own: W&B's run files and Hydra's unresolved copy
SKIPPED_DIRS = frozenset({WANDB_DIR, ".hydra"})
RUN_FILES = (EVAL_FILE, SUMMARY_FILE)  # beside a config.yaml that is not a run's, they say a run's was broken
log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)  # compared by identity: it holds a DataFrame
class Run:
    """One run dir as read from disk.

    Attributes:
        path: the run dir.
        config: its resolved ``config.yaml`` (with ``choices``, the Hydra group options).
        evals: the rows of ``eval.csv`` (empty when the file is missing).
        summary: ``summary.json``, or None when missing.
        problem: why the run cannot enter a table cell; None for a complete run.
        provenance: ``provenance.json`` (code commit, versions, CPU, command), or None when missing.
    """

    path: Path
    config: dict[str, Any]
    evals: pd.DataFrame
    summary: dict[str, Any] | None
    problem: str | None
    provenance: dict[str, Any] | None = None

    @property
    def env_id(self) -> str:
        return str(self.config["env"]["id"])

    @property
    def paper_row(self) -> str:
        return str(self.config["paper_row"])

    @property
    def seed(self) -> int:
        return int(self.config["seed"])

    @property
    def num_seeds(self) -> int:
        """``run.num_seeds``: the seeds its process trained (each in a ``seed_<k>`` dir below the job's when > 1)."""
        return int((self.config.get("run") or {}).get("num_seeds", 1))

    @property
    def steps(self) -> np.ndarray:
        return self.evals["step"].to_numpy(dtype=np.int64)

    @property
    def returns(self) -> np.ndarray:
        return self.evals["return_mean"].to_numpy(dtype=np.float64)

    def column(self, name: str) -> np.ndarray | None:
        """An eval.csv column as floats, or None when this run did not log it."""
        return self.evals[name].to_numpy(dtype=np.float64) if name in self.evals else None


def is_run_config(config: Any) -> TypeGuard[dict[str, Any]]:
    """Whether a parsed config.yaml is a td3x run's (it names an env, a seed and a Table 2 row)."""
    return (
        isinstance(config, dict)
        and isinstance(config.get("env"), dict)
        and "id" in config["env"]
        and "seed" in config
        and "paper_row" in config
    )


def find_runs(paths: Iterable[Path | str]) -> list[Run]:
    """Every run dir at or below ``paths`` (walked recursively), loaded, each once, in path order.

    Args:
        paths: sweep dirs, run dirs, or any folder above them.

    Raises:
        FileNotFoundError: a path does not exist.
    """
    found: dict[Path, dict[str, Any]] = {}
    for root in map(Path, paths):
        if not root.exists():
            raise FileNotFoundError(f"no such file or directory: {root}")
        for dirpath, dirnames, filenames in os.walk(root):
            config = _read_yaml(Path(dirpath) / CONFIG_FILE, filenames) if CONFIG_FILE in filenames else None
            if is_run_config(config):
                found[Path(dirpath).resolve()] = config
                dirnames.clear()  # a run dir holds no other runs
            else:
                dirnames[:] = sorted(name for name in dirnames if name not in SKIPPED_DIRS)
    return [load_run(shown_path(path), config) for path, config in sorted(found.items())]


def shown_path(path: Path) -> Path:
    """``path`` relative to the working directory when it lies below it (so that a report of committed runs, made
    from the repository's root, reads the same in every clone), else as it is."""
    try:
        return path.relative_to(Path.cwd().resolve())
    except ValueError:
        return path


def load_run(path: Path, config: dict[str, Any]) -> Run:
    """Read a run dir's eval.csv and summary.json and decide whether it is complete.

    Args:
        path: the run dir.
        config: its parsed config.yaml.
    """
    try:
        evals = _read_evals(path / EVAL_FILE)
        summary = _read_json(path / SUMMARY_FILE)
        provenance = _read_json(path / PROVENANCE_FILE)
        config_int(config, "run.total_steps", path / CONFIG_FILE)
    except RunFileError as error:  # a half-written or corrupt file: name it and leave the run out, never crash
        log.warning("%s; the run is left out of the averages", error)
        return Run(path, config, pd.DataFrame({"step": [], "return_mean": []}), None, f"unreadable: {error}")
    return Run(path, config, evals, summary, run_problem(config, evals, summary), provenance)


def run_problem(config: dict[str, Any], evals: pd.DataFrame, summary: dict[str, Any] | None) -> str | None:
    """Why a run cannot be averaged into a table cell, or None when it is complete.

    Args:
        config: the run's config.yaml.
        evals: its eval.csv rows.
        summary: its summary.json (None when missing).
    """
    total = int(config["run"]["total_steps"])
    last_step = int(evals["step"].iloc[-1]) if len(evals) else None
    status = None if summary is None else summary.get("status")
    if status == "failed":
        return f"failed: {summary.get('failure') if summary else None}"
    if status != "complete":
        return f"unfinished (status {status}): evaluated up to step {last_step} of {total}"
    if last_step != total:
        return f"eval.csv ends at step {last_step}, not at run.total_steps={total}"
    return None


def _read_yaml(path: Path, filenames: list[str]) -> Any:
    """A config.yaml's content, or None when it is not readable (not a run dir; a warning names it when run files
    lie beside it, so that a corrupt run's config is not skipped in silence)."""
    try:
        config = read_yaml_mapping(path)
    except RunFileError as error:
        if any(name in filenames for name in RUN_FILES):
            log.warning("%s; the run dir is skipped", error)
        return None
    if not is_run_config(config) and any(name in filenames for name in RUN_FILES):
        log.warning("%s is not a td3x run's config (no env.id, seed or paper_row); the run dir is skipped", path)
    return config


def _read_evals(path: Path) -> pd.DataFrame:
    """eval.csv's rows (none when it is missing or empty); RunFileError naming the file when it is unreadable,
    lacks the step or return_mean column, or holds a value that is not a number there."""
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame({"step": [], "return_mean": []})
    try:
        evals = pd.read_csv(path)
    except (OSError, UnicodeDecodeError, ValueError) as error:  # pandas' ParserError is a ValueError
        raise RunFileError(f"{path} is not a readable CSV file: {' '.join(str(error).split())}") from error
    missing = [name for name in ("step", "return_mean") if name not in evals.columns]
    if missing:
        raise RunFileError(f"{path} lacks the {' and '.join(missing)} column{'s' * (len(missing) > 1)}")
    for name in ("step", "return_mean"):
        numbers = pd.to_numeric(evals[name], errors="coerce")
        bad = evals[name][numbers.isna() & evals[name].notna()]
        if len(bad) or evals[name].isna().any():
            shown = bad.iloc[0] if len(bad) else "an empty cell"
            raise RunFileError(f"{path} has {shown!r} in its {name} column, not a number")
        evals[name] = numbers
    return evals


def _read_json(path: Path) -> dict[str, Any] | None:
    return read_json_mapping(path) if path.exists() else None
