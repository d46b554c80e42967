"""Finding and loading run dirs: each is a directory holding td3x's ``config.yaml``, whatever its name.

A run is *complete* as :mod:`td3x.rundir.state` defines it (``td3x-sweep status`` counts the same runs): its
``summary.json`` says so and its ``eval.csv`` reaches ``run.total_steps``. Every other run carries a ``problem``
(unfinished, failed, files missing or unreadable) and the report lists it instead of averaging it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from td3x.algo.seed_statistics import STALLED_ACTOR_NORM
from td3x.config.hydra import without_unknown_keys
from td3x.host.provenance import EARLIER
from td3x.host.provenance import kernels as sitting_kernels
from td3x.rundir.eval_file import read_evals
from td3x.rundir.layout import CONFIG_FILE, EVAL_FILE, SUMMARY_FILE, RunFileError, config_int, walk_runs
from td3x.rundir.state import check_stored_config, incomplete_reason, read_records, read_summary, unreadable_reason

log = logging.getLogger(__name__)

NOT_RECORDED = "not recorded"  # what a table shows for a provenance fact a run lacks (no file, or an older td3x)
COMMIT_DIGITS = 7  # git's short form
IN_TURN = " → "  # between the values of a resumed run's sittings when they differ


def _short_commit(sitting: dict[str, Any]) -> str | None:
    commit = sitting.get("git_commit")
    return str(commit)[:COMMIT_DIGITS] + ("+dirty" if sitting.get("git_dirty") else "") if commit else None


def _in_turn(values: list[str | None]) -> str | None:
    """Each sitting's value once, in turn (``a → b``); None when a sitting recorded none."""
    known = [value for value in values if value is not None]
    return IN_TURN.join(dict.fromkeys(known)) if known and len(known) == len(values) else None


