"""``run.precision``: the dtype of the networks' matrix products in the updates, and where bf16 may run.

``fp32`` computes everything in float32, as every run before this key did (the same bits). ``bf16`` runs the
actors' and critics' matrix products in bfloat16 under ``torch.autocast``, around each loss and never across an
optimiser step (autocast caches each weight's bf16 copy for the span of its context: across a step, the actor's loss
would see the critic from before it). Everything else stays float32: the master weights and their gradients, Adam,
the Polyak averaging of the targets, the TD target y, every loss reduction and the actor's tanh (whose bf16 gradient
is exactly 0 beyond |x| = 3.47: :class:`td3x.algo.networks.Actor`). Acting in the env and evaluation
run in float32.

bf16 is faster only where the hardware multiplies bf16 natively: a CUDA GPU with bf16 units, or a CPU with the
``avx512_bf16`` or ``amx_bf16`` flag. Elsewhere it is emulated and slower than fp32 (torch's own oneDNN check says
yes on plain AVX-512, where it measured 0.79x fp32's speed, and 8.9x slower on AVX2), so it is refused there.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from td3x.config.enums import Precision

if TYPE_CHECKING:
    import torch

CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # /proc/cpuinfo flags of a CPU that multiplies bf16 in hardware


def problems(precision: Precision, device: torch.device, cpu_flags: Iterable[str] | None) -> list[str]:
    """Why ``precision`` cannot run usefully on ``device`` here (one line each; none for fp32).

    Args:
        precision: ``run.precision``.
        device: the resolved ``run.device``.
        cpu_flags: the CPU's instruction-set flags (``td3x.host.provenance.cpu_flags``); None where they cannot be read.
    """
    if precision is Precision.fp32:
        return []
    prefix = f"run.precision={precision.name} is not allowed here:"
    if device.type == "cuda":
        import torch

        if torch.cuda.is_bf16_supported(including_emulation=False):
            return []
        return [f"{prefix} the CUDA device {torch.cuda.get_device_name(device)} has no native bf16; use fp32"]
    flags = set(cpu_flags or ())
    if flags.intersection(CPU_BF16_FLAGS):
        return []
    seen = "cannot be read" if cpu_flags is None else "lack"
    return [
        f"{prefix} this CPU's flags {seen} {' and '.join(CPU_BF16_FLAGS)}, so bf16 products would be emulated, "
        "slower than fp32; use run.precision=fp32, or a CPU with one of those flags, or a CUDA GPU"
    ]


def loss_autocast(precision: Precision, device: torch.device) -> Callable[[], AbstractContextManager[object]]:
    """A factory of the context each loss is computed in: bf16 autocast on ``device``, or nothing for fp32."""
    if precision is Precision.fp32:
        return contextlib.nullcontext
    import torch

    return lambda: torch.autocast(device.type, dtype=torch.bfloat16)
