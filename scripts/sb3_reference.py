"""A peer under td3x's protocol: Stable-Baselines3's TD3 trained and evaluated as td3x's reference runs are, written
as td3x run dirs, so that ``td3x-report`` shows a row ``SB3 TD3`` beside td3x's TD3 and the authors' curves.

    python scripts/sb3_reference.py --env hopper --seeds 0 1 2 --out docs/results/runs/reference_sb3

Same hyper-parameters as ``agent=td3_paper`` (400-300 networks, batch 100, learning rate 1e-3, τ, d, σ̃, c, a 1M
buffer; exploration ``NormalActionNoise(σ = noise.std)``, which SB3 adds only when asked), ``learning_starts`` =
td3x's ``env.random_steps``, one gradient step per env step. SB3 acts in [-1, 1] and rescales to the env's bounds
itself. Evaluations as td3x's: after step 0, every ``run.eval_every`` steps and after the last, ``run.eval_episodes``
deterministic episodes, episode i reset with seed ``eval_seed + i`` (td3x's evaluation start states of that seed:
SB3's EvalCallback cannot seed resets per episode). Each seed's dir holds config.yaml (td3x's config of the same
values, ``paper_row: SB3 TD3``), eval.csv, metrics.jsonl, summary.json and provenance.json. A run is written to
a temporary dir and moved in place when complete: a run stopped by SIGTERM or Ctrl-C removes its temporary dir
and exits, one killed outright leaves a hidden one (``.seed=N.*``) that the next start of that seed removes, and the
seed starts over (SB3 has no resume here); complete seeds are skipped. Needs the ``bench`` extra (stable-baselines3).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
import yaml
from stable_baselines3 import TD3 as SB3TD3
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.noise import NormalActionNoise

import td3x
from td3x.config.hydra import to_container
from td3x.config.schema import TrainConfig
from td3x.host.provenance import collect_provenance
from td3x.rundir.layout import (
    CONFIG_FILE,
    EVAL_FILE,
    METRICS_FILE,
    PROVENANCE_FILE,
    SUMMARY_FILE,
    RunSummary,
    write_json_atomic,
)

ROW = "SB3 TD3"


def make_sb3_td3(config: TrainConfig, env: gym.Env, learning_starts: int) -> SB3TD3:
    """SB3's TD3 with ``config``'s hyper-parameters (the td3x preset's networks, rates, batch, τ, d, σ̃, c, buffer
    and Gaussian exploration σ, in [-1, 1] action units)."""
    agent = config.agent
    action_dim = int(np.prod(env.action_space.shape or ()))
    return SB3TD3(
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


class Evaluations(BaseCallback):
    """td3x's evaluation protocol inside SB3's ``learn``: writes eval.csv and metrics.jsonl rows as td3x does."""

    def __init__(self, config: TrainConfig, run_dir: Path) -> None:
        super().__init__()
        self.config, self.run_dir = config, run_dir
        self.eval_envs = [gym.make(config.env.id, **config.env.kwargs) for _ in range(config.run.eval_episodes)]
        self.returns: list[float] = []
        self.started = time.perf_counter()

    def _on_training_start(self) -> None:
        self.evaluate(0)

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


def stop_on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C, so the run in progress removes its temporary dir on the way out."""
    raise KeyboardInterrupt


def train_one(config: TrainConfig, choices: dict[str, str], run_dir: Path) -> None:
    """Train SB3's TD3 with ``config`` and write the seed's td3x run dir (moved in place once complete)."""
    torch.set_num_threads(config.run.num_threads)
    for stale in run_dir.parent.glob(f".{run_dir.name}.*"):  # a killed earlier start's, never resumable
        shutil.rmtree(stale)
    with tempfile.TemporaryDirectory(dir=run_dir.parent, prefix=f".{run_dir.name}.") as scratch:
        work = Path(scratch)
        saved = {**to_container(config), "choices": choices}
        (work / CONFIG_FILE).write_text(yaml.safe_dump(saved, sort_keys=False))
        provenance = collect_provenance()
        provenance["versions"]["stable-baselines3"] = importlib.metadata.version("stable-baselines3")
        write_json_atomic(work / PROVENANCE_FILE, provenance)
        env = gym.make(config.env.id, **config.env.kwargs)
        model = make_sb3_td3(config, env, learning_starts=config.env.random_steps)
        evaluations = Evaluations(config, work)
        model.learn(total_timesteps=config.run.total_steps, callback=evaluations)
        wall_time = time.perf_counter() - evaluations.started
        summary = RunSummary.of(
            "complete", evaluations.returns, config.run.total_steps, model._n_updates, wall_time, run_dir
        )
        write_json_atomic(work / SUMMARY_FILE, summary.to_dict())
        shutil.move(str(work), str(run_dir))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    choices = {"env": args.env, "agent": "td3_paper", "ablation": "none", "noise": "gaussian", "learner": "sb3"}
    for config in configs:
        run_dir = args.out / args.env / "sb3_td3" / f"seed={config.seed}"
        if run_dir.exists():
            print(f"{run_dir} exists: skipped")
            continue
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        try:
            train_one(config, choices, run_dir)
        except KeyboardInterrupt:
            sys.exit(f"stopped: {run_dir} was not complete and is not kept; the same command trains it again")


if __name__ == "__main__":
    main()
