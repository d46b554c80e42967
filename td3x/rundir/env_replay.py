"""A training env's state in the middle of an episode: how its episode was reset, and the actions since.

A checkpoint can then be taken at any env step, whatever episode each seed is in: restoring resets a
fresh env the same way and replays the actions. Gymnasium's MuJoCo and classic-control envs are
deterministic given their reset RNG and the actions, and the replay is checked: it must reach the saved
observation bit for bit, or the restore fails with a clear error instead of continuing differently.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np


class ReplayMismatch(RuntimeError):
    """Replaying the saved episode did not reach the saved observation (a non-deterministic env)."""


class EpisodeTape:
    """Records one env's current episode: the reset seed (first episode) or the RNG state before the reset,
    and every action taken since."""

    def __init__(self) -> None:
        self.reset_seed: int | None = None
        self.reset_rng: Mapping[str, Any] | None = None
        self.actions: list[np.ndarray] = []

    def reset(self, env: gym.Env, seed: int | None = None) -> np.ndarray:
        """Start an episode (``reset(seed=seed)`` the first time, unseeded after) and a new tape."""
        self.reset_seed = seed
        self.reset_rng = None if seed is not None else copy.deepcopy(env.unwrapped.np_random.bit_generator.state)
        self.actions = []
        obs, _ = env.reset(seed=seed)
        return obs

    def record(self, action: np.ndarray) -> None:
        self.actions.append(np.array(action, copy=True))

    def state_dict(self) -> dict[str, Any]:
        # the recorded actions are copies, never written to: the list is enough
        return {"reset_seed": self.reset_seed, "reset_rng": self.reset_rng, "actions": list(self.actions)}

    def restore(self, env: gym.Env, state: dict[str, Any], expected_obs: np.ndarray) -> np.ndarray:
        """Bring a fresh ``env`` to the saved point of its episode and return the observation there.

        Raises:
            ReplayMismatch: the replay reached another observation than ``expected_obs``.
        """
        self.reset_seed, self.reset_rng = state["reset_seed"], state["reset_rng"]
        if self.reset_seed is None:
            env.unwrapped.np_random.bit_generator.state = copy.deepcopy(self.reset_rng)
        obs, _ = env.reset(seed=self.reset_seed)
        self.actions = []
        for action in state["actions"]:
            obs, *_ = env.step(action)
            self.record(action)
        if not np.array_equal(obs, expected_obs):
            raise ReplayMismatch(
                f"replaying the saved episode ({len(self.actions)} steps) did not reach the saved observation: "
                "the env is not deterministic given its reset RNG and actions"
            )
        return obs
