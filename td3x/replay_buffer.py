"""A preallocated ring buffer of transitions, sampled uniformly with an explicit generator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor


@dataclass(frozen=True)
class Batch:
    """A mini-batch of N transitions with Gymnasium's names (``terminated``, never a bare ``done``)."""

    obs: Tensor  # (N, obs_dim)
    action: Tensor  # (N, action_dim), normalised to [-1, 1]
    reward: Tensor  # (N,)
    next_obs: Tensor  # (N, obs_dim)
    terminated: Tensor  # (N,) 1.0 where s' is a true terminal state; time-limit truncation stays 0.0


class ReplayBuffer:
    """Holds the last ``capacity`` transitions; ``sample`` draws uniformly with replacement (as sfujim/TD3).

    Args:
        capacity: number of transitions kept; the oldest is overwritten first.
        rng: the generator every sample draws its indices from (seeded by the run, saved in checkpoints).
        device: where sampled batches are placed.
    """

    def __init__(
        self, obs_dim: int, action_dim: int, capacity: int, rng: np.random.Generator, device: torch.device | str = "cpu"
    ) -> None:
        self.capacity = capacity
        self.rng = rng
        self.device = torch.device(device)
        self.obs = np.zeros((capacity, obs_dim), dtype=np.float32)
        self.action = np.zeros((capacity, action_dim), dtype=np.float32)
        self.reward = np.zeros(capacity, dtype=np.float32)
        self.next_obs = np.zeros((capacity, obs_dim), dtype=np.float32)
        self.terminated = np.zeros(capacity, dtype=np.float32)
        self.pointer = 0  # where the next transition goes
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def add(self, obs: np.ndarray, action: np.ndarray, reward: float, next_obs: np.ndarray, terminated: bool) -> None:
        i = self.pointer
        self.obs[i] = obs
        self.action[i] = action
        self.reward[i] = reward
        self.next_obs[i] = next_obs
        self.terminated[i] = terminated
        self.pointer = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch_size: int) -> Batch:
        indices = self.rng.integers(0, self.size, size=batch_size)
        return Batch(*(torch.as_tensor(array[indices], device=self.device) for array in self._arrays()))

    def _arrays(self) -> tuple[np.ndarray, ...]:
        return self.obs, self.action, self.reward, self.next_obs, self.terminated

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue exactly: the filled part of the arrays, the pointer and the rng."""
        names = ("obs", "action", "reward", "next_obs", "terminated")
        arrays = {name: array[: self.size].copy() for name, array in zip(names, self._arrays(), strict=True)}
        return {**arrays, "pointer": self.pointer, "size": self.size, "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        size = int(state["size"])
        if size > self.capacity:
            raise ValueError(f"the saved buffer holds {size} transitions, more than agent.buffer_size={self.capacity}")
        for name in ("obs", "action", "reward", "next_obs", "terminated"):
            getattr(self, name)[:size] = state[name]
        self.pointer, self.size = int(state["pointer"]), size
        self.rng.bit_generator.state = state["rng"]
