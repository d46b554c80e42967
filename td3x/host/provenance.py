"""Where a run came from: code version, library versions, CPU and command (``provenance.json``).

Fit to publish: no absolute path, user or host name (the command as typed, the operating system without its
kernel build). What decides fp32 numerics is recorded: the CPU's instruction-set extensions and the kernels torch
dispatches to (``cpu_capability``), the CPU model, the library versions, and ``run.numerics`` with the variables it
sets (``numerics``). In native mode the CPU model and the library builds fix the bits (two CPUs of one capability can
differ); across CPUs only ``portable`` runs are meant to agree.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch

from td3x.host import numerics

PACKAGES = ("td3x", "torch", "gymnasium", "mujoco", "numpy", "hydra-core", "omegaconf", "wandb")


# instruction-set extensions that change which fp32 kernels run (avx2, avx512f), and those that multiply bf16 in
# hardware (run.precision=bf16 needs avx512_bf16 or amx_bf16)
ISA_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16")


def collect_provenance(device: str) -> dict[str, Any]:
    """This sitting's provenance; ``device``: where it trains (``cpu``, ``cuda``: run.device resolved here, which
    ``auto`` alone does not say)."""
    return {
        **_git_state(Path(__file__).resolve().parents[1]),
        "python": platform.python_version(),
        "versions": {name: _version(name) for name in PACKAGES},
        "cpu": cpu_model(),
        "cpu_flags": cpu_flags(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "numerics": numerics.effective_settings(),  # run.numerics and the variables that choose the fp32 kernels
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "cuda": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
        "device": device,
        "os": operating_system(),
        "command": command_as_typed(sys.argv),
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
        "slurm_array_task": _slurm_array_task(),
        "slurm_restart_count": os.environ.get("SLURM_RESTART_COUNT"),  # 1, 2, ... after a requeue
    }


EARLIER = "earlier_sittings"  # a resumed run's provenance: the sittings before this one, oldest first


def resumed_provenance(earlier: dict[str, Any], device: str) -> dict[str, Any]:
    """This process's provenance for a run it resumes, keeping the sittings before it (``earlier``: the run's
    ``provenance.json`` so far) under ``EARLIER``, oldest first: a run resumed on another CPU capability or at
    another commit says so, instead of naming only its last sitting."""
    before = [*earlier.get(EARLIER, []), {key: value for key, value in earlier.items() if key != EARLIER}]
    return {**collect_provenance(device), EARLIER: before}


def kernels(provenance: dict[str, Any]) -> str | None:
    """The fp32 kernels a sitting ran: ``portable`` (``run.numerics``: meant to give the same bits on any x86-64
    CPU), else the CPU capability torch ran (``AVX512``, ``AVX2``, ...); None when it recorded neither."""
    if (provenance.get("numerics") or {}).get("mode") == "portable":
        return "portable"
    return provenance.get("cpu_capability") or None


def command_as_typed(argv: list[str]) -> list[str]:
    """The command line without the machine's paths: the program by its name (``td3x-train``), or relative to the
    working dir when started as a file below it (``td3x/commands/train.py``); the arguments as given."""
    program = Path(argv[0]) if argv else Path("python")
    if program.is_absolute():
        try:
            program = program.relative_to(Path.cwd())
        except ValueError:
            program = Path(program.name)
    return [str(program), *argv[1:]]


def operating_system() -> str:
    """E.g. ``Linux x86_64 glibc 2.36``: the system, architecture and C library, not the kernel's build."""
    libc, version = platform.libc_ver()
    return " ".join(part for part in (platform.system(), platform.machine(), libc, version) if part)


def cpu_flags() -> list[str] | None:
    """Which of :data:`ISA_FLAGS` the CPU has (Linux); None where /proc/cpuinfo cannot be read."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    flag_lines = (line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags"))
    present = set(next(flag_lines, []))
    return [flag for flag in ISA_FLAGS if flag in present]


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


def cpu_model() -> str:
    """The CPU's model name (Linux), else what the platform module knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
