"""Logging a report to Weights & Biases: its tables (wandb.Table) and plots (wandb.Image) in one run of job type
``report``. The report's files are the source of truth; any W&B failure only warns."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pandas as pd

from td3x.analysis.reading.runs import Run
from td3x.config.schema import LoggingConfig

log = logging.getLogger(__name__)


def environment_mode() -> str:
    """The report's W&B mode: ``WANDB_MODE``, offline when unset (as td3x-train's ``logging.wandb_mode``)."""
    return os.environ.get("WANDB_MODE", "offline")


def mode_problems() -> list[str]:
    """Why ``WANDB_MODE`` cannot be the report's W&B mode, one line each (none when it can): td3x-train's check of
    ``logging.wandb_mode``, whose default ``WANDB_MODE`` also sets, so both tools take the same modes."""
    return [f"WANDB_MODE: {problem}" for problem in LoggingConfig(wandb_mode=environment_mode()).problems()]


def shared_value(runs: list[Run], key: str, default: Any) -> Any:
    """The runs' ``logging.<key>`` when they all agree, else ``default``.

    Args:
        runs: the report's runs.
        key: a key of their ``logging`` config, e.g. ``project``.
        default: the value when they disagree or have none.
    """
    values = {str(run.config.get("logging", {}).get(key)) for run in runs}
    return values.pop() if len(values) == 1 and "None" not in values else default


def log_report(runs: list[Run], frames: dict[str, pd.DataFrame], images: list[Path], out: Path) -> str | None:
    """Log the tables and images to a new W&B run in ``out/wandb``; returns its directory, or None on failure.

    The mode comes from ``WANDB_MODE`` (offline when unset; check it first with ``mode_problems``); project and group
    are the runs' own when they agree."""
    try:
        import wandb

        run = wandb.init(
            project=shared_value(runs, "project", "td3x"),
            group=shared_value(runs, "group", None),
            job_type="report",
            name=f"report-{out.resolve().name}",
            dir=str(out),
            mode=environment_mode(),  # type: ignore[arg-type]  # checked by mode_problems before the report
            config={"runs": len(runs)},
            reinit="finish_previous",
            settings=wandb.Settings(quiet=True),
        )
        run.log(
            {
                **{f"tables/{name}": wandb.Table(dataframe=frame.reset_index()) for name, frame in frames.items()},
                **{f"plots/{path.stem}": wandb.Image(str(path)) for path in images},
            }
        )
        run_dir = str(run.dir) if run.dir else None
        run.finish()
        return run_dir
    except Exception as error:  # W&B is a mirror of the report's files: its failure must not fail the report
        log.warning("wandb logging failed (%s: %s); the report's files are complete", type(error).__name__, error)
        return None
