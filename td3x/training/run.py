"""Training a run dir without Hydra: :func:`run` starts a run, resumes it from its checkpoint, or finds it finished
(the decision is :mod:`td3x.rundir.resume_decision`'s), for one seed or K seeds in one process, and returns its summary.

The one way into training: ``td3x-train``, ``td3x-resume``, ``td3x-sweep rerun`` and ``recheck``, ``td3x-tune`` and
``td3x.train`` all call :func:`run`. It refuses what this machine cannot run (:mod:`~td3x.training.machine_checks`),
computes each seed's config and dir once (:func:`~td3x.training.per_seed.process_seeds`), writes each seed's
``config.yaml`` and ``provenance.json``, drives a :class:`~td3x.training.loop.Trainer`, stops it after a checkpoint
on SIGTERM/SIGINT, and writes the final summaries.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from td3x.algo.function_types import EvaluationCallback
from td3x.config.schema import TrainConfig
from td3x.host import numerics
from td3x.host.provenance import collect_provenance, computed_on, resumed_provenance
from td3x.rundir.layout import (
    CHECKPOINT_FILE,
    CONFIG_FILE,
    EVAL_FILE,
    METRICS_FILE,
    PROVENANCE_FILE,
    SUMMARY_FILE,
    RunFileError,
    RunSummary,
    read_json_mapping,
    seed_range,
    truncate_after,
    write_json_atomic,
)
from td3x.rundir.lock import ResumeError, exclusive
from td3x.rundir.outputs import is_output_dir
from td3x.rundir.resume_decision import Plan, plan
from td3x.rundir.state import summary_says_complete
from td3x.training.loop import RunInterrupted, Trainer
from td3x.training.machine_checks import refuse_unrunnable
from td3x.training.per_seed import ProcessSeed, process_seeds, recorded_config

log = logging.getLogger(__name__)


@contextlib.contextmanager
def stop_after_checkpoint(trainer: Trainer) -> Iterator[None]:
    """SIGTERM/SIGINT ask the loop to checkpoint after the current env step and stop (never mid-update; an
    evaluation is cut short within an episode and made again on resume), and say so at once in one line; a
    second SIGINT stops at once. Under submitit, whose own handlers requeue the job, nothing is changed."""
    if threading.current_thread() is not threading.main_thread() or "SUBMITIT_EXECUTOR" in os.environ:
        yield
        return

    def request_stop(signum: int, frame: object) -> None:
        if trainer.stop_requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        if trainer.stop_requested:
            return
        trainer.stop_requested = signal.Signals(signum).name
        log.warning(
            "%s received at env step %d: stopping after a checkpoint (a running evaluation is cut short and made "
            "again on resume); a second Ctrl-C stops at once, without one",
            trainer.stop_requested,
            trainer.step,
        )

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# SIGTERM/SIGINT after a checkpoint; SystemExit is submitit's exit after it requeued a preempted job
INTERRUPTIONS = (RunInterrupted, KeyboardInterrupt, SystemExit)
SUBMITIT_REQUEUE_EXIT = -1  # the status submitit's handler exits with after it requeued the job


def requeue_cut_short(error: BaseException) -> bool:
    """Whether ``error`` is submitit's ``scontrol requeue`` stopped by the job kill that the requeue itself sets off.

    On a preemption signal submitit runs ``scontrol requeue <job>``; SLURM then sends SIGTERM to every process of the
    job, scontrol included, and on a busy node that can arrive before scontrol exits. The job is requeued all the
    same, yet submitit raises ``CalledProcessError`` and would record it as the job's failed result."""
    return (
        isinstance(error, subprocess.CalledProcessError)
        and list(error.cmd[:2]) == ["scontrol", "requeue"]
        and error.returncode == -signal.SIGTERM
    )


def _prepare_run_dirs(seeds: list[ProcessSeed], decision: Plan) -> None:
    """A resumed run drops the rows it will write again; a fresh start drops a killed attempt's rows."""
    run_dirs = [seed.run_dir for seed in seeds]
    if decision.action == "resume":
        counters = decision.parts["counters"]
        try:
            truncate_after(run_dirs, counters["step"], bool(counters.get("evaluation_due")))
        except RunFileError as error:
            raise ResumeError(f"cannot resume: {error}; mend or remove that line, then resume again") from error
        return
    for run_dir in run_dirs:
        for name in (EVAL_FILE, METRICS_FILE, SUMMARY_FILE):
            (run_dir / name).unlink(missing_ok=True)


