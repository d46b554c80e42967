"""One seed's share of a training process: its envs, exploration noise, generators, current episode, evaluation
history and run-dir files. ``run.num_seeds = K`` makes K of them, seeds ``seed … seed + K - 1``, which one stacked
agent drives in lockstep (:class:`td3x.training.loop.Trainer`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch

from td3x.algo.envs import env_spec, make_env
from td3x.algo.evaluation_episodes import EvalResult
from td3x.algo.noise import make_noise
from td3x.algo.seeding import generators_of, seed_everything
from td3x.config.hydra import to_container
from td3x.config.schema import TrainConfig
from td3x.rundir.env_replay import EpisodeTape
from td3x.rundir.layout import RunSummary, seed_range, seed_run_dirs
from td3x.training.loggers import RunLoggers, wandb_kwargs
from td3x.training.video import TrainingVideos


def seed_configs(config: TrainConfig) -> list[TrainConfig]:
    """The config of each seed of the process: ``seed + k``, everything else shared (``run.num_seeds`` kept,
    so each seed's ``config.yaml`` records the mode it was trained in). A pinned source (``seeds.*``) is thus the
    same for every seed, and a following one moves with the seed."""
    if config.run.num_seeds == 1:  # the process's one seed is the config itself: not built (and checked) again
        return [config]
    return [dataclasses.replace(config, seed=seed) for seed in seed_range(config.seed, config.run.num_seeds)]


class ProcessSeed(NamedTuple):
    """One seed of a process: its config (``seed`` is this seed) and the run dir it writes in."""

    config: TrainConfig
    run_dir: Path


def process_seeds(config: TrainConfig, run_dir: Path) -> list[ProcessSeed]:
    """The process's seeds (:func:`seed_configs`), each in its run dir (``run_dir``, or ``run_dir/seed_<seed>``
    for K seeds): computed once per run, by :func:`td3x.training.run.run`."""
    dirs = seed_run_dirs(run_dir, config.seed, config.run.num_seeds)
    return [ProcessSeed(*pair) for pair in zip(seed_configs(config), dirs, strict=True)]


def recorded_config(config: TrainConfig, choices: dict[str, str]) -> dict[str, Any]:
    """What a seed's ``config.yaml`` and W&B config hold: the resolved config, the Hydra group ``choices`` and
    ``effective_seeds``, each source's seed as it was used (:attr:`TrainConfig.source_seeds`)."""
    return {**to_container(config), "choices": choices, "effective_seeds": config.source_seeds}


def seed_runs(
    seeds: list[ProcessSeed],
    device: torch.device,
    choices: dict[str, str],
    wandb_run_ids: list[str | None] | None = None,
) -> list[SeedRun]:
    """The process's seeds (:func:`process_seeds`) set up to train; each one continues its W&B run when
    ``wandb_run_ids`` names one."""
    run_ids = wandb_run_ids or [None] * len(seeds)
    # each W&B run's config is what the seed's config.yaml holds, effective seeds included
    return [
        SeedRun(
            k,
            seed.config,
            seed.run_dir,
            device,
            wandb_kwargs(seed.config, choices, run_id) | {"config": recorded_config(seed.config, choices)},
        )
        for k, (seed, run_id) in enumerate(zip(seeds, run_ids, strict=True))
    ]


