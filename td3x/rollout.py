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
class EvalResult:
    returns: np.ndarray  # undiscounted return of each episode
    lengths: np.ndarray  # steps of each episode


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
    returns, lengths = np.zeros(episodes), np.zeros(episodes, dtype=np.int64)
    for i in range(episodes):
        obs, _ = env.reset(seed=first_seed + i)
        if on_step is not None:
            on_step()
        done = False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(policy(obs))
            if on_step is not None:
                on_step()
            returns[i] += float(reward)
            lengths[i] += 1
            done = terminated or truncated
    return EvalResult(returns=returns, lengths=lengths)
