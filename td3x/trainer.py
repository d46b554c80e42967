"""The training loop of one run, with the paper's protocol (§6.1), and its exact save and restore.

Random actions for ``env.random_steps`` steps, then π_φ(s) + exploration noise; updates once
t >= max(random_steps, batch_size); an evaluation of ``run.eval_episodes`` noise-free episodes after
step 0, every ``run.eval_every`` steps and after the last step. Checkpoints are written at the first
episode boundary after every ``run.checkpoint_every`` steps (so the env's RNG state is all the env
state there is) and at the end; a restored run continues exactly as if it had never stopped.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from td3x import checkpoint
from td3x.config import Device, TrainConfig, UpdateSchedule, to_container
from td3x.envs import env_spec, make_env
from td3x.loggers import RunLoggers
from td3x.noise import make_noise
from td3x.overestimation import overestimation_bias
from td3x.progress import Progress
from td3x.replay_buffer import ReplayBuffer
from td3x.resume import config_hash
from td3x.rollout import evaluate
from td3x.seeding import global_rng_state, restore_global_rng_state, seed_everything
from td3x.td3 import TD3
from td3x.video import TrainingVideos


class TrainingError(RuntimeError):
    """A run that cannot go on (e.g. a non-finite loss); its logs and last good checkpoint are kept."""


class RunInterrupted(RuntimeError):
    """SIGTERM/SIGINT stopped the run at an episode boundary, after a checkpoint: relaunching resumes it."""


def resolve_device(device: Device) -> torch.device:
    if device is Device.auto:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device.value)


class Trainer:
    """One run's objects and counters; ``train`` is the loop, each phase one short method.

    Args:
        config: the checked config.
        run_dir: where the run's files go (created if missing).
        choices: the Hydra group choices, for the W&B run's name and tags.
        wandb_run_id: continue this W&B run (a resumed run keeps its id).
    """

    def __init__(
        self, config: TrainConfig, run_dir: Path, choices: dict[str, str] | None = None, wandb_run_id: str | None = None
    ) -> None:
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
        self.last_update: dict[str, Any] = {}
        self.eval_returns: list[float] = []
        self.phase_time = {"env": 0.0, "update": 0.0, "eval": 0.0}
        self.checkpoint_due = False  # a checkpoint mark was passed; save at the next episode boundary
        self.stop_requested: str | None = None  # the signal that asked the run to stop
        self.start_time, self.earlier_wall_time = time.perf_counter(), 0.0
        self.loggers = RunLoggers(run_dir, config.logging.wandb_mode, self._wandb_kwargs(wandb_run_id))
        self.videos = TrainingVideos(
            config.env, run_dir, config.eval_seed, config.logging.video_every, self.loggers.wandb.log
        )
        self.progress = Progress(config.run.total_steps)

    # ------------------------------------------------------------------ the loop
    def train(self) -> dict[str, Any]:
        obs: np.ndarray | None = None  # None: an episode has ended and the env needs a reset
        if self.step == 0:
            obs, _ = self.env.reset(seed=self.config.seed)
            self._evaluate()  # entry 0: the untrained policy
            self._record_video()
        while self.step < self.config.run.total_steps:
            if obs is None:
                obs, _ = self.env.reset()
                self.noise.reset()
            obs = self._collect(obs)
            episode_over = obs is None
            self._run_pending_updates(episode_over)
            self._log_evaluate_checkpoint(episode_over)
        self.save_checkpoint(final=True)
        return self.summary("complete")

    def _collect(self, obs: np.ndarray) -> np.ndarray | None:
        """Act, step the env, store the transition; the next observation, or None when the episode ended."""
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
        self.phase_time["env"] += time.perf_counter() - started
        return None if terminated or truncated else next_obs

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

    def _log_evaluate_checkpoint(self, episode_over: bool) -> None:
        run = self.config.run
        if self.step % run.log_every == 0:
            self._log_training()
        if self.step % run.eval_every == 0 or self.step == run.total_steps:
            self._evaluate()
        self._record_video()
        self.checkpoint_due |= self.step % run.checkpoint_every == 0
        if episode_over and (self.checkpoint_due or self.stop_requested) and self.step < run.total_steps:
            self.save_checkpoint()
            if self.stop_requested:
                raise RunInterrupted(f"stopped by {self.stop_requested} at env step {self.step}, after a checkpoint")

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
            **overestimation_bias(self.agent, result.episodes, self.config.agent.discount),
            "eval_time_s": eval_time,
            "wall_time_s": self.wall_time(),
            "sps": self.step / max(self.wall_time(), 1e-9),
        }
        self.loggers.log_eval(row, self.step)
        self.loggers.write_summary(self.summary("running"))
        self.progress.evaluated(self.step, row["return_mean"])

    def _record_video(self) -> None:
        """Every ``logging.video_every`` steps, a video of evaluation episode 0 (its time counts as evaluation)."""
        started = time.perf_counter()
        if self.videos.maybe_record(self.agent.act, self.step) is not None:
            self.phase_time["eval"] += time.perf_counter() - started

    def _log_training(self) -> None:
        metrics = {key: float(value) for key, value in self.last_update.items()}
        for name, value in metrics.items():
            if not np.isfinite(value):
                raise TrainingError(
                    f"non-finite {name}={value} at env step {self.step} "
                    f"(update {self.agent.num_updates}); the last good checkpoint is kept"
                )
        for name, values in self.window.items():
            if values:
                metrics[f"{name}_mean"] = float(np.mean(values))
            values.clear()
        wall = self.wall_time()
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

    def wall_time(self) -> float:
        """Seconds of training, summed over every segment of a resumed run."""
        return self.earlier_wall_time + time.perf_counter() - self.start_time

    def summary(self, status: str, failure: str | None = None, interrupted: str | None = None) -> dict[str, Any]:
        last10 = self.eval_returns[-10:]
        return {
            "status": status,
            "interrupted": interrupted,
            "failure": failure,
            "steps": self.step,
            "final_return": self.eval_returns[-1] if self.eval_returns else None,
            "last10_return": float(np.mean(last10)) if last10 else None,
            "evaluations": len(self.eval_returns),
            "updates": self.agent.num_updates,
            "wall_time_s": self.wall_time(),
            "run_dir": str(self.run_dir),
        }

    def _wandb_kwargs(self, run_id: str | None) -> dict[str, Any]:
        config = self.config
        agent = self.choices.get("agent", "custom")
        return {
            "project": config.logging.project,
            "group": config.logging.group,
            "id": run_id,
            "name": f"{self.choices.get('env', config.env.id)}-{agent}-{config.paper_row}-s{config.seed}",
            "tags": [config.env.id, agent, config.paper_row, f"seed{config.seed}", *config.logging.tags],
            "config": {**to_container(config), "choices": self.choices},
        }

    # ------------------------------------------------------------------ state
    def save_checkpoint(self, final: bool = False) -> None:
        """Write the whole training state at a step boundary. A finished run drops the replay buffer unless
        ``run.keep_buffer`` (Table 2's 440 buffers would need ~150 GB)."""
        networks = itertools.chain(self.agent.actor.parameters(), self.agent.critic.parameters())
        if not all(torch.isfinite(p).all() for p in networks):
            raise TrainingError(
                f"non-finite network parameters at env step {self.step}; the last good checkpoint is kept"
            )
        keep_buffer = not final or self.config.run.keep_buffer
        config = to_container(self.config)
        checkpoint.save(
            self.run_dir / checkpoint.CHECKPOINT_FILE,
            {
                "agent": self.agent.state_dict(),
                "buffer": self.buffer.state_dict() if keep_buffer else None,
                "noise": self.noise.state_dict(),
                "generators": self.generators.state_dict(),
                "global_rng": global_rng_state(),
                "env_rng": self.env.unwrapped.np_random.bit_generator.state,
                "counters": {"step": self.step, "pending_updates": self.pending_updates, **self.counts},
                "window": {key: list(values) for key, values in self.window.items()},
                "last_update": {key: float(value) for key, value in self.last_update.items()},
                "phase_time": dict(self.phase_time),
                "wall_time_s": self.wall_time(),
                "eval_returns": list(self.eval_returns),
                "wandb_run_id": self.loggers.wandb.run_id,
                "config": config,
                "config_hash": config_hash(config),
            },
        )
        self.checkpoint_due = False

    def restore(self, parts: dict[str, Any]) -> None:
        """Continue from a checkpoint taken at an episode boundary: the next step resets the env, whose RNG
        comes back as it was, so the run goes on exactly as it would have."""
        self.agent.load_state_dict(parts["agent"])
        if parts["buffer"] is not None:
            self.buffer.load_state_dict(parts["buffer"])
        self.noise.load_state_dict(parts["noise"])
        self.generators.load_state_dict(parts["generators"])
        restore_global_rng_state(parts["global_rng"])
        self.env.reset(seed=self.config.seed)  # creates the env's generator; its state is overwritten next
        self.env.unwrapped.np_random.bit_generator.state = parts["env_rng"]
        counters = dict(parts["counters"])
        self.step, self.pending_updates = counters.pop("step"), counters.pop("pending_updates")
        self.counts = counters
        self.window = {key: list(values) for key, values in parts["window"].items()}
        self.last_update = dict(parts["last_update"])
        self.phase_time, self.earlier_wall_time = dict(parts["phase_time"]), parts["wall_time_s"]
        self.eval_returns = list(parts["eval_returns"])
        self.progress.advance(self.step, 0.0)

    def close(self, status: str, failure: str | None = None, interrupted: str | None = None) -> dict[str, Any]:
        summary = self.summary(status, failure, interrupted)
        self.loggers.write_summary(summary)
        self.loggers.close(exit_code=0 if status == "complete" else 1)
        self.progress.close()
        self.env.close()
        self.eval_env.close()
        return summary
