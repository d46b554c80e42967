"""scripts/sb3_reference.py: Stable-Baselines3's TD3 under td3x's protocol, as td3x run dirs the report reads."""

from __future__ import annotations

import subprocess
import sys
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