def group_summary(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """What ``run`` returns: a plain run's summary; for K seeds, their mean returns and each seed's summary."""
    if len(summaries) == 1:
        return summaries[0]
    finals = [s["final_return"] for s in summaries if s["final_return"] is not None]
    last10 = [s["last10_return"] for s in summaries if s["last10_return"] is not None]
    return {
        **summaries[0],
        "final_return": float(np.mean(finals)) if finals else None,
        "last10_return": float(np.mean(last10)) if last10 else None,
        "seeds": summaries,
    }


def run(
    config: TrainConfig,
    run_dir: Path | str,
    choices: dict[str, str] | None = None,
    on_evaluation: EvaluationCallback | None = None,
    *,
    checked: bool = False,
) -> dict[str, Any]:
    """Train one run in ``run_dir`` (or resume it from its checkpoint) and return its summary
    (:class:`~td3x.rundir.layout.RunSummary` as a dict); with ``run.num_seeds`` K > 1, K runs in ``run_dir/seed_<seed>``
    and their :func:`group_summary`. A finished run returns the same summary at once.

    Args:
        config: a checked config (building a ``TrainConfig`` runs the range checks).
        run_dir: where the run's files go; created if missing.
        choices: the Hydra group choices (env, agent, noise, ablation), recorded in ``config.yaml``.
        on_evaluation: called after each evaluation (:data:`~td3x.algo.function_types.EvaluationCallback`); what it
            raises stops the run, whose summary records it as the failure.
        checked: the caller has just built ``config`` (its range checks) and run
            :func:`~td3x.training.machine_checks.check_runtime` on it in this process, as ``td3x-train`` does before
            Hydra makes the run dir: neither is done again here.

    Raises:
        ConfigError: what this machine cannot run (:mod:`~td3x.training.machine_checks`); nothing was created.
        ResumeError: the run dir holds another config's results, or results with ``run.resume=never``.
        TrainingError: a non-finite loss or parameter; the logs and the last good checkpoint are kept.
        RunInterrupted: SIGTERM/SIGINT; a checkpoint was written first.
        NumericsError: ``run.numerics`` cannot take effect in this process (it computed under the other mode).
        SystemExit: under submitit, SLURM stopped the job's ``scontrol requeue`` (:func:`requeue_cut_short`); the
            job was requeued and resumes.
    """
    run_dir = Path(run_dir)
    if not checked:
        refuse_unrunnable(config)
    numerics.apply(config.run.numerics)  # before the run's first torch operation (td3x.host.numerics)
    with exclusive(run_dir):
        return _run_locked(config, run_dir, choices, on_evaluation)


Move = tuple[str | None, str | None]  # (earlier, now): what computed a sitting (computed_on); None: not recorded


def _write_provenance(path: Path, resuming: bool, device: str) -> Move | None:
    """This sitting's provenance.json; a resume keeps the earlier sittings'. Returns (earlier, now) when the device or
    the CPU's fp32 kernels changed (the run then continues to other numbers than an uninterrupted one), else None."""
    earlier = None
    if resuming and path.is_file():
        try:
            earlier = read_json_mapping(path)
        except RunFileError as error:  # a damaged record of the past never stops the training
            log.warning("%s; this sitting's provenance.json replaces it", error)
    if earlier is None:
        write_json_atomic(path, collect_provenance(device, is_output_dir))
        return None
    provenance = resumed_provenance(earlier, device, is_output_dir)
    write_json_atomic(path, provenance)
    return None if computed_on(provenance) == computed_on(earlier) else (computed_on(earlier), computed_on(provenance))


def _warn_of_moves(run_dir: Path, moves: list[Move | None]) -> None:
    """One line per distinct move, however many of the process's seeds it concerns."""
    for before, now in sorted({move for move in moves if move is not None}, key=str):
        seeds = sum(move == (before, now) for move in moves)
        which = "" if len(moves) == 1 else f" ({seeds} of its {len(moves)} seeds)"
        log.warning(
            "%s%s: resumed on %s after %s: from here its numbers are this machine's, not an uninterrupted run's",
            run_dir,
            which,
            now or "not recorded",
            before or "not recorded",
        )


def _run_locked(
    config: TrainConfig, run_dir: Path, choices: dict[str, str] | None, on_evaluation: EvaluationCallback | None
) -> dict[str, Any]:
    decision = plan(config, run_dir)
    seeds = process_seeds(config, run_dir)
    if decision.action == "complete":
        log.info("%s already holds a complete run of %d steps: nothing to do", run_dir, config.run.total_steps)
        finished = zip(decision.parts["seeds"], seeds, strict=True)
        return group_summary([_finished_summary(decision.parts, state, seed.run_dir) for state, seed in finished])
    _announce(config, run_dir, choices)
    run_dir.mkdir(parents=True, exist_ok=True)
    earlier = [seed.run_dir / name for seed in seeds for name in (CONFIG_FILE, EVAL_FILE, METRICS_FILE, SUMMARY_FILE)]
    if decision.action == "start" and any(path.exists() for path in earlier):
        log.warning("%s holds an earlier attempt but no %s: starting over from env step 0", run_dir, CHECKPOINT_FILE)
    _prepare_run_dirs(seeds, decision)
    saved_seeds = decision.parts.get("seeds", [])
    wandb_run_ids = [seed["wandb_run_id"] for seed in saved_seeds] or None
    trainer = Trainer(config, run_dir, choices, wandb_run_ids, on_evaluation, seeds)
    moves = []
    resuming = decision.action == "resume"
    for seed in seeds:
        (seed.run_dir / CONFIG_FILE).write_text(
            yaml.safe_dump(recorded_config(seed.config, choices or {}), sort_keys=False)
        )
        moves.append(_write_provenance(seed.run_dir / PROVENANCE_FILE, resuming, trainer.device.type))
    _warn_of_moves(run_dir, moves)
    try:
        if decision.action == "resume":
            trainer.restore(decision.parts)
            log.info("resuming %s from its checkpoint at env step %d", run_dir, trainer.step)
        with stop_after_checkpoint(trainer):
            trainer.train()
    except INTERRUPTIONS as error:  # resumable: the run is unfinished, not failed
        trainer.close("running", interrupted=f"{type(error).__name__}: {error}")
        raise
    except BaseException as error:
        if requeue_cut_short(error):  # requeued: resumable, and the job must not report a failure to its launcher
            log.warning("%s: SLURM stopped `scontrol requeue` while it requeued the job: stopping to resume", run_dir)
            trainer.close("running", interrupted=f"requeued by SLURM ({error})")
            raise SystemExit(SUBMITIT_REQUEUE_EXIT) from error
        with contextlib.suppress(OSError):  # a full disk may refuse the summary too; the original error matters
            trainer.close("failed", failure=f"{type(error).__name__}: {error}")
        raise
    return group_summary([summary.to_dict() for summary in trainer.close("complete")])


def _announce(config: TrainConfig, run_dir: Path, choices: dict[str, str] | None) -> None:
    """The start line, and a warning when the run will make no update (its returns would say nothing of the agent)."""
    log.info(start_line(config, run_dir, choices))
    no_update = config.no_update_warning()
    if no_update is not None:
        log.warning("%s: %s", run_dir, no_update)


def start_line(config: TrainConfig, run_dir: Path, choices: dict[str, str] | None) -> str:
    """The one line that says what is about to run."""
    trained = seed_range(config.seed, config.run.num_seeds)
    seeds = f"seed {trained[0]}" if len(trained) == 1 else f"seeds {trained[0]}-{trained[-1]}"
    agent = (choices or {}).get("agent", "as configured")
    per_seed = " per seed" if config.run.num_seeds > 1 else ""  # as the progress lines count them
    return (
        f"training {config.env.id} | agent {agent} | row {config.paper_row} | {config.run.total_steps} steps"
        f"{per_seed} | {seeds} | {config.run.num_threads} thread(s) | run dir {run_dir}"
    )


def _finished_summary(parts: dict[str, Any], seed_state: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    """A finished seed's summary from the process's final checkpoint: the keys of a fresh run's. Written to its
    ``summary.json`` when that does not say complete (the process was killed between its final checkpoint and its
    summary), so that the run's state agrees with its checkpoint."""
    summary = RunSummary.of(
        "complete",
        seed_state["eval_returns"],
        steps=parts["counters"]["step"],
        updates=parts["agent"]["num_updates"],
        wall_time_s=parts["wall_time_s"],
        cpu_time_s=parts.get("cpu_time_s"),  # absent from an older td3x's checkpoint
        run_dir=run_dir,
    ).to_dict()
    if not summary_says_complete(run_dir):
        write_json_atomic(run_dir / SUMMARY_FILE, summary)
    return summary
