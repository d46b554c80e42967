"""scripts/sb3_reference.py: Stable-Baselines3's TD3 under td3x's protocol, as td3x run dirs the report reads."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from td3x.analysis.reading.runs import find_runs

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "sb3_reference.py"
PUBLISHED_FILES = ("config.yaml", "eval.csv", "metrics.jsonl", "summary.json", "provenance.json")
SHORT = ["run.total_steps=600", "run.eval_every=300", "env.random_steps=200", "run.eval_episodes=2"]


def sb3_reference(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The script in ``cwd``, its temp dir ``cwd/tmp`` (SB3's default logger would leave a dir there)."""
    (cwd / "tmp").mkdir(exist_ok=True)
    environment = os.environ | {"TMPDIR": str(cwd / "tmp")}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *arguments], cwd=cwd, capture_output=True, text=True, timeout=600, env=environment
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
    assert list((tmp_path / "tmp").glob("SB3-*")) == []  # no empty SB3-<date> log dir left in the temp dir
    evals = pd.read_csv(run_dir / "eval.csv")
    assert evals["step"].tolist() == [0, 300, 600]
    (run,) = find_runs([tmp_path / "runs"])
    assert run.problem is None and run.paper_row == "SB3 TD3"
    again = sb3_reference("--env", "inverted_pendulum", "--seeds", "3", "--out", "runs", *SHORT, cwd=tmp_path)
    assert again.returncode == 0 and "exists: skipped" in again.stdout  # a finished run is never overwritten

    # the same config stopped with a checkpoint that cannot be read (a disk fault): refused, nothing touched
    partial = run_dir.with_name(".seed=3.partial")
    run_dir.rename(partial)
    (partial / "checkpoint.pt").write_bytes(b"not a checkpoint")
    before = {path.name: path.read_bytes() for path in partial.iterdir()}
    corrupt = sb3_reference("--env", "inverted_pendulum", "--seeds", "3", "--out", "runs", *SHORT, cwd=tmp_path)
    assert corrupt.returncode == 1 and "Traceback" not in corrupt.stderr
    (line,) = corrupt.stderr.strip().splitlines()
    assert line.startswith(f"checkpoint {partial.relative_to(tmp_path)}/checkpoint.pt is truncated or corrupt: ")
    assert line.endswith(f": remove {partial.relative_to(tmp_path)} to train the seed from the start")
    assert {path.name: path.read_bytes() for path in partial.iterdir()} == before


def test_a_bad_override_is_one_line_before_anything_trains(tmp_path: Path) -> None:
    done = sb3_reference("--env", "inverted_pendulum", "--out", "runs", "agent.polcy_delay=3", cwd=tmp_path)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "config error: agent.polcy_delay is not a td3x key; did you mean agent.policy_delay?"
    ]
    assert not (tmp_path / "runs").exists()


def wait_for_eval_step(eval_csv: Path, step: int, process: subprocess.Popen[str]) -> None:
    """Until the run's eval.csv has a row at ``step`` or later (the run must still be going)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        if eval_csv.exists() and any(int(row.split(",")[0]) >= step for row in eval_csv.read_text().split()[1:]):
            return
        time.sleep(0.05)
    raise AssertionError(f"{eval_csv} never reached step {step} while the run went on")


def deterministic(run_dir: Path) -> tuple[pd.DataFrame, list[dict[str, float]]]:
    """A run's numbers without its timings: eval.csv's returns and lengths, metrics.jsonl's SB3 values."""
    evals = pd.read_csv(run_dir / "eval.csv")
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    untimed = [
        {key: value for key, value in row.items() if key != "wall_time_s" and "time" not in key} for row in metrics
    ]
    return evals.drop(columns=["eval_time_s", "wall_time_s", "sps"]), untimed


@pytest.mark.slow
def test_a_seed_stopped_then_killed_resumes_to_the_numbers_of_one_never_stopped(tmp_path: Path) -> None:
    # Hopper: contacts, so MuJoCo's solver warm start is part of the state; checkpoints every 300 steps and evaluations
    # every 100, so a kill leaves rows after the last checkpoint for the resume to cut
    short = ["run.total_steps=1000", "run.eval_every=100", "run.checkpoint_every=300", "env.random_steps=100"]
    arguments = ["--env", "hopper", "--seeds", "3", "--out", "runs", *short, "run.eval_episodes=2"]
    (tmp_path / "straight").mkdir()
    assert sb3_reference(*arguments, cwd=tmp_path / "straight").returncode == 0
    where = tmp_path / "stopped"
    seed_dirs = where / "runs" / "hopper" / "sb3_td3"
    seed_dirs.mkdir(parents=True)
    (seed_dirs / ".seed=3.1a2b").mkdir()  # an earlier version's temporary dir: removed
    (seed_dirs / ".seed=30.partial").mkdir()  # another seed's: not touched
    partial = seed_dirs / ".seed=3.partial"
    command = [sys.executable, str(SCRIPT), *arguments]

    process = subprocess.Popen(command, cwd=where, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_eval_step(partial / "eval.csv", 300, process)  # past the warm-up: updates made, so Adam has state
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    stopped_at = int(stderr.split("stopped at env step ")[1].split()[0])
    assert process.returncode == 1 and 300 <= stopped_at < 1000
    assert stderr.strip().splitlines()[-1] == (
        f"stopped at env step {stopped_at} after a checkpoint: runs/hopper/sb3_td3/seed=3 is not complete; "
        "the same command resumes it"
    )
    assert sorted(path.name for path in seed_dirs.iterdir()) == [".seed=3.partial", ".seed=30.partial"]

    process = subprocess.Popen(command, cwd=where, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_eval_step(partial / "eval.csv", stopped_at + 400, process)  # past a checkpoint at a multiple of 300
    process.kill()
    process.communicate(timeout=60)

    resumed = sb3_reference(*arguments, cwd=where)
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed at step" in resumed.stdout
    assert sorted(path.name for path in seed_dirs.iterdir()) == [".seed=30.partial", "seed=3"]
    run_dir = seed_dirs / "seed=3"
    assert sorted(path.name for path in run_dir.iterdir()) == sorted(PUBLISHED_FILES)  # no checkpoint kept
    straight_evals, straight_metrics = deterministic(tmp_path / "straight" / "runs" / "hopper" / "sb3_td3" / "seed=3")
    evals, metrics = deterministic(run_dir)
    pd.testing.assert_frame_equal(evals, straight_evals)  # every row once, the same numbers
    assert metrics == straight_metrics
    provenance = json.loads((run_dir / "provenance.json").read_text())
    assert len(provenance["earlier_sittings"]) == 2  # the first sitting and the killed one


def test_a_stopped_run_of_another_config_is_refused_in_one_line(tmp_path: Path) -> None:
    partial = tmp_path / "runs" / "inverted_pendulum" / "sb3_td3" / ".seed=3.partial"
    partial.mkdir(parents=True)
    (partial / "config.yaml").write_text("seed: 3\n")
    (partial / "checkpoint.pt").write_bytes(b"")
    done = sb3_reference("--env", "inverted_pendulum", "--seeds", "3", "--out", "runs", *SHORT, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "runs/inverted_pendulum/sb3_td3/.seed=3.partial holds a stopped run of another config: run with its "
        "overrides, or remove it"
    ]
    assert sorted(path.name for path in partial.iterdir()) == ["checkpoint.pt", "config.yaml"]  # left as it was
