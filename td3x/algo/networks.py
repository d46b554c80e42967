"""The actors π_φ and the critics Q_θi of every seed in the process, each family one stacked ensemble.

Every layer holds the weight matrices of all seeds and members stacked as (n_seeds, n_members, in, out),
and one batched matmul evaluates them all. The seed dim stacks independent agents (``run.num_seeds``: one
for a plain run); the member dim holds a family: the critics, whose outputs (n_seeds, n_critics, N) make the
min over critics and the summed critic loss work for any n >= 1, or DQ-AC's two actors. Members and seeds
never mix: a layer is ``n_seeds * n_members`` independent linear maps.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import cast

import numpy as np
import torch
from torch import Tensor, nn


class EnsembleLinear(nn.Module):
    """Independent linear layers, one per (seed, member): (K, M, N, in) -> (K, M, N, out) as one matmul."""

    def __init__(self, n_seeds: int, n_members: int, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_seeds, n_members, in_features, out_features))
        self.bias = nn.Parameter(torch.empty(n_seeds, n_members, 1, out_features))

    @torch.no_grad()
    def reset_uniform(self, bound: float, generators: Sequence[torch.Generator]) -> None:
        """U(-bound, bound) for weights and biases, seed k's from ``generators[k]`` (so a seed's initial
        weights do not depend on how many seeds share the process)."""
        for weight, bias, generator in zip(self.weight, self.bias, generators, strict=True):
            weight.uniform_(-bound, bound, generator=generator)
            bias.uniform_(-bound, bound, generator=generator)

    def forward(self, x: Tensor, n_members: int | None = None) -> Tensor:
        """Apply the first ``n_members`` members of every seed (all by default).

        x is (K, M, N, in), one input per member, or (K, N, in), shared by a seed's members.
        """
        weight: Tensor = self.weight
        bias: Tensor = self.bias
        if n_members is not None and n_members < weight.shape[1]:
            weight, bias = weight[:, :n_members], bias[:, :n_members]
        seeds, members = weight.shape[:2]
        if x.dim() == 3:
            x = x.unsqueeze(1).expand(seeds, members, *x.shape[1:])
        if weight.shape[-1] == 1:
            # a critic's output layer: a dot product per row, which an element-wise product and a sum compute
            # in half the time of a one-column matmul on CPU, forward and backward
            return (x * weight.transpose(-1, -2)).sum(dim=-1, keepdim=True) + bias
        out = torch.baddbmm(bias.flatten(0, 1), x.flatten(0, 1), weight.flatten(0, 1))
        return out.view(seeds, members, *out.shape[1:])


def layer_sizes(in_features: int, hidden_sizes: list[int], out_features: int) -> list[tuple[int, int]]:
    return list(itertools.pairwise([in_features, *hidden_sizes, out_features]))


def init_layers(
    layers: Sequence[EnsembleLinear], generators: Sequence[torch.Generator], final_layer_init: float | None
) -> None:
    """PyTorch's nn.Linear default, U(±1/sqrt(fan_in)), layer by layer; ``final_layer_init`` bounds the last."""
    for i, layer in enumerate(layers):
        last = i == len(layers) - 1
        bound = final_layer_init if last and final_layer_init is not None else 1.0 / math.sqrt(layer.weight.shape[2])
        layer.reset_uniform(bound, generators)


class Actor(nn.Module):
    """π_φ(s) = tanh(MLP(s)), an action in the normalised range [-1, 1], for each seed and each of its actors.

    Args:
        generators: one per seed, for the initial weights (their number is the number of seeds).
    """

    def __init__(
        self,
        obs_dim: int,
        action_dim: int,
        hidden_sizes: list[int],
        generators: Sequence[torch.Generator],
        n_actors: int = 1,
        final_layer_init: float | None = None,
    ) -> None:
        super().__init__()
        sizes = layer_sizes(obs_dim, hidden_sizes, action_dim)
        layers = [EnsembleLinear(len(generators), n_actors, i, o) for i, o in sizes]
        init_layers(layers, generators, final_layer_init)
        self.layers = nn.ModuleList(layers)

    def forward(self, obs: Tensor) -> Tensor:
        """Actions (K, n_actors, N, action_dim) for observations (K, N, obs_dim)."""
        x = obs
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        # tanh in fp32 even under bf16 autocast: bf16 rounds tanh(x) to ±1 for |x| > 3.47, where its gradient
        # 1 - tanh² is then exactly 0 and an actor pushed there never moves again (fp32: |x| > 9)
        return torch.tanh(self.layers[-1](x).float())

    def act_numpy(self, obs: np.ndarray) -> np.ndarray:
        """Actor 1 of every seed, (K, N, obs_dim) -> (K, N, action_dim), computed in NumPy on views of the CPU
        weights: the same function as ``forward``, for acting, where a batch of one observation makes torch's
        per-op dispatch (~10 µs an op) cost ten times the arithmetic."""
        x = obs
        for i, layer in enumerate(cast(list[EnsembleLinear], self.layers)):
            x = x @ layer.weight.detach().numpy()[:, 0] + layer.bias.detach().numpy()[:, 0]
            if i < len(self.layers) - 1:
                np.maximum(x, 0.0, out=x)
        return np.tanh(x)


class CriticEnsemble(nn.Module):
    """Q_θ1 … Q_θn of each seed, each an MLP of the state with the action joining at layer ``action_layer``.

    ``action_layer=0``: (s ‖ a) at the first layer (TD3, paper §6.1); ``1``: the action joins the first
    hidden layer's output (DDPG, Lillicrap et al. 2016).
    """

    def __init__(
        self,
        obs_dim: int,
        action_dim: int,
        hidden_sizes: list[int],
        n_critics: int,
        generators: Sequence[torch.Generator],
        action_layer: int = 0,
        final_layer_init: float | None = None,
    ) -> None:
        super().__init__()
        sizes = layer_sizes(obs_dim, hidden_sizes, 1)
        layers = [
            EnsembleLinear(len(generators), n_critics, fan_in + (action_dim if i == action_layer else 0), fan_out)
            for i, (fan_in, fan_out) in enumerate(sizes)
        ]
        init_layers(layers, generators, final_layer_init)
        self.layers = nn.ModuleList(layers)
        self.action_layer = action_layer

    def forward(self, obs: Tensor, action: Tensor, n_members: int | None = None) -> Tensor:
        """Q values (K, n_members, N); ``n_members=1`` evaluates Q_θ1 alone (the actor's critic).

        ``obs`` is (K, N, obs_dim); ``action`` is (K, N, A), shared by a seed's critics, or (K, E, N, A),
        one action per critic.
        """
        x = obs
        for i, layer in enumerate(self.layers):
            if i == self.action_layer:
                x = join(x, action)
            x = layer(x, n_members)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x.squeeze(-1)

    def hidden_weights(self) -> list[nn.Parameter]:
        """The weight matrices of every layer but the output one (DDPG's L2 regularisation acts on these)."""
        return [cast(EnsembleLinear, layer).weight for layer in self.layers[:-1]]


def join(x: Tensor, action: Tensor) -> Tensor:
    """Concatenate features and actions on the last dim, giving both the same member dim if only one has it."""
    if x.dim() != action.dim():
        members = x.shape[1] if x.dim() == 4 else action.shape[1]
        x, action = (t if t.dim() == 4 else t.unsqueeze(1).expand(-1, members, -1, -1) for t in (x, action))
    return torch.cat([x, action], dim=-1)
