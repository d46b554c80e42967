"""Overestimation bias as in the paper's Figures 1-2: the critics' value estimates of the states the policy
visits, against the discounted return that actually followed them.

For each evaluation episode, G_t = Σ_k γ^k r_{t+k}. A state counts when its episode terminated, or when the
time limit left so long a remaining horizon that the cut-off tail is negligible (γ^remaining < 0.01): near a
time-limit cut, G_t is too low by up to γ^remaining · V(s_T), which would fake an overestimation.
"""

from __future__ import annotations

import numpy as np

from td3x.algo.evaluation_episodes import Episode
from td3x.algo.td3 import TD3

NEGLIGIBLE_TAIL = 0.01


def returns_to_go(rewards: np.ndarray, discount: float) -> np.ndarray:
    """G_t = r_t + γ G_{t+1}, with G_T = 0."""
    returns = np.zeros(len(rewards))
    following = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        following = rewards[t] + discount * following
        returns[t] = following
    return returns


def counted(length: int, terminated: bool, discount: float) -> np.ndarray:
    """Which steps of an episode have a trustworthy G_t (see the module docstring)."""
    if terminated:
        return np.ones(length, dtype=bool)
    remaining = length - np.arange(length)
    return discount**remaining < NEGLIGIBLE_TAIL


def overestimation_biases(agent: TD3, episodes: list[list[Episode]], discount: float) -> list[dict[str, float]]:
    """For each seed k, mean Q_θ1(s, a) - G and mean min_i Q_θi(s, a) - G of its critics over the counted states
    of its evaluation episodes ``episodes[k]`` (NaN when none count). One batched critic call for all seeds."""
    counted_states = [_counted_states(seed_episodes, discount) for seed_episodes in episodes]
    longest = max(len(followed) for _, _, followed in counted_states)
    if longest == 0:
        return [_bias(np.empty((1, 0)), np.empty(0)) for _ in episodes]
    obs_dim, action_dim = episodes[0][0].obs.shape[1], episodes[0][0].actions.shape[1]
    obs, actions = np.zeros((len(episodes), longest, obs_dim)), np.zeros((len(episodes), longest, action_dim))
    for k, (seed_obs, seed_actions, _) in enumerate(counted_states):  # zero padding past a seed's own states
        obs[k, : len(seed_obs)], actions[k, : len(seed_actions)] = seed_obs, seed_actions
    q = agent.critic_values(obs, actions).astype(np.float64)  # (K, n_critics, longest)
    return [_bias(q[k, :, : len(followed)], followed) for k, (_, _, followed) in enumerate(counted_states)]


def _counted_states(episodes: list[Episode], discount: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The counted states, their actions and the returns G that followed them, over one seed's episodes."""
    masks = [counted(len(e.rewards), e.terminated, discount) for e in episodes]
    pairs = list(zip(episodes, masks, strict=True))
    return (
        np.concatenate([e.obs[mask] for e, mask in pairs]),
        np.concatenate([e.actions[mask] for e, mask in pairs]),
        np.concatenate([returns_to_go(e.rewards, discount)[mask] for e, mask in pairs]),
    )


def _bias(q: np.ndarray, followed: np.ndarray) -> dict[str, float]:
    if len(followed) == 0:
        return {"bias_q1": float("nan"), "bias_min_q": float("nan"), "bias_states": 0.0}
    return {
        "bias_q1": float(np.mean(q[0] - followed)),
        "bias_min_q": float(np.mean(q.min(axis=0) - followed)),
        "bias_states": float(len(followed)),
    }
