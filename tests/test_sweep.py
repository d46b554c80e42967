"""td3x-sweep status, rerun and recheck on a real (tiny) multirun."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
SWEEP = (
    "-m",
    "seed=0,1",
    "run.total_steps=900",
    "run.eval_every=200",
    "env.random_steps=300",
    "run.eval_episodes=1",
    "agent.hidden_sizes=[32,32]",
    "agent.batch_size=64",
)


def td3x(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**{k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}, "WANDB_MODE": "disabled"}
    return subprocess.run(
        [sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=600, env=environment
    )


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sweep_dir = tmp_path_factory.mktemp("sweep")
    assert td3x("td3x.entrypoint", *SWEEP, f"hydra.sweep.dir={sweep_dir}").returncode == 0
    return sweep_dir


def test_status_counts_and_rerun_completes_the_missing_run(sweep: Path) -> None:
    status = td3x("td3x.sweep", "status", str(sweep))
    assert status.returncode == 0 and "2 complete, 0 running, 0 stale, 0 failed, 0 not started" in status.stdout
    (missing,) = [path for path in sweep.glob("pendulum/none/*seed=1")]
    shutil.rmtree(missing)
    status = td3x("td3x.sweep", "status", str(sweep))
    assert status.returncode == 1 and "1 complete, 0 running, 0 stale, 0 failed, 1 not started" in status.stdout
    assert "steps: 900/1800 (50.0%)" in status.stdout
    assert td3x("td3x.sweep", "rerun", str(sweep)).returncode == 0
    assert "2 complete" in td3x("td3x.sweep", "status", str(sweep)).stdout


def test_recheck_finds_identical_runs_and_a_tampered_one(sweep: Path) -> None:
    result = td3x("td3x.sweep", "recheck", str(sweep), "--runs", "2")
    assert result.returncode == 0 and result.stdout.count("identical") == 2, result.stdout + result.stderr
    (run_dir,) = [path for path in sweep.glob("pendulum/none/*seed=0")]
    rows = list(csv.DictReader((run_dir / "eval.csv").open()))
    rows[1]["return_0"] = str(float(rows[1]["return_0"]) + 1e-9)
    with (run_dir / "eval.csv").open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    result = td3x("td3x.sweep", "recheck", str(sweep), "--runs", "1")
    assert result.returncode == 1 and "DIFFERENT" in result.stdout and "at step 200, return_0" in result.stdout


def test_not_a_sweep_dir_is_one_line(tmp_path: Path) -> None:
    result = td3x("td3x.sweep", "status", str(tmp_path))
    assert (
        result.returncode == 2
        and result.stderr.strip() == f"td3x-sweep: {tmp_path} is not a sweep dir: it has no multirun.yaml"
    )


def test_k_seed_jobs_count_and_recheck_each_seed_dir(tmp_path: Path) -> None:
    """Two jobs of run.num_seeds=2: status sees four runs (each seed's own dir), recheck reruns a seed in its mode."""
    sweep_dir = tmp_path / "sweep"
    overrides = [o for o in SWEEP if not o.startswith("seed=")]
    assert td3x("td3x.entrypoint", *overrides, "seed=0,2", "run.num_seeds=2", f"hydra.sweep.dir={sweep_dir}").returncode == 0
    status = td3x("td3x.sweep", "status", str(sweep_dir))
    assert status.returncode == 0 and "4 complete, 0 running" in status.stdout and "3600/3600" in status.stdout
    result = td3x("td3x.sweep", "recheck", str(sweep_dir), "--runs", "1")
    assert result.returncode == 0 and "identical" in result.stdout and "seed_0" in result.stdout, result.stdout
