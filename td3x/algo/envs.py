"""Gymnasium environments as td3x sees them: actions normalised to [-1, 1], checked before training."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from td3x.config.enums import NoiseUnits
from td3x.config.schema import EnvConfig


@dataclass(frozen=True)
class EnvSpec:
    """The dimensions the networks and the buffer are built from (derived from the env, never configured)."""

    obs_dim: int
    action_dim: int
    # (high - low) / 2 of the env's own action bounds, per dim: one normalised action unit in the env's units.
    # None: bounds of ±1 (a spec written by hand)
    action_half_range: tuple[float, ...] | None = None

    def noise_scale(self, units: NoiseUnits) -> np.ndarray:
        """Per action dim, what turns a noise std or clip given in ``units`` (``agent.noise_units``) into the
        normalised units td3x acts in: 1 for normalised, 1 / half range for the env's absolute units."""
        if units is NoiseUnits.normalized or self.action_half_range is None:
            return np.ones(self.action_dim)
        return 1.0 / np.asarray(self.action_half_range, dtype=np.float64)


def make_env(env_config: EnvConfig) -> gym.Env:
    """Make the env with its actions rescaled from [-1, 1] to the env's bounds.

    The agent only ever sees [-1, 1], so σ, σ̃ and c mean the same on every env (as in SB3).
    """
    env = gym.make(env_config.id, **env_config.kwargs)
    space = env.action_space
    assert isinstance(space, gym.spaces.Box), "check_env refuses non-Box action spaces before this"
    if not np.all(space.low == -1.0) or not np.all(space.high == 1.0):
        ones = np.ones(space.shape, dtype=np.float32)
        env = gym.wrappers.RescaleAction(env, min_action=-ones, max_action=ones)
    return env


def env_spec(env: gym.Env) -> EnvSpec:
    """The sizes of a ``make_env`` env, and the half range of its own action bounds (before the rescaling)."""
    obs_shape = env.observation_space.shape
    action_shape = env.action_space.shape
    own_space = env.unwrapped.action_space
    assert obs_shape is not None and action_shape is not None and isinstance(own_space, gym.spaces.Box)
    half_range = (own_space.high.astype(np.float64) - own_space.low) / 2
    return EnvSpec(
        obs_dim=int(np.prod(obs_shape)),
        action_dim=int(np.prod(action_shape)),
        action_half_range=tuple(float(x) for x in half_range.flatten()),
    )


def check_env(env_config: EnvConfig) -> list[str]:
    """Problems with ``env.id``/``env.kwargs``, one line each: unknown id (with close matches), non-Box
    or unbounded action space, unflattenable observations, a first reset or step that fails. Makes the env once,
    takes one step (a kwarg of the wrong type often fails only there) and closes it."""
    registered = list(gym.envs.registry.keys())
    if env_config.id not in gym.envs.registry:
        close = difflib.get_close_matches(env_config.id, registered, n=3, cutoff=0.6)
        hint = (
            f"did you mean {', '.join(close)}?"
            if close
            else "run `python -c 'import gymnasium; gymnasium.pprint_registry()'` to list ids"
        )
        return [f"env.id={env_config.id!r} is not allowed: not a registered Gymnasium env; {hint}"]
    try:
        env = gym.make(env_config.id, **env_config.kwargs)
    except Exception as error:  # a bad kwarg or a missing dependency (e.g. mujoco) surfaces here
        return [f"env.kwargs={env_config.kwargs!r} is not allowed for {env_config.id}: {type(error).__name__}: {error}"]
    try:
        return _space_problems(env_config.id, env.action_space, env.observation_space) or _first_step_problems(
            env_config, env
        )
    finally:
        env.close()


def _first_step_problems(env_config: EnvConfig, env: gym.Env) -> list[str]:
    space = env.action_space
    assert isinstance(space, gym.spaces.Box), "_space_problems refuses non-Box action spaces before this"
    try:
        env.reset(seed=0)
        env.step(((space.low + space.high) / 2).astype(space.dtype))  # the middle of the bounds: always valid
    except Exception as error:  # the env's own code: any exception means it cannot train
        return [
            f"env.kwargs={env_config.kwargs!r} is not allowed for {env_config.id}: its first reset and step "
            f"failed with {type(error).__name__}: {error}"
        ]
    return []


def _space_problems(env_id: str, action_space: gym.Space, observation_space: gym.Space) -> list[str]:
    if not isinstance(action_space, gym.spaces.Box):
        return [
            f"env.id={env_id!r} is not allowed: TD3 needs a continuous (Box) action space, "
            f"this env has {type(action_space).__name__}"
        ]
    problems = []
    if not (np.all(np.isfinite(action_space.low)) and np.all(np.isfinite(action_space.high))):
        problems.append(f"env.id={env_id!r} is not allowed: its action bounds must be finite")
    if not isinstance(observation_space, gym.spaces.Box) or observation_space.shape is None:
        problems.append(f"env.id={env_id!r} is not allowed: td3x needs a Box observation space")
    return problems
