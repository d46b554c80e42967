"""Training: ``main`` is the Hydra entrypoint (``td3x-train``); ``run`` trains without Hydra.

The loop follows the paper's protocol (§6.1): uniform random actions for ``env.random_steps`` steps,
then π_φ(s) + exploration noise; updates once t >= max(random_steps, batch_size); an evaluation of
``run.eval_episodes`` noise-free episodes after step 0, every ``run.eval_every`` steps and after the
last step.
"""

from __future__ import annotations

import logging
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import hydra
import numpy as np
import torch
import yaml
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from td3x import checkpoint
from td3x.config import (
    CONF_DIR,
    ConfigError,
    Device,
    TrainConfig,
    UpdateSchedule,
    register_configs,
    to_container,
    to_typed,
)
from td3x.envs import check_env, env_spec, make_env
from td3x.loggers import CONFIG_FILE, RunLoggers, write_json_atomic
from td3x.noise import make_noise
from td3x.progress import Progress
from td3x.provenance import collect_provenance
from td3x.replay_buffer import ReplayBuffer
from td3x.rollout import evaluate
from td3x.seeding import global_rng_state, seed_everything
from td3x.td3 import TD3

log = logging.getLogger(__name__)


class TrainingError(RuntimeError):
    """A run that cannot go on (e.g. a non-finite loss); its logs and last checkpoint are kept."""


def resolve_device(device: Device) -> torch.device:
    if device is Device.auto:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device.value)


def check_runtime(config: TrainConfig) -> list[str]:
    """Problems only the installed libraries can see: the env id and action space, CUDA."""
    problems = check_env(config.env)
    if config.run.device is Device.cuda and not torch.cuda.is_available():
        problems.append("run.device='cuda' is not allowed: torch sees no CUDA device here; use auto or cpu")
    return problems


