"""Deterministic evaluation episodes (paper §6.1: average return over 10 episodes with no exploration noise).

Episode i of *every* evaluation starts from ``reset(seed=first_seed + i)``, so a saved actor
re-evaluates to exactly the same numbers, and two evaluations differ only through the policy.
The episodes of all seeds run side by side, one env each, so that every step asks the actors for all
their actions in one batched call instead of one call per episode step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from td3x.algo.function_types import BatchPolicy, Policy, StepHook, StopCheck


class EvaluationStopped(Exception):
    """The stop check asked to end an evaluation before its episodes ended: it has no result."""


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

    @classmethod
    def of(cls, episodes: list[Episode]) -> EvalResult:
        return cls(
            returns=np.array([episode.rewards.sum() for episode in episodes]),
            lengths=np.array([len(episode.rewards) for episode in episodes], dtype=np.int64),
            episodes=episodes,
        )


class _Recorder:
    """One env's episode while it runs."""

    def __init__(self, env: gym.Env, seed: int) -> None:
        self.env, self.obs_list, self.actions, self.rewards = env, [], [], []  # type: ignore[var-annotated]
        self.obs, _ = env.reset(seed=seed)
        self.done = self.terminated = False

    def step(self, action: np.ndarray) -> None:
        self.obs_list.append(self.obs)
        self.actions.append(action)
        self.obs, reward, terminated, truncated, _ = self.env.step(action)
        self.rewards.append(float(reward))
        self.done, self.terminated = bool(terminated or truncated), bool(terminated)

    def episode(self) -> Episode:
        return Episode(np.array(self.obs_list), np.array(self.actions), np.array(self.rewards), self.terminated)


def evaluate_seeds(
    policy: BatchPolicy,
    envs: Sequence[Sequence[gym.Env]],
    first_seeds: Sequence[int],
    on_step: StepHook | None = None,
    should_stop: StopCheck | None = None,
) -> list[EvalResult]:
    """Run one episode on each of ``envs[k][i]`` (seed k's policy, episode i) until all have ended.

    Args:
        policy: (K, B, obs_dim) observations -> (K, B, action_dim) actions in [-1, 1], deterministic for
            the paper's evaluation; B = ``len(envs[k])`` episodes per seed.
        envs: envs made by ``td3x.algo.envs.make_env``; ``envs[k][i]`` starts from ``reset(seed=first_seeds[k] + i)``.
        first_seeds: the reset seed of each seed's episode 0.
        on_step: called after the resets and after every step, while the envs show that state (a video
            recorder renders its frame there); it never changes the episodes.
        should_stop: asked before every step; True abandons the episodes (a stop signal during a long evaluation
            takes effect within an episode).

    Raises:
        EvaluationStopped: ``should_stop`` said True before the episodes ended.
    """
    recorders = [
        [_Recorder(env, first_seed + i) for i, env in enumerate(row)]
        for row, first_seed in zip(envs, first_seeds, strict=True)
    ]
    if on_step is not None:
        on_step()
    while not all(r.done for row in recorders for r in row):
        if should_stop is not None and should_stop():
            raise EvaluationStopped
        actions = policy(np.array([[r.obs for r in row] for row in recorders]))
        for row, row_actions in zip(recorders, actions, strict=True):
            for recorder, action in zip(row, row_actions, strict=True):
                if not recorder.done:  # an ended episode waits for the others; its action is not taken
                    recorder.step(action)
        if on_step is not None:
            on_step()
    return [EvalResult.of([r.episode() for r in row]) for row in recorders]


def evaluate(policy: Policy, envs: Sequence[gym.Env], first_seed: int, on_step: StepHook | None = None) -> EvalResult:
    """One policy's ``len(envs)`` episodes side by side (episode i on ``envs[i]``): see :func:`evaluate_seeds`."""
    batch_policy = lambda obs: np.stack([[policy(o) for o in row] for row in obs])  # noqa: E731
    return evaluate_seeds(batch_policy, [envs], [first_seed], on_step)[0]
