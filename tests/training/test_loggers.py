"""The W&B mirror (td3x.training.loggers) after a resume: every row of metrics.jsonl and eval.csv exactly once, read
back from the offline W&B files of every segment, after a real kill -9 and after a segment that had W&B off; and the
mark of a resumable stop (Ctrl-C) in W&B's own terms, read back with W&B's own reader."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.run_files import without_timing
from helpers.runs import STOPPABLE_SIZES
from helpers.scripts import BIN
from helpers.wandb_records import find_run_files, read_segments

from td3x.rundir.layout import EVAL_FILE, METRICS_FILE, is_timing_column

OFFLINE = (*STOPPABLE_SIZES, "logging.wandb_mode=offline")  # runs stopped mid-run (kill -9, SIGTERM, Ctrl-C)
RUN = ("run.eval_every=200", "run.log_every=100", "run.checkpoint_every=300", "env.random_steps=100", *OFFLINE)


def environment() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}


def comparable(value: Any) -> Any:
    """A logged number as text (NaN equal to NaN; a CSV's text and W&B's float alike)."""
    number = float(value)
    return "nan" if math.isnan(number) else repr(number)


def file_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(env step, non-timing values) of each row of a run file."""
    return [(int(row.pop("step")), {k: comparable(v) for k, v in row.items()}) for row in without_timing(path)]


def wandb_rows(run_dir: Path, prefix: str) -> list[tuple[int, dict[str, Any]]]:
    """(env step, non-timing values) of each W&B history row of ``prefix`` (train/, eval/), every segment in order;
    checks that W&B's step grows across segments (W&B drops a row whose step does not)."""
    segments = read_segments(run_dir)
    steps = [row["_step"] for segment in segments for row in segment.history]
    assert steps == sorted(set(steps)), "W&B steps must increase across segments"
    return [
        (
            int(row["env_step"]),
            {
                key.removeprefix(prefix): comparable(value)
                for key, value in row.items()
                if key.startswith(prefix) and not is_timing_column(key)
            },
        )
        for segment in segments
        for row in segment.history
        if any(key.startswith(prefix) for key in row)
    ]


def assert_every_row_once(run_dir: Path) -> None:
    assert wandb_rows(run_dir, "train/") == file_rows(run_dir / METRICS_FILE)
    assert wandb_rows(run_dir, "eval/") == file_rows(run_dir / EVAL_FILE)


def resume(run_dir: Path, *overrides: str) -> None:
    finished = subprocess.run(
        [BIN / "td3x-resume", run_dir, *overrides], env=environment(), capture_output=True, text=True, timeout=300
    )
    assert finished.returncode == 0, finished.stderr[-2000:]


def stop_at(command: list[Any], stop: signal.Signals, run_dir: Path, step: int) -> None:
    """Run ``command`` in its own session and send ``stop`` to the whole session once ``metrics.jsonl`` has the row
    of env step ``step``."""
    process = subprocess.Popen(command, env=environment(), start_new_session=True, stderr=subprocess.DEVNULL)
    metrics, deadline = run_dir / METRICS_FILE, time.monotonic() + 240
    try:
        while not (metrics.exists() and f'"step": {step},' in metrics.read_text()):
            assert process.poll() is None and time.monotonic() < deadline, "the run ended before it could be stopped"
            time.sleep(0.05)
        os.killpg(process.pid, stop)
        process.wait(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # whatever of the job is left
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "running"


@pytest.mark.slow
def test_after_kill_9_of_the_job_and_a_resume_wandb_holds_every_row_of_the_run_files_once(tmp_path: Path) -> None:
    """kill -9 of the whole job (the trainer and W&B's service process, as a crash or a scheduler would): the killed
    segment keeps what W&B had written, often nothing, and the resumed run logs what it lacks."""
    run_dir = tmp_path / "run"
    command = [BIN / "td3x-train", "run.total_steps=800", *RUN, f"hydra.run.dir={run_dir}"]
    stop_at(command, signal.SIGKILL, run_dir, 700)  # past the checkpoint at 600
    resume(run_dir)
    files = find_run_files(run_dir)
    assert len(files) == 2 and len({path.name for path in files}) == 1  # two segments of one W&B run
    assert_every_row_once(run_dir)


@pytest.mark.slow
def test_wandb_turned_on_at_a_resume_and_stopped_by_sigterm_holds_every_row_of_the_run_files_once(
    tmp_path: Path,
) -> None:
    """W&B off for the first 300 steps: the resume that turns it on logs those rows first. SIGTERM then stops it
    after a checkpoint, W&B having written every row: the next resume logs none of them again."""
    run_dir = tmp_path / "run"
    first = [BIN / "td3x-train", "run.total_steps=300", "run.keep_buffer=true", *RUN, f"hydra.run.dir={run_dir}"]
    finished = subprocess.run(
        [*first, "logging.wandb_mode=disabled"], env=environment(), capture_output=True, text=True, timeout=300
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    turned_on = [BIN / "td3x-resume", run_dir, "run.total_steps=800", "logging.wandb_mode=offline"]
    stop_at(turned_on, signal.SIGTERM, run_dir, 500)
    resume(run_dir)
    files = find_run_files(run_dir)
    assert len(files) == 2 and len({path.name for path in files}) == 1
    assert read_segments(run_dir)[0].history[-1]["env_step"] >= 500  # the stopped segment wrote its rows
    assert_every_row_once(run_dir)


@pytest.mark.slow
def test_a_run_stopped_by_ctrl_c_holds_wandb_own_preempting_mark_before_its_exit(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the whole foreground group, W&B's service included) stops the run after a checkpoint: a
    resumable stop, which td3x marks with ``Run.mark_preempting()``. Read back by W&B's own reader of the log
    (``wandb leet inspect --json``): a ``preempting`` record, then the exit; W&B's offline summary still calls the
    run failed (its server turns the mark into "preempted"), as docs/viewing.md says."""
    run_dir = tmp_path / "run"
    command = [BIN / "td3x-train", "run.total_steps=800", *RUN, f"hydra.run.dir={run_dir}"]
    stop_at(command, signal.SIGINT, run_dir, 400)  # past the checkpoint at 300
    (log,) = find_run_files(run_dir)
    records = [json.loads(line) for line in wandb_cli("leet", "inspect", "--json", str(log)).splitlines()]
    kinds = [record["type"] for record in records]
    assert "preempting" in kinds and kinds.index("preempting") < kinds.index("exit")
    assert records[kinds.index("exit")]["exit"]["exit_code"] == 1
    summary = json.loads(wandb_cli("leet", "inspect", "--summary", "--json", str(log)))
    assert summary["state"] == "failed" and summary["summary"]["status"] == "running"


def wandb_cli(*args: str) -> str:
    done = subprocess.run([BIN / "wandb", *args], capture_output=True, text=True, timeout=120, env=environment())
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