class Trainer:
    """One run's objects and counters; ``train`` is the loop, each phase one short method."""

    def __init__(self, config: TrainConfig, run_dir: Path, choices: dict[str, str] | None = None) -> None:
        self.config, self.run_dir, self.choices = config, run_dir, choices or {}
        run_dir.mkdir(parents=True, exist_ok=True)
        torch.set_num_threads(config.run.num_threads)
        self.device = resolve_device(config.run.device)
        self.generators = seed_everything(config.seed, self.device)
        self.env, self.eval_env = make_env(config.env), make_env(config.env)
        spec = env_spec(self.env)
        self.agent = TD3(spec, config.agent, self.device, self.generators.torch, config.env.normalize_obs)
        self.buffer = ReplayBuffer(
            spec.obs_dim, spec.action_dim, config.agent.buffer_size, self.generators.replay, self.device
        )
        self.noise = make_noise(config.noise, spec.action_dim, self.generators.noise)
        self.action_dim = spec.action_dim
        self.update_start = max(config.env.random_steps, config.agent.batch_size)
        self.step = 0  # env steps taken
        self.pending_updates = 0  # updates earned by env steps and not yet run (episode_end batches them)
        self.episode = {"return": 0.0, "length": 0}
        self.counts = {"episodes": 0, "terminated": 0, "truncated": 0}
        self.window: dict[str, list[float]] = {"episode_return": [], "episode_length": [], "at_bounds": []}
        self.last_update: dict[str, torch.Tensor] = {}
        self.eval_returns: list[float] = []
        self.phase_time = {"env": 0.0, "update": 0.0, "eval": 0.0}
        self.start_time = time.perf_counter()
        self.loggers = RunLoggers(run_dir, config.logging.wandb_mode, self._wandb_kwargs())
        self.progress = Progress(config.run.total_steps)

    # ------------------------------------------------------------------ the loop
    def train(self) -> dict[str, Any]:
        obs, _ = self.env.reset(seed=self.config.seed)
        self._evaluate()  # entry 0: the untrained policy
        while self.step < self.config.run.total_steps:
            obs = self._collect(obs)
            self._run_pending_updates(episode_over=self.episode["length"] == 0)
            if self.step % self.config.run.log_every == 0:
                self._log_training()
            if self.step % self.config.run.eval_every == 0 or self.step == self.config.run.total_steps:
                self._evaluate()
            if self.step % self.config.run.checkpoint_every == 0:
                self._save_checkpoint()
        self._save_checkpoint()
        return self._summary("complete")

    def _collect(self, obs: np.ndarray) -> np.ndarray:
        """Act, step the env, store the transition; on episode end, reset the env and the noise."""
        started = time.perf_counter()
        action = self._action(obs)
        next_obs, reward, terminated, truncated, _ = self.env.step(action)
        self.buffer.add(obs, action, float(reward), next_obs, terminated)  # terminal mask: terminated only
        self.agent.obs_normalizer.update(obs)  # statistics of the states acted from (a no-op unless enabled)
        if self.step >= self.update_start:
            self.pending_updates += self.config.agent.updates_per_step
        self.step += 1
        self.episode["return"] += float(reward)
        self.episode["length"] += 1
        if terminated or truncated:
            self._end_episode(terminated)
            next_obs, _ = self.env.reset()
            self.noise.reset()
        self.phase_time["env"] += time.perf_counter() - started
        return next_obs

    def _action(self, obs: np.ndarray) -> np.ndarray:
        if self.step < self.config.env.random_steps:
            return self.generators.actions.uniform(-1.0, 1.0, self.action_dim).astype(np.float32)
        action = np.clip(self.agent.act(obs) + self.noise.sample(self.step), -1.0, 1.0).astype(np.float32)
        self.window["at_bounds"].append(float(np.mean(np.abs(action) >= 1.0)))
        return action

    def _end_episode(self, terminated: bool) -> None:
        self.counts["episodes"] += 1
        self.counts["terminated" if terminated else "truncated"] += 1
        self.window["episode_return"].append(self.episode["return"])
        self.window["episode_length"].append(self.episode["length"])
        self.episode = {"return": 0.0, "length": 0}

    def _run_pending_updates(self, episode_over: bool) -> None:
        """``per_step``: right after each env step. ``episode_end``: the episode's updates at its end."""
        batched = self.config.agent.update_schedule is UpdateSchedule.episode_end
        if self.pending_updates == 0 or (batched and not episode_over and self.step < self.config.run.total_steps):
            return
        started = time.perf_counter()
        for _ in range(self.pending_updates):
            metrics = self.agent.update(self.buffer.sample(self.config.agent.batch_size))
            self.last_update.update(metrics)
        self.pending_updates = 0
        self.phase_time["update"] += time.perf_counter() - started

    # ------------------------------------------------------------------ evaluation and logging
    def _evaluate(self) -> None:
        started = time.perf_counter()
        result = evaluate(self.agent.act, self.eval_env, self.config.run.eval_episodes, self.config.eval_seed)
        eval_time = time.perf_counter() - started
        self.phase_time["eval"] += eval_time
        self.eval_returns.append(float(result.returns.mean()))
        row = {
            "return_mean": float(result.returns.mean()),
            "return_std": float(result.returns.std()),
            **{f"return_{i}": float(value) for i, value in enumerate(result.returns)},
            "length_mean": float(result.lengths.mean()),
            "eval_time_s": eval_time,
            "wall_time_s": self._wall_time(),
            "sps": self.step / max(self._wall_time(), 1e-9),
        }
        self.loggers.log_eval(row, self.step)
        self.loggers.write_summary(self._summary("running"))
        self.progress.evaluated(self.step, row["return_mean"])

    def _log_training(self) -> None:
        metrics = {key: float(value) for key, value in self.last_update.items()}
        for name, value in metrics.items():
            if not np.isfinite(value):
                raise TrainingError(
                    f"non-finite {name}={value} at env step {self.step} (update {self.agent.num_updates})"
                )
        for name, values in self.window.items():
            if values:
                metrics[f"{name}_mean"] = float(np.mean(values))
            values.clear()
        wall = self._wall_time()
        metrics |= {
            **{f"{key}_count": float(value) for key, value in self.counts.items()},
            "updates": float(self.agent.num_updates),
            "buffer_size": float(len(self.buffer)),
            "sps": self.step / max(wall, 1e-9),
            "wall_time_s": wall,
            **{f"{phase}_time_s": seconds for phase, seconds in self.phase_time.items()},
        }
        self.loggers.log_train(metrics, self.step)
        self.progress.advance(self.step, metrics["sps"])

    def _wall_time(self) -> float:
        return time.perf_counter() - self.start_time

    def _summary(self, status: str, failure: str | None = None) -> dict[str, Any]:
        last10 = self.eval_returns[-10:]
        return {
            "status": status,
            "failure": failure,
            "steps": self.step,
            "final_return": self.eval_returns[-1] if self.eval_returns else None,
            "last10_return": float(np.mean(last10)) if last10 else None,
            "evaluations": len(self.eval_returns),
            "updates": self.agent.num_updates,
            "wall_time_s": self._wall_time(),
            "run_dir": str(self.run_dir),
        }

    def _wandb_kwargs(self) -> dict[str, Any]:
        config = self.config
        agent = self.choices.get("agent", "custom")
        return {
            "project": config.logging.project,
            "group": config.logging.group,
            "name": f"{self.choices.get('env', config.env.id)}-{agent}-{config.paper_row}-s{config.seed}",
            "tags": [config.env.id, agent, config.paper_row, f"seed{config.seed}", *config.logging.tags],
            "config": {**to_container(config), "choices": self.choices},
        }

    # ------------------------------------------------------------------ state
    def _save_checkpoint(self) -> None:
        checkpoint.save(
            self.run_dir / checkpoint.CHECKPOINT_FILE,
            {
                "agent": self.agent.state_dict(),
                "buffer": self.buffer.state_dict(),
                "noise": self.noise.state_dict(),
                "generators": self.generators.state_dict(),
                "global_rng": global_rng_state(),
                "env_rng": self.env.unwrapped.np_random.bit_generator.state,
                "counters": {"step": self.step, **self.counts},
                "eval_returns": list(self.eval_returns),
                "wandb_run_id": self.loggers.wandb.run_id,
                "config": to_container(self.config),
            },
        )

    def close(self, status: str, failure: str | None = None) -> dict[str, Any]:
        summary = self._summary(status, failure)
        self.loggers.write_summary(summary)
        self.loggers.close(exit_code=0 if status == "complete" else 1)
        self.progress.close()
        self.env.close()
        self.eval_env.close()
        return summary


