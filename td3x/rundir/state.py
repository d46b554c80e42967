"""A run's state, read from the files every run writes and from its lock: the one answer to "is this run
complete, still training, stopped or dead?" that ``td3x-sweep status``, ``td3x-report`` and resuming share
(``td3x-tune`` tells a dead trial by the same lock).

- complete: ``summary.json`` says ``complete`` and ``eval.csv`` ends at ``run.total_steps``;
- running: a process holds the run's lock (:mod:`td3x.rundir.lock`): it is training now;
- stopped (resumable): a signal or a preemption stopped it after a checkpoint (``summary.json`` says ``running``
  and records why in ``interrupted``), or it finished a smaller ``run.total_steps`` than its config now asks;
- stale (killed: SIGKILL, out of memory, a lost node): ``summary.json`` says ``running`` with no interruption and
  no process holds the lock; resumable from its last checkpoint;
- failed: ``summary.json`` says ``failed`` (why, in ``failure``), or says ``complete`` while ``eval.csv`` falls
  short;
- not started: no ``summary.json`` and no process training.

A listing (``td3x-sweep status``, like ``td3x-report``) names a run it cannot read and goes on
(:func:`listed_run_state`): one whose ``summary.json`` or ``eval.csv`` is not td3x's, or whose ``config.yaml``
this td3x refuses as ``td3x-resume`` does, is failed, ``unreadable: `` and the file's problem. Acting on a run
(resuming it) needs :func:`run_state`, which raises instead.

The lock is the sign of life, not the age of ``summary.json``: a run updates its summary only at its evaluations,
and a dead process releases the lock at once. Resuming reads the process's checkpoint instead
(:func:`checkpoint_complete`): a complete checkpoint is written just before the summary that says so, and a relaunch
that finds one writes that summary if a kill came between the two.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from td3x.config.hydra import from_saved
from td3x.config.schema import ConfigError
from td3x.rundir.layout import (
    CONFIG_FILE,
    EVAL_FILE,
    METRICS_FILE,
    PROVENANCE_FILE,
    SUMMARY_FILE,
    RunFileError,
    process_dir,
    read_json_mapping,
    read_jsonl,
    read_yaml_mapping,
)
from td3x.rundir.lock import is_locked

COMPLETE, RUNNING, STOPPED, STALE, FAILED, NOT_STARTED = (
    "complete",
    "running",
    "stopped",
    "stale",
    "failed",
    "not started",
)
STATES = (COMPLETE, RUNNING, STOPPED, STALE, FAILED, NOT_STARTED)


@dataclass(frozen=True)
class RunState:
    """One run's state (one of :data:`STATES`), its progress, and why it is stopped, stale or failed.

    ``steps_per_compute_second`` is the run's env steps per second of the compute its process uses (its CPU time,
    or its wall time where it has none: :func:`compute_seconds`, and then ``rate_from_wall_time``): its own rate
    where it trains alone, K times it where K seeds share a process and its clocks (None before a first summary)."""

    run_dir: Path
    state: str
    steps: int
    total_steps: int
    steps_per_compute_second: float | None
    reason: str | None
    readable: bool = True  # False: a file of the run cannot be read (:func:`listed_run_state`); its steps are unknown
    process_dir: Path | None = None  # the dir of the process that trains it (td3x-resume's); None when unreadable
    rate_from_wall_time: bool = False  # a run of an older td3x (no CPU time): its rate counts others' use of its CPU


def incomplete_reason(summary: Mapping[str, Any] | None, last_eval_step: int | None, total_steps: int) -> str | None:
    """Why a run is not complete, or None when it is: ``summary.json`` says ``complete`` and ``eval.csv``'s last
    row is at ``run.total_steps`` (the definition of a complete run).

    Args:
        summary: its summary.json (None when missing).
        last_eval_step: the step of eval.csv's last row (None when it has none).
        total_steps: its ``run.total_steps``.
    """
    status = None if summary is None else summary.get("status")
    if status == "failed":
        return f"failed: {summary.get('failure') if summary else None}"
    if status != "complete":
        return f"unfinished (status {status}): evaluated up to step {last_eval_step} of {total_steps}"
    if last_eval_step != total_steps:
        return f"eval.csv ends at step {last_eval_step}, not at run.total_steps={total_steps}"
    return None


def state_of(
    summary: Mapping[str, Any] | None, last_eval_step: int | None, total_steps: int, training: Callable[[], bool]
) -> tuple[str, str | None]:
    """A run's state and the reason shown for it (see the module's table); ``training()`` says whether a process
    holds the run's lock, asked only of a run that is not complete."""
    incomplete = incomplete_reason(summary, last_eval_step, total_steps)
    if incomplete is None:
        return COMPLETE, None
    if training():  # also a failed or stopped run that a relaunch resumes: its summary is rewritten later
        return RUNNING, None
    if summary is None:
        return NOT_STARTED, None
    status, steps = summary.get("status"), summary.get("steps")
    if status == "failed":
        return FAILED, str(summary.get("failure"))
    if status == "complete":
        if isinstance(steps, int) and steps < total_steps:
            return STOPPED, f"finished {steps} steps; run.total_steps={total_steps} extends it"
        return FAILED, incomplete
    if summary.get("interrupted"):
        return STOPPED, str(summary["interrupted"])
    return STALE, "killed: no process holds its lock"


