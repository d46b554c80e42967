"""Overestimation bias as in the paper's Figures 1-2: the critics' value estimates of the states the policy
visits, against the discounted return that actually followed them.

For each evaluation episode, G_t = Σ_k γ^k r_{t+k}. A state counts when its episode terminated, or when the
time limit left so long a remaining horizon that the cut-off tail is negligible (γ^remaining < 0.01): near a
time-limit cut, G_t is too low by up to γ^remaining · V(s_T), which would fake an overestimation.
"""

from __future__ import annotations

import numpy as np

from td3x.rollout import Episode
from td3x.td3 import TD3

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


def overestimation_bias(agent: TD3, episodes: list[Episode], discount: float) -> dict[str, float]:
    """Mean Q_θ1(s, a) - G and mean min_i Q_θi(s, a) - G over the counted states (NaN when none count)."""
    masks = [counted(len(e.rewards), e.terminated, discount) for e in episodes]
    count = int(sum(mask.sum() for mask in masks))
    if count == 0:
        return {"bias_q1": float("nan"), "bias_min_q": float("nan"), "bias_states": 0.0}
    obs = np.concatenate([e.obs[mask] for e, mask in zip(episodes, masks, strict=True)])
    actions = np.concatenate([e.actions[mask] for e, mask in zip(episodes, masks, strict=True)])
    followed = np.concatenate(
        [returns_to_go(e.rewards, discount)[mask] for e, mask in zip(episodes, masks, strict=True)]
    )
    q = agent.critic_values(obs, actions).astype(np.float64)  # (n_critics, count)
    return {
        "bias_q1": float(np.mean(q[0] - followed)),
        "bias_min_q": float(np.mean(q.min(axis=0) - followed)),
        "bias_states": float(count),
    }
