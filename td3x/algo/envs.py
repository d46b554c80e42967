"""Gymnasium environments as td3x sees them: actions normalised to [-1, 1], checked before training; MuJoCo's
warnings in td3x's log (:class:`MujocoWarnings`)."""

from __future__ import annotations

import difflib
import logging
import sys
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from td3x.config.enums import NoiseUnits
from td3x.config.schema import EnvConfig

log = logging.getLogger(__name__)


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


class MujocoWarnings:
    """MuJoCo's warning handler: each distinct warning into td3x's log once per process, instead of MuJoCo's default
    (printed, and appended to ``MUJOCO_LOG.TXT`` in the working dir, each time: Gymnasium's HalfCheetah model warns of
    a deprecated attribute at every env made, 96 times in a smoke sweep, and ``td3x-sweep list`` left that file).

    A deprecation notice concerns the model's authors (Gymnasium's), not the user, so it is logged at INFO (as Python
    hides its DeprecationWarning from users): the run's ``train.log`` and console under td3x-train, nothing in
    ``td3x-sweep list`` or ``status``, which set no logging up. Any other warning (an unstable simulation, a full
    buffer) is a WARNING. An INFO message that no handler would receive yet (the checks td3x-train makes before Hydra
    sets its logging up) is not counted as logged: the run's own first env logs it.
    """

    def __init__(self) -> None:
        self.logged: set[str] = set()

    def __call__(self, message: str) -> None:
        text = " ".join(message.split())
        level = logging.INFO if "deprecated" in text else logging.WARNING
        if text in self.logged or (level < logging.WARNING and not log.hasHandlers()):
            return
        self.logged.add(text)
        log.log(level, "MuJoCo: %s (logged once per process)", text)


def _gym_make(env_id: str, kwargs: dict[str, Any]) -> gym.Env:
    """``gym.make``, with MuJoCo's warnings routed first (:class:`MujocoWarnings`) when the env is MuJoCo's or MuJoCo
    is loaded already: ``import mujoco`` picks its GL backend (td3x.training.video sets it first for videos), so td3x
    never imports it for another env."""
    entry_point = gym.spec(env_id).entry_point
    module = entry_point if isinstance(entry_point, str) else getattr(entry_point, "__module__", "")
    if "mujoco" in sys.modules or module.startswith("gymnasium.envs.mujoco"):
        import mujoco

        if mujoco.get_mju_user_warning() is None:  # a handler set by the user's own code is kept
            mujoco.set_mju_user_warning(MujocoWarnings())
    return gym.make(env_id, **kwargs)


def make_env(env_config: EnvConfig) -> gym.Env:
    """Make the env with its actions rescaled from [-1, 1] to the env's bounds.

    The agent only ever sees [-1, 1], so σ, σ̃ and c mean the same on every env (as in SB3).
    """
    env = _gym_make(env_config.id, env_config.kwargs)
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
        env = _gym_make(env_config.id, env_config.kwargs)
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
