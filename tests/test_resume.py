"""Nothing lost: a run killed at any moment resumes exactly (one seed or several per process); SIGTERM
checkpoints after the current step, mid-episode, and resumes exactly; a
changed config, a finished run, run.resume=never, a corrupt checkpoint and a NaN are each handled clearly.
All through the real entrypoint in subprocesses (marked slow)."""

from __future__ import annotations

import csv
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from run_files import assert_same_run, without_timing
from wandb_records import find_run_files, read_run

from td3x import checkpoint

pytestmark = pytest.mark.slow
RUN = (
    "run.total_steps=2400",
    "run.eval_every=400",
    "run.checkpoint_every=300",
    "run.log_every=200",
    "env.random_steps=300",
    "run.eval_episodes=2",
    "agent.hidden_sizes=[32,32]",
    "agent.batch_size=64",
)


def command(run_dir: Path, *overrides: str) -> list[str]:
    return [sys.executable, "-m", "td3x.entrypoint", *RUN, *overrides, f"hydra.run.dir={run_dir}"]


def environment() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}, "WANDB_MODE": "offline"}


def train(run_dir: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(run_dir, *overrides), capture_output=True, text=True, timeout=600, env=environment())


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("straight") / "run"
    result = train(run_dir)
    assert result.returncode == 0, result.stderr
    return run_dir


def wait_for_checkpoint(process: subprocess.Popen[bytes], run_dir: Path, extra_seconds: float) -> None:
    deadline = time.monotonic() + 300
    while not (run_dir / "checkpoint.pt").exists():
        assert process.poll() is None and time.monotonic() < deadline, "no checkpoint before the run ended"
        time.sleep(0.05)
    time.sleep(extra_seconds)


def random_moment(attempt: int, uninterrupted: Path) -> float:
    """Seconds after the first checkpoint (step 300 of 2400) to kill at: a random share, up to 80%, of the time the
    uninterrupted run took for the rest. A fixed range of seconds could outlast the whole run on a fast machine."""
    wall_time_s = float(json.loads((uninterrupted / "summary.json").read_text())["wall_time_s"])
    return random.Random(attempt).uniform(0.0, 0.8) * wall_time_s * (2400 - 300) / 2400


