"""Where a run came from: code version, library versions, machine and command (``provenance.json``)."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch

PACKAGES = ("td3x", "torch", "gymnasium", "mujoco", "numpy", "hydra-core", "omegaconf", "wandb")


def collect_provenance() -> dict[str, Any]:
    return {
        **_git_state(Path(__file__).resolve().parent),
        "python": platform.python_version(),
        "versions": {name: _version(name) for name in PACKAGES},
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "cuda": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "command": [sys.executable, *sys.argv],
        "cwd": os.getcwd(),
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
        "slurm_array_task": _slurm_array_task(),
        "slurm_restart_count": os.environ.get("SLURM_RESTART_COUNT"),  # 1, 2, ... after a requeue
        "pid": os.getpid(),
    }


def _slurm_array_task() -> str | None:
    array_job = os.environ.get("SLURM_ARRAY_JOB_ID")
    return None if array_job is None else f"{array_job}_{os.environ.get('SLURM_ARRAY_TASK_ID')}"


def _git_state(directory: Path) -> dict[str, Any]:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=directory, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()

    try:
        return {"git_commit": git("rev-parse", "HEAD"), "git_dirty": bool(git("status", "--porcelain"))}
    except (OSError, subprocess.SubprocessError):  # not a checkout (an installed wheel), or no git
        return {"git_commit": None, "git_dirty": None}


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
