"""The networks (td3x.algo.networks): the critic ensemble's independent members, DDPG's action at the critic's second
layer, and the last layers' initialisation."""

from __future__ import annotations

import torch
from helpers.agents import make_agent


def test_critic_ensemble_members_are_independent_networks() -> None:
    agent = make_agent(n_critics=2)
    obs, action = torch.randn(1, 5, 3), torch.randn(1, 5, 2)
    q = agent.critic(obs, action)
    assert q.shape == (1, 2, 5)
    assert torch.equal(agent.critic(obs, action, n_members=1)[:, 0], q[:, 0])
    assert not torch.allclose(q[:, 0], q[:, 1])


def test_ddpg_critic_takes_the_action_at_its_second_layer() -> None:
    agent = make_agent(critic_action_layer=1, n_critics=1)
    first, second = agent.critic.layers[0], agent.critic.layers[1]
    assert first.weight.shape == (1, 1, 3, 8)  # the state alone
    assert second.weight.shape == (1, 1, 8 + 2, 8)  # hidden features and the action
    action = torch.zeros(1, 5, 2, requires_grad=True)
    agent.critic(torch.randn(1, 5, 3), action).sum().backward()
    assert action.grad is not None and action.grad.abs().sum() > 0


def test_final_layer_init_bounds_the_last_layers() -> None:
    agent = make_agent(final_layer_init=3e-3)
    for last in (agent.actor.layers[-1], agent.critic.layers[-1]):
        assert last.weight.abs().max() <= 3e-3 and last.bias.abs().max() <= 3e-3
    assert agent.critic.layers[0].weight.abs().max() > 3e-3
