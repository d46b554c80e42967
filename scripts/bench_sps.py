"""td3x against Stable-Baselines3's TD3, side by side on Hopper-v5: learning-phase env steps per second.

    python scripts/bench_sps.py [--steps 2000] [--repeats 3] [--threads 1 2] [--presets td3 td3_paper]
                                [--seeds 10] [--seeds-steps 500]

Both learners get the same hyper-parameters (the td3x preset's network, learning rates, batch, τ, d, σ̃, c,
exploration noise and buffer), the same torch thread count and the same random warm-up; the timing covers
only the learning phase (after the warm-up), with no evaluation. The two alternate over ``--repeats``
repetitions so that a machine's drift hits both; each side's median steps/s is printed with the median and the
range of the repetitions' paired ratios (a pair runs back to back, so a slow minute hits both), and td3x's
per-phase times (ms per env step: acting, env step, update). Then ``--seeds`` K seeds in one td3x process
(``run.num_seeds=K``, 2 threads) against SB3's single run, alternated the same way: the aggregate steps/s
of all K seeds over SB3's. Last, the cost of evaluation and logging at the paper's protocol (10 episodes
every 5000 steps, a log row every 1000) as a share of training time. Machines differ from one session to
the next: only ratios measured in one run mean much. Needs the ``bench`` extra (``pip install -e ".[bench]"``).
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
from td3x.rollout import evaluate_seeds
from td3x.trainer import PHASES, Trainer

WARMUP = 1000  # the paper's random steps on Hopper
PAPER_EVAL_EVERY, PAPER_EVAL_EPISODES, PAPER_LOG_EVERY = 5000, 10, 1000


def td3x_config(preset: str, threads: int, steps: int, seeds: int = 1) -> TrainConfig:
    overrides = [
        f"agent={preset}",
        "env=hopper",
        f"run.num_threads={threads}",
        f"run.total_steps={WARMUP + steps}",
        f"run.eval_every={10 * (WARMUP + steps)}",
        f"run.eval_episodes={PAPER_EVAL_EPISODES}",
        f"run.log_every={PAPER_LOG_EVERY}",
        f"run.checkpoint_every={10 * (WARMUP + steps)}",
        "logging.wandb_mode=disabled",
        f"env.random_steps={WARMUP}",
        f"run.num_seeds={seeds}",
    ]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return to_typed(compose(config_name="train", overrides=overrides))


def start_trainer(config: TrainConfig, run_dir: Path) -> Trainer:
    """A trainer in ``run_dir`` whose envs have had their first reset, ready for ``_collect``."""
    trainer = Trainer(config, run_dir)
    trainer.obs = np.stack([seed.reset(first=True) for seed in trainer.seeds])
    return trainer


def time_td3x(config: TrainConfig, steps: int) -> tuple[float, dict[str, float]]:
    """Learning-phase env steps/s of td3x's own loop (all seeds together), and ms per env step of each phase
    (plus one evaluation of ``run.eval_episodes`` episodes and one log row, in ms)."""
    with tempfile.TemporaryDirectory() as run_dir:
        trainer = start_trainer(config, Path(run_dir))
        timings: dict[str, float] = {}
        for phase_steps in (WARMUP, steps):
            before, started = dict(trainer.phase_time), time.perf_counter()
            for _ in range(phase_steps):
                trainer._run_pending_updates(episode_over=trainer._collect())
            elapsed = time.perf_counter() - started
            timings = {phase: 1e3 * (trainer.phase_time[phase] - before[phase]) / phase_steps for phase in PHASES}
        for name, phase in (("eval_once", trainer._evaluate), ("log_once", trainer._log_training)):
            started = time.perf_counter()
            phase()
            timings[name] = 1e3 * (time.perf_counter() - started)
        started = time.perf_counter()  # the episodes alone: the cost of one side-by-side evaluation step
        envs, first_seeds = [s.eval_envs for s in trainer.seeds], [s.config.eval_seed for s in trainer.seeds]
        results = evaluate_seeds(trainer.agent.act, envs, first_seeds)
        timings["eval_step"] = 1e3 * (time.perf_counter() - started) / max(int(r.lengths.max()) for r in results)
        trainer.close("complete")
    return len(trainer.seeds) * steps / elapsed, timings


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
    model = SB3TD3(
        "MlpPolicy",
        env,
        learning_rate=agent.actor_lr,
        buffer_size=agent.buffer_size,
        learning_starts=WARMUP,
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
    clock = LearningPhaseClock()
    model.learn(total_timesteps=WARMUP + steps, callback=clock)
    return steps / (clock.marks[WARMUP + steps] - clock.marks[WARMUP])


def bench(preset: str, threads: int, steps: int, repeats: int, seeds: int = 1) -> dict[str, Any]:
    config = td3x_config(preset, threads, steps, seeds)
    sb3_config = td3x_config(preset, threads, steps)
    ours, theirs, phases = [], [], []
    for _ in range(repeats):  # alternate, so that drift in the machine's speed hits both
        sps, timing = time_td3x(config, steps)
        ours.append(sps)
        phases.append(timing)
        theirs.append(time_sb3(sb3_config, steps))
    ratios = [a / b for a, b in zip(ours, theirs, strict=True)]  # each repetition's pair, measured back to back
    return {
        "preset": preset,
        "threads": threads,
        "seeds": seeds,
        "td3x": statistics.median(ours),
        "sb3": statistics.median(theirs),
        "ratio": statistics.median(ratios),
        "ratio_range": (min(ratios), max(ratios)),
        **{phase: statistics.median(p[phase] for p in phases) for phase in phases[0]},
    }


def print_row(row: dict[str, Any]) -> None:
    print(
        f"{row['preset']:10s} {row['threads']:7d} {row['seeds']:5d} {row['td3x']:9.1f} {row['sb3']:8.1f} "
        f"{row['ratio']:6.2f} {row['ratio_range'][0]:5.2f}-{row['ratio_range'][1]:<5.2f} "
        f"{row['act']:7.2f} {row['env']:7.2f} {row['update']:9.2f}",
        flush=True,
    )


def protocol_share(row: dict[str, Any]) -> str:
    """Evaluation and logging at the paper's protocol as a share of the wall time, from one run's measurements:
    per 5000 training steps, one evaluation and five log rows. Also the worst case, where all 10 evaluation
    episodes last the full 1000 steps: 1000 side-by-side steps, each at the cost of one measured step of all
    the episodes together."""
    train_ms = PAPER_EVAL_EVERY * 1e3 * row["seeds"] / row["td3x"]
    logs_ms = PAPER_EVAL_EVERY / PAPER_LOG_EVERY * row["log_once"]
    measured, worst = row["eval_once"] + logs_ms, 1000 * row["eval_step"] + logs_ms
    return (
        f"evaluation + logging at the paper's protocol ({row['preset']}, {row['threads']} threads, "
        f"{row['seeds']} seed(s)): {100 * measured / (train_ms + measured):.1f}% of wall time with this policy "
        f"(one evaluation {row['eval_once']:.0f} ms, one log row {row['log_once']:.1f} ms), "
        f"{100 * worst / (train_ms + worst):.1f}% if every episode lasted 1000 steps"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="learning-phase env steps timed per repetition")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--presets", nargs="+", default=["td3", "td3_paper"])
    parser.add_argument("--seeds", type=int, nargs="*", default=[10], help="K for the many-seeds rows (none: skip)")
    parser.add_argument("--seeds-steps", type=int, default=500, help="learning-phase steps per seed, K-seed rows")
    args = parser.parse_args()
    register_configs()
    print(
        f"Hopper-v5, learning phase ({args.steps} steps after {WARMUP} random ones), median of {args.repeats}; "
        f"torch {torch.__version__}"
    )
    print(
        f"{'preset':10s} {'threads':>7s} {'seeds':>5s} {'td3x sps':>9s} {'SB3 sps':>8s} {'ratio':>6s} {'range':11s} "
        f"{'act ms':>7s} {'env ms':>7s} {'update ms':>9s}"
    )
    rows = []
    for preset in args.presets:
        for threads in args.threads:
            rows.append(bench(preset, threads, args.steps, args.repeats))
            print_row(rows[-1])
    for seeds in args.seeds:
        rows.append(bench(args.presets[0], max(args.threads), args.seeds_steps, args.repeats, seeds))
        print_row(rows[-1])
    print(
        "(td3x sps: all seeds together; ratio: the median of the repetitions' td3x/SB3 ratios, each pair measured "
        "back to back, and their range; ms: per loop step, which steps each seed once: acting, env, update)"
    )
    for row in rows:
        if row["threads"] == max(args.threads):
            print(protocol_share(row))


if __name__ == "__main__":
    main()
