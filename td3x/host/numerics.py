"""``run.numerics``: which fp32 kernels torch may use in this process, set before its first computation.

``native`` leaves the process's environment as it is: torch and MKL pick the fastest kernels for this CPU, so the
same seed gives the same bits on the same CPU model (not on every CPU of its instruction set). ``portable`` sets
:data:`PORTABLE_ENVIRONMENT`: MKL's ``COMPATIBLE`` branch (the one Intel documents as giving the same results on
every x86-64 CPU, any vendor, for a fixed thread count), ATen's ``default`` (non-vectorised) kernels and oneDNN's
lowest instruction set, and drops ``MKL_ENABLE_INSTRUCTIONS``, so nothing set from outside changes which kernels
run. Both modes flush denormals to zero (:func:`flush_denormals`).

Torch, MKL and oneDNN read these variables at the process's first tensor operation, not at ``import torch``
(measured with torch 2.13: set after the import and before any operation, they act; set after one, they are
ignored without a word). td3x therefore applies the mode where the config is known and before the run computes
anything (:func:`apply`), and checks that it took effect: ATen's dispatch level is fixed at the first operation, so
``get_cpu_capability()`` tells whether an earlier operation came first. A process can hold one mode only; a second
run asking for the other one is refused (:class:`NumericsError`), since its numbers would silently be the first's.

NumPy (the envs' physics and rewards) and the OpenBLAS bundled with it choose their kernels earlier, when NumPy is
imported: NumPy's float64 ``tanh`` gives other bits on its AVX2 kernels than on its baseline ones, and a short
Pendulum run changed with OpenBLAS's core type (measured on one AVX2 CPU). Portable mode therefore also needs
:func:`startup_environment` set before Python starts. The console scripts restart themselves with it
(:func:`restart_pinned`, an ``exec`` of the same command, before anything is written); any other process, a
launcher's worker or a user's own script, is refused with the variables to set (:class:`StartupPinsMissing`).

:data:`PROCESS` is td3x's one module-level mutable state, by design: the mode is a property of the process (torch
keeps the kernels of its first computation), so it cannot live in a run's objects.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from typing import Any, NoReturn

from td3x.config.enums import Numerics

# portable: every variable that changes which fp32 kernels run; None removes it from the environment
PORTABLE_ENVIRONMENT: dict[str, str | None] = {
    "MKL_CBWR": "COMPATIBLE",  # MKL's conditional numerical reproducibility: the branch common to all x86-64 CPUs
    "ATEN_CPU_CAPABILITY": "default",  # ATen's kernels without AVX2/AVX-512 vectorisation
    "ONEDNN_MAX_CPU_ISA": "SSE41",  # oneDNN's lowest x86 level, should a torch route fp32 work through it
    "MKL_ENABLE_INSTRUCTIONS": None,  # COMPATIBLE decides MKL's kernels, not a limit set from outside
}
# portable, read when NumPy is imported, so set before Python starts: OpenBLAS's lowest x86-64 kernels on one thread
# (NumPy's own SIMD targets are added by startup_environment(): they depend on the NumPy build)
OPENBLAS_ENVIRONMENT = {"OPENBLAS_CORETYPE": "Prescott", "OPENBLAS_NUM_THREADS": "1"}
NUMPY_FEATURES_VARIABLE = "NPY_DISABLE_CPU_FEATURES"
RESTARTED_VARIABLE = "TD3X_NUMERICS_RESTARTED"  # set in the restarted process: a second restart is never tried
# what provenance.json records under both modes
RECORDED_VARIABLES = (*PORTABLE_ENVIRONMENT, NUMPY_FEATURES_VARIABLE, *OPENBLAS_ENVIRONMENT)
PORTABLE_CAPABILITY = "DEFAULT"  # torch.backends.cpu.get_cpu_capability() once ATEN_CPU_CAPABILITY=default acts
PORTABLE_ARGUMENT = re.compile(r"\+{0,2}run\.numerics=portable")  # on a console script's command line

log = logging.getLogger(__name__)


class ProcessNumerics:
    """What this process computes under, and whether it may restart pinned."""

    def __init__(self) -> None:
        self.applied: Numerics | None = None  # the mode this process computes under, once a run has asked for one
        self.restartable = False  # set by the console scripts (allow_restart): may be replaced by a pinned process


PROCESS = ProcessNumerics()


class NumericsError(RuntimeError):
    """A run asks for numerics this process can no longer give (torch computed under other settings first)."""


class StartupPinsMissing(NumericsError):
    """Portable mode in a process that imported NumPy without :func:`startup_environment`: a new process is needed."""


def _numpy_cpu_tables() -> tuple[list[str], dict[str, bool]]:
    """NumPy's dispatchable SIMD targets (above its baseline) and which of them this process uses."""
    try:
        from numpy._core import _multiarray_umath as umath  # type: ignore[attr-defined]
    except ImportError:  # NumPy 1.x
        from numpy.core import _multiarray_umath as umath  # type: ignore[no-redef]
    return list(umath.__cpu_dispatch__), dict(umath.__cpu_features__)


def startup_environment() -> dict[str, str]:
    """The variables portable mode needs set before Python starts: every SIMD target NumPy dispatches to above its
    baseline switched off, and OpenBLAS on fixed kernels and one thread."""
    targets, _ = _numpy_cpu_tables()
    return {NUMPY_FEATURES_VARIABLE: " ".join(targets), **OPENBLAS_ENVIRONMENT}


