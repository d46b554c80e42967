"""Tiny agents on a 3-dimensional state and 2-dimensional action with set outputs, and their batches."""

from __future__ import annotations

import torch

from td3x.algo.envs import EnvSpec
from td3x.algo.replay_buffer import Batch
from td3x.algo.seeding import generators_of
from td3x.algo.td3 import TD3
from td3x.config.schema import AgentConfig

SPEC = EnvSpec(obs_dim=3, action_dim=2)


def make_agent(seeds: int = 1, **overrides: object) -> TD3:
    config = AgentConfig(hidden_sizes=[8, 8], **overrides)  # type: ignore[arg-type]
    return TD3(SPEC, config, torch.device("cpu"), [generators_of(seed, torch.device("cpu")) for seed in range(seeds)])


def make_batch(n: int = 4, reward: float = 1.0, terminated: float = 0.0, seeds: int = 1) -> Batch:
    generator = torch.Generator().manual_seed(1)
    return Batch(
        obs=torch.randn(seeds, n, 3, generator=generator),
        action=torch.rand(seeds, n, 2, generator=generator) * 2 - 1,
        reward=torch.full((seeds, n), reward),
        next_obs=torch.randn(seeds, n, 3, generator=generator),
        terminated=torch.full((seeds, n), terminated),
    )


def set_constant_output(layers: torch.nn.Module, values: list[float]) -> None:
    """Make critic member i output values[i] whatever its input: a zero last layer with that bias."""
    last = layers.layers[-1]  # type: ignore[index]
    with torch.no_grad():
        last.weight.zero_()
        last.bias.copy_(torch.tensor(values).reshape(1, -1, 1, 1))


def set_actor_output(actor: torch.nn.Module, pre_tanh: float) -> None:
    last = actor.layers[-1]  # type: ignore[index]
    with torch.no_grad():
        last.weight.zero_()
        last.bias.fill_(pre_tanh)


def parameters_of_seed(agent: TD3, seed_index: int) -> list[torch.Tensor]:
    modules = (agent.actor, agent.critic, agent.actor_target, agent.critic_target)
    return [p.detach()[seed_index].clone() for module in modules for p in module.parameters()]
