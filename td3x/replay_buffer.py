"""Preallocated ring buffers of transitions, one per seed of the process, sampled uniformly with explicit generators.

The arrays of all seeds are stacked, (n_seeds, capacity, ...), so one gather builds every seed's mini-batch;
each seed draws its indices from its own generator and only ever sees its own transitions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

FIELDS = ("obs", "action", "reward", "next_obs", "terminated")


@dataclass(frozen=True)
class Batch:
    """N transitions per seed with Gymnasium's names (``terminated``, never a bare ``done``)."""

    obs: Tensor  # (K, N, obs_dim)
    action: Tensor  # (K, N, action_dim), normalised to [-1, 1]
    reward: Tensor  # (K, N)
    next_obs: Tensor  # (K, N, obs_dim)
    terminated: Tensor  # (K, N) 1.0 where s' is a true terminal state; time-limit truncation stays 0.0


class ReplayBuffer:
    """Holds each seed's last ``capacity`` transitions; ``sample`` draws uniformly with replacement (as sfujim/TD3).

    Args:
        capacity: number of transitions kept per seed; the oldest is overwritten first.
        rngs: one generator per seed, which its samples draw their indices from (seeded by the run, saved in
            checkpoints); their number is the number of seeds.
        device: where sampled batches are placed.
    """

    def __init__(
        self,
        obs_dim: int,
        action_dim: int,
        capacity: int,
        rngs: Sequence[np.random.Generator],
        device: torch.device | str = "cpu",
    ) -> None:
        self.capacity, self.rngs, self.device = capacity, list(rngs), torch.device(device)
        seeds = len(self.rngs)
        self.obs = np.zeros((seeds, capacity, obs_dim), dtype=np.float32)
        self.action = np.zeros((seeds, capacity, action_dim), dtype=np.float32)
        self.reward = np.zeros((seeds, capacity), dtype=np.float32)
        self.next_obs = np.zeros((seeds, capacity, obs_dim), dtype=np.float32)
        self.terminated = np.zeros((seeds, capacity), dtype=np.float32)
        self.seed_rows = np.arange(seeds)[:, None]  # pairs each seed's row with its own indices in a gather
        self.pointer = 0  # where the next transition goes (every seed adds one per env step)
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def add(
        self, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, next_obs: np.ndarray, terminated: np.ndarray
    ) -> None:
        """One transition per seed: obs (K, obs_dim), action (K, action_dim), reward and terminated (K,)."""
        i = self.pointer
        self.obs[:, i] = obs
        self.action[:, i] = action
        self.reward[:, i] = reward
        self.next_obs[:, i] = next_obs
        self.terminated[:, i] = terminated
        self.pointer = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch_size: int) -> Batch:
        indices = np.stack([rng.integers(0, self.size, size=batch_size) for rng in self.rngs])
        return Batch(*(torch.as_tensor(array[self.seed_rows, indices], device=self.device) for array in self._arrays()))

    def _arrays(self) -> tuple[np.ndarray, ...]:
        return self.obs, self.action, self.reward, self.next_obs, self.terminated

    def state_dict(self, seed_index: int | None = None) -> dict[str, Any]:
        """Everything needed to continue exactly: the filled part of the arrays, the pointer and the rngs
        (of every seed, or of seed ``seed_index`` alone, shaped as a one-seed buffer's)."""
        rows = slice(None) if seed_index is None else slice(seed_index, seed_index + 1)
        rngs = self.rngs[rows]
        arrays = {name: array[rows, : self.size].copy() for name, array in zip(FIELDS, self._arrays(), strict=True)}
        return {**arrays, "pointer": self.pointer, "size": self.size, "rngs": [r.bit_generator.state for r in rngs]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        size = int(state["size"])
        if size > self.capacity:
            raise ValueError(f"the saved buffer holds {size} transitions, more than agent.buffer_size={self.capacity}")
        if len(state["rngs"]) != len(self.rngs):
            raise ValueError(f"the saved buffer holds {len(state['rngs'])} seeds, this run {len(self.rngs)}")
        for name in FIELDS:
            getattr(self, name)[:, :size] = state[name]
        self.pointer, self.size = int(state["pointer"]), size
        for rng, rng_state in zip(self.rngs, state["rngs"], strict=True):
            rng.bit_generator.state = rng_state
