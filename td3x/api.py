"""td3x from Python: compose a config, train, load the trained policy and act with it.

    import td3x
    config = td3x.compose(["env=pendulum", "run.total_steps=5000"])
    summary = td3x.train(config, "outputs/notebook/pendulum")
    policy = td3x.load("outputs/notebook/pendulum")
    action = policy.predict(obs)          # in the env's own units, for gymnasium.make(policy.env_id)

The same composition, checks and run dir as ``td3x-train``; the policy is the one ``td3x-eval`` evaluates.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import ArrayLike

from td3x.algo.envs import env_spec, make_env
from td3x.config.command_line import home_expanded
from td3x.config.hydra import ComposedConfig
from td3x.config.overrides import compose_checked, dir_problems
from td3x.config.schema import ConfigError, TrainConfig
from td3x.rundir.trained_run import RunError, TrainedRun, load_run
from td3x.training.run import run


class Policy:
    """A trained actor that acts in the env's own units: ``predict(obs)`` for ``gymnasium.make(env_id)``.

    Observations are normalised with the run's frozen statistics (``env.normalize_obs``) and the actor's
    [-1, 1] actions are mapped to the env's bounds exactly as training's ``RescaleAction`` wrapper does, so
    an episode driven by `predict` scores what ``td3x-eval`` reports for the same reset seed.

    Attributes:
        config: the run's `TrainConfig`.
        env_id: the Gymnasium id it was trained on.
        step: the env steps it was trained for.
        checkpoint_path: the checkpoint it was loaded from.
    """

    def __init__(self, run: TrainedRun) -> None:
        self.config: TrainConfig = run.config
        self.env_id: str = run.config.env.id
        self.step: int = run.step
        self.checkpoint_path: Path = run.checkpoint_path
        self._act = run.agent.act
        env = make_env(run.config.env)
        self.obs_dim = env_spec(env).obs_dim
        # make_env's wrapper maps [-1, 1] to the env's bounds: reuse its very map (no wrapper: already [-1, 1])
        self._to_env_units: Callable[[np.ndarray], np.ndarray] = (
            env.action if isinstance(env, gym.ActionWrapper) else np.asarray
        )
        env.close()

    def predict(self, obs: ArrayLike) -> np.ndarray:
        """The deterministic action π(s) (no exploration noise), in the env's units.

        Args:
            obs: one observation (obs_dim,) or a batch (B, obs_dim).

        Returns:
            (action_dim,) for one observation, (B, action_dim) for a batch.

        Raises:
            ValueError: an observation of another size, or one with NaN or infinite entries (the message names
                the entries of one observation, the rows of a batch).
        """
        with np.errstate(over="ignore"):  # a float64 beyond float32's range becomes inf: refused below
            array = np.asarray(obs, dtype=np.float32)
        batch = array.reshape(1, -1) if array.ndim == 1 else array
        if batch.ndim != 2 or batch.shape[1] != self.obs_dim:
            raise ValueError(
                f"predict takes (obs_dim,) or (B, obs_dim) observations with obs_dim={self.obs_dim} "
                f"({self.env_id}), got shape {array.shape}"
            )
        bad = ~np.isfinite(batch)
        if bad.any():
            kinds = ", ".join(sorted({str(value) for value in batch[bad].tolist()}))  # nan, inf, -inf
            rows = f"rows {np.flatnonzero(bad.any(axis=1)).tolist()}"
            where = f"entries {np.flatnonzero(bad[0]).tolist()}" if array.ndim == 1 else rows
            raise ValueError(
                f"predict takes finite observations: {where} hold {kinds} (a float32 beyond ±3.4e38 is inf)"
            )
        actions = np.asarray(self._to_env_units(self._act(batch[None])[0]))
        return actions[0] if array.ndim == 1 else actions

    def __repr__(self) -> str:
        return f"Policy({self.env_id}, step={self.step}, checkpoint={str(self.checkpoint_path)!r})"


def load(path: str | Path, device: str = "cpu") -> Policy:
    """The trained policy of a run.

    Args:
        path: a run dir, one seed's ``seed_<k>`` dir of a K-seeds run, or a ``checkpoint.pt`` file (a leading ``~`` is
            the home dir, as in td3x's commands).
        device: ``cpu`` (default), ``auto`` or ``cuda`` (where torch sees a CUDA device).

    The process's torch threads are set to the run's ``run.num_threads``, as in training: the same
    threads give the same actions bit for bit.

    Raises:
        td3x.rundir.trained_run.RunError: no run there, a K-seeds process dir (the message names its seed dirs), a
            ``~user`` that names no user, or a device this machine does not have (the message names those it has).
        td3x.rundir.checkpoint.CheckpointError: a missing, truncated or foreign checkpoint.
    """
    try:
        expanded = home_expanded(str(path))
    except ValueError as error:
        raise RunError(str(error)) from error
    return Policy(load_run(Path(expanded), device))


def compose(overrides: Sequence[str] = ()) -> ComposedConfig:
    """The checked config that ``td3x-train OVERRIDES`` would train, without training: a ``TrainConfig`` whose
    ``choices`` hold the group options (env, agent, noise, ablation) for :func:`train` to record in ``config.yaml``,
    as ``td3x-train`` does, so that ``td3x-report`` puts both runs of one config in one row (a copy made with
    ``dataclasses.replace`` keeps them).

    Args:
        overrides: Hydra overrides as on the command line, e.g. ``["env=hopper", "ablation=no_twin", "seed=3"]``.

    Raises:
        ConfigError: unknown keys or options, values of the wrong type or out of range (``problems``: one line
            each).
    """
    return compose_checked(overrides)


def train(config: TrainConfig, run_dir: str | Path) -> dict[str, Any]:
    """Train (or resume, or find finished) the run ``config`` describes in ``run_dir``; returns its summary, the same
    keys either way (``td3x.rundir.layout.RunSummary``: ``final_return``, ``last10_return``, ``steps``,
    ``wall_time_s``, ...; with ``run.num_seeds`` > 1 the seeds' mean returns and each seed's summary under
    ``seeds``). Progress goes to the ``td3x`` logger, shown on stderr when nothing else handles it.

    A leading ``~`` in ``run_dir`` is the home dir, as in td3x's commands.

    Raises:
        TypeError: ``config`` is not a ``TrainConfig``.
        ConfigError: a value of the wrong type or out of range (a field set after :func:`compose`), an env id or
            setting the installed libraries refuse, an empty ``run_dir`` (the working dir is not a run dir), one
            that is a file, or a ``~user`` that names no user.
        td3x.rundir.resume_decision.ResumeError: ``run_dir`` holds another config's results.
        td3x.training.loop.TrainingError: a non-finite loss or parameter (the logs and last checkpoint are kept).
        td3x.host.numerics.NumericsError: ``run.numerics`` cannot take effect in this process (torch computed under
            the other mode first: train it in a new process).
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"td3x.train takes a TrainConfig (from td3x.compose), not {type(config).__name__}")
    try:
        run_path = home_expanded(str(run_dir))
    except ValueError as error:
        raise ConfigError([f"run_dir={error}"]) from error
    problems = dir_problems("run_dir", run_path)
    if problems:
        raise ConfigError(problems)
    td3x_log = logging.getLogger("td3x")
    if not td3x_log.handlers and not logging.getLogger().handlers:
        td3x_log.addHandler(logging.StreamHandler())
        td3x_log.setLevel(logging.INFO)
    choices = config.choices if isinstance(config, ComposedConfig) else None  # a TrainConfig built otherwise: none
    return run(config, Path(run_path), choices)
