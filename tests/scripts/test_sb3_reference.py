"""scripts/sb3_reference.py: Stable-Baselines3's TD3 under td3x's protocol, as td3x run dirs the report reads."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from td3x.analysis.runs import find_runs

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "sb3_reference.py"
PUBLISHED_FILES = ("config.yaml", "eval.csv", "metrics.jsonl", "summary.json", "provenance.json")
SHORT = ["run.total_steps=600", "run.eval_every=300", "env.random_steps=200", "run.eval_episodes=2"]


def sb3_reference(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *arguments], cwd=cwd, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_sb3_runs_are_td3x_run_dirs_with_td3x_evaluations(tmp_path: Path) -> None:
    done = sb3_reference("--env", "inverted_pendulum", "--seeds", "3", "--out", "runs", *SHORT, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run_dir = tmp_path / "runs" / "inverted_pendulum" / "sb3_td3" / "seed=3"
    assert sorted(path.name for path in run_dir.iterdir()) == sorted(PUBLISHED_FILES)
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert config["paper_row"] == "SB3 TD3" and config["seed"] == 3
    assert config["agent"]["hidden_sizes"] == [400, 300] and config["agent"]["batch_size"] == 100  # td3_paper's
    evals = pd.read_csv(run_dir / "eval.csv")
    assert evals["step"].tolist() == [0, 300, 600]
    (run,) = find_runs([tmp_path / "runs"])
    assert run.problem is None and run.paper_row == "SB3 TD3"
    again = sb3_reference("--env", "inverted_pendulum", "--seeds", "3", "--out", "runs", *SHORT, cwd=tmp_path)
    assert again.returncode == 0 and "exists: skipped" in again.stdout  # a finished run is never overwritten


def test_a_bad_override_is_one_line_before_anything_trains(tmp_path: Path) -> None:
    done = sb3_reference("--env", "inverted_pendulum", "--out", "runs", "agent.polcy_delay=3", cwd=tmp_path)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "config error: agent.polcy_delay is not a td3x key; did you mean agent.policy_delay?"
    ]
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_sigterm_leaves_no_partial_run_and_a_killed_runs_leftover_is_cleared(tmp_path: Path) -> None:
    seed_dirs = tmp_path / "runs" / "inverted_pendulum" / "sb3_td3"
    seed_dirs.mkdir(parents=True)
    (seed_dirs / ".seed=3.killed").mkdir()  # what a SIGKILLed start leaves
    (seed_dirs / ".seed=30.other").mkdir()  # another seed's: not touched
    long = ["run.total_steps=100000", "run.eval_every=300", "env.random_steps=200", "run.eval_episodes=2"]
    command = [sys.executable, str(SCRIPT), "--env", "inverted_pendulum", "--seeds", "3", "--out", "runs", *long]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not any(seed_dirs.glob(".seed=3.*/eval.csv")) and time.monotonic() < deadline:  # training has begun
        time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1
    assert stderr.strip().splitlines()[-1] == (
        "stopped: runs/inverted_pendulum/sb3_td3/seed=3 was not complete and is not kept; "
        "the same command trains it again"
    )
    assert sorted(path.name for path in seed_dirs.iterdir()) == [".seed=30.other"]