def checkpoint_complete(counters: Mapping[str, Any], total_steps: int) -> bool:
    """Whether a process's checkpoint has nothing left to train: it reached ``run.total_steps`` and no evaluation
    is due (a stop cut the last one short)."""
    return bool(counters["step"] >= total_steps and not counters.get("evaluation_due"))


def summary_says_complete(run_dir: Path) -> bool:
    """Whether ``run_dir``'s ``summary.json`` says ``complete`` (False when it is missing or unreadable)."""
    try:
        return (run_dir / SUMMARY_FILE).exists() and read_json_mapping(run_dir / SUMMARY_FILE).get("status") == COMPLETE
    except RunFileError:
        return False


def last_eval_step(path: Path) -> int | None:
    """The step of an ``eval.csv``'s last row, or None when it has no row or no file, once every row passed the
    checks ``td3x-report`` applies (:func:`td3x.rundir.eval_file.read_evals`: a ``nan`` in a middle row would make
    a run complete in a listing that the report leaves out).

    Raises:
        RunFileError: the file is unreadable or a row is not td3x's.
    """
    from td3x.rundir.eval_file import read_evals  # on first use: td3x-train starts without pandas

    steps = read_evals(path)["step"]
    return int(steps.iloc[-1]) if len(steps) else None


def read_summary(run_dir: Path) -> dict[str, Any] | None:
    """``run_dir``'s ``summary.json``; None when it has none.

    Raises:
        RunFileError: unreadable, not JSON, or not td3x's (no status or no steps count).
    """
    path = run_dir / SUMMARY_FILE
    if not path.exists():
        return None
    summary = read_json_mapping(path)
    if not isinstance(summary.get("status"), str) or not isinstance(summary.get("steps"), int):
        raise RunFileError(f"{path} is not a td3x summary: it lacks a status or a steps count")
    return summary


def run_state(run_dir: Path, total_steps: int, num_seeds: int = 1) -> RunState:
    """The state of the run in ``run_dir`` (a seed's dir when ``num_seeds`` > 1: its process's dir holds the lock).

    Raises:
        RunFileError: its ``summary.json`` or ``eval.csv`` is unreadable or not td3x's.
    """
    summary = read_summary(run_dir)
    last = last_eval_step(run_dir / EVAL_FILE) if summary is not None and summary["status"] == COMPLETE else None
    state, reason = state_of(summary, last, total_steps, lambda: is_locked(process_dir(run_dir, num_seeds)))
    steps = summary["steps"] if summary is not None else 0
    compute = compute_seconds(summary) if summary is not None else None
    # K seeds share their process's time (each summary records it whole): each uses a K-th of it
    rate = num_seeds * steps / compute[0] if compute is not None else None
    walled = compute is not None and compute[1] == "wall_time_s"
    where = process_dir(run_dir, num_seeds)
    return RunState(run_dir, state, steps, total_steps, rate, reason, process_dir=where, rate_from_wall_time=walled)


def compute_left(states: Sequence[RunState]) -> str:
    """The steps done and the compute left at the runs' mean speed so far (a line of ``td3x-sweep status``); where
    some of the runs it rests on were timed by the wall clock alone (an older td3x counted no CPU time), how many:
    other work sharing their CPU made them look slower (at the lowest priority, a run may get a fraction of a core)."""
    done, total = sum(s.steps for s in states), sum(s.total_steps for s in states)
    share = f"steps: {done}/{total} ({100 * done / max(total, 1):.1f}%)"
    timed = [s for s in states if s.steps_per_compute_second]
    if done >= total:
        return f"{share}; finished: no compute left"
    if not timed:
        return f"{share}; the compute left is estimated once a run has reached its first evaluation"
    left = (total - done) / (sum(s.steps_per_compute_second or 0.0 for s in timed) / len(timed))
    walled = sum(s.rate_from_wall_time for s in timed)
    caveat = (
        f"; {walled} of the {len(timed)} runs it rests on counted wall time only (an older td3x): too high if other "
        "work shared their CPU"
        if walled
        else ""
    )
    return f"{share}; about {_duration(left)} of compute left at the mean speed of the runs so far{caveat}"


