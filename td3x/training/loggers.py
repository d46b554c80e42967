"""Where a run's numbers go: plain files in the run dir (the source of truth) and Weights & Biases (a mirror).

Only the trainer calls these. Every file is flushed as it is written; ``summary.json`` is replaced
atomically. A W&B failure of any kind warns once and disables W&B; the local files go on.

A resumed run continues its W&B run in a new segment (offline: a new ``wandb/offline-run-*-<id>`` dir). A process
killed with ``kill -9`` leaves W&B behind its files or ahead of its checkpoint, and W&B drops a row whose step does
not increase. So the W&B step is a row counter carried across segments, and a new segment first reads what the
earlier ones hold (with W&B's own reader, ``wandb leet inspect --json``), logs the rows of ``metrics.jsonl`` and
``eval.csv`` they lack, and then skips the rows they already have: W&B ends with every row of the files once.
"""

from __future__ import annotations

import contextlib
import csv
import json
import logging
import math
import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

from td3x.config.hydra import to_container
from td3x.config.schema import TrainConfig
from td3x.rundir.layout import (
    CONFIG_FILE,
    EVAL_FILE,
    METRICS_FILE,
    SUMMARY_FILE,
    WANDB_DIR,
    RunSummary,
    read_jsonl,
    read_yaml_mapping,
    write_json_atomic,
)

log = logging.getLogger(__name__)


def wandb_kwargs(config: TrainConfig, choices: dict[str, str], run_id: str | None) -> dict[str, Any]:
    """One seed's W&B run: its project, group, name and tags (``run_id``: continue that run); the caller adds its
    ``config``, what the seed's ``config.yaml`` holds."""
    agent = choices.get("agent", "custom")
    return {
        "project": config.logging.project,
        "group": config.logging.group,
        "id": run_id,
        "name": f"{choices.get('env', config.env.id)}-{agent}-{config.paper_row}-s{config.seed}",
        "tags": [config.env.id, agent, config.paper_row, f"seed{config.seed}", *config.logging.tags],
    }


def recorded_run_kwargs(run_dir: Path, config: TrainConfig, run_id: str) -> dict[str, Any]:
    """The W&B run of a trained run dir as training started it (its ``config.yaml``, choices included): for the
    segment another command adds to it (``td3x-eval --video``), so that it reads as the same run."""
    recorded = read_yaml_mapping(run_dir / CONFIG_FILE) if (run_dir / CONFIG_FILE).is_file() else {}
    choices = recorded.get("choices")
    choices = choices if isinstance(choices, dict) else {}
    return wandb_kwargs(config, choices, run_id) | {"config": recorded or {**to_container(config), "choices": choices}}


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


def row_key(metrics: dict[str, Any]) -> str:
    """The alphabetically first metric name of a W&B row (``train/...``; ``eval/bias_...`` for an evaluation,
    ``eval/video`` for its video): with the env step, it tells the rows of one run apart."""
    return min(key for key in metrics if "/" in key)


def segment_logs(run_dir: Path, run_id: str) -> list[Path]:
    """The transaction logs of W&B run ``run_id``'s segments in ``run_dir/wandb`` (offline and online), oldest
    first (their dirs are named by start time)."""
    logs = (run_dir / WANDB_DIR).glob(f"*run-*-{run_id}/run-{run_id}.wandb")
    return sorted(logs, key=lambda path: path.parent.name.rpartition("run-")[2])


def segment_history(path: Path) -> list[dict[str, Any]]:
    """The history rows of one segment's ``run-<id>.wandb``, read by ``wandb leet inspect --json`` (the file's
    format is W&B's internal one; its own reader follows it)."""
    command = [sys.executable, "-m", "wandb", "leet", "inspect", "--json", str(path)]
    records = subprocess.run(command, capture_output=True, text=True, check=True, timeout=300).stdout
    return [
        record["history"]["item"] for record in map(json.loads, records.splitlines()) if record.get("type") == "history"
    ]


