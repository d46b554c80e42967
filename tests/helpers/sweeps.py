"""Sweeps and the local SLURM cluster: tiny runs, their learned rows, summaries, weights, waiting, td3x modules
run as subprocesses."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch

from helpers.runs import STOPPABLE_SIZES, TINY_SIZES
from td3x.rundir.layout import is_timing_column

SLURM_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "slurm_local.sh"


# a sweep's tiny job: 600 steps of Pendulum, updates from step 300, evaluations at steps 0, 200, 400 and 600
SWEEP_JOB = (*TINY_SIZES, "run.total_steps=600", "run.eval_every=200", "env.random_steps=300")
# a job a test stops mid-run, before its length: the sweep job's evaluations and updates (helpers.runs.STOPPABLE_SIZES)
STOPPABLE_JOB = (*STOPPABLE_SIZES, "run.eval_every=200", "env.random_steps=300")


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
    """The final networks, from the run's last checkpoint (which keeps no targets: nothing trains from it again)."""
    agent = torch.load(run_dir / "checkpoint.pt", map_location="cpu", weights_only=False)["agent"]
    networks = ("actor", "critic")
    return {f"{part}.{name}": value for part in networks for name, value in agent[part].items()}


def without_wandb_settings() -> dict[str, str]:
    """This process's environment with W&B off (the test machine's WANDB_* dropped)."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}, "WANDB_MODE": "disabled"}


def td3x(module: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=without_wandb_settings(),
        cwd=cwd,
    )


# The tests that start a local SLURM or Ray cluster run on one pytest-xdist worker, one after another: a SLURM
# cluster is one per machine, and a module's fixture stops it when that module's tests end.
ONE_CLUSTER_AT_A_TIME = pytest.mark.xdist_group("clusters")


# ---------------------------------------------------------------------- Ray on 127.0.0.1
# Token authentication (on by default since Ray 2.60) would write a token into ~/.ray: a test cluster bound to
# 127.0.0.1 opts out; usage stats are never sent
RAY_ENVIRONMENT = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class RayCluster:
    address: str  # host:port of its GCS, for hydra.launcher.ray.init.address
    session: int  # the session id of every process of the cluster (the `ray start --block` process's pid)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[RayCluster]:
    """A one-node Ray cluster on 127.0.0.1, lean (no dashboard, 2 CPUs, random ports), as ``ray start`` makes
    one for a sweep to join. ``--block`` in a session of its own: SIGTERM to it stops exactly this cluster
    (``ray stop`` would stop every Ray cluster of the machine)."""
    temp_dir = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    port = free_port()
    command = [
        *("ray", "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}"),
        *(f"--ray-client-server-port={free_port()}", f"--dashboard-agent-listen-port={free_port()}"),
        *("--min-worker-port=0", "--max-worker-port=0", "--num-cpus=2", "--include-dashboard=false"),
        *(f"--temp-dir={temp_dir}", "--disable-usage-stats"),
    ]
    log_path = temp_dir / "start.log"
    with log_path.open("w") as log:
        head = subprocess.Popen(
            [str(Path(sys.executable).with_name("ray")), *command[1:]],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **RAY_ENVIRONMENT},
            start_new_session=True,
        )
    try:
        _wait_for(lambda: head.poll() is not None or "--block" in log_path.read_text(), 120, "ray start", poll=0.5)
        assert head.poll() is None, f"ray start failed:\n{log_path.read_text()[-3000:]}"
        yield RayCluster(address=f"127.0.0.1:{port}", session=head.pid)
    finally:
        head.terminate()  # ray start --block stops the processes it started
        try:
            head.wait(timeout=60)
        finally:
            _kill_session(head.pid)
            shutil.rmtree(temp_dir, ignore_errors=True)


def session_pids(session: int) -> list[int]:
    """The live processes of a session (Linux /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, ProcessLookupError):
                if os.getsid(int(entry.name)) == session:
                    pids.append(int(entry.name))
    return pids


def _kill_session(session: int) -> None:
    for pid in session_pids(session):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def processes_with_open_files_in(directory: Path, session: int) -> list[int]:
    """The processes of ``session`` holding a file of ``directory`` open (a training job holds its run dir's
    lock and logs)."""
    holding = []
    for pid in session_pids(session):
        with contextlib.suppress(OSError):
            targets = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
            if any(target.startswith(f"{directory}/") for target in targets):
                holding.append(pid)
    return holding
