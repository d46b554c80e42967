"""The actors π_φ and the critics Q_θi, each family one ensemble.

Every layer holds all members' weight matrices stacked, and one batched matmul evaluates them all:
the critics return Q of shape (n_critics, N), so the min over critics and the summed critic loss work
for any n >= 1, and TD3's twin critics cost one call, not two. Actors return (n_actors, N, action_dim):
one actor for TD3, a pair for DQ-AC.
"""

from __future__ import annotations

import itertools
import math
from typing import cast

import torch
from torch import Tensor, nn


class EnsembleLinear(nn.Module):
    """``n_members`` independent linear layers applied as one batched matmul: (E, N, in) -> (E, N, out)."""

    def __init__(self, n_members: int, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_members, in_features, out_features))
        self.bias = nn.Parameter(torch.empty(n_members, 1, out_features))
        # nn.Linear's default init, member by member: U(-1/sqrt(in), 1/sqrt(in)) for weights and biases
        self.reset_uniform(1.0 / math.sqrt(in_features))

    def reset_uniform(self, bound: float) -> None:
        nn.init.uniform_(self.weight, -bound, bound)
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Tensor, n_members: int | None = None) -> Tensor:
        """Apply the first ``n_members`` members (all by default); x is (E, N, in) or (N, in) shared by all."""
        weight, bias = self.weight[:n_members], self.bias[:n_members]
        return torch.baddbmm(bias, broadcast_members(x, weight.shape[0]), weight)


def broadcast_members(x: Tensor, n_members: int) -> Tensor:
    """(N, F) shared by every member -> (E, N, F); an (E, N, F) input passes through."""
    return x if x.dim() == 3 else x.expand(n_members, *x.shape)


def layer_sizes(in_features: int, hidden_sizes: list[int], out_features: int) -> list[tuple[int, int]]:
    return list(itertools.pairwise([in_features, *hidden_sizes, out_features]))


class Actor(nn.Module):
    """π_φ(s) = tanh(MLP(s)), an action in the normalised range [-1, 1], for each of ``n_actors`` actors."""

    def __init__(
        self,
        obs_dim: int,
        action_dim: int,
        hidden_sizes: list[int],
        n_actors: int = 1,
        final_layer_init: float | None = None,
    ) -> None:
        super().__init__()
        layers = [EnsembleLinear(n_actors, i, o) for i, o in layer_sizes(obs_dim, hidden_sizes, action_dim)]
        if final_layer_init is not None:
            layers[-1].reset_uniform(final_layer_init)
        self.layers = nn.ModuleList(layers)

    def forward(self, obs: Tensor) -> Tensor:
        """Actions of shape (n_actors, N, action_dim) for observations (N, obs_dim)."""
        x = obs
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return torch.tanh(self.layers[-1](x))


class CriticEnsemble(nn.Module):
    """Q_θ1 … Q_θn, each an MLP of the state with the action joining at layer ``action_layer``.

    ``action_layer=0``: (s ‖ a) at the first layer (TD3, paper §6.1); ``1``: the action joins the first
    hidden layer's output (DDPG, Lillicrap et al. 2016).
    """

    def __init__(
        self,
        obs_dim: int,
        action_dim: int,
        hidden_sizes: list[int],
        n_critics: int,
        action_layer: int = 0,
        final_layer_init: float | None = None,
    ) -> None:
        super().__init__()
        sizes = layer_sizes(obs_dim, hidden_sizes, 1)
        layers = [
            EnsembleLinear(n_critics, fan_in + (action_dim if i == action_layer else 0), fan_out)
            for i, (fan_in, fan_out) in enumerate(sizes)
        ]
        if final_layer_init is not None:
            layers[-1].reset_uniform(final_layer_init)
        self.layers = nn.ModuleList(layers)
        self.action_layer = action_layer

    def forward(self, obs: Tensor, action: Tensor, n_members: int | None = None) -> Tensor:
        """Q values of shape (n_members, N); ``n_members=1`` evaluates Q_θ1 alone (the actor's critic).

        ``action`` is (N, A), shared by every critic, or (E, N, A), one action per critic.
        """
        x = obs
        for i, layer in enumerate(self.layers):
            if i == self.action_layer:
                x = join(x, action)
            x = layer(x, n_members)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x.squeeze(-1)

    def q1(self, obs: Tensor, action: Tensor) -> Tensor:
        """Q_θ1(s, a), shape (N,)."""
        return self(obs, action, n_members=1)[0]

    def hidden_weights(self) -> list[nn.Parameter]:
        """The weight matrices of every layer but the output one (DDPG's L2 regularisation acts on these)."""
        return [cast(EnsembleLinear, layer).weight for layer in self.layers[:-1]]


def join(x: Tensor, action: Tensor) -> Tensor:
    """Concatenate features and actions on the last dim, giving both the same leading member dim if needed."""
    if x.dim() != action.dim():
        members = x.shape[0] if x.dim() == 3 else action.shape[0]
        x, action = broadcast_members(x, members), broadcast_members(action, members)
    return torch.cat([x, action], dim=-1)