class WandbLog:
    """A guarded W&B run: its files go in ``<run_dir>/wandb``; any exception disables it with one warning.

    Train and eval metrics are plotted against env steps (``define_metric``); W&B's own step counts rows, across
    the segments of a resumed run (see the module's docstring).
    """

    def __init__(self, run_dir: Path, mode: str, init_kwargs: dict[str, Any]) -> None:
        self.run: Any = None
        self.next_step = 0  # the W&B step of the next row
        self.earlier_rows: set[tuple[str, int]] = set()  # (row_key, env step) of the rows earlier segments hold
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
            return
        if init_kwargs.get("id") is not None:
            self.guard("read of the earlier segments", lambda: self._read_earlier_segments(run_dir))

    def _read_earlier_segments(self, run_dir: Path) -> None:
        """Book the rows this run's earlier segments hold. Online, a resumed run's server has the rows below its
        ``starting_step``; offline, every row of the earlier segments' files counts."""
        current = Path(self.run.dir).parent
        on_server = self.run.starting_step if self.run.resumed else None
        for path in segment_logs(run_dir, str(self.run.id)):
            if path.parent == current:
                continue
            for row in segment_history(path):
                step = int(row["_step"])
                if on_server is not None and step >= on_server:
                    continue
                self.next_step = max(self.next_step, step + 1)
                self.earlier_rows.add((row_key(row), int(row["env_step"])))

    @property
    def run_id(self) -> str | None:
        return None if self.run is None else str(self.run.id)

    def log(self, metrics: dict[str, Any], step: int) -> None:
        """One row at env step ``step``, unless an earlier segment of the run holds it."""
        if self.run is None or (row_key(metrics), step) in self.earlier_rows:
            return
        self.guard("log", lambda: self.run.log({**metrics, "env_step": step}, step=self.next_step, commit=True))
        self.next_step += 1

    def update_summary(self, values: dict[str, Any]) -> None:
        self.guard("summary", lambda: self.run.summary.update(values))

    def mark_preempting(self) -> None:
        """W&B's own mark for a stop that will be resumed, ``Run.mark_preempting()``: a preempted run to W&B, not a
        failed one (offline, a ``preempting`` record in the log, which ``wandb sync`` uploads)."""
        self.guard("mark of a resumable stop", lambda: self.run.mark_preempting())

    def finish(self, exit_code: int) -> None:
        self.guard("finish", lambda: self.run.finish(exit_code=exit_code))
        self.run = None

    def guard(self, what: str, action: Any) -> None:
        """Run ``action`` on the W&B run, if any; an exception disables W&B with one warning."""
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
        self.wandb.guard("log of the rows already in the run dir", self._mirror_earlier_rows)

    def _mirror_earlier_rows(self) -> None:
        """Log to W&B the rows the run dir's files already hold (a resumed run's, up to its checkpoint), in the
        order they were written (at one env step the training row before the evaluation's); the W&B log skips
        those an earlier segment holds."""
        rows = [(row["step"], 0, "train", row) for row in read_jsonl(self.run_dir / METRICS_FILE)]
        rows += [(row["step"], 1, "eval", row) for row in read_csv_floats(self.run_dir / EVAL_FILE)]
        for step, _, kind, row in sorted(rows, key=lambda entry: entry[:2]):
            self.wandb.log({f"{kind}/{key}": value for key, value in row.items() if key != "step"}, int(step))

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

    def close(self, exit_code: int = 0, resumable: bool = False) -> None:
        """Close the files and finish the W&B run; ``resumable``: a stop after a checkpoint (a signal, a
        preemption), given W&B's preempting mark before the non-zero exit code."""
        self.eval_csv.close()
        self.metrics.close()
        if resumable:
            self.wandb.mark_preempting()
        self.wandb.finish(exit_code)


def read_csv_floats(path: Path) -> list[dict[str, float]]:
    """The rows of an ``eval.csv`` as numbers (as they were logged); [] when there is none."""
    if not path.exists():
        return []
    with path.open(newline="") as file:
        return [{key: float(value) for key, value in row.items() if value} for row in csv.DictReader(file)]


def _finite_or_none(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value
