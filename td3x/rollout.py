"""Deterministic evaluation episodes (paper §6.1: average return over 10 episodes with no exploration noise).

Episode i of *every* evaluation starts from ``reset(seed=first_seed + i)``, so a saved actor
re-evaluates to exactly the same numbers, and two evaluations differ only through the policy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import gymnasium as gym
import numpy as np

Policy = Callable[[np.ndarray], np.ndarray]
StepHook = Callable[[], None]


@dataclass(frozen=True)
class Episode:
    """What one evaluation episode visited: the states acted from, the actions and the rewards that followed."""

    obs: np.ndarray  # (T, obs_dim)
    actions: np.ndarray  # (T, action_dim)
    rewards: np.ndarray  # (T,)
    terminated: bool  # ended in a true terminal state (else cut by the time limit)


@dataclass(frozen=True)
class EvalResult:
    returns: np.ndarray  # undiscounted return of each episode
    lengths: np.ndarray  # steps of each episode
    episodes: list[Episode]


def evaluate(
    policy: Policy, env: gym.Env, episodes: int, first_seed: int, on_step: StepHook | None = None
) -> EvalResult:
    """Run ``episodes`` full episodes of ``policy`` (an action in [-1, 1] per observation) on ``env``.

    Args:
        policy: observation -> action in [-1, 1] (deterministic for the paper's evaluation).
        env: an env made by ``td3x.envs.make_env``; episode i starts from ``reset(seed=first_seed + i)``.
        episodes: how many episodes to run.
        first_seed: the reset seed of episode 0.
        on_step: called after every reset and every step, while the env shows that state (a video
            recorder renders its frame there); it never changes the episode.
    """
    played = [_play(policy, env, first_seed + i, on_step) for i in range(episodes)]
    return EvalResult(
        returns=np.array([episode.rewards.sum() for episode in played]),
        lengths=np.array([len(episode.rewards) for episode in played], dtype=np.int64),
        episodes=played,
    )


def _play(policy: Policy, env: gym.Env, seed: int, on_step: StepHook | None) -> Episode:
    obs_list, actions, rewards = [], [], []
    obs, _ = env.reset(seed=seed)
    if on_step is not None:
        on_step()
    terminated = truncated = False
    while not (terminated or truncated):
        action = policy(obs)
        obs_list.append(obs)
        actions.append(action)
        obs, reward, terminated, truncated, _ = env.step(action)
        if on_step is not None:
            on_step()
        rewards.append(float(reward))
    return Episode(
        obs=np.array(obs_list), actions=np.array(actions), rewards=np.array(rewards), terminated=bool(terminated)
    )