def _duration(seconds: float) -> str:
    """``2.5 h`` from an hour on, else whole minutes (``3 minutes``; ``0.0 h`` said nothing of a few minutes)."""
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    minutes = max(1, round(seconds / 60))
    return f"{minutes} minute{'s' * (minutes > 1)}"


def compute_seconds(summary: dict[str, Any]) -> tuple[float, str] | None:
    """The seconds of compute a summary records and its key: its process's CPU time, which other work on the machine
    does not stretch; its wall time where it has none (a run of an older td3x); None before either is above zero."""
    for key in ("cpu_time_s", "wall_time_s"):
        seconds = summary.get(key)
        if isinstance(seconds, (int, float)) and seconds > 0:
            return float(seconds), key
    return None


def unreadable_reason(error: RunFileError) -> str:
    """Why a listing leaves out a run whose files it cannot read (``td3x-report`` and ``td3x-sweep status`` alike)."""
    return f"unreadable: {error}"


def stored_config_problems(path: Path, config: dict[str, Any]) -> list[str]:
    """One line naming ``path`` for each problem this td3x has with a run's stored ``config.yaml`` (read from
    ``path``): keys it lacks, a value of the wrong type or out of range, checked by
    :func:`td3x.config.hydra.from_saved`; none when it would resume the run."""
    try:
        from_saved(config)
    except ConfigError as error:
        return [f"{path}: {problem}" for problem in error.problems]
    return []


def check_stored_config(path: Path, config: dict[str, Any]) -> None:
    """Refuse a run's stored ``config.yaml`` that this td3x refuses to resume (:func:`stored_config_problems`).

    Raises:
        RunFileError: one line, its problems joined.
    """
    problems = stored_config_problems(path, config)
    if problems:
        raise RunFileError("; ".join(problems))


def listed_run_state(
    run_dir: Path, total_steps: int, num_seeds: int = 1, config: dict[str, Any] | None = None
) -> RunState:
    """:func:`run_state` for a listing, which names a broken run and goes on: a run whose ``summary.json`` or
    ``eval.csv`` cannot be read, or whose ``config.yaml`` (``config`` when the caller read it, else read here when
    the run dir holds one) cannot be read or is refused by :func:`check_stored_config`, is failed with
    :func:`unreadable_reason` and no steps done."""
    config_path = run_dir / CONFIG_FILE
    try:
        if config is None and config_path.is_file():
            config = read_yaml_mapping(config_path)
        if config is not None:
            check_stored_config(config_path, config)
        state = run_state(run_dir, total_steps, num_seeds)
        if state.state == COMPLETE:  # only then: a running run may be writing its last line of metrics.jsonl now
            read_records(run_dir)
        return state
    except RunFileError as error:
        return unreadable_state(run_dir, total_steps, error)


def read_records(run_dir: Path) -> tuple[dict[str, Any] | None, float | None]:
    """What ``td3x-report`` reads of a run beside its returns: its ``provenance.json`` (None without one) and the
    actor's gradient norm at the last row of ``metrics.jsonl`` that logs one (None where none does). A listing reads
    them too for a run it counts complete, so that ``td3x-sweep status`` counts complete exactly the runs the report
    averages (a metrics.jsonl cut mid-line by a crash or an edit leaves a run out of both).

    Raises:
        RunFileError: either file is unreadable, or the gradient norm is no number.
    """
    provenance = run_dir / PROVENANCE_FILE
    norms = [row["actor_grad_norm"] for row in read_jsonl(run_dir / METRICS_FILE) if "actor_grad_norm" in row]
    last = norms[-1] if norms else None
    if isinstance(last, bool) or not isinstance(last, int | float | None):
        raise RunFileError(f"{run_dir / METRICS_FILE}'s last actor_grad_norm is {last!r}, not a number")
    return (read_json_mapping(provenance) if provenance.exists() else None), (None if last is None else float(last))


def unreadable_state(run_dir: Path, total_steps: int, error: RunFileError) -> RunState:
    """The state a listing gives a run it cannot read: failed, :func:`unreadable_reason`, no steps done."""
    return RunState(run_dir, FAILED, 0, total_steps, None, unreadable_reason(error), readable=False)
