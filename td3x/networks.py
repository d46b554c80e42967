"""The actor π_φ and the critics Q_θi.

The critics are one ensemble: every layer holds all ``n_critics`` weight matrices stacked, and one
batched matmul evaluates them all, returning Q of shape (n_critics, batch). The min over critics and
the summed critic loss then work for any n >= 1, and TD3's twin critics cost one call, not two.
"""

from __future__ import annotations

import itertools
import math

import torch
from torch import Tensor, nn


class EnsembleLinear(nn.Module):
    """``n_members`` independent linear layers applied as one batched matmul: (E, N, in) -> (E, N, out)."""

    def __init__(self, n_members: int, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_members, in_features, out_features))
        self.bias = nn.Parameter(torch.empty(n_members, 1, out_features))
        # nn.Linear's default init, member by member: U(-1/sqrt(in), 1/sqrt(in)) for weights and biases
        bound = 1.0 / math.sqrt(in_features)
        nn.init.uniform_(self.weight, -bound, bound)
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Tensor, n_members: int | None = None) -> Tensor:
        """Apply the first ``n_members`` members (all by default); x is (E, N, in) or (N, in) shared by all."""
        weight, bias = self.weight[:n_members], self.bias[:n_members]
        if x.dim() == 2:
            x = x.expand(weight.shape[0], *x.shape)
        return torch.baddbmm(bias, x, weight)


def mlp(in_features: int, hidden_sizes: list[int], out_features: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for size in hidden_sizes:
        layers += [nn.Linear(in_features, size), nn.ReLU()]
        in_features = size
    layers.append(nn.Linear(in_features, out_features))
    return nn.Sequential(*layers)


class Actor(nn.Module):
    """π_φ(s) = tanh(MLP(s)), an action in the normalised range [-1, 1]."""

    def __init__(self, obs_dim: int, action_dim: int, hidden_sizes: list[int]) -> None:
        super().__init__()
        self.net = mlp(obs_dim, hidden_sizes, action_dim)

    def forward(self, obs: Tensor) -> Tensor:
        return torch.tanh(self.net(obs))


class CriticEnsemble(nn.Module):
    """Q_θ1 … Q_θn, each MLP((s ‖ a)) with the state and action entering at the first layer (paper §6.1)."""

    def __init__(self, obs_dim: int, action_dim: int, hidden_sizes: list[int], n_critics: int) -> None:
        super().__init__()
        sizes = [obs_dim + action_dim, *hidden_sizes, 1]
        self.layers = nn.ModuleList(
            EnsembleLinear(n_critics, fan_in, fan_out) for fan_in, fan_out in itertools.pairwise(sizes)
        )
        self.n_critics = n_critics

    def forward(self, obs: Tensor, action: Tensor, n_members: int | None = None) -> Tensor:
        """Q values of shape (n_members, N); ``n_members=1`` evaluates Q_θ1 alone (the actor's critic)."""
        x = torch.cat([obs, action], dim=-1)
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x, n_members))
        return self.layers[-1](x, n_members).squeeze(-1)

    def q1(self, obs: Tensor, action: Tensor) -> Tensor:
        """Q_θ1(s, a), shape (N,): the critic the actor follows."""
        return self(obs, action, n_members=1)[0]
