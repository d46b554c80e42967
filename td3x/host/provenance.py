"""Where a run came from: code version, library versions, CPU and command (``provenance.json``).

Fit to publish: no absolute path, user or host name (the command as typed, the operating system without its
kernel build). What decides fp32 numerics is recorded: the CPU's instruction-set extensions and the kernels torch
dispatches to (``cpu_capability``), the CPU model, the library versions, and ``run.numerics`` with the variables it
sets (``numerics``). In native mode the CPU model and the library builds fix the bits (two CPUs of one capability can
differ); across CPUs only ``portable`` runs are meant to agree.

The code is its commit, ``git_dirty`` (a tracked file differs from it) and the checkout's untracked files
(``git_untracked``, the first :data:`UNTRACKED_NAMED` by path, and ``git_untracked_count``) other than those in the
folders td3x wrote: a report written into the checkout is an output, not a change to the code. Files written before
this split counted untracked files as dirty; they are read as they are.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from td3x.host import numerics

PACKAGES = ("td3x", "torch", "gymnasium", "mujoco", "numpy", "hydra-core", "omegaconf", "wandb")


# instruction-set extensions that change which fp32 kernels run (avx2, avx512f), and those that multiply bf16 in
# hardware (run.precision=bf16 needs avx512_bf16 or amx_bf16)
ISA_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16")


UNTRACKED_NAMED = 20  # untracked files named in provenance.json; git_untracked_count counts them all

OutputDirTest = Callable[[Path], bool]  # whether td3x wrote a folder (td3x.rundir.outputs.is_output_dir)


def collect_provenance(device: str, is_output_dir: OutputDirTest) -> dict[str, Any]:
    """This sitting's provenance; ``device``: where it trains (``cpu``, ``cuda``: run.device resolved here, which
    ``auto`` alone does not say); ``is_output_dir``: what td3x wrote, left out of the untracked files."""
    import torch  # here, where a run starts: reading provenance (td3x-report, td3x-sweep status) loads without torch

    return {
        # when the sitting began (UTC): a run judged against a registration can be placed after the file's commit
        "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        **git_state(Path(__file__).resolve().parents[1], is_output_dir),
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


def resumed_provenance(earlier: dict[str, Any], device: str, is_output_dir: OutputDirTest) -> dict[str, Any]:
    """This process's provenance for a run it resumes, keeping the sittings before it (``earlier``: the run's
    ``provenance.json`` so far) under ``EARLIER``, oldest first: a run resumed on another CPU capability or at
    another commit says so, instead of naming only its last sitting."""
    before = [*earlier.get(EARLIER, []), {key: value for key, value in earlier.items() if key != EARLIER}]
    return {**collect_provenance(device, is_output_dir), EARLIER: before}


def kernels(provenance: dict[str, Any]) -> str | None:
    """The fp32 kernels a sitting ran: ``portable`` (``run.numerics``: meant to give the same bits on any x86-64
    CPU), else the CPU capability torch ran (``AVX512``, ``AVX2``, ...); None when it recorded neither."""
    if (provenance.get("numerics") or {}).get("mode") == "portable":
        return "portable"
    return provenance.get("cpu_capability") or None


def computed_on(provenance: dict[str, Any]) -> str | None:
    """What computed a sitting's numbers: ``cuda (<the GPU>)`` for one that trained on a GPU, else its CPU's fp32
    kernels, ``cpu (fp32 kernels AVX512)`` (:func:`kernels`; a sitting of a td3x that did not record the device is
    read as the CPU's, as that td3x compared kernels alone); None when it recorded neither. A run resumed on other
    ones goes on to other numbers than an uninterrupted run's."""
    if provenance.get("device") == "cuda":
        return f"cuda ({provenance.get('cuda') or 'GPU not recorded'})"
    cpu_kernels = kernels(provenance)
    return None if cpu_kernels is None else f"cpu (fp32 kernels {cpu_kernels})"


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


GIT_KEYS = ("git_commit", "git_dirty", "git_untracked", "git_untracked_count")


def git_state(directory: Path, is_output_dir: OutputDirTest) -> dict[str, Any]:
    """The code of the checkout holding ``directory``: its commit, whether a tracked file differs from it (staged or
    not), and its untracked files that lie in no folder td3x wrote (``is_output_dir``), the first
    :data:`UNTRACKED_NAMED` by path and their count. Each None where there is no checkout (an installed wheel) or no
    git."""
    try:
        commit = _git(directory, "rev-parse", "HEAD").strip()
        top = Path(_git(directory, "rev-parse", "--show-toplevel").strip())
        # every untracked file by name (not its folder alone): a folder may hold td3x's outputs and the user's files
        entries = _status_entries(_git(directory, "status", "--porcelain", "-z", "--untracked-files=all"))
    except (OSError, subprocess.SubprocessError):
        return dict.fromkeys(GIT_KEYS)
    untracked = [path for status, path in entries if status == "??"]
    written_by_td3x = cache(lambda folder: is_output_dir(top / folder))  # each folder looked at once
    # porcelain paths are relative to the checkout's root; parents[:-1] leaves out the root itself
    theirs = sorted(path for path in untracked if not any(map(written_by_td3x, Path(path).parents[:-1])))
    return {
        "git_commit": commit,
        "git_dirty": len(untracked) < len(entries),
        "git_untracked": theirs[:UNTRACKED_NAMED],
        "git_untracked_count": len(theirs),
    }


def _git(directory: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=directory, capture_output=True, text=True, errors="replace", check=True, timeout=10
    ).stdout


def _status_entries(porcelain: str) -> list[tuple[str, str]]:
    """``git status --porcelain -z`` as (status, path) pairs: ``??`` for an untracked file, ``XY`` for a tracked
    one."""
    fields = iter(porcelain.split("\0"))
    entries = []
    for field in fields:
        if field:
            status = field[:2]
            entries.append((status, field[3:]))
            if "R" in status or "C" in status:
                next(fields, None)  # a rename's or copy's source follows as a field of its own
    return entries


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
