"""Exploration noise added to the actor's action while training (paper §6.1: N(0, 0.1)).

Target policy smoothing is not here: it is part of the TD3 update (``td3.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from td3x.config.enums import NoiseKind
from td3x.config.schema import NoiseConfig


class ExplorationNoise(Protocol):
    def sample(self, step: int) -> np.ndarray:
        """The noise to add at env step ``step`` (normalised action units)."""
        ...

    def reset(self) -> None:
        """Called at the start of every training episode."""
        ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class GaussianNoise:
    """Uncorrelated N(0, σ_t) per action dimension; σ_t falls linearly from ``std`` to ``final_std`` over
    the first ``decay_steps`` env steps when ``final_std`` is set, and stays at ``std`` otherwise."""

    def __init__(
        self,
        action_dim: int,
        std: float,
        rng: np.random.Generator,
        final_std: float | None = None,
        decay_steps: int = 0,
    ) -> None:
        self.action_dim, self.rng = action_dim, rng
        self.std, self.final_std, self.decay_steps = std, final_std, decay_steps

    def current_std(self, step: int) -> float:
        if self.final_std is None:
            return self.std
        fraction = min(step / self.decay_steps, 1.0)
        return self.std + fraction * (self.final_std - self.std)

    def sample(self, step: int) -> np.ndarray:
        return self.current_std(step) * self.rng.standard_normal(self.action_dim)

    def reset(self) -> None:
        pass  # uncorrelated in time: nothing carries over between episodes

    def state_dict(self) -> dict[str, Any]:
        return {"rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]


class OrnsteinUhlenbeckNoise:
    """x ← x + θ(μ - x)dt + σ√dt·N(0, 1) with μ = 0, reset to 0 at every episode start (DDPG's exploration)."""

    def __init__(self, action_dim: int, std: float, theta: float, dt: float, rng: np.random.Generator) -> None:
        self.std, self.theta, self.dt, self.rng = std, theta, dt, rng
        self.state = np.zeros(action_dim)

    def sample(self, step: int) -> np.ndarray:
        self.state = (
            self.state
            - self.theta * self.state * self.dt
            + self.std * np.sqrt(self.dt) * self.rng.standard_normal(self.state.shape)
        )
        return self.state.copy()

    def reset(self) -> None:
        self.state = np.zeros_like(self.state)

    def state_dict(self) -> dict[str, Any]:
        return {"rng": self.rng.bit_generator.state, "state": self.state.copy()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]
        self.state = np.array(state["state"], dtype=np.float64)


class NoNoise:
    def __init__(self, action_dim: int) -> None:
        self.zeros = np.zeros(action_dim)

    def sample(self, step: int) -> np.ndarray:
        return self.zeros

    def reset(self) -> None:
        pass

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass


def make_noise(config: NoiseConfig, action_dim: int, rng: np.random.Generator) -> ExplorationNoise:
    builders: dict[NoiseKind, Callable[[], ExplorationNoise]] = {
        NoiseKind.gaussian: lambda: GaussianNoise(action_dim, config.std, rng, config.final_std, config.decay_steps),
        NoiseKind.ornstein_uhlenbeck: lambda: OrnsteinUhlenbeckNoise(
            action_dim, config.std, config.theta, config.dt, rng
        ),
        NoiseKind.none: lambda: NoNoise(action_dim),
    }
    return builders[config.kind]()
