"""The values of td3x's enum-valued keys (``agent.target_rule``, ``run.device``, ...): each member's comment says
what it means."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


class NoiseKind(enum.Enum):
    gaussian = "gaussian"
    ornstein_uhlenbeck = "ornstein_uhlenbeck"
    none = "none"


class TargetRule(enum.Enum):
    clipped_double_q = "clipped_double_q"  # TD3 (Eq. 10): min over target critics at the target actor's action
    ddqn = "ddqn"  # DDQN-AC (Eq. 8): the target critic at the *current* actor's action
    dq_ac = "dq_ac"  # DQ-AC (Eq. 9): two actors; each critic bootstraps from the other target critic


class UpdateSchedule(enum.Enum):
    per_step = "per_step"  # updates_per_step updates after every env step (sfujim/TD3 since 2019)
    episode_end = "episode_end"  # as many updates as the episode had steps, at its end (the 2018 code)


class NoiseUnits(enum.Enum):
    normalized = "normalized"  # fractions of the half action range: one meaning on every env (sfujim since 2019)
    absolute = "absolute"  # the env's own action units, as the 2018 code (on ±3 bounds, a third in normalised units)


class Numerics(enum.Enum):
    native = "native"  # torch's fastest fp32 kernels for this CPU: same seed, same bits on one CPU model and build
    portable = "portable"  # MKL's COMPATIBLE branch, ATen's default kernels: meant for the same bits on any x86-64 CPU


class Precision(enum.Enum):
    fp32 = "fp32"  # every tensor and product in float32 (the default; the bits of runs before this key existed)
    bf16 = "bf16"  # the networks' matrix products in bfloat16 under autocast; weights, Adam, targets and losses fp32


class ResumeMode(enum.Enum):
    auto = "auto"  # resume from the run dir's checkpoint when its config matches; a finished run does nothing
    never = "never"  # refuse a run dir that already holds results


class Device(enum.Enum):
    auto = "auto"  # CUDA when torch sees a device, else the CPU
    cpu = "cpu"
    cuda = "cuda"

    def available(self) -> bool:
        """Whether this machine can run this choice: cuda only where torch sees a CUDA device."""
        if self is not Device.cuda:
            return True
        import torch  # on first use, as in resolve

        return torch.cuda.is_available()

    def resolve(self) -> torch.device:
        """The torch device this choice means here."""
        import torch  # on first use: a config (and `td3x-sweep list`, `td3x-train --help`) loads without torch

        if self is Device.auto:
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return torch.device(self.value)
