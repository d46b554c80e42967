"""A peer under td3x's protocol: Stable-Baselines3's TD3 trained and evaluated as td3x's reference runs are, written
as td3x run dirs of a row ``SB3 TD3``, which ``td3x-report --peer "SB3 TD3"`` compares td3x's TD3 rows with.

    python scripts/sb3_reference.py --env hopper --seeds 0 1 2 --out docs/results/runs/reference_sb3

Same hyper-parameters as ``agent=td3_paper`` (400-300 networks, batch 100, learning rate 1e-3, τ, d, σ̃, c, a 1M
buffer; exploration ``NormalActionNoise(σ = noise.std)``, which SB3 adds only when asked), ``learning_starts`` =
td3x's ``env.random_steps``, one gradient step per env step. SB3 acts in [-1, 1] and rescales to the env's bounds
itself. Evaluations as td3x's: after step 0, every ``run.eval_every`` steps and after the last, ``run.eval_episodes``
deterministic episodes, episode i reset with seed ``eval_seed + i`` (td3x's evaluation start states of that seed:
SB3's EvalCallback cannot seed resets per episode). Each seed's dir holds config.yaml (td3x's config of the same
values, ``paper_row: SB3 TD3``), eval.csv, metrics.jsonl, summary.json and provenance.json.

A seed trains in a hidden dir (``.seed=N.partial``), moved in place when complete; complete seeds are skipped. Every
``run.checkpoint_every`` env steps it writes a checkpoint there: the networks, both optimisers, the replay buffer,
SB3's counters and logger, every random generator (torch's, numpy's, the action space's, the env's) and the training
env's state (MuJoCo's whole MjData, the time limit's and SB3's Monitor's counters), so the same command resumes a
stopped or killed seed from it to the numbers an unstopped run gives. SIGTERM or Ctrl-C stops at the next step after
a checkpoint (a second one stops at once, keeping the last). SB3's own ``save`` and ``load`` keep neither the env's
state nor the random generators'. Needs the ``bench`` extra (stable-baselines3).
"""

from __future__ import annotations

import copy
import importlib.metadata
import json
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any, cast

import gymnasium as gym
import mujoco
import numpy as np
import torch
import yaml
from gymnasium.envs.mujoco import MujocoEnv
from gymnasium.wrappers import TimeLimit
from stable_baselines3 import TD3 as SB3TD3
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.noise import NormalActionNoise

import td3x
from td3x.commands.common import OneLineParser
from td3x.config.hydra import to_container
from td3x.config.schema import TrainConfig
from td3x.host.provenance import collect_provenance, resumed_provenance
from td3x.rundir import checkpoint
from td3x.rundir.layout import (
    CHECKPOINT_FILE,
    CONFIG_FILE,
    EVAL_FILE,
    METRICS_FILE,
    PROVENANCE_FILE,
    SUMMARY_FILE,
    RunSummary,
    truncate_after,
    write_json_atomic,
)
from td3x.rundir.outputs import is_output_dir

ROW = "SB3 TD3"
BUFFER_ARRAYS = ("observations", "next_observations", "actions", "rewards", "dones", "timeouts")
COUNTERS = (
    "num_timesteps",
    "_n_updates",
    "_episode_num",
    "_last_obs",
    "_last_episode_starts",
    "ep_info_buffer",
    "ep_success_buffer",
)  # SB3's, as learn() leaves them between two env steps
MONITOR_FIELDS = ("rewards", "needs_reset", "episode_returns", "episode_lengths", "episode_times", "total_steps")


def make_sb3_td3(config: TrainConfig, env: gym.Env, learning_starts: int) -> SB3TD3:
    """SB3's TD3 with ``config``'s hyper-parameters (the td3x preset's networks, rates, batch, τ, d, σ̃, c, buffer
    and Gaussian exploration σ, in [-1, 1] action units)."""
    agent = config.agent
    action_dim = int(np.prod(env.action_space.shape or ()))
    model = SB3TD3(
        "MlpPolicy",
        env,
        learning_rate=agent.actor_lr,
        buffer_size=agent.buffer_size,
        learning_starts=learning_starts,
        batch_size=agent.batch_size,
        tau=agent.tau,
        gamma=agent.discount,
        train_freq=1,
        gradient_steps=1,
        policy_delay=agent.policy_delay,
        target_policy_noise=agent.target_policy_noise,
        target_noise_clip=agent.target_noise_clip,
        action_noise=NormalActionNoise(np.zeros(action_dim), config.noise.std * np.ones(action_dim)),
        policy_kwargs={"net_arch": list(agent.hidden_sizes), "n_critics": agent.n_critics},
        seed=config.seed,
        device="cpu",
        verbose=0,
    )
    # a logger that records and writes nothing: SB3's default makes an empty SB3-<date> dir in the temp dir at each
    # learn(); its values are read from the logger itself (metrics.jsonl)
    model.set_logger(Logger(folder=None, output_formats=[]))
    return model


