"""The observation normaliser (td3x.algo.normalizer): off unless asked, per-seed statistics, clipping and its state."""

from __future__ import annotations

import numpy as np
import torch
from helpers.agents import SPEC, make_agent

from td3x.algo.normalizer import IdentityNormalizer
from td3x.algo.seeding import generators_of
from td3x.algo.td3 import TD3
from td3x.config.schema import AgentConfig


def test_networks_see_raw_observations_unless_asked() -> None:
    assert isinstance(make_agent().obs_normalizer, IdentityNormalizer)


def test_observation_normaliser_statistics_clip_and_state() -> None:
    generators = [generators_of(seed, torch.device("cpu")) for seed in range(2)]
    agent = TD3(SPEC, AgentConfig(hidden_sizes=[8]), torch.device("cpu"), generators, normalize_obs=True)
    data = np.random.default_rng(0).normal(3.0, 2.0, size=(500, 2, 3))
    data[:, 1] *= 10  # seed 1 sees other states: statistics of its own
    for obs in data:
        agent.obs_normalizer.update(obs)
    assert np.allclose(agent.obs_normalizer.mean.numpy(), data.mean(axis=0))
    assert np.allclose(agent.obs_normalizer.var.numpy(), data.var(axis=0))
    normalised = agent.obs_normalizer(torch.tensor([[[3.0, 3.0, 1e6]], [[30.0, 30.0, 0.0]]], dtype=torch.float32))
    assert normalised[0, 0, 2] == 5.0 and abs(normalised[0, 0, 0]) < 0.2 and abs(normalised[1, 0, 0]) < 0.2
    before = agent.obs_normalizer.mean.clone()
    agent.act(data[:1].transpose(1, 0, 2))  # acting (and so evaluating) never moves the statistics
    assert torch.equal(before, agent.obs_normalizer.mean)
    assert {"mean", "var", "count"} <= set(agent.state_dict()["obs_normalizer"])