class SeedRun:
    """One seed's share of the process: its envs, exploration noise, generators, episode and files."""

    def __init__(
        self,
        index: int,
        config: TrainConfig,
        run_dir: Path,
        device: torch.device,
        wandb_kwargs: dict[str, Any],
    ) -> None:
        self.index, self.config, self.run_dir = index, config, run_dir
        run_dir.mkdir(parents=True, exist_ok=True)
        # the first seed also seeds the global RNGs (libraries); every seed has its own generators, each from its
        # source's seed (the seed itself unless seeds.* pins it)
        self.sources = config.source_seeds
        if index == 0:
            self.generators = seed_everything(config.seed, device, self.sources)
        else:
            self.generators = generators_of(config.seed, device, self.sources)
        self.env = make_env(config.env)
        # one env per episode of every evaluation set (seeds.evaluation_sets), all run side by side
        self.eval_envs = [make_env(config.env) for _ in range(config.run.eval_episodes * config.seeds.evaluation_sets)]
        spec = env_spec(self.env)
        self.action_dim = spec.action_dim
        self.noise = make_noise(config.noise, self.action_dim, self.generators.exploration)
        self.noise_scale = spec.noise_scale(config.agent.noise_units)  # noise.std's units -> normalised ones
        self.tape = EpisodeTape()
        self.episode = {"return": 0.0, "length": 0}
        self.counts = {"episodes": 0, "terminated": 0, "truncated": 0}
        self.window: dict[str, list[float]] = {"episode_return": [], "episode_length": [], "at_bounds": []}
        self.eval_returns: list[float] = []
        self.loggers = RunLoggers(run_dir, config.logging.wandb_mode, wandb_kwargs)
        self.videos = TrainingVideos(
            config.env, run_dir, config.eval_seed, config.logging.video_every, self.loggers.wandb.log
        )

    def reset(self, first: bool = False) -> np.ndarray:
        self.noise.reset()
        return self.tape.reset(self.env, self.sources["env"] if first else None)

    def random_action(self) -> np.ndarray:
        return self.generators.warmup.uniform(-1.0, 1.0, self.action_dim).astype(np.float32)

    def noisy_action(self, policy_action: np.ndarray, step: int) -> np.ndarray:
        action = np.clip(policy_action + self.noise_scale * self.noise.sample(step), -1.0, 1.0).astype(np.float32)
        self.window["at_bounds"].append(float(np.mean(np.abs(action) >= 1.0)))
        return action

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool]:
        self.tape.record(action)
        next_obs, reward, terminated, truncated, _ = self.env.step(action)
        self.episode["return"] += float(reward)
        self.episode["length"] += 1
        return next_obs, float(reward), bool(terminated), bool(truncated)

    def end_episode(self, terminated: bool) -> np.ndarray:
        """Book the finished episode and start the next; its first observation."""
        self.counts["episodes"] += 1
        self.counts["terminated" if terminated else "truncated"] += 1
        self.window["episode_return"].append(self.episode["return"])
        self.window["episode_length"].append(self.episode["length"])
        self.episode = {"return": 0.0, "length": 0}
        return self.reset()

    def training_row(self, update_metrics: dict[str, float]) -> dict[str, float]:
        row = dict(update_metrics)
        for name, values in self.window.items():
            if values:
                row[f"{name}_mean"] = float(np.mean(values))
            values.clear()
        return row | {f"{key}_count": float(value) for key, value in self.counts.items()}

    def log_evaluation(
        self,
        result: EvalResult,
        bias: dict[str, float],
        step: int,
        timing: dict[str, float],
        other_sets: list[EvalResult] | None = None,
    ) -> None:
        """Book an evaluation and write its ``eval.csv`` row (``timing``: its time, wall time and speed columns;
        ``other_sets``: evaluation sets 1.. of the same policy, as ``return_mean_set_<j>`` columns)."""
        self.eval_returns.append(float(result.returns.mean()))
        row = {
            "return_mean": float(result.returns.mean()),
            "return_std": float(result.returns.std()),
            **{f"return_{i}": float(value) for i, value in enumerate(result.returns)},
            "length_mean": float(result.lengths.mean()),
            **bias,
            **{f"return_mean_set_{j}": float(other.returns.mean()) for j, other in enumerate(other_sets or [], 1)},
            **timing,
        }
        self.loggers.log_eval(row, step)

    def summary(
        self, status: str, step: int, updates: int, wall_time: float, cpu_time: float | None, **outcome: str
    ) -> RunSummary:
        """``outcome``: ``interrupted=`` or ``failure=``, why the run stopped."""
        return RunSummary.of(status, self.eval_returns, step, updates, wall_time, cpu_time, self.run_dir, **outcome)

    def state_dict(self, obs: np.ndarray) -> dict[str, Any]:
        return {
            "noise": self.noise.state_dict(),
            "generators": self.generators.state_dict(),
            "tape": self.tape.state_dict(),
            "obs": obs.copy(),
            "episode": dict(self.episode),
            "counts": dict(self.counts),
            "window": {key: list(values) for key, values in self.window.items()},
            "eval_returns": list(self.eval_returns),
            "wandb_run_id": self.loggers.wandb.run_id,
        }

    def restore(self, state: dict[str, Any]) -> np.ndarray:
        """Continue from ``state``: the env is brought back to the saved point of its episode by replay."""
        self.noise.load_state_dict(state["noise"])
        self.generators.load_state_dict(state["generators"])
        self.episode, self.counts = dict(state["episode"]), dict(state["counts"])
        self.window = {key: list(values) for key, values in state["window"].items()}
        self.eval_returns = list(state["eval_returns"])
        return self.tape.restore(self.env, state["tape"], state["obs"])

    def close(self, summary: RunSummary) -> None:
        self.loggers.write_summary(summary)
        # "running": stopped after a checkpoint by a signal or a preemption, to be resumed
        self.loggers.close(exit_code=0 if summary.status == "complete" else 1, resumable=summary.status == "running")
        self.env.close()
        for env in self.eval_envs:
            env.close()
