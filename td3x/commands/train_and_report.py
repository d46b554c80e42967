"""Training a run dir from a command line, for ``td3x-train`` and ``td3x-resume``: :func:`run_and_report` turns a
refusal or a stop into one line per problem and an exit code (or, in a multirun job, an exception), and sums a
finished run up in one line.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from td3x.commands.common import exit_with, resume_command
from td3x.config.schema import ConfigError, TrainConfig
from td3x.host import numerics
from td3x.host.numerics import NumericsError
from td3x.rundir.env_replay import ReplayMismatch
from td3x.rundir.layout import WANDB_DIR
from td3x.rundir.lock import ResumeError

log = logging.getLogger(__name__)


def remove_if_only_hydra_files(run_dir: Path) -> None:
    """Hydra creates the run dir (``.hydra/`` and a log) before td3x sees the config. Remove it when that is
    all it holds: a refused config leaves nothing behind, and a dir with results is never touched."""
    if run_dir.is_dir() and all(entry.name == ".hydra" or entry.suffix == ".log" for entry in run_dir.iterdir()):
        shutil.rmtree(run_dir, ignore_errors=True)


def fail(multirun: bool, label: str, problems: list[str], exit_code: int, error: Exception) -> None:
    """A single run prints one line per problem and exits; a multirun job raises so the sweep goes on
    (under Hydra's basic launcher every job shares one process: one sys.exit would end them all)."""
    if multirun:
        raise error
    exit_with(label, problems, exit_code)


def run_and_report(
    config: TrainConfig,
    run_dir: Path,
    choices: dict[str, str] | None,
    multirun: bool = False,
    *,
    checked: bool = False,
) -> dict[str, Any] | None:
    """:func:`~td3x.training.run.run` for a command line: a refusal or a stop is one line per problem and an exit code
    (2: resume refused, or numerics this process cannot give; 1: training stopped), or, in a multirun job, an
    exception; the last line sums the run up. A config this machine cannot run is refused as ``config error``
    lines and exit code 2, unless the caller ``checked`` it already (``run``'s argument)."""
    # training (and torch, seconds to import) loads here, where it starts: a command line refused before costs none
    from td3x.rundir.checkpoint import CheckpointError
    from td3x.training.loop import RunInterrupted, TrainingError
    from td3x.training.run import run

    try:
        summary = run(config, run_dir, choices, checked=checked)
    except ConfigError as error:  # what this machine cannot run (check_runtime): nothing was created
        remove_if_only_hydra_files(run_dir)
        fail(multirun, "config error", error.problems, 2, error)
        return None
    except (ResumeError, CheckpointError, ReplayMismatch) as error:  # the checkpoint cannot be resumed here
        remove_if_only_hydra_files(run_dir)
        fail(multirun, "resume error", [str(error)], 2, error)
        return None
    except NumericsError as error:  # this process cannot give the run its numerics: nothing was created
        remove_if_only_hydra_files(run_dir)
        # portable asked by a config file or a resumed run: restart pinned (a sweep's job: its sweep dir stays)
        if not multirun:
            numerics.restart_if_pins_missing(error)
        fail(multirun, "config error", [str(error)], 2, error)
        return None
    except RunInterrupted as error:  # resumable: say how; a signal stops the process, not only this job of a sweep
        fail(False, "training stopped", [f"{error}; resume with: {resume_command(run_dir)}"], 1, error)
        return None
    except TrainingError as error:
        fail(multirun, "training stopped", [str(error), f"files in {run_dir}"], 1, error)
        return None
    except OSError as error:  # a full disk or an unwritable dir: checkpoints are atomic, so the last one is intact
        fail(multirun, "training stopped", [f"cannot write in {run_dir}: {error}"], 1, error)
        return None
    wandb_dir = run_dir / WANDB_DIR
    log.info(
        "done: final eval return %.2f, %s %.2f; files in %s%s",
        summary["final_return"],
        last10_label(summary["evaluations"]),
        summary["last10_return"],
        run_dir,
        f" (offline W&B run in {wandb_dir}: `wandb sync` uploads it)" if wandb_dir.is_dir() else "",
    )
    return summary


def last10_label(evaluations: int) -> str:
    """What ``last10_return`` is the mean of: the paper's last ten evaluations, or all of a shorter run's."""
    if evaluations >= 10:
        return "last-10 mean"
    return "mean of the only evaluation" if evaluations == 1 else f"mean of all {evaluations} evaluations"
