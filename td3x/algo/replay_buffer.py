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
        widths = {"obs": obs_dim, "action": action_dim, "reward": None, "next_obs": obs_dim, "terminated": None}
        # one row per transition, the fields side by side: a mini-batch is a single gather and a single copy;
        # a scalar field (width None) is one column, indexed by an int so that its views drop that dim
        self.columns: dict[str, int | slice] = {}
        start = 0
        for name, width in widths.items():
            self.columns[name] = start if width is None else slice(start, start + width)
            start += width or 1
        self.data = np.zeros((seeds, capacity, start), dtype=np.float32)
        self.obs, self.action, self.reward, self.next_obs, self.terminated = (
            self.data[..., columns] for columns in self.columns.values()
        )
        self.seed_offsets = capacity * np.arange(seeds)[:, None]  # row k * capacity starts seed k's transitions
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
        indices = np.stack([rng.integers(0, self.size, size=batch_size) for rng in self.rngs]) + self.seed_offsets
        rows = np.take(self.data.reshape(-1, self.data.shape[-1]), indices, axis=0)  # (K, N, width)
        batch = torch.from_numpy(rows).to(self.device)
        return Batch(**{name: batch[..., columns] for name, columns in self.columns.items()})

    def state_dict(self, seed_index: int | None = None) -> dict[str, Any]:
        """Everything needed to continue exactly: the filled part of the arrays, the pointer and the rngs
        (of every seed, or of seed ``seed_index`` alone, shaped as a one-seed buffer's)."""
        rows = slice(None) if seed_index is None else slice(seed_index, seed_index + 1)
        rngs = self.rngs[rows]
        # as tensors: torch.save writes a tensor's bytes as they are, where a numpy array is pickled through
        # several temporary copies (~6x the buffer at once: Ant's 1M transitions a seed would need tens of GB)
        arrays = {name: torch.from_numpy(getattr(self, name)[rows, : self.size].copy()) for name in self.columns}
        return {**arrays, "pointer": self.pointer, "size": self.size, "rngs": [r.bit_generator.state for r in rngs]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        size = int(state["size"])
        if size > self.capacity:
            raise ValueError(f"the saved buffer holds {size} transitions, more than agent.buffer_size={self.capacity}")
        if len(state["rngs"]) != len(self.rngs):
            raise ValueError(f"the saved buffer holds {len(state['rngs'])} seeds, this run {len(self.rngs)}")
        for name in self.columns:
            getattr(self, name)[:, :size] = np.asarray(state[name])  # tensors; numpy arrays in older checkpoints
        self.pointer, self.size = int(state["pointer"]), size
        for rng, rng_state in zip(self.rngs, state["rngs"], strict=True):
            rng.bit_generator.state = rng_state
