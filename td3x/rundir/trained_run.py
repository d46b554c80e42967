"""A trained run rebuilt from its checkpoint, and its evaluation by the training protocol: what ``td3x-eval`` and
``td3x.load`` share.

The agent is rebuilt from the config stored in the checkpoint, with the run's torch threads; with the defaults
(the run's ``run.eval_episodes`` and eval seed, same machine) the final checkpoint scores exactly the last row of
the run's ``eval.csv``.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from td3x.algo.envs import env_spec, make_env
from td3x.algo.evaluation_episodes import EvalResult, evaluate_seeds
from td3x.algo.seeding import generators_of
from td3x.algo.td3 import TD3
from td3x.config.enums import Device
from td3x.config.hydra import from_saved
from td3x.config.schema import ConfigError, TrainConfig
from td3x.host import numerics
from td3x.rundir import checkpoint
from td3x.rundir.layout import (
    CHECKPOINT_FILE,
    CONFIG_FILE,
    PROVENANCE_FILE,
    SWEEP_FILE,
    RunFileError,
    read_json_mapping,
    seed_run_dirs,
)

EVAL_COMMAND = "td3x-eval"  # named in the advice to pick a run, or the CPU for a run trained on a GPU
RUNS_NAMED = 3  # run dirs named when given a folder above them


class RunError(ValueError):
    """A run path, checkpoint or stored config that td3x-eval cannot use."""


@dataclass(frozen=True)
class TrainedRun:
    """A checkpoint's agent, rebuilt from the config it was trained with."""

    checkpoint_path: Path
    config: TrainConfig
    agent: TD3
    step: int  # env steps the agent was trained for
    wandb_run_id: str | None

    @property
    def run_dir(self) -> Path:
        return self.checkpoint_path.parent

    @property
    def trained_on(self) -> str:
        """Where its last sitting trained (``cpu``, ``cuda``): its ``provenance.json``'s device; ``run.device``
        resolved here for a run whose provenance records none (an older td3x's, a checkpoint copied alone), where
        ``auto`` on a GPU run reads as ``cpu`` on a machine without one."""
        try:
            recorded = read_json_mapping(self.run_dir / PROVENANCE_FILE).get("device")
        except RunFileError:
            recorded = None
        return recorded if isinstance(recorded, str) else self.config.run.device.resolve().type


def find_checkpoint(target: Path) -> Path:
    """The checkpoint of ``target``: a run dir's ``checkpoint.pt``, or ``target`` itself when it is a file.

    Raises:
        RunError: no such path, or a folder above run dirs (a sweep dir): the message names a few of them.
    """
    if target.is_dir():
        if not (target / CHECKPOINT_FILE).exists():
            _refuse_folder_of_runs(target)
        return target / CHECKPOINT_FILE
    if target.exists():
        return target
    raise RunError(f"no run dir or checkpoint file at {target}")


def _refuse_folder_of_runs(folder: Path) -> None:
    """Raise a RunError naming a few run dirs when ``folder`` (without a checkpoint of its own) holds some."""
    # run dirs hold their config.yaml; a K-seeds process dir holds only the seeds' shared checkpoint
    runs = sorted(path.parent for path in folder.rglob(CHECKPOINT_FILE) if (path.parent / CONFIG_FILE).is_file())
    if not runs:
        return  # no run below either: loading the missing checkpoint says so
    kind = "a sweep dir" if (folder / SWEEP_FILE).is_file() else "a folder of runs, not a run dir"
    named = ", ".join(str(run) for run in runs[:RUNS_NAMED]) + (", ..." if len(runs) > RUNS_NAMED else "")
    raise RunError(
        f"{folder} is {kind}: pick one of the {len(runs)} runs inside, e.g. {EVAL_COMMAND} {runs[0]} ({named})"
    )


def config_from_dict(saved: dict[str, Any]) -> TrainConfig:
    """The typed, checked ``TrainConfig`` from a stored config, or a RunError saying why not."""
    try:
        return from_saved(saved)
    except ConfigError as error:
        raise RunError(f"the stored config is refused: {'; '.join(error.problems)}") from error