def training_state(model: SB3TD3) -> dict[str, Any]:
    """Everything ``model.learn`` reads between two env steps, to continue as if never stopped."""
    buffer, env = replay_buffer(model), training_env(model)
    filled = buffer.buffer_size if buffer.full else buffer.pos
    return {
        "policy": model.policy.state_dict(),
        "actor_optimizer": model.actor.optimizer.state_dict(),
        "critic_optimizer": model.critic.optimizer.state_dict(),
        "buffer": {name: getattr(buffer, name)[:filled] for name in BUFFER_ARRAYS},  # saved at once: views suffice
        "buffer_position": (buffer.pos, buffer.full),
        "counters": {name: getattr(model, name) for name in COUNTERS},
        "logger": [dict(values) for values in logger_values(model)],
        "random": {
            "torch": torch.get_rng_state(),  # target smoothing's noise
            "numpy": np.random.get_state(),  # exploration noise and buffer sampling
            "action_space": model.action_space.np_random.bit_generator.state,  # the warm-up's uniform actions
            "env": env.unwrapped.np_random.bit_generator.state,  # the start states of the next episodes
        },
        "env": env_state(env),
    }


def restore_training_state(model: SB3TD3, state: dict[str, Any]) -> None:
    """Put ``state`` (from :func:`training_state`) back into a model built from the same config."""
    model.policy.load_state_dict(state["policy"])
    model.actor.optimizer.load_state_dict(state["actor_optimizer"])
    model.critic.optimizer.load_state_dict(state["critic_optimizer"])
    buffer = replay_buffer(model)
    for name, saved in state["buffer"].items():
        getattr(buffer, name)[: len(saved)] = saved
    buffer.pos, buffer.full = state["buffer_position"]
    for name, value in state["counters"].items():
        setattr(model, name, value)
    for values, saved in zip(logger_values(model), state["logger"], strict=True):
        values.clear()
        values.update(saved)
    torch.set_rng_state(state["random"]["torch"])
    np.random.set_state(state["random"]["numpy"])
    model.action_space.np_random.bit_generator.state = state["random"]["action_space"]
    env = training_env(model)
    env.unwrapped.np_random.bit_generator.state = state["random"]["env"]
    restore_env_state(env, state["env"])


def replay_buffer(model: SB3TD3) -> ReplayBuffer:
    buffer = model.replay_buffer
    assert buffer is not None  # made with the model (SB3's _setup_model)
    return buffer


def training_env(model: SB3TD3) -> gym.Env:
    """The one env SB3 trains on (its DummyVecEnv's, wrapped in SB3's Monitor)."""
    return model.get_env().envs[0]  # type: ignore[union-attr]


def logger_values(model: SB3TD3) -> tuple[dict[str, Any], ...]:
    """SB3's logger's pending values: what the next metrics.jsonl row reads."""
    logger = model.logger
    return logger.name_to_value, logger.name_to_count, logger.name_to_excluded


def wrappers(env: gym.Env) -> dict[type, gym.Env]:
    """The env's wrappers by type, the env itself under its own type."""
    found: dict[type, gym.Env] = {}
    while isinstance(env, gym.Wrapper):
        found[type(env)] = env
        env = env.env
    return {**found, type(env): env}


def env_state(env: gym.Env) -> dict[str, Any]:
    """The training env's state mid-episode: the simulator's, the time limit's count, SB3's Monitor's."""
    layers, inner = wrappers(env), env.unwrapped
    if isinstance(inner, MujocoEnv):  # all of MjData: the solver's warm start and the positions the next step reads
        physics: Any = copy.copy(inner.data)
    else:  # classic control (Pendulum-v1): the state vector is all of it
        physics = np.array(inner.state, copy=True)  # type: ignore[attr-defined]
    return {
        "physics": physics,
        "elapsed_steps": layers[TimeLimit]._elapsed_steps,  # type: ignore[attr-defined]
        "monitor": {name: getattr(layers[Monitor], name) for name in MONITOR_FIELDS},
    }


