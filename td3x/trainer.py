"""The training loop, with the paper's protocol (§6.1), for one seed or several in one process, and its
exact save and restore.

Random actions for ``env.random_steps`` steps, then π_φ(s) + exploration noise; updates once
t >= ``agent.update_start`` (default max(random_steps, batch_size)); an evaluation of ``run.eval_episodes``
noise-free episodes after step 0, every ``run.eval_every`` steps and after the last step. A checkpoint is
written every ``run.checkpoint_every`` steps and at the end; a restored run continues exactly as if it had
never stopped.

``run.num_seeds = K`` trains seeds ``seed … seed + K - 1`` side by side: each has its own envs, buffer,
noise, generators and run dir (its own ``config.yaml``, logs and summary, so reports see K ordinary runs),
while one stacked agent acts for all of them and updates them all in one call (``td3x.td3``). They step in
lockstep: env step t of every seed, then update t of every seed.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from td3x import checkpoint
from td3x.config import Device, TrainConfig, UpdateSchedule, seed_run_dirs, to_container
from td3x.envs import env_spec, make_env
from td3x.episode_tape import EpisodeTape
from td3x.loggers import RunLoggers
from td3x.noise import make_noise
from td3x.overestimation import overestimation_biases
from td3x.progress import Progress
from td3x.replay_buffer import ReplayBuffer
from td3x.resume import config_hash
from td3x.rollout import EvalResult, evaluate_seeds
from td3x.seeding import generators_of, global_rng_state, restore_global_rng_state, seed_everything
from td3x.td3 import TD3
from td3x.video import TrainingVideos


class TrainingError(RuntimeError):
    """A run that cannot go on (e.g. a non-finite loss); its logs and last good checkpoint are kept."""


class RunInterrupted(RuntimeError):
    """SIGTERM/SIGINT stopped the run after a checkpoint: relaunching resumes it."""


PHASES = ("act", "env", "update", "eval", "log", "checkpoint")


def resolve_device(device: Device) -> torch.device:
    if device is Device.auto:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device.value)


def seed_configs(config: TrainConfig) -> list[TrainConfig]:
    """The config of each seed of the process: ``seed + k``, everything else shared (``run.num_seeds`` kept,
    so each seed's ``config.yaml`` records the mode it was trained in)."""
    return [dataclasses.replace(config, seed=config.seed + k) for k in range(config.run.num_seeds)]


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
        # the first seed also seeds the global RNGs (libraries); every seed has its own generators
        self.generators = seed_everything(config.seed, device) if index == 0 else generators_of(config.seed, device)
        self.env = make_env(config.env)
        self.eval_envs = [make_env(config.env) for _ in range(config.run.eval_episodes)]
        spec = env_spec(self.env)
        self.action_dim = spec.action_dim
        self.noise = make_noise(config.noise, self.action_dim, self.generators.noise)
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
        return self.tape.reset(self.env, self.config.seed if first else None)

    def random_action(self) -> np.ndarray:
        return self.generators.actions.uniform(-1.0, 1.0, self.action_dim).astype(np.float32)

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

    def summary(self, status: str, step: int, updates: int, wall_time: float, **extra: Any) -> dict[str, Any]:
        last10 = self.eval_returns[-10:]
        return {
            "status": status,
            "interrupted": extra.get("interrupted"),
            "failure": extra.get("failure"),
            "steps": step,
            "final_return": self.eval_returns[-1] if self.eval_returns else None,
            "last10_return": float(np.mean(last10)) if last10 else None,
            "evaluations": len(self.eval_returns),
            "updates": updates,
            "wall_time_s": wall_time,
            "run_dir": str(self.run_dir),
        }

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

    def close(self, summary: dict[str, Any]) -> None:
        self.loggers.write_summary(summary)
        self.loggers.close(exit_code=0 if summary["status"] == "complete" else 1)
        self.env.close()
        for env in self.eval_envs:
            env.close()


class Trainer:
    """One process's seeds, their stacked agent and buffers; ``train`` is the loop, each phase one method.

    Args:
        config: the checked config (``seed`` is the first seed; ``run.num_seeds`` how many).
        run_dir: where the run's files go (created if missing); K seeds write in ``seed_<seed>`` below it.
        choices: the Hydra group choices, for the W&B runs' names and tags.
        wandb_run_ids: continue these W&B runs, one per seed (a resumed run keeps its ids).
    """

    def __init__(
        self,
        config: TrainConfig,
        run_dir: Path,
        choices: dict[str, str] | None = None,
        wandb_run_ids: list[str | None] | None = None,
    ) -> None:
        self.config, self.run_dir, self.choices = config, run_dir, choices or {}
        torch.set_num_threads(config.run.num_threads)
        self.device = resolve_device(config.run.device)
        configs, dirs = seed_configs(config), seed_run_dirs(run_dir, config.seed, config.run.num_seeds)
        run_ids = wandb_run_ids or [None] * len(configs)
        self.seeds = [
            SeedRun(k, seed_config, seed_dir, self.device, self._wandb_kwargs(seed_config, run_id))
            for k, (seed_config, seed_dir, run_id) in enumerate(zip(configs, dirs, run_ids, strict=True))
        ]
        spec = env_spec(self.seeds[0].env)
        generators = [seed.generators for seed in self.seeds]
        self.agent = TD3(
            spec, config.agent, self.device, generators, config.env.normalize_obs, compile=config.run.compile
        )
        self.buffer = ReplayBuffer(
            spec.obs_dim, spec.action_dim, config.agent.buffer_size, [g.replay for g in generators], self.device
        )
        self.update_start = (
            max(config.env.random_steps, config.agent.batch_size)
            if config.agent.update_start is None
            else config.agent.update_start
        )
        self.step = 0  # env steps taken by each seed
        self.pending_updates = 0  # updates earned by env steps and not yet run (episode_end batches them)
        self.obs = np.zeros((len(self.seeds), spec.obs_dim), dtype=np.float32)  # each seed's current observation
        self.last_update: dict[str, list[float]] = {}  # the last recorded update's metrics, one value per seed
        self.phase_time = dict.fromkeys(PHASES, 0.0)  # seconds spent in each phase of the loop
        self.stop_requested: str | None = None  # the signal that asked the run to stop
        self.start_time, self.earlier_wall_time = time.perf_counter(), 0.0
        self.progress = Progress(config.run.total_steps * len(self.seeds))

    # ------------------------------------------------------------------ the loop
    def train(self) -> list[dict[str, Any]]:
        if self.step == 0:
            self.obs = np.stack([seed.reset(first=True) for seed in self.seeds])
            self._evaluate()  # entry 0: the untrained policy
            self._record_video()
        while self.step < self.config.run.total_steps:
            episode_over = self._collect()
            self._run_pending_updates(episode_over)
            self._log_evaluate_checkpoint()
        self.save_checkpoint(final=True)
        return self.summaries("complete")

    def _collect(self) -> bool:
        """Act, step every seed's env, store the transitions; whether seed 0's episode ended."""
        started = time.perf_counter()
        actions = self._actions()
        acted = time.perf_counter()
        self.phase_time["act"] += acted - started
        steps = [seed.step(action) for seed, action in zip(self.seeds, actions, strict=True)]
        next_obs = np.stack([s[0] for s in steps])
        rewards, terminated, truncated = (np.array([s[i] for s in steps]) for i in (1, 2, 3))
        self.buffer.add(self.obs, actions, rewards, next_obs, terminated)  # terminal mask: terminated only
        self.agent.obs_normalizer.update(self.obs)  # statistics of the states acted from (a no-op unless enabled)
        if self.step >= self.update_start:
            self.pending_updates += self.config.agent.updates_per_step
        self.step += 1
        for k in np.flatnonzero(terminated | truncated):
            next_obs[k] = self.seeds[k].end_episode(bool(terminated[k]))
        self.obs = next_obs
        self.phase_time["env"] += time.perf_counter() - acted
        return bool(terminated[0] or truncated[0])

    def _actions(self) -> np.ndarray:
        if self.step < self.config.env.random_steps:
            return np.stack([seed.random_action() for seed in self.seeds])
        policy_actions = self.agent.act(self.obs[:, None])[:, 0]  # every seed's actor in one call
        return np.stack([seed.noisy_action(a, self.step) for seed, a in zip(self.seeds, policy_actions, strict=True)])

    def _run_pending_updates(self, episode_over: bool) -> None:
        """``per_step``: right after each env step. ``episode_end`` (one seed only): the episode's updates at
        its end. Each such burst restarts the delay's count with ``agent.delay_per_burst``. Only updates just
        before a log row compute statistics; the others skip them."""
        run = self.config.run
        batched = self.config.agent.update_schedule is UpdateSchedule.episode_end
        if self.pending_updates == 0 or (batched and not episode_over and self.step < run.total_steps):
            return
        started = time.perf_counter()
        # the last d updates before a log row record their statistics: one of them is an actor update
        delay = self.config.agent.policy_delay
        log_soon = batched or -self.step % run.log_every < delay
        if self.config.agent.delay_per_burst:
            self.agent.restart_delay()
        for i in range(self.pending_updates):
            record = log_soon and i >= self.pending_updates - delay
            metrics = self.agent.update(self.buffer.sample(self.config.agent.batch_size), record)
            self.last_update.update({name: value.tolist() for name, value in metrics.items()})
        self.pending_updates = 0
        self.phase_time["update"] += time.perf_counter() - started

    def _log_evaluate_checkpoint(self) -> None:
        run = self.config.run
        if self.step % run.log_every == 0:
            started = time.perf_counter()
            self._log_training()
            self.phase_time["log"] += time.perf_counter() - started
        if self.step % run.eval_every == 0 or self.step == run.total_steps:
            self._evaluate()
        self._record_video()
        if (self.step % run.checkpoint_every == 0 or self.stop_requested) and self.step < run.total_steps:
            started = time.perf_counter()
            self.save_checkpoint()
            self.phase_time["checkpoint"] += time.perf_counter() - started
            if self.stop_requested:
                raise RunInterrupted(f"stopped by {self.stop_requested} at env step {self.step}, after a checkpoint")

    # ------------------------------------------------------------------ evaluation and logging
    def _evaluate(self) -> None:
        started = time.perf_counter()
        envs = [seed.eval_envs for seed in self.seeds]
        results = evaluate_seeds(self.agent.act, envs, [seed.config.eval_seed for seed in self.seeds])
        biases = overestimation_biases(self.agent, [r.episodes for r in results], self.config.agent.discount)
        eval_time = time.perf_counter() - started
        self.phase_time["eval"] += eval_time
        for seed, result, bias in zip(self.seeds, results, biases, strict=True):
            self._log_evaluation(seed, result, bias, eval_time)
        self.progress.evaluated(self.step * len(self.seeds), float(np.mean([r.returns.mean() for r in results])))

    def _log_evaluation(self, seed: SeedRun, result: EvalResult, bias: dict[str, float], eval_time: float) -> None:
        seed.eval_returns.append(float(result.returns.mean()))
        row = {
            "return_mean": float(result.returns.mean()),
            "return_std": float(result.returns.std()),
            **{f"return_{i}": float(value) for i, value in enumerate(result.returns)},
            "length_mean": float(result.lengths.mean()),
            **bias,
            "eval_time_s": eval_time,
            "wall_time_s": self.wall_time(),
            "sps": self.step / max(self.wall_time(), 1e-9),
        }
        seed.loggers.log_eval(row, self.step)
        seed.loggers.write_summary(self._summary(seed, "running"))

    def _record_video(self) -> None:
        """Every ``logging.video_every`` steps, a video of each seed's evaluation episode 0 (its time counts as
        evaluation)."""
        due = [seed for seed in self.seeds if seed.videos.due(self.step)]  # checked every step: no policy built
        if not due:
            return
        started = time.perf_counter()
        for seed in due:
            seed.videos.maybe_record(self.agent.seed_policy(seed.index), self.step)
        self.phase_time["eval"] += time.perf_counter() - started

    def _log_training(self) -> None:
        for name, values in self.last_update.items():
            for seed, value in zip(self.seeds, values, strict=True):
                if not np.isfinite(value):
                    raise TrainingError(
                        f"non-finite {name}={value} for seed {seed.config.seed} at env step {self.step} "
                        f"(update {self.agent.num_updates}); the last good checkpoint is kept"
                    )
        wall = self.wall_time()
        shared = {
            "updates": float(self.agent.num_updates),
            "buffer_size": float(len(self.buffer)),
            "sps": self.step / max(wall, 1e-9),
            "wall_time_s": wall,
            **{f"{phase}_time_s": seconds for phase, seconds in self.phase_time.items()},
        }
        for k, seed in enumerate(self.seeds):
            update_metrics = {name: values[k] for name, values in self.last_update.items()}
            seed.loggers.log_train(seed.training_row(update_metrics) | shared, self.step)
        self.progress.advance(self.step * len(self.seeds), shared["sps"] * len(self.seeds))

    def wall_time(self) -> float:
        """Seconds of training, summed over every segment of a resumed run."""
        return self.earlier_wall_time + time.perf_counter() - self.start_time

    def _summary(self, seed: SeedRun, status: str, **extra: Any) -> dict[str, Any]:
        return seed.summary(status, self.step, self.agent.num_updates, self.wall_time(), **extra)

    def summaries(self, status: str, **extra: Any) -> list[dict[str, Any]]:
        return [self._summary(seed, status, **extra) for seed in self.seeds]

    def _wandb_kwargs(self, config: TrainConfig, run_id: str | None) -> dict[str, Any]:
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
        """Write the whole training state at a step boundary: one file for the process (``checkpoint.pt`` in
        ``run_dir``), and with K seeds a one-seed checkpoint in each seed's dir (without its buffer: for
        ``td3x-eval``; resuming uses the process's file). A finished run drops the replay buffers unless
        ``run.keep_buffer`` (Table 2's 440 buffers would need ~150 GB)."""
        networks = [*self.agent.actor.parameters(), *self.agent.critic.parameters()]
        if not all(torch.isfinite(p).all() for p in networks):
            raise TrainingError(
                f"non-finite network parameters at env step {self.step}; the last good checkpoint is kept"
            )
        keep_buffer = not final or self.config.run.keep_buffer
        checkpoint.save(self.run_dir / checkpoint.CHECKPOINT_FILE, self._checkpoint_parts(keep_buffer))
        if len(self.seeds) > 1:
            for seed in self.seeds:
                checkpoint.save(seed.run_dir / checkpoint.CHECKPOINT_FILE, self._seed_checkpoint_parts(seed))

    def _checkpoint_parts(self, keep_buffer: bool) -> dict[str, Any]:
        config = to_container(self.config)
        return {
            "agent": self.agent.state_dict(),
            "buffer": self.buffer.state_dict() if keep_buffer else None,
            "seeds": [seed.state_dict(obs) for seed, obs in zip(self.seeds, self.obs, strict=True)],
            "global_rng": global_rng_state(),
            "counters": {"step": self.step, "pending_updates": self.pending_updates},
            "last_update": dict(self.last_update),
            "phase_time": dict(self.phase_time),
            "wall_time_s": self.wall_time(),
            "wandb_run_id": self.seeds[0].loggers.wandb.run_id,
            "config": config,
            "config_hash": config_hash(config),
        }

    def _seed_checkpoint_parts(self, seed: SeedRun) -> dict[str, Any]:
        """Seed k alone, as a one-seed run's final checkpoint (no buffer): ``td3x-eval`` reads it like any."""
        config = to_container(seed.config)
        return {
            "agent": self.agent.state_dict(seed_index=seed.index),
            "buffer": None,
            "seeds": [seed.state_dict(self.obs[seed.index])],
            "counters": {"step": self.step, "pending_updates": self.pending_updates},
            "wall_time_s": self.wall_time(),
            "wandb_run_id": seed.loggers.wandb.run_id,
            "config": config,
            "config_hash": config_hash(config),
        }

    def restore(self, parts: dict[str, Any]) -> None:
        """Continue from a checkpoint: every seed's env is replayed to where it was, so the run goes on
        exactly as it would have."""
        self.agent.load_state_dict(parts["agent"])
        if parts["buffer"] is not None:
            self.buffer.load_state_dict(parts["buffer"])
        restore_global_rng_state(parts["global_rng"])
        self.obs = np.stack([seed.restore(state) for seed, state in zip(self.seeds, parts["seeds"], strict=True)])
        self.step, self.pending_updates = parts["counters"]["step"], parts["counters"]["pending_updates"]
        self.last_update = dict(parts["last_update"])
        self.phase_time, self.earlier_wall_time = dict(parts["phase_time"]), parts["wall_time_s"]
        self.progress.advance(self.step * len(self.seeds), 0.0)

    def close(self, status: str, **extra: Any) -> list[dict[str, Any]]:
        summaries = self.summaries(status, **extra)
        for seed, summary in zip(self.seeds, summaries, strict=True):
            seed.close(summary)
        self.progress.close()
        return summaries
