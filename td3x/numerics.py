"""``run.numerics``: which fp32 kernels torch may use in this process, set before its first computation.

``native`` leaves the process's environment as it is: torch and MKL pick the fastest kernels for this CPU, so the
same seed gives the same bits on the same kind of CPU. ``portable`` sets :data:`PORTABLE_ENVIRONMENT`: MKL's
``COMPATIBLE`` branch (the one Intel documents as giving the same results on every x86-64 CPU, any vendor, for a
fixed thread count), ATen's ``default`` (non-vectorised) kernels and oneDNN's lowest instruction set, and drops
``MKL_ENABLE_INSTRUCTIONS``, so nothing set from outside changes which kernels run.

Torch, MKL and oneDNN read these variables at the process's first tensor operation, not at ``import torch``
(measured with torch 2.13: set after the import and before any operation, they act; set after one, they are
ignored without a word). td3x therefore applies the mode where the config is known and before the run computes
anything (:func:`apply`), and checks that it took effect: ATen's dispatch level is fixed at the first operation, so
``get_cpu_capability()`` tells whether an earlier operation came first. A process can hold one mode only; a second
run asking for the other one is refused (:class:`NumericsError`), since its numbers would silently be the first's.
"""

from __future__ import annotations

import os
from typing import Any

from td3x.config import Numerics

# portable: every variable that changes which fp32 kernels run; None removes it from the environment
PORTABLE_ENVIRONMENT: dict[str, str | None] = {
    "MKL_CBWR": "COMPATIBLE",  # MKL's conditional numerical reproducibility: the branch common to all x86-64 CPUs
    "ATEN_CPU_CAPABILITY": "default",  # ATen's kernels without AVX2/AVX-512 vectorisation
    "ONEDNN_MAX_CPU_ISA": "SSE41",  # oneDNN's lowest x86 level, should a torch route fp32 work through it
    "MKL_ENABLE_INSTRUCTIONS": None,  # COMPATIBLE decides MKL's kernels, not a limit set from outside
}
RECORDED_VARIABLES = tuple(PORTABLE_ENVIRONMENT)  # what provenance.json records under both modes
PORTABLE_CAPABILITY = "DEFAULT"  # torch.backends.cpu.get_cpu_capability() once ATEN_CPU_CAPABILITY=default acts

_applied: Numerics | None = None  # the mode this process computes under, once a run has asked for one


class NumericsError(RuntimeError):
    """A run asks for numerics this process can no longer give (torch computed under other settings first)."""


def apply(mode: Numerics) -> None:
    """Make this process compute under ``mode``; call before the run's first torch operation.

    Raises:
        NumericsError: the process already computed under the other mode, or (portable) torch ran an operation
            before td3x could set the environment.
    """
    global _applied
    if _applied is not None and _applied is not mode:
        raise NumericsError(
            f"run.numerics={mode.name} is not allowed here: this process already trained or evaluated with "
            f"run.numerics={_applied.name}, and torch keeps the kernels of its first computation; run it in a new "
            "process (a sweep that mixes modes needs a launcher that starts one per job)"
        )
    if mode is Numerics.portable:
        for name, value in PORTABLE_ENVIRONMENT.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _check_portable_took_effect()
    _applied = mode


def _check_portable_took_effect() -> None:
    import torch  # here, after the environment is set: `import td3x.numerics` loads no torch

    capability = torch.backends.cpu.get_cpu_capability()
    if capability != PORTABLE_CAPABILITY:
        raise NumericsError(
            f"run.numerics=portable is not allowed here: torch computed in this process before td3x could set its "
            f"kernels (it runs {capability} ones); start the run in a new process"
        )


def effective_settings() -> dict[str, Any]:
    """What provenance.json records: the mode this process computes under (``native`` when no run asked) and the
    values of :data:`RECORDED_VARIABLES` (None: unset)."""
    mode = _applied or Numerics.native
    return {"mode": mode.name, **{name: os.environ.get(name) for name in RECORDED_VARIABLES}}