def restore_env_state(env: gym.Env, state: dict[str, Any]) -> None:
    layers, inner = wrappers(env), env.unwrapped
    if isinstance(inner, MujocoEnv):
        mujoco.mj_copyData(inner.data, inner.model, state["physics"])
    else:
        inner.state = state["physics"].copy()  # type: ignore[attr-defined]
    layers[TimeLimit]._elapsed_steps = state["elapsed_steps"]  # type: ignore[attr-defined]
    for name, value in state["monitor"].items():
        setattr(layers[Monitor], name, value)


class StopSignal:
    """SIGTERM or Ctrl-C asks training to stop at the next step, after a checkpoint; a second one stops at once."""

    def __init__(self) -> None:
        self.requested = False

    def __call__(self, signum: int, frame: object) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True


class Stopped(Exception):
    """Training stopped on request at env step ``args[0]``, after a checkpoint."""


class Evaluations(BaseCallback):
    """td3x's evaluation protocol inside SB3's ``learn``: writes eval.csv and metrics.jsonl rows as td3x does,
    and the checkpoints (between two env steps, after the update of the first)."""

    def __init__(self, config: TrainConfig, run_dir: Path, stop: StopSignal, resume: dict[str, Any] | None) -> None:
        super().__init__()
        self.config, self.run_dir, self.stop, self.resume = config, run_dir, stop, resume
        self.eval_envs = [gym.make(config.env.id, **config.env.kwargs) for _ in range(config.run.eval_episodes)]
        self.returns: list[float] = resume["returns"] if resume else []
        self.started = time.perf_counter() - (resume["wall_time_s"] if resume else 0.0)
        self.saved_at: int | None = resume["step"] if resume else None

    def _on_training_start(self) -> None:
        if self.resume is None:
            self.evaluate(0)
        else:
            restore_training_state(cast(SB3TD3, self.model), self.resume["training"])

    def _on_rollout_start(self) -> None:
        step = self.num_timesteps
        due = step > 0 and step % self.config.run.checkpoint_every == 0
        if (due or self.stop.requested) and step != self.saved_at:
            self.save_checkpoint(step)
        if self.stop.requested:
            raise Stopped(step)

    def save_checkpoint(self, step: int) -> None:
        wall = time.perf_counter() - self.started
        training = training_state(cast(SB3TD3, self.model))
        parts = {"step": step, "returns": self.returns, "wall_time_s": wall, "training": training}
        checkpoint.save(self.run_dir / CHECKPOINT_FILE, parts)
        self.saved_at = step

    def _on_step(self) -> bool:
        if self.num_timesteps % self.config.run.eval_every == 0 or self.num_timesteps == self.config.run.total_steps:
            self.evaluate(self.num_timesteps)
        return True

    def evaluate(self, step: int) -> None:
        started = time.perf_counter()
        returns, lengths = np.zeros(len(self.eval_envs)), np.zeros(len(self.eval_envs))
        for i, env in enumerate(self.eval_envs):
            obs, _ = env.reset(seed=self.config.eval_seed + i)
            done = False
            while not done:
                action, _ = self.model.predict(obs, deterministic=True)
                obs, reward, terminated, truncated, _ = env.step(action)
                returns[i] += float(reward)
                lengths[i] += 1
                done = terminated or truncated
        wall = time.perf_counter() - self.started
        row = {
            "step": step,
            "return_mean": float(returns.mean()),
            "return_std": float(returns.std()),
            **{f"return_{i}": float(value) for i, value in enumerate(returns)},
            "length_mean": float(lengths.mean()),
            "eval_time_s": time.perf_counter() - started,
            "wall_time_s": wall,
            "sps": step / max(wall, 1e-9),
        }
        self.returns.append(row["return_mean"])
        eval_path = self.run_dir / EVAL_FILE
        header = not eval_path.exists()
        with eval_path.open("a") as file:
            if header:
                file.write(",".join(row) + "\n")
            file.write(",".join(str(value) for value in row.values()) + "\n")
        training = {key: float(value) for key, value in self.model.logger.name_to_value.items()}
        with (self.run_dir / METRICS_FILE).open("a") as file:
            file.write(json.dumps({"step": step, **training, "wall_time_s": wall}) + "\n")
        print(f"{self.config.env.id} seed {self.config.seed}: step {step}  eval return {row['return_mean']:.2f}")


