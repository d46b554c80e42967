"""The overestimation bias (td3x.algo.overestimation, paper Figures 1-2): returns to go, the counted states, and Q minus
the return that followed."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers.agents import make_agent


# ---------------------------------------------------------------------- overestimation bias (paper Figures 1-2)
def test_returns_to_go_and_counted_states() -> None:
    from td3x.algo.overestimation import counted, returns_to_go

    assert returns_to_go(np.array([1.0, 1.0, 1.0]), 0.5).tolist() == [1.75, 1.5, 1.0]
    assert counted(3, terminated=True, discount=0.99).all()
    mask = counted(1000, terminated=False, discount=0.99)  # cut by the time limit: γ^remaining < 0.01 only
    assert mask[:542].all() and not mask[542:].any()


def test_overestimation_bias_is_q_minus_the_return_that_followed() -> None:
    from td3x.algo.evaluation_episodes import Episode
    from td3x.algo.overestimation import overestimation_biases

    agent = make_agent(seeds=2, n_critics=2)
    with torch.no_grad():  # seed 0's critics output 5 and 3, seed 1's 7 and 9
        agent.critic.layers[-1].weight.zero_()
        agent.critic.layers[-1].bias.copy_(torch.tensor([[5.0, 3.0], [7.0, 9.0]]).reshape(2, 2, 1, 1))
    episode = Episode(obs=np.zeros((2, 3)), actions=np.zeros((2, 2)), rewards=np.array([1.0, 1.0]), terminated=True)
    longer = Episode(obs=np.zeros((3, 3)), actions=np.zeros((3, 2)), rewards=np.zeros(3), terminated=True)
    first, second = overestimation_biases(agent, [[episode], [longer]], discount=0.5)  # G = (1.5, 1.0) and 0
    assert first == {"bias_q1": pytest.approx(5.0 - 1.25), "bias_min_q": pytest.approx(3.0 - 1.25), "bias_states": 2}
    assert second == {"bias_q1": pytest.approx(7.0), "bias_min_q": pytest.approx(7.0), "bias_states": 3}
    truncated = Episode(obs=np.zeros((2, 3)), actions=np.zeros((2, 2)), rewards=np.ones(2), terminated=False)
    assert overestimation_biases(agent, [[truncated], [truncated]], discount=0.99)[0]["bias_states"] == 0
