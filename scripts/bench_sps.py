"""td3x against Stable-Baselines3's TD3, side by side on Hopper-v5: learning-phase env steps per second.

    python scripts/bench_sps.py [--steps 3000] [--repeats 3] [--threads 1 2] [--presets td3 td3_paper]

Both learners get the same hyper-parameters (the td3x preset's network, learning rates, batch, τ, d, σ̃, c,
exploration noise and buffer), the same torch thread count and the same random warm-up; the timing covers
only the learning phase (after the warm-up), with no evaluation. The two alternate over ``--repeats``
repetitions so that a machine's drift hits both; the medians and their ratio are printed, with td3x's
per-phase times. Machines differ from one session to the next: only ratios measured in one run mean much.
Needs the ``bench`` extra (``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from hydra import compose, initialize_config_dir

from td3x.config import CONF_DIR, TrainConfig, register_configs, to_typed
from td3x.trainer import Trainer

WARMUP = 1000  # the paper's random steps on Hopper


def td3x_config(preset: str, threads: int, steps: int) -> TrainConfig:
    overrides = [f"agent={preset}", "env=hopper", f"run.num_threads={threads}", f"run.total_steps={WARMUP + steps}",
                 f"run.eval_every={10 * (WARMUP + steps)}", "run.eval_episodes=1", f"run.log_every={WARMUP}",
                 f"run.checkpoint_every={10 * (WARMUP + steps)}", "logging.wandb_mode=disabled",
                 f"env.random_steps={WARMUP}"]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return to_typed(compose(config_name="train", overrides=overrides))


def time_td3x(config: TrainConfig, steps: int) -> tuple[float, dict[str, float]]:
    """Learning-phase steps/s of td3x's own loop, and seconds per env step of each phase."""
    with tempfile.TemporaryDirectory() as run_dir:
        trainer = Trainer(config, Path(run_dir))
        obs: np.ndarray | None = trainer.env.reset(seed=config.seed)[0]
        timings: dict[str, float] = {}
        for phase_steps in (WARMUP, steps):
            before, started = dict(trainer.phase_time), time.perf_counter()
            for _ in range(phase_steps):
                if obs is None:
                    obs, _ = trainer.env.reset()
                obs = trainer._collect(obs)
                trainer._run_pending_updates(episode_over=obs is None)
            elapsed = time.perf_counter() - started
            timings = {phase: (trainer.phase_time[phase] - before[phase]) / phase_steps for phase in ("env", "update")}
        trainer.close("complete")
    return steps / elapsed, timings


def time_sb3(config: TrainConfig, steps: int) -> float:
    """Learning-phase steps/s of Stable-Baselines3's TD3 with the same hyper-parameters and threads."""
    import gymnasium as gym
    from stable_baselines3 import TD3 as SB3TD3
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.noise import NormalActionNoise

    class LearningPhaseClock(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.marks: dict[int, float] = {}

        def _on_step(self) -> bool:
            if self.num_timesteps in (WARMUP, WARMUP + steps):
                self.marks[self.num_timesteps] = time.perf_counter()
            return True

    torch.set_num_threads(config.run.num_threads)
    agent = config.agent
    env = gym.wrappers.RescaleAction(gym.make(config.env.id), -1.0, 1.0)  # td3x's normalised action space too
    action_dim = env.action_space.shape[0]
    model = SB3TD3("MlpPolicy", env, learning_rate=agent.actor_lr, buffer_size=agent.buffer_size,
                   learning_starts=WARMUP, batch_size=agent.batch_size, tau=agent.tau, gamma=agent.discount,
                   train_freq=1, gradient_steps=1, policy_delay=agent.policy_delay,
                   target_policy_noise=agent.target_policy_noise, target_noise_clip=agent.target_noise_clip,
                   action_noise=NormalActionNoise(np.zeros(action_dim), config.noise.std * np.ones(action_dim)),
                   policy_kwargs={"net_arch": list(agent.hidden_sizes), "n_critics": agent.n_critics},
                   seed=config.seed, device="cpu", verbose=0)
    clock = LearningPhaseClock()
    model.learn(total_timesteps=WARMUP + steps, callback=clock)
    return steps / (clock.marks[WARMUP + steps] - clock.marks[WARMUP])


def bench(preset: str, threads: int, steps: int, repeats: int) -> dict[str, Any]:
    config = td3x_config(preset, threads, steps)
    ours, theirs, phases = [], [], []
    for _ in range(repeats):  # alternate, so that drift in the machine's speed hits both
        sps, timing = time_td3x(config, steps)
        ours.append(sps)
        phases.append(timing)
        theirs.append(time_sb3(config, steps))
    return {"preset": preset, "threads": threads, "td3x": statistics.median(ours), "sb3": statistics.median(theirs),
            "env_ms": 1e3 * statistics.median(p["env"] for p in phases),
            "update_ms": 1e3 * statistics.median(p["update"] for p in phases)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="learning-phase env steps timed per repetition")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--presets", nargs="+", default=["td3", "td3_paper"])
    args = parser.parse_args()
    register_configs()
    print(f"Hopper-v5, learning phase ({args.steps} steps after {WARMUP} random ones), median of {args.repeats}; "
          f"torch {torch.__version__}")
    print(f"{'preset':10s} {'threads':>7s} {'td3x sps':>9s} {'SB3 sps':>8s} {'ratio':>6s} "
          f"{'td3x env+act ms':>15s} {'td3x update ms':>14s}")
    for preset in args.presets:
        for threads in args.threads:
            row = bench(preset, threads, args.steps, args.repeats)
            print(f"{preset:10s} {threads:7d} {row['td3x']:9.1f} {row['sb3']:8.1f} {row['td3x'] / row['sb3']:6.2f} "
                  f"{row['env_ms']:15.2f} {row['update_ms']:14.2f}", flush=True)


if __name__ == "__main__":
    main()