def startup_pinned() -> bool:
    """Whether this process's NumPy runs its baseline kernels only and OpenBLAS was told its fixed kernels."""
    targets, in_use = _numpy_cpu_tables()
    openblas = all(os.environ.get(name) == value for name, value in OPENBLAS_ENVIRONMENT.items())
    return openblas and not any(in_use.get(target) for target in targets)


def allow_restart() -> None:
    """Called by a console script's ``main``: its process may be replaced by the same command, pinned."""
    PROCESS.restartable = True


def can_restart() -> bool:
    """Whether :func:`restart_pinned` may replace this process: a console script's, not restarted already."""
    return PROCESS.restartable and not os.environ.get(RESTARTED_VARIABLE)


def restart_pinned() -> NoReturn:
    """Replace this process by the same command line with :func:`startup_environment` set (``exec``: the same pid,
    nothing of this process survives). Call before anything is written, where :func:`can_restart` allows."""
    log.info("run.numerics=portable: restarting with NumPy's and OpenBLAS's kernels pinned (td3x.host.numerics)")
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    environment = {**os.environ, **startup_environment(), RESTARTED_VARIABLE: "1"}
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], environment)


def restart_if_pins_missing(error: NumericsError) -> None:
    """A console script's answer to ``error`` from :func:`apply`: restart pinned when the pins are what is missing
    and :func:`can_restart` allows; otherwise return, and the caller reports the error."""
    if isinstance(error, StartupPinsMissing) and can_restart():
        restart_pinned()


def restart_if_portable_asks(arguments: list[str]) -> None:
    """A console script's first step: with ``run.numerics=portable`` among its command-line ``arguments`` and NumPy
    not pinned, restart pinned now, before anything is created (and before a launcher starts workers, which inherit
    the environment)."""
    allow_restart()
    asked = any(PORTABLE_ARGUMENT.fullmatch(argument) for argument in arguments)
    if asked and can_restart() and not startup_pinned():
        restart_pinned()


def apply(mode: Numerics) -> None:
    """Make this process compute under ``mode``; call before the run's first torch operation.

    Raises:
        StartupPinsMissing: (portable) NumPy was imported without :func:`startup_environment`; a console script
            answers it with :func:`restart_pinned`.
        NumericsError: the process already computed under the other mode, or (portable) torch ran an operation
            before td3x could set the environment.
    """
    applied = PROCESS.applied
    if applied is not None and applied is not mode:
        raise NumericsError(
            f"run.numerics={mode.name} is not allowed here: this process already trained or evaluated with "
            f"run.numerics={applied.name}, and torch keeps the kernels of its first computation; run it in a new "
            "process (a sweep that mixes modes needs a launcher that starts one per job)"
        )
    if mode is Numerics.portable:
        for name, value in PORTABLE_ENVIRONMENT.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _check_startup_pins()
        _check_portable_took_effect()
    flush_denormals()
    PROCESS.applied = mode


def flush_denormals() -> None:
    """Both modes: floats below 2^-126 in magnitude (denormals) read and compute as zero on the CPU (x86's FTZ and
    DAZ, AArch64's FZ), in this thread and the threads it starts from now on. Adam's first moments of weights whose
    gradient is zero for long (into dead ReLU units) decay into that range and stay there; x86 CPUs compute on
    denormals in microcode, and a 15-seed Walker2d-v5 update took 1.93x as long on its step-20000 state
    (``scripts/bench_denormals.py``, docs' Performance). A denormal changes no weight (its Adam step is below the
    weight's last bit but for weights as small themselves). Flushing is as deterministic as the rest of the mode: the
    same bits on the same CPU model (native), on every x86-64 CPU (portable)."""
    import torch  # here, as below: `import td3x.host.numerics` loads no torch

    torch.set_flush_denormal(True)


def denormals_flushed() -> bool:
    """Whether this thread computes denormals as zero (after :func:`flush_denormals`), read off a product."""
    import torch

    smallest_normal = torch.finfo(torch.float32).tiny
    return bool((torch.tensor(smallest_normal) / 4 * 1.0).item() == 0.0)


def _check_startup_pins() -> None:
    if startup_pinned():
        return
    if os.environ.get(RESTARTED_VARIABLE):
        raise StartupPinsMissing(
            f"run.numerics=portable is not allowed here: NumPy ignored {NUMPY_FEATURES_VARIABLE} in a process "
            "started with it; this NumPy build cannot be pinned"
        )
    settings = " ".join(f"{name}='{value}'" for name, value in startup_environment().items())
    raise StartupPinsMissing(
        "run.numerics=portable is not allowed here: NumPy chose its kernels when it was imported, before td3x could "
        f"pin them; start this process with {settings} in its environment (td3x-train, td3x-resume and td3x-eval "
        "restart themselves so)"
    )


def _check_portable_took_effect() -> None:
    import torch  # here, after the environment is set: `import td3x.host.numerics` loads no torch

    capability = torch.backends.cpu.get_cpu_capability()
    if capability != PORTABLE_CAPABILITY:
        raise NumericsError(
            f"run.numerics=portable is not allowed here: torch computed in this process before td3x could set its "
            f"kernels (it runs {capability} ones); start the run in a new process"
        )


def effective_settings() -> dict[str, Any]:
    """What provenance.json records: the mode this process computes under (``native`` when no run asked) and the
    values of :data:`RECORDED_VARIABLES` (None: unset)."""
    mode = PROCESS.applied or Numerics.native
    return {"mode": mode.name, **{name: os.environ.get(name) for name in RECORDED_VARIABLES}}