def start_or_resume(config: TrainConfig, choices: dict[str, str], work: Path) -> dict[str, Any] | None:
    """Prepare the seed's hidden dir ``work``: resume from its checkpoint (its files cut back to it; returns the
    checkpoint), or start afresh (returns None). One line and a non-zero exit if it holds another config's run
    or an unreadable checkpoint."""
    saved = yaml.safe_dump({**to_container(config), "choices": choices}, sort_keys=False)
    provenance = collect_provenance("cpu", is_output_dir)  # SB3 trains on the CPU here (device="cpu")
    resume = None
    if (work / CHECKPOINT_FILE).exists():
        if (work / CONFIG_FILE).read_text() != saved:
            sys.exit(f"{work} holds a stopped run of another config: run with its overrides, or remove it")
        try:
            resume = checkpoint.load(work / CHECKPOINT_FILE)
        except checkpoint.CheckpointError as error:
            sys.exit(f"{error}: remove {work} to train the seed from the start")
        truncate_after([work], resume["step"])
        provenance = resumed_provenance(json.loads((work / PROVENANCE_FILE).read_text()), "cpu", is_output_dir)
        print(f"{config.env.id} seed {config.seed}: resumed at step {resume['step']} from {work / CHECKPOINT_FILE}")
    else:
        shutil.rmtree(work, ignore_errors=True)  # killed before its first checkpoint: nothing to resume
        work.mkdir()
        (work / CONFIG_FILE).write_text(saved)
    provenance["versions"]["stable-baselines3"] = importlib.metadata.version("stable-baselines3")
    write_json_atomic(work / PROVENANCE_FILE, provenance)
    return resume


def train_one(config: TrainConfig, choices: dict[str, str], run_dir: Path, stop: StopSignal) -> None:
    """Train (or resume) SB3's TD3 with ``config`` and write the seed's td3x run dir, moved in place once complete."""
    torch.set_num_threads(config.run.num_threads)
    work = run_dir.with_name(f".{run_dir.name}.partial")
    for stale in run_dir.parent.glob(f".{run_dir.name}.*"):  # an earlier version's temporary dirs
        if stale != work:
            shutil.rmtree(stale)
    resume = start_or_resume(config, choices, work)
    env = gym.make(config.env.id, **config.env.kwargs)
    model = make_sb3_td3(config, env, learning_starts=config.env.random_steps)
    evaluations = Evaluations(config, work, stop, resume)
    model.learn(total_timesteps=config.run.total_steps, callback=evaluations)
    wall_time = time.perf_counter() - evaluations.started
    summary = RunSummary.of(  # its CPU time is not counted (None): its sittings record their wall time alone
        "complete", evaluations.returns, config.run.total_steps, model._n_updates, wall_time, None, run_dir
    )
    write_json_atomic(work / SUMMARY_FILE, summary.to_dict())
    (work / CHECKPOINT_FILE).unlink(missing_ok=True)
    shutil.move(str(work), str(run_dir))


def main() -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", required=True, help="a td3x env option, e.g. hopper")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path, required=True, help="run dirs go to OUT/<env>/sb3_td3/seed=<seed>")
    parser.add_argument("overrides", nargs="*", help="td3x overrides, e.g. run.total_steps=100000")
    args = parser.parse_args()
    base = ["agent=td3_paper", f"env={args.env}", "run.total_steps=100000", "run.eval_every=5000", *args.overrides]
    try:
        configs = [td3x.compose([*base, f"seed={seed}", f"paper_row={ROW}"]) for seed in args.seeds]
    except td3x.config.schema.ConfigError as error:
        sys.exit("\n".join(f"config error: {problem}" for problem in error.problems))
    stop = StopSignal()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    choices = {"env": args.env, "agent": "td3_paper", "ablation": "none", "noise": "gaussian", "learner": "sb3"}
    for config in configs:
        run_dir = args.out / args.env / "sb3_td3" / f"seed={config.seed}"
        if run_dir.exists():
            print(f"{run_dir} exists: skipped")
            continue
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        try:
            train_one(config, choices, run_dir, stop)
        except Stopped as stopped:
            sys.exit(
                f"stopped at env step {stopped.args[0]} after a checkpoint: {run_dir} is not complete; "
                "the same command resumes it"
            )
        except KeyboardInterrupt:
            sys.exit(
                f"stopped at once: {run_dir} is not complete; the same command resumes it from its last checkpoint"
            )


if __name__ == "__main__":
    main()