def devices_here() -> list[str]:
    """The ``Device`` names this machine can run: cuda only where torch sees a CUDA device."""
    return [choice.value for choice in Device if choice.available()]


def checked_device(value: Device | str, named: str) -> Device:
    """The ``Device`` that ``value`` names when this machine has it, else a RunError listing what is allowed here:
    torch's own errors name neither the option nor the choices (a CPU-only torch fails deep inside, on the first
    CUDA generator).

    Args:
        value: a ``Device`` or its name.
        named: how the message names the option (``device``).
    """
    text = value.value if isinstance(value, Device) else value
    problem = device_problem(text, f"{named}={text!r}")
    if problem is not None:
        raise RunError(problem)
    return Device(text)


def device_problem(text: str, shown: str) -> str | None:
    """Why this machine cannot run the device named ``text``, in one line listing those it can, or None.

    Args:
        text: a ``Device`` name as given (``cuda``, or anything else).
        shown: how the line names what was given (``device='cuda'``, ``--device cuda``).
    """
    allowed = devices_here()
    if text in allowed:
        return None
    absent = "" if Device.cuda.value in allowed else " (cuda: torch sees no CUDA device here)"
    return f"{shown} is not allowed: use {', '.join(allowed[:-1])} or {allowed[-1]}{absent}"


def load_run(target: Path, device: Device | str | None = None) -> TrainedRun:
    """Rebuild the trained agent of a run dir or checkpoint file, with the run's torch threads and device
    (or ``device``: a ``Device`` or its name).

    Raises:
        RunError: no such path, a stored config this td3x refuses, or a device this machine does not have.
        checkpoint.CheckpointError: a missing, truncated or foreign checkpoint.
        numerics.NumericsError: the run's ``run.numerics`` cannot take effect in this process.
    """
    chosen = None if device is None else checked_device(device, "device")  # before anything is read
    path = find_checkpoint(target)
    parts = checkpoint.load(path)
    config = config_from_dict(parts["config"])
    if len(parts["seeds"]) > 1:
        seed_dirs = seed_run_dirs(path.parent, config.seed, config.run.num_seeds)
        raise RunError(
            f"{path} holds the {len(parts['seeds'])} seeds of one process (run.num_seeds); "
            f"evaluate one of their run dirs: {', '.join(str(d) for d in seed_dirs)}"
        )
    if chosen is None and config.run.device.value not in devices_here():  # trained on a GPU, loaded where none is
        raise RunError(
            f"{path} was trained with run.device={config.run.device.value!r} and torch sees no CUDA device here: "
            f"evaluate it where one is, or on the CPU: {EVAL_COMMAND} {shlex.quote(str(target))} --device cpu "
            f"(td3x.load({str(target)!r}, device='cpu') in Python)"
        )
    torch_device = (chosen or config.run.device).resolve()
    numerics.apply(config.run.numerics)  # as in training, before the agent's first torch operation
    torch.set_num_threads(config.run.num_threads)  # part of the config: it changes float results
    env = make_env(config.env)
    try:
        spec = env_spec(env)
    finally:
        env.close()
    agent = TD3(spec, config.agent, torch_device, [generators_of(config.seed, torch_device)], config.env.normalize_obs)
    # a finished run's checkpoint keeps the networks alone (td3x.training.loop.TRAINING_ONLY_PARTS): the fresh agent's
    # targets and optimisers stand in for the parts it left out, which evaluation never reads
    agent.load_state_dict(agent.state_dict() | parts["agent"])
    return TrainedRun(path, config, agent, int(parts["counters"]["step"]), parts.get("wandb_run_id"))


def evaluate_run(run: TrainedRun, episodes: int, first_seed: int) -> EvalResult:
    """``episodes`` noise-free episodes, episode i from ``reset(seed=first_seed + i)``, on a fresh env."""
    envs = [make_env(run.config.env) for _ in range(episodes)]
    try:
        return evaluate_seeds(run.agent.act, [envs], [first_seed])[0]
    finally:
        for env in envs:
            env.close()