def run(config: TrainConfig, run_dir: Path | str, choices: dict[str, str] | None = None) -> dict[str, Any]:
    """Train one run in ``run_dir`` and return its summary (the contents of ``summary.json``).

    Args:
        config: a checked config (building a ``TrainConfig`` runs the range checks).
        run_dir: where the run's files go; created if missing.
        choices: the Hydra group choices (env, agent, noise, ablation), recorded in ``config.yaml``.
    """
    run_dir = Path(run_dir)
    trainer = Trainer(config, run_dir, choices)
    (run_dir / CONFIG_FILE).write_text(
        yaml.safe_dump({**to_container(config), "choices": choices or {}}, sort_keys=False)
    )
    write_json_atomic(run_dir / "provenance.json", collect_provenance())
    try:
        trainer.train()
    except BaseException as error:
        trainer.close("failed", f"{type(error).__name__}: {error}")
        raise
    return trainer.close("complete")


# ---------------------------------------------------------------------- Hydra entrypoint
def _remove_if_only_hydra_files(run_dir: Path) -> None:
    """Hydra creates the run dir (``.hydra/`` and a log) before td3x sees the config. Remove it when that is
    all it holds: a refused config leaves nothing behind, and a dir with results is never touched."""
    if run_dir.is_dir() and all(entry.name == ".hydra" or entry.suffix == ".log" for entry in run_dir.iterdir()):
        shutil.rmtree(run_dir, ignore_errors=True)


def _fail(multirun: bool, label: str, problems: list[str], exit_code: int, error: Exception) -> None:
    """A single run prints one line per problem and exits; a multirun job raises so the sweep goes on
    (under Hydra's basic launcher every job shares one process: one sys.exit would end them all)."""
    if multirun:
        raise error
    for problem in problems:
        print(f"{label}: {problem}", file=sys.stderr)
    sys.exit(exit_code)


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="train")
def _hydra_main(cfg: DictConfig) -> dict[str, Any] | None:
    hydra_config = HydraConfig.get()
    run_dir = Path(hydra_config.runtime.output_dir)
    multirun = hydra_config.mode == RunMode.MULTIRUN
    choices = {
        group: str(option)
        for group, option in hydra_config.runtime.choices.items()
        if "/" not in group and option is not None and group != "schema"
    }
    try:
        config = to_typed(cfg)
        problems = check_runtime(config)
        if problems:
            raise ConfigError(problems)
    except ConfigError as error:
        _remove_if_only_hydra_files(run_dir)
        _fail(multirun, "config error", error.problems, 2, error)
        return None
    log.info("run dir: %s", run_dir)
    try:
        summary = run(config, run_dir, choices)
    except TrainingError as error:
        _fail(multirun, "training failed", [str(error)], 1, error)
        return None
    log.info(
        "done: final eval return %.2f, last-10 mean %.2f; files in %s",
        summary["final_return"],
        summary["last10_return"],
        run_dir,
    )
    return summary


def main() -> None:
    """Console script ``td3x-train``: Hydra's command line (overrides, ``-m`` for multirun)."""
    register_configs()
    _hydra_main()


if __name__ == "__main__":
    main()