@pytest.mark.parametrize("attempt", range(int(os.environ.get("TD3X_KILL_ATTEMPTS", "3"))))
def test_sigkill_at_a_random_moment_then_resume_equals_an_uninterrupted_run(
    attempt: int, uninterrupted: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    process = subprocess.Popen(
        command(run_dir), env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_for_checkpoint(process, run_dir, random_moment(attempt, uninterrupted))
    process.kill()
    process.wait()
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "running"  # killed, not finished
    result = train(run_dir)
    assert result.returncode == 0, result.stderr
    assert "resuming" in result.stdout + result.stderr
    assert_same_run(run_dir, uninterrupted)
    segments = find_run_files(run_dir)  # offline-run-<time>-<id>/run-<id>.wandb, one per segment
    assert len(segments) >= 2 and len({path.parent.name.rsplit("-", 1)[1] for path in segments}) == 1
    assert read_run(segments[-1]).exit_code == 0  # the resumed segment finished the same W&B run


@pytest.mark.parametrize("row", ["ddpg", "dq_ac"])  # OU noise, the normaliser, two Adam groups; a second actor
def test_sigkill_then_resume_equals_an_uninterrupted_run_for_other_rows(row: str, tmp_path: Path) -> None:
    overrides = (f"ablation={row}", "agent.hidden_sizes=[32,32]", "run.total_steps=800")  # the command line wins
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    process = subprocess.Popen(
        command(killed, *overrides), env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_for_checkpoint(process, killed, 0.0)  # killed at once: step 300 of 800, mid-episode
    process.kill()
    process.wait()
    assert train(straight, *overrides).returncode == 0
    result = train(killed, *overrides)
    assert result.returncode == 0 and "resuming" in result.stdout + result.stderr, result.stderr
    assert_same_run(killed, straight)


def test_sigterm_checkpoints_mid_episode_and_resumes(uninterrupted: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    process = subprocess.Popen(
        command(run_dir), env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    wait_for_checkpoint(process, run_dir, 1.0)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1 and "stopped by SIGTERM at env step" in stderr
    parts = checkpoint.load(run_dir / "checkpoint.pt")
    step = parts["counters"]["step"]
    assert len(parts["seeds"][0]["tape"]["actions"]) == step % 200  # the episode so far, replayed on resume
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "running" and summary["failure"] is None and "SIGTERM" in summary["interrupted"]
    assert train(run_dir).returncode == 0
    assert_same_run(run_dir, uninterrupted)


def test_k_seeds_killed_then_resumed_equal_an_uninterrupted_k_seed_run(tmp_path: Path) -> None:
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    assert train(straight, "run.num_seeds=2").returncode == 0
    process = subprocess.Popen(
        command(killed, "run.num_seeds=2"), env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_for_checkpoint(process, killed, 1.5)
    process.kill()
    process.wait()
    result = train(killed, "run.num_seeds=2")
    assert result.returncode == 0 and "resuming" in result.stdout + result.stderr, result.stderr
    for seed in ("seed_0", "seed_1"):
        assert_same_run(killed / seed, straight / seed)
    assert without_timing(straight / "seed_0" / "eval.csv") != without_timing(straight / "seed_1" / "eval.csv")


def test_finished_run_relaunched_does_nothing(uninterrupted: Path) -> None:
    before = (uninterrupted / "eval.csv").stat().st_mtime_ns
    result = train(uninterrupted)
    assert result.returncode == 0 and "already holds a complete run" in result.stdout + result.stderr
    assert (uninterrupted / "eval.csv").stat().st_mtime_ns == before


def test_resume_never_refuses_a_dir_with_results(uninterrupted: Path) -> None:
    """A resume refusal through the entrypoint: one line, exit 2 (the other refusals: test_resume_in_process)."""
    result = train(uninterrupted, "run.resume=never")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "resume error: run.resume=never: " in result.stderr and "already holds results" in result.stderr


def test_extending_needs_the_buffer(tmp_path: Path) -> None:
    dropped, kept = tmp_path / "dropped", tmp_path / "kept"
    assert train(dropped, "run.total_steps=800").returncode == 0
    assert checkpoint.load(dropped / "checkpoint.pt")["buffer"] is None  # a finished run drops its buffer
    result = train(dropped, "run.total_steps=1200")
    assert result.returncode == 2 and "dropped the replay buffer" in result.stderr
    assert train(kept, "run.total_steps=800", "run.keep_buffer=true").returncode == 0
    assert train(kept, "run.total_steps=1200", "run.keep_buffer=true").returncode == 0
    with (kept / "eval.csv").open() as file:
        assert [int(row["step"]) for row in csv.DictReader(file)] == [0, 400, 800, 1200]


def test_a_corrupt_checkpoint_is_reported_not_loaded(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "checkpoint.pt").write_bytes(b"PK\x03\x04 truncated")
    result = train(run_dir)
    assert result.returncode == 2 and "truncated or corrupt" in result.stderr and "Traceback" not in result.stderr


def test_a_nan_stops_the_run_with_its_logs_and_last_good_checkpoint(tmp_path: Path) -> None:
    """Through the entrypoint (in-process, the message and the checkpoint guard: test_resume_in_process)."""
    run_dir = tmp_path / "run"
    blow_up = ("agent.critic_lr=1e30", "env.random_steps=300", "run.checkpoint_every=301", "run.log_every=1")
    result = train(run_dir, *blow_up)  # Adam's first step moves each critic weight by ~1e30; the second overflows
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert re.search(r"training stopped: non-finite critic_loss=(inf|nan) for seed 0 at env step 302 ", result.stderr)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "failed" and "at env step 302" in summary["failure"] and summary["steps"] == 302
    assert without_timing(run_dir / "eval.csv")  # the evaluations so far are kept
    parts = checkpoint.load(run_dir / "checkpoint.pt")  # the last good checkpoint: after update 1, finite
    assert parts["counters"]["step"] == 301 and parts["agent"]["num_updates"] == 1
    assert all(torch.isfinite(t).all() for t in parts["agent"]["critic"].values())


def test_two_processes_never_train_in_one_dir(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    process = subprocess.Popen(
        command(run_dir), env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_checkpoint(process, run_dir, 0.0)
        result = train(run_dir)
        assert result.returncode == 2 and "another process is training in" in result.stderr
    finally:
        process.kill()
        process.wait()
