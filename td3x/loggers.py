"""Where a run's numbers go: plain files in the run dir (the source of truth) and Weights & Biases (a mirror).

Only the trainer calls these. Every file is flushed as it is written; ``summary.json`` is replaced
atomically. A W&B failure of any kind warns once and disables W&B; the local files go on.
"""

from __future__ import annotations

import contextlib
import csv
import json
import logging
import math
from pathlib import Path
from typing import Any, TextIO

from td3x.config import TrainConfig, to_container
from td3x.run_dir import EVAL_FILE, METRICS_FILE, SUMMARY_FILE, WANDB_DIR, RunSummary, write_json_atomic

log = logging.getLogger(__name__)


def wandb_kwargs(config: TrainConfig, choices: dict[str, str], run_id: str | None) -> dict[str, Any]:
    """One seed's W&B run: its project, group, name, tags and config (``run_id``: continue that run)."""
    agent = choices.get("agent", "custom")
    return {
        "project": config.logging.project,
        "group": config.logging.group,
        "id": run_id,
        "name": f"{choices.get('env', config.env.id)}-{agent}-{config.paper_row}-s{config.seed}",
        "tags": [config.env.id, agent, config.paper_row, f"seed{config.seed}", *config.logging.tags],
        "config": {**to_container(config), "choices": choices},
    }


class CsvLog:
    """Rows of one CSV file; the first row fixes the columns."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file_obj: TextIO | None = None
        self.csv_writer: csv.DictWriter[str] | None = None

    def write(self, row: dict[str, Any]) -> None:
        if self.csv_writer is None:
            self.file_obj = self.path.open("a", newline="")
            self.csv_writer = csv.DictWriter(self.file_obj, fieldnames=list(row))
            if self.path.stat().st_size == 0:
                self.csv_writer.writeheader()
        assert self.file_obj is not None
        self.csv_writer.writerow(row)
        self.file_obj.flush()

    def close(self) -> None:
        if self.file_obj is not None:
            self.file_obj.close()


class JsonlLog:
    """One JSON object per line."""

    def __init__(self, path: Path) -> None:
        self.file = path.open("a")

    def write(self, row: dict[str, Any]) -> None:
        self.file.write(json.dumps(row) + "\n")
        self.file.flush()

    def close(self) -> None:
        self.file.close()


class WandbLog:
    """A guarded W&B run: its files go in ``<run_dir>/wandb``; any exception disables it with one warning.

    Train and eval metrics are plotted against env steps (``define_metric``), not W&B's call counter.
    """

    def __init__(self, run_dir: Path, mode: str, init_kwargs: dict[str, Any]) -> None:
        self.run: Any = None
        if mode == "disabled":
            return
        try:
            import wandb

            (run_dir / WANDB_DIR).mkdir(exist_ok=True)
            self.run = wandb.init(
                dir=str(run_dir),
                mode=mode,  # type: ignore[arg-type]  # checked by LoggingConfig
                job_type="train",
                resume="allow",
                reinit="create_new",  # the seeds of one process each have their own run, open together
                settings=wandb.Settings(init_timeout=120, quiet=True),
                **init_kwargs,
            )
            self.run.define_metric("env_step")
            self.run.define_metric("train/*", step_metric="env_step")
            self.run.define_metric("eval/*", step_metric="env_step")
        except Exception as error:
            self._disable("start", error)

    @property
    def run_id(self) -> str | None:
        return None if self.run is None else str(self.run.id)

    def log(self, metrics: dict[str, Any], step: int) -> None:
        self._guard("log", lambda: self.run.log({**metrics, "env_step": step}))

    def update_summary(self, values: dict[str, Any]) -> None:
        self._guard("summary", lambda: self.run.summary.update(values))

    def finish(self, exit_code: int) -> None:
        self._guard("finish", lambda: self.run.finish(exit_code=exit_code))
        self.run = None

    def _guard(self, what: str, action: Any) -> None:
        if self.run is None:
            return
        try:
            action()
        except Exception as error:
            self._disable(what, error)

    def _disable(self, what: str, error: Exception) -> None:
        log.warning(
            "wandb %s failed (%s: %s); W&B is off for this run, the run dir's files are complete",
            what,
            type(error).__name__,
            error,
        )
        run, self.run = self.run, None
        if run is not None:
            with contextlib.suppress(Exception):
                run.finish(exit_code=1)


class RunLoggers:
    """The run dir's ``eval.csv``, ``metrics.jsonl`` and ``summary.json``, mirrored to W&B."""

    def __init__(self, run_dir: Path, wandb_mode: str, wandb_kwargs: dict[str, Any]) -> None:
        self.run_dir = run_dir
        self.eval_csv = CsvLog(run_dir / EVAL_FILE)
        self.metrics = JsonlLog(run_dir / METRICS_FILE)
        self.wandb = WandbLog(run_dir, wandb_mode, wandb_kwargs)

    def log_train(self, metrics: dict[str, float], step: int) -> None:
        self.metrics.write({"step": step, **metrics})
        self.wandb.log({f"train/{key}": value for key, value in metrics.items()}, step)

    def log_eval(self, row: dict[str, float], step: int) -> None:
        self.eval_csv.write({"step": step, **row})
        self.wandb.log({f"eval/{key}": value for key, value in row.items()}, step)

    def write_summary(self, summary: RunSummary) -> None:
        clean = {key: _finite_or_none(value) for key, value in summary.to_dict().items()}
        write_json_atomic(self.run_dir / SUMMARY_FILE, clean)
        self.wandb.update_summary({key: value for key, value in clean.items() if value is not None})

    def close(self, exit_code: int = 0) -> None:
        self.eval_csv.close()
        self.metrics.close()
        self.wandb.finish(exit_code)


def _finite_or_none(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value
