"""The training loop, with the paper's protocol (§6.1), for one seed or several in one process, and its
exact save and restore.

Random actions for ``env.random_steps`` steps, then π_φ(s) + exploration noise; updates once
t >= ``agent.update_start`` (default max(random_steps, batch_size)); an evaluation of ``run.eval_episodes``
noise-free episodes after step 0, every ``run.eval_every`` steps and after the last step. A checkpoint is
written every ``run.checkpoint_every`` steps and at the end; a restored run continues exactly as if it had
never stopped. A stop asked for during an evaluation (``stop_requested``) abandons it within an episode: the
checkpoint then records the step's evaluation as due, and the resumed run makes it first, so that an evaluation
is recorded whole or not at all.

``run.num_seeds = K`` trains seeds ``seed … seed + K - 1`` side by side: each has its own envs, buffer,
noise, generators and run dir (:mod:`td3x.training.per_seed`), while one stacked agent acts for all of them and updates
them all in one call (``td3x.algo.td3``). They step in lockstep: env step t of every seed, then update t of every seed.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import torch

from td3x.algo.envs import env_spec
from td3x.algo.evaluation_episodes import EvalResult, EvaluationStopped, evaluate_seeds
from td3x.algo.function_types import EvaluationCallback
from td3x.algo.overestimation import overestimation_biases
from td3x.algo.replay_buffer import ReplayBuffer
from td3x.algo.seed_statistics import STALLED_ACTOR_NORM
from td3x.algo.seeding import global_rng_state, restore_global_rng_state
from td3x.algo.td3 import TD3
from td3x.config.enums import UpdateSchedule
from td3x.config.hydra import to_container
from td3x.config.schema import TrainConfig
from td3x.rundir import checkpoint
from td3x.rundir.layout import CHECKPOINT_FILE, RunSummary
from td3x.training.per_seed import ProcessSeed, SeedRun, process_seeds, seed_runs
from td3x.training.progress import Progress
from td3x.training.timing import RunClock

log = logging.getLogger(__name__)

# the agent's parts only training reads (a checkpoint without a buffer leaves them out: 3/4 of a TD3's floats)
TRAINING_ONLY_PARTS = ("actor_target", "critic_target", "actor_optimizer", "critic_optimizer")


class TrainingError(RuntimeError):
    """A run that cannot go on (e.g. a non-finite loss); its logs and last good checkpoint are kept."""


class RunInterrupted(RuntimeError):
    """SIGTERM/SIGINT stopped the run after a checkpoint: relaunching resumes it."""


class Trainer:
    """One process's seeds, their stacked agent and buffers; ``train`` is the loop, each phase one method.

    Args:
        config: the checked config (``seed`` is the first seed; ``run.num_seeds`` how many).
        run_dir: where the run's files go (created if missing); K seeds write in ``seed_<seed>`` below it.
        choices: the Hydra group choices, for the W&B runs' names and tags.
        wandb_run_ids: continue these W&B runs, one per seed (a resumed run keeps its ids).
        on_evaluation: called after each evaluation (:data:`EvaluationCallback`).
        seeds: the process's seeds as :func:`~td3x.training.run.run` computed them (default: from ``config``).
    """

    def __init__(
        self,
        config: TrainConfig,
        run_dir: Path,
        choices: dict[str, str] | None = None,
        wandb_run_ids: list[str | None] | None = None,
        on_evaluation: EvaluationCallback | None = None,
        seeds: list[ProcessSeed] | None = None,
    ) -> None:
        self.config, self.run_dir, self.choices = config, run_dir, choices or {}
        self.on_evaluation = on_evaluation
        torch.set_num_threads(config.run.num_threads)
        self.device = config.run.device.resolve()
        self.seeds = seed_runs(seeds or process_seeds(config, run_dir), self.device, self.choices, wandb_run_ids)
        spec = env_spec(self.seeds[0].env)
        generators = [seed.generators for seed in self.seeds]
        self.agent = TD3(
            spec,
            config.agent,
            self.device,
            generators,
            config.env.normalize_obs,
            config.run.compile,
            config.run.precision,
        )
        self.buffer = ReplayBuffer(
            spec.obs_dim, spec.action_dim, config.agent.buffer_size, [g.replay for g in generators], self.device
        )
        self.step = 0  # env steps taken by each seed
        self.pending_updates = 0  # updates earned by env steps and not yet run (episode_end batches them)
        self.obs = np.zeros((len(self.seeds), spec.obs_dim), dtype=np.float32)  # each seed's current observation
        self.last_update: dict[str, list[float]] = {}  # the last recorded update's metrics, one value per seed
        self.stop_requested: str | None = None  # the signal that asked the run to stop
        self.evaluation_due = False  # step's evaluation not yet made (a resumed run whose evaluation a stop cut)
        self.frozen_actors: set[int] = set()  # the seeds warned of an actor gradient of exactly 0 (once each)
        self.clock = RunClock()  # wall time and each phase's seconds; `with self.clock.timed(phase)` times a phase
        self.progress = Progress(config.run.total_steps, config.update_start, config.run.eval_every)

    # ------------------------------------------------------------------ the loop
    def train(self) -> None:
        if self.step == 0:
            self.obs = np.stack([seed.reset(first=True) for seed in self.seeds])
            self.evaluation_due = True  # entry 0: the untrained policy
        if self.evaluation_due:  # or the evaluation a stop cut short, made again on resume
            self._evaluate()
            self._record_video()
        while self.step < self.config.run.total_steps:
            episode_over = self._collect()
            self._run_pending_updates(episode_over)
            self._log_evaluate_checkpoint()
        self.save_checkpoint(final=True)
        self._warn_of_stalled_actors()

    def _collect(self) -> bool:
        """Act, step every seed's env, store the transitions; whether seed 0's episode ended."""
        with self.clock.timed("act"):
            actions = self._actions()
        with self.clock.timed("env"):
            steps = [seed.step(action) for seed, action in zip(self.seeds, actions, strict=True)]
            next_obs = np.stack([s[0] for s in steps])
            rewards, terminated, truncated = (np.array([s[i] for s in steps]) for i in (1, 2, 3))
            self.buffer.add(self.obs, actions, rewards, next_obs, terminated)  # terminal mask: terminated only
            self.agent.obs_normalizer.update(self.obs)  # statistics of the states acted from (no-op unless enabled)
            if self.step >= self.config.update_start:
                self.pending_updates += self.config.agent.updates_per_step
            self.step += 1
            for k in np.flatnonzero(terminated | truncated):
                next_obs[k] = self.seeds[k].end_episode(bool(terminated[k]))
            self.obs = next_obs
        return bool(terminated[0] or truncated[0])

    def _actions(self) -> np.ndarray:
        if self.step < self.config.env.random_steps:
            return np.stack([seed.random_action() for seed in self.seeds])
        policy_actions = self.agent.act(self.obs[:, None])[:, 0]  # every seed's actor in one call
        return np.stack([seed.noisy_action(a, self.step) for seed, a in zip(self.seeds, policy_actions, strict=True)])

    def _run_pending_updates(self, episode_over: bool) -> None:
        """``per_step``: right after each env step. ``episode_end`` (one seed only): the episode's updates at
        its end. Each such burst restarts the delay's count with ``agent.delay_per_burst``. Only the last update
        before a log row computes statistics (``episode_end``: each burst's last, as any burst may be the last
        before a row); they come with the agent's last actor step's."""
        run = self.config.run
        batched = self.config.agent.update_schedule is UpdateSchedule.episode_end
        if self.pending_updates == 0 or (batched and not episode_over and self.step < run.total_steps):
            return
        with self.clock.timed("update"):
            if self.config.agent.delay_per_burst:
                self.agent.restart_delay()
            recorded = self.pending_updates - 1 if batched or self.step % run.log_every == 0 else None
            for i in range(self.pending_updates):
                metrics = self.agent.update(self.buffer.sample(self.config.agent.batch_size), record=i == recorded)
            self.pending_updates = 0
        if metrics:  # in the agent's order; a checkpoint's actor metrics stay until the agent's next actor step
            recent = {name: value.tolist() for name, value in metrics.items()}
            self.last_update = recent | {name: value for name, value in self.last_update.items() if name not in recent}

    def _log_evaluate_checkpoint(self) -> None:
        run = self.config.run
        if self.step % run.log_every == 0:
            with self.clock.timed("log"):
                self._log_training()
        if self.step % run.eval_every == 0 or self.step == run.total_steps:
            self.evaluation_due = True
            self._evaluate()
        self._record_video()
        if (self.step % run.checkpoint_every == 0 or self.stop_requested) and self.step < run.total_steps:
            with self.clock.timed("checkpoint"):
                self.save_checkpoint()
            if self.stop_requested:
                raise RunInterrupted(f"stopped by {self.stop_requested} at env step {self.step}, after a checkpoint")

    # ------------------------------------------------------------------ evaluation and logging
    def _evaluate(self) -> None:
        """The evaluation due at this step, logged whole; a stop during it checkpoints and raises RunInterrupted."""
        try:
            with self.clock.timed("eval") as lap:
                sets = [self._evaluate_set(j) for j in range(self.config.seeds.evaluation_sets)]
        except EvaluationStopped:
            self._stop_during_evaluation()
        self.evaluation_due = False
        results = sets[0]  # set 0: the run's evaluation (eval.csv's return_mean)
        biases = overestimation_biases(self.agent, [r.episodes for r in results], self.config.agent.discount)
        for k, (seed, result, bias) in enumerate(zip(self.seeds, results, biases, strict=True)):
            wall = self.clock.wall_time()
            timing = {"eval_time_s": lap.seconds, "wall_time_s": wall, "sps": self.step / max(wall, 1e-9)}
            seed.log_evaluation(result, bias, self.step, timing, [other[k] for other in sets[1:]])
            seed.loggers.write_summary(self._summary(seed, "running"))
        self.progress.evaluated(self.step, float(np.mean([r.returns.mean() for r in results])), lap.seconds)
        if self.on_evaluation is not None:
            self.on_evaluation(self.step, [float(r.returns.mean()) for r in results])

    def _stop_during_evaluation(self) -> NoReturn:
        """Checkpoint the step with its evaluation due (at step 0 there is nothing to keep) and stop."""
        where = f"during the evaluation at env step {self.step}"
        if self.step == 0:
            raise RunInterrupted(
                f"stopped by {self.stop_requested} {where}, before the first checkpoint (a resumed run starts over)"
            )
        with self.clock.timed("checkpoint"):
            self.save_checkpoint()
        raise RunInterrupted(
            f"stopped by {self.stop_requested} {where}, after a checkpoint (a resumed run makes this evaluation)"
        )

    def _evaluate_set(self, j: int) -> list[EvalResult]:
        """Evaluation set j of every seed (``seeds.evaluation_sets``): episode i from ``reset(seed=eval_seed +
        j * eval_episodes + i)``. One set at a time, so that each set's numbers are, bit for bit, those of an
        evaluation from its start states alone (a larger batch of observations would round otherwise)."""
        size = self.config.run.eval_episodes
        envs = [seed.eval_envs[j * size : (j + 1) * size] for seed in self.seeds]
        first_seeds = [seed.config.eval_seed + j * size for seed in self.seeds]
        return evaluate_seeds(self.agent.act, envs, first_seeds, should_stop=lambda: self.stop_requested is not None)

    def _record_video(self) -> None:
        """Every ``logging.video_every`` steps, a video of each seed's evaluation episode 0 (timed as evaluation)."""
        due = [seed for seed in self.seeds if seed.videos.due(self.step)]  # checked every step: no policy built
        if not due:
            return
        with self.clock.timed("eval"):
            for seed in due:
                seed.videos.maybe_record(self.agent.seed_policy(seed.index), self.step)

    def _log_training(self) -> None:
        for name, values in self.last_update.items():
            for seed, value in zip(self.seeds, values, strict=True):
                if not np.isfinite(value):
                    raise TrainingError(
                        f"non-finite {name}={value} for seed {seed.config.seed} at env step {self.step} "
                        f"(update {self.agent.num_updates}); the last good checkpoint is kept"
                    )
        self._warn_of_frozen_actors()
        wall, cpu = self.clock.wall_time(), self.clock.cpu_time()
        shared = {
            "updates": float(self.agent.num_updates),
            "buffer_size": float(len(self.buffer)),
            "sps": self.step / max(wall, 1e-9),
            "wall_time_s": wall,
            **({"cpu_time_s": cpu} if cpu is not None else {}),  # unknown after a resume from an older checkpoint
            **{f"{phase}_time_s": seconds for phase, seconds in self.clock.phase_time.items()},
        }
        for k, seed in enumerate(self.seeds):
            update_metrics = {name: values[k] for name, values in self.last_update.items()}
            seed.loggers.log_train(seed.training_row(update_metrics) | shared, self.step)
        self.progress.advance(self.step)

    def _warn_of_frozen_actors(self) -> None:
        """Once per seed, a warning when a log row's actor gradient is exactly 0: tanh(x) = ±1 at every output of
        the batch (in bf16 past |x| = 3.47, in fp32 past about 9), so the actor learns nothing from it, and an
        actor that stays there never moves again."""
        for seed, norm in self._actor_grad_norms():
            if norm == 0.0 and seed.index not in self.frozen_actors:
                self.frozen_actors.add(seed.index)
                log.warning(
                    f"seed {seed.config.seed}: the actor's gradient is exactly 0 at env step {self.step} (update "
                    f"{self.agent.num_updates}): every action of the batch is saturated (tanh = ±1), so the actor "
                    "is not learning from it (warned once per seed; actor_grad_norm in metrics.jsonl follows it)"
                )

    def _actor_grad_norms(self) -> list[tuple[SeedRun, float]]:
        """Each seed with its last actor gradient norm; none before the first actor step."""
        norms = self.last_update.get("actor_grad_norm")
        return [] if norms is None else list(zip(self.seeds, norms, strict=True))

    def _warn_of_stalled_actors(self) -> None:
        """At the end of training, a warning per seed whose last actor gradient norm is below STALLED_ACTOR_NORM: its
        actor's tanh is most likely saturated and its policy learns little or nothing (td3x-report lists such
        runs)."""
        for seed, norm in self._actor_grad_norms():
            if norm < STALLED_ACTOR_NORM:
                log.warning(
                    f"seed {seed.config.seed}: the run ends with the actor's gradient norm at {norm:.3g}, below "
                    f"{STALLED_ACTOR_NORM:g}: the actor's tanh is most likely saturated on its batch, and its policy "
                    "learns little or nothing (td3x-report lists such runs under 'Actors that stopped learning')"
                )

    def _summary(self, seed: SeedRun, status: str, **outcome: str) -> RunSummary:
        clock = self.clock
        return seed.summary(status, self.step, self.agent.num_updates, clock.wall_time(), clock.cpu_time(), **outcome)

    # ------------------------------------------------------------------ state
    def save_checkpoint(self, final: bool = False) -> None:
        """Write the whole training state at a step boundary: one file for the process (``checkpoint.pt`` in
        ``run_dir``), and with K seeds a one-seed checkpoint in each seed's dir (without its buffer: for
        ``td3x-eval``; resuming uses the process's file). A finished run drops the replay buffers unless
        ``run.keep_buffer`` (Table 2's 440 buffers would need ~150 GB), and with it the parts only training reads
        (:data:`TRAINING_ONLY_PARTS`): nothing resumes from a checkpoint without a buffer."""
        networks = [*self.agent.actor.parameters(), *self.agent.critic.parameters()]
        if not all(torch.isfinite(p).all() for p in networks):
            raise TrainingError(
                f"non-finite network parameters at env step {self.step}; the last good checkpoint is kept"
            )
        keep_buffer = not final or self.config.run.keep_buffer
        checkpoint.save(self.run_dir / CHECKPOINT_FILE, self.checkpoint_parts(self.seeds, keep_buffer))
        if len(self.seeds) > 1:
            for seed in self.seeds:
                checkpoint.save(seed.run_dir / CHECKPOINT_FILE, self.checkpoint_parts([seed], keep_buffer=False))

    def checkpoint_parts(self, seeds: list[SeedRun], keep_buffer: bool) -> dict[str, Any]:
        """The state of ``seeds``: the whole process's, or one seed's of several (see :meth:`save_checkpoint`)."""
        process = len(seeds) == len(self.seeds)
        agent = self.agent.state_dict() if process else self.agent.state_dict(seed_index=seeds[0].index)
        if not keep_buffer:  # nothing trains from it again (no buffer, no resume): its networks for evaluation alone
            agent = {name: value for name, value in agent.items() if name not in TRAINING_ONLY_PARTS}
        parts = {
            "agent": agent,
            "buffer": self.buffer.state_dict() if keep_buffer else None,
            "seeds": [seed.state_dict(self.obs[seed.index]) for seed in seeds],
            "counters": {
                "step": self.step,
                "pending_updates": self.pending_updates,
                "evaluation_due": self.evaluation_due,
            },
            "wall_time_s": self.clock.wall_time(),
            "cpu_time_s": self.clock.cpu_time(),
            "wandb_run_id": seeds[0].loggers.wandb.run_id,
            "config": to_container(self.config if process else seeds[0].config),
        }
        if process:
            # with the agent's last actor step, which the next log row shows unless another comes before it
            actor_metrics = {name: value.tolist() for name, value in self.agent.actor_metrics().items()}
            parts |= {"global_rng": global_rng_state(), "last_update": self.last_update | actor_metrics}
            parts["phase_time"] = dict(self.clock.phase_time)
        return parts

    def restore(self, parts: dict[str, Any]) -> None:
        """Continue from a checkpoint: every seed's env is replayed to where it was, so the run goes on
        exactly as it would have."""
        self.agent.load_state_dict(parts["agent"])
        if parts["buffer"] is not None:
            self.buffer.load_state_dict(parts["buffer"])
        restore_global_rng_state(parts["global_rng"])
        self.obs = np.stack([seed.restore(state) for seed, state in zip(self.seeds, parts["seeds"], strict=True)])
        self.step, self.pending_updates = parts["counters"]["step"], parts["counters"]["pending_updates"]
        self.evaluation_due = parts["counters"].get("evaluation_due", False)  # absent from older checkpoints
        self.last_update = dict(parts["last_update"])
        self.clock.restore(parts["phase_time"], parts["wall_time_s"], parts.get("cpu_time_s"))  # absent: older
        self.progress.advance(self.step)

    def close(self, status: str, **outcome: str) -> list[RunSummary]:
        """Write each seed's summary (``outcome``: ``interrupted=`` or ``failure=``) and close its files."""
        summaries = [self._summary(seed, status, **outcome) for seed in self.seeds]
        for seed, summary in zip(self.seeds, summaries, strict=True):
            seed.close(summary)
        self.progress.close()
        return summaries