def distinct(values: Iterable[str | None]) -> list[str]:
    """Each value once, sorted, with NOT_RECORDED (for None) last: a cell's CPUs, capabilities or commits."""
    found = set(values)
    return sorted(value for value in found if value is not None) + ([NOT_RECORDED] if None in found else [])


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
        actor_grad_norm: the actor's gradient norm at the last row of ``metrics.jsonl`` that logs one; None
            without (no file, or a learner that does not log it, as SB3's runs).
    """

    path: Path
    config: dict[str, Any]
    evals: pd.DataFrame
    summary: dict[str, Any] | None
    problem: str | None
    provenance: dict[str, Any] | None = None
    actor_grad_norm: float | None = None

    @property
    def env_id(self) -> str:
        return str(self.config["env"]["id"])

    @property
    def paper_row(self) -> str:
        return str(self.config["paper_row"])

    @property
    def seed(self) -> int:
        return int(self.config["seed"])

    def recorded(self, key: str) -> str | None:
        """``provenance.json``'s ``key`` as text (its last sitting's); None when the run has no such file or the file
        lacks the key."""
        value = (self.provenance or {}).get(key)
        return None if value is None or value == "" else str(value)

    @property
    def sittings(self) -> list[dict[str, Any]]:
        """The provenance of each sitting that trained the run, oldest first (one unless it was resumed; none
        without the file)."""
        return [] if self.provenance is None else [*self.provenance.get(EARLIER, []), self.provenance]

    @property
    def commit(self) -> str | None:
        """The code commit that trained the run (COMMIT_DIGITS long, ``+dirty`` with uncommitted changes); a run
        resumed at other commits lists each in turn (``a → b``)."""
        return _in_turn([_short_commit(sitting) for sitting in self.sittings])

    @property
    def kernels(self) -> str | None:
        """The fp32 kernels the run trained with (:func:`td3x.host.provenance.kernels`); a run resumed on other
        kernels lists each in turn (``AVX2 → AVX512``: its numbers are no uninterrupted run's)."""
        return _in_turn([sitting_kernels(sitting) for sitting in self.sittings])

    @property
    def num_seeds(self) -> int:
        """``run.num_seeds``: the seeds its process trained (each in a ``seed_<k>`` dir below the job's when > 1)."""
        return int((self.config.get("run") or {}).get("num_seeds", 1))

    @property
    def total_steps(self) -> int:
        """``run.total_steps``: the env steps the run trains for (an unfinished run's eval.csv stops earlier)."""
        return int(self.config["run"]["total_steps"])

    @property
    def steps(self) -> np.ndarray:
        return self.evals["step"].to_numpy(dtype=np.int64)

    @property
    def returns(self) -> np.ndarray:
        return self.evals["return_mean"].to_numpy(dtype=np.float64)

    def column(self, name: str) -> np.ndarray | None:
        """An eval.csv column as floats, or None when this run did not log it."""
        return self.evals[name].to_numpy(dtype=np.float64) if name in self.evals else None

    @property
    def actor_frozen(self) -> bool | None:
        """Whether the run ended with an actor that no longer learns: a gradient of exactly 0 at its last log row
        (tanh at ±1 on every action of the batch); None where it logs no actor gradient."""
        return None if self.actor_grad_norm is None else self.actor_grad_norm == 0.0

    @property
    def actor_stalled(self) -> bool | None:
        """Whether the run ended with its actor's gradient norm below
        :data:`~td3x.algo.seed_statistics.STALLED_ACTOR_NORM` (an actor that has stopped learning, or nearly); None
        where it logs no actor gradient."""
        return None if self.actor_grad_norm is None else self.actor_grad_norm < STALLED_ACTOR_NORM


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
        for run_dir, config in walk_runs(root, log.warning):
            found[run_dir.resolve()] = config
    return [load_run(shown_path(path), config) for path, config in sorted(found.items())]


def shown_path(path: Path) -> Path:
    """``path`` relative to the working directory when it lies below it (so that a report of committed runs, made
    from the repository's root, reads the same in every clone), else as it is."""
    try:
        return path.relative_to(Path.cwd().resolve())
    except ValueError:
        return path


def load_run(path: Path, config: dict[str, Any]) -> Run:
    """Read a run dir's files (eval.csv, summary.json, provenance.json, metrics.jsonl's actor gradient) and decide
    whether it is complete; a file it cannot read, or a config.yaml this td3x refuses as td3x-resume does
    (:func:`td3x.rundir.state.check_stored_config`: a key it lacks, a value out of range), leaves the run out, named."""
    try:
        evals = read_evals(path / EVAL_FILE)
        summary = read_summary(path)
        provenance, actor_grad_norm = read_records(path)
        config_int(config, "run.total_steps", path / CONFIG_FILE)
        check_stored_config(path / CONFIG_FILE, config)
    except RunFileError as error:  # a half-written or corrupt file: name it and leave the run out, never crash
        log.warning("%s; the run is left out of the averages", error)
        # a key td3x lacks would split a row (and a seed study's launch) of its own, the run's keys beside it
        no_evals = pd.DataFrame({"step": [], "return_mean": []})
        return Run(path, without_unknown_keys(config), no_evals, None, unreadable_reason(error))
    problem = run_problem(config, evals, summary, path)
    return Run(path, config, evals, summary, problem, provenance, actor_grad_norm)


def run_problem(config: dict[str, Any], evals: pd.DataFrame, summary: dict[str, Any] | None, path: Path) -> str | None:
    """Why a run cannot be averaged into a table cell, or None when it is complete.

    Args:
        config: the run's config.yaml.
        evals: its eval.csv rows.
        summary: its summary.json (None when missing).
        path: the run dir (to tell a missing eval.csv from one without rows).
    """
    total_steps = int(config["run"]["total_steps"])
    last_step = int(evals["step"].iloc[-1]) if len(evals) else None
    status = None if summary is None else summary.get("status")
    if (summary is not None and last_step is not None) or status == "failed":
        return incomplete_reason(summary, last_step, total_steps)  # the words td3x-sweep status uses too
    # incomplete_reason would say "status None" and "step None" here: name the file that is missing or empty instead
    if last_step is None:
        evaluated = f"{EVAL_FILE} {'has no rows' if (path / EVAL_FILE).exists() else 'is missing'}"
    else:
        evaluated = f"evaluated up to step {last_step} of {total_steps}"
    if status == "complete":
        return f"{evaluated}: a complete run's ends at run.total_steps={total_steps}"
    state = f"status {status}" if summary is not None else f"{SUMMARY_FILE} is missing"
    return f"unfinished ({state}): {evaluated}"
