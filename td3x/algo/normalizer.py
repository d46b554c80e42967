"""Observation normalisation (``env.normalize_obs``), as the DDPG baseline of the paper's Table 3 used.

The replay buffer keeps raw observations; the networks see (s - mean) / std clipped to ±5 (OpenAI
baselines' clip), with the statistics of every observation collected so far. Only the training loop
updates them, so they are frozen during evaluation; they are module buffers, so checkpoints hold them.
Each seed of the process (``run.num_seeds``) has its own statistics: the leading dim of every buffer.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

CLIP = 5.0
EPSILON = 1e-8  # keeps a constant observation dimension from dividing by zero


class ObsNormalizer(nn.Module):
    """(s - μ) / σ, clipped to ±5, with μ and σ² the running mean and variance of the observed states."""

    mean: Tensor
    var: Tensor
    count: Tensor

    def __init__(self, n_seeds: int, obs_dim: int) -> None:
        super().__init__()
        self.register_buffer("mean", torch.zeros(n_seeds, obs_dim, dtype=torch.float64))
        self.register_buffer("var", torch.ones(n_seeds, obs_dim, dtype=torch.float64))
        self.register_buffer("count", torch.zeros(n_seeds, 1, dtype=torch.float64))

    def forward(self, obs: Tensor) -> Tensor:
        """Normalise (K, N, obs_dim) observations, seed k's with its own statistics."""
        std = torch.sqrt(self.var + EPSILON).to(obs.dtype).unsqueeze(1)
        return ((obs - self.mean.to(obs.dtype).unsqueeze(1)) / std).clamp(-CLIP, CLIP)

    def normalize_numpy(self, obs: np.ndarray) -> np.ndarray:
        """``forward`` in NumPy for (K, N, obs_dim) float32 observations on the CPU (see ``Actor.act_numpy``)."""
        std = np.sqrt(self.var.numpy() + EPSILON).astype(obs.dtype)[:, None]
        return np.clip((obs - self.mean.numpy().astype(obs.dtype)[:, None]) / std, -CLIP, CLIP)

    @torch.no_grad()
    def update(self, obs: np.ndarray) -> None:
        """Fold one observation per seed, (K, obs_dim), into the statistics (Welford's update, in float64)."""
        x = torch.as_tensor(obs, dtype=torch.float64, device=self.mean.device).reshape(self.mean.shape)
        self.count += 1
        delta = x - self.mean
        self.mean += delta / self.count
        # population variance: ((n - 1) σ²_old + δ (x - μ_new)) / n; the first observation gives σ² = 0
        self.var.copy_((self.var * (self.count - 1) + delta * (x - self.mean)) / self.count)


class IdentityNormalizer(nn.Module):
    """The networks see raw observations (the default)."""

    def forward(self, obs: Tensor) -> Tensor:
        return obs

    def normalize_numpy(self, obs: np.ndarray) -> np.ndarray:
        return obs

    def update(self, obs: np.ndarray) -> None:
        pass


def make_normalizer(enabled: bool, n_seeds: int, obs_dim: int) -> ObsNormalizer | IdentityNormalizer:
    return ObsNormalizer(n_seeds, obs_dim) if enabled else IdentityNormalizer()
