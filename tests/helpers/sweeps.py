"""Sweeps and the local SLURM cluster: tiny runs, their learned rows, summaries, weights, waiting, td3x modules
run as subprocesses."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from td3x.run_dir import is_timing_column

SLURM_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "slurm_local.sh"


# tiny Pendulum runs: seconds each, updates from step 300, an evaluation every 200 steps
TINY = (
    "run.total_steps=600",
    "run.eval_every=200",
    "env.random_steps=300",
    "run.eval_episodes=2",
    "agent.hidden_sizes=[32,32]",
    "agent.batch_size=64",
)


def learned(run_dir: Path) -> list[dict[str, str]]:
    """eval.csv without its timing columns: what must be bit-identical between two runs of one config."""
    with (run_dir / "eval.csv").open() as file:
        rows = list(csv.DictReader(file))
    return [{key: value for key, value in row.items() if not is_timing_column(key)} for row in rows]


def summary(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "summary.json").read_text()))


# ---------------------------------------------------------------------- submitit_slurm on a real local cluster
def _slurm_script(command: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SLURM_SCRIPT), command], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def slurm_cluster() -> Iterator[None]:
    """The local cluster of scripts/slurm_local.sh: started here (and stopped after) unless already running."""
    if os.geteuid() != 0:
        pytest.skip("a local SLURM cluster needs root (apt-get install, /etc/slurm, daemons)")
    already_running = _slurm_script("status").returncode == 0
    if not already_running:
        started = _slurm_script("start")
        if started.returncode != 0:
            _slurm_script("stop")  # whichever daemons did start
            if started.returncode == 3:  # the script's "cannot host here": no apt-get, or no packages reachable
                pytest.skip(started.stderr.strip())
            pytest.fail(f"scripts/slurm_local.sh start failed:\n{started.stdout}{started.stderr}")
    yield
    if not already_running:
        stopped = _slurm_script("stop")
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr


def _wait_for(condition: Callable[[], Any], timeout: float, what: str, poll: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _last_eval_step(run_dir: Path) -> int:
    try:
        rows = (run_dir / "eval.csv").read_text().splitlines()[1:]
    except FileNotFoundError:
        return -1
    return int(rows[-1].split(",", 1)[0]) if rows else -1


def _weights(run_dir: Path) -> dict[str, torch.Tensor]:
    """The final networks and their targets, from the run's last checkpoint."""
    agent = torch.load(run_dir / "checkpoint.pt", map_location="cpu", weights_only=False)["agent"]
    networks = ("actor", "critic", "actor_target", "critic_target")
    return {f"{part}.{name}": value for part in networks for name, value in agent[part].items()}


def td3x(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**{k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}, "WANDB_MODE": "disabled"}
    return subprocess.run(
        [sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=600, env=environment
    )
