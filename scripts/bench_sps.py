"""Env steps per core-second: td3x with K seeds in one process against Stable-Baselines3's TD3, Hopper-v5.

    python scripts/bench_sps.py [--seeds 1 2 5 10 20] [--threads 1 2] [--presets td3 td3_paper]
                                [--precisions fp32 bf16] [--steps 300] [--sb3-steps 1000] [--repeats 3] [--no-profile]
                                [--cleanrl PATH]

A sweep is paid in core-hours (a cluster or joblib runs one job per core), so the figure is env steps per second
per core: all K seeds' env steps over the wall time and the threads. Both learners get the same hyper-parameters
(the td3x preset's network, learning rates, batch, τ, d, σ̃, c, exploration noise and buffer), the same torch
threads and the same 1000-step random warm-up per seed; only the learning phase is timed, with no evaluation.
Denormal floats are flushed to zero in the whole process, as td3x-train flushes them, so SB3 runs flushed too:
one process cannot give the two learners different settings, and over these short windows from fresh weights
few denormals arise either way.
``--precisions`` adds td3x rows in ``run.precision=bf16`` (SB3 stays fp32); bf16 is measured wherever asked, and
marked ``emulated`` where td3x-train would refuse it (a CPU without avx512_bf16 or amx_bf16). A second table gives
each bf16 row's rate over fp32's at the same preset, threads and K, repetition by repetition.

Each repetition runs, per preset, SB3 on one thread, then td3x at every K and thread count, then SB3 on two
threads (when asked for), back to back: a slow minute of a shared machine hits both sides of a pair. Each td3x
row's ratio is the median over repetitions of its per-core rate over the same repetition's SB3 one-thread rate
(and two-thread rate), with the range. Absolute rates drift by ±20% on shared or virtual machines: read the
ratios. Last, per preset and precision, at the K with the best per-core rate, where a stacked loop step's time
goes: the K env steps, acting, the buffer writes and episode tapes, sampling, the update by part, and the per-seed
Python bookkeeping (what is left). Needs the ``bench`` extra (``pip install -e ".[bench]"``).

``--cleanrl PATH`` adds CleanRL's TD3 script, run from a checkout of CleanRL's repository at PATH on one thread right
after SB3's one-thread block, for each preset it can run (``cleanrl_reference.py`` says which, and what its rate
means), and a ratio to it per td3x row.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from cleanrl_reference import checkout_problems, mismatch, time_cleanrl  # scripts/, beside this file
from hydra import compose, initialize_config_dir

import td3x.algo.td3
from td3x.algo.precision import problems as precision_problems
from td3x.commands.common import OneLineParser
from td3x.config.enums import Numerics, Precision
from td3x.config.hydra import CONF_DIR, register_configs, to_typed
from td3x.config.schema import TrainConfig
from td3x.host import numerics
from td3x.host.provenance import cpu_flags
from td3x.training.loop import Trainer

WARMUP = 1000  # the paper's random steps on Hopper, per seed


def td3x_config(
    preset: str, threads: int, steps: int, seeds: int = 1, extra: Sequence[str] = (), env: str = "hopper"
) -> TrainConfig:
    """``env`` (Hopper-v5 unless told) with ``preset``, ``WARMUP`` random steps then ``steps`` learning steps per
    seed, no evaluation, logging or checkpoint inside the timed steps; ``extra`` overrides last
    (``run.precision=bf16``, ...)."""
    overrides = [
        f"agent={preset}",
        f"env={env}",
        f"run.num_threads={threads}",
        f"run.total_steps={WARMUP + steps}",
        f"run.eval_every={10 * (WARMUP + steps)}",
        f"run.log_every={10 * (WARMUP + steps)}",
        f"run.checkpoint_every={10 * (WARMUP + steps)}",
        "logging.wandb_mode=disabled",
        f"env.random_steps={WARMUP}",
        f"run.num_seeds={seeds}",
        *extra,
    ]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return to_typed(compose(config_name="train", overrides=overrides))


def start_trainer(config: TrainConfig, run_dir: Path) -> Trainer:
    """A trainer in ``run_dir`` whose envs have had their first reset, ready for ``_collect``."""
    trainer = Trainer(config, run_dir)
    trainer.obs = np.stack([seed.reset(first=True) for seed in trainer.seeds])
    return trainer


def loop_steps(trainer: Trainer, steps: int) -> float:
    """Run ``steps`` steps of td3x's own loop (every seed once, then their updates); the seconds it took."""
    started = time.perf_counter()
    for _ in range(steps):
        trainer._run_pending_updates(episode_over=trainer._collect())
    return time.perf_counter() - started


def time_td3x(config: TrainConfig, steps: int) -> float:
    """Learning-phase env steps per core-second of td3x: all seeds' steps over wall time x threads."""
    with tempfile.TemporaryDirectory() as run_dir:
        trainer = start_trainer(config, Path(run_dir))
        loop_steps(trainer, WARMUP)
        elapsed = loop_steps(trainer, steps)
        trainer.close("complete")
    return config.run.num_seeds * steps / elapsed / config.run.num_threads


def time_sb3(config: TrainConfig, steps: int) -> float:
    """Learning-phase env steps per core-second of Stable-Baselines3's TD3, same hyper-parameters and threads."""
    import gymnasium as gym
    from sb3_reference import make_sb3_td3  # scripts/, beside this file
    from stable_baselines3.common.callbacks import BaseCallback

    class LearningPhaseClock(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.marks: dict[int, float] = {}

        def _on_step(self) -> bool:
            if self.num_timesteps in (WARMUP, WARMUP + steps):
                self.marks[self.num_timesteps] = time.perf_counter()
            return True

    torch.set_num_threads(config.run.num_threads)
    env = gym.wrappers.RescaleAction(gym.make(config.env.id), np.float32(-1), np.float32(1))  # as td3x's actions
    model = make_sb3_td3(config, env, learning_starts=WARMUP)
    clock = LearningPhaseClock()
    model.learn(total_timesteps=WARMUP + steps, callback=clock)
    return steps / (clock.marks[WARMUP + steps] - clock.marks[WARMUP]) / config.run.num_threads


# ---------------------------------------------------------------------- the per-core table
@dataclass
class Cell:
    """One td3x configuration's per-core rates, and its SB3 partners of the same repetitions."""

    preset: str
    threads: int
    seeds: int
    precision: str
    td3x: list[float] = field(default_factory=list)
    sb3_one: list[float] = field(default_factory=list)  # SB3 on one thread, same repetition
    sb3_two: list[float] = field(default_factory=list)  # SB3 on two threads (per core), same repetition
    cleanrl: list[float] = field(default_factory=list)  # CleanRL on one thread, same repetition

    def ratios(self, partner: list[float]) -> list[float]:
        return [ours / theirs for ours, theirs in zip(self.td3x, partner, strict=True)]


def run_table(args: argparse.Namespace) -> list[Cell]:
    """Every (preset, threads, K) cell over ``args.repeats`` repetitions, SB3 measured beside each preset."""
    cells = {
        (preset, threads, seeds, precision): Cell(preset, threads, seeds, precision)
        for preset in args.presets
        for precision in args.precisions
        for threads in args.threads
        for seeds in args.seeds
    }
    for repetition in range(args.repeats):
        for preset in args.presets:
            sb3_one = time_sb3(td3x_config(preset, 1, args.sb3_steps), args.sb3_steps)
            cleanrl = cleanrl_rate(args, preset)
            rates = {}
            for precision in args.precisions:
                for threads in args.threads:
                    for seeds in args.seeds:
                        config = td3x_config(preset, threads, args.steps, seeds, [f"run.precision={precision}"])
                        rates[threads, seeds, precision] = time_td3x(config, args.steps)
            sb3_two = time_sb3(td3x_config(preset, 2, args.sb3_steps), args.sb3_steps) if args.sb3_two else None
            for (threads, seeds, precision), rate in rates.items():
                cell = cells[preset, threads, seeds, precision]
                cell.td3x.append(rate)
                cell.sb3_one.append(sb3_one)
                if sb3_two is not None:
                    cell.sb3_two.append(sb3_two)
                if cleanrl is not None:
                    cell.cleanrl.append(cleanrl)
            print(
                f"  repetition {repetition + 1}/{args.repeats}, {preset}: SB3 {sb3_one:.1f} (1 thread)"
                + (f", {sb3_two:.1f} (2 threads, per core)" if sb3_two is not None else "")
                + (f"; CleanRL {cleanrl:.1f} (1 thread)" if cleanrl is not None else "")
                + "; td3x "
                + ", ".join(f"K={k} {t}t {p} {rate:.1f}" for (t, k, p), rate in rates.items()),
                flush=True,
            )
    return list(cells.values())


def cleanrl_rate(args: argparse.Namespace, preset: str) -> float | None:
    """CleanRL's one-thread rate with ``preset``'s hyper-parameters, over ``args.sb3_steps`` learning steps (None
    without ``--cleanrl``, or where its script cannot run the preset)."""
    if args.cleanrl is None:
        return None
    config = td3x_config(preset, 1, args.sb3_steps)
    if mismatch(config) is not None:
        return None
    return time_cleanrl(config, args.sb3_steps, args.cleanrl, WARMUP)


def ratio_text(ratios: list[float]) -> str:
    if not ratios:
        return f"{'-':>6s} {'':11s}"
    return f"{statistics.median(ratios):6.2f} {min(ratios):5.2f}-{max(ratios):<5.2f}"


def precision_label(precision: str) -> str:
    """``bf16 (emulated)`` where td3x-train would refuse bf16 on this CPU (td3x.algo.precision)."""
    refused = precision_problems(Precision(precision), torch.device("cpu"), cpu_flags())
    return f"{precision} (emulated)" if refused else precision


def partner_text(rates: list[float], cell: Cell, width: int) -> str:
    """A partner's median rate and td3x's ratio to it, or dashes where the partner was not measured."""
    if not rates:
        return f"{'-':>{width}s} {ratio_text([])}"
    return f"{statistics.median(rates):{width}.1f} {ratio_text(cell.ratios(rates))}"


def print_table(cells: list[Cell]) -> None:
    with_cleanrl = any(cell.cleanrl for cell in cells)
    print(
        f"\n{'preset':10s} {'precision':16s} {'threads':>7s} {'K':>3s} {'td3x /core':>10s} {'SB3 1t':>7s} "
        f"{'ratio':>6s} {'range':11s} "
        f"{'SB3 2t/core':>11s} {'ratio':>6s} {'range':11s}"
        + (f" {'CleanRL 1t':>10s} {'ratio':>6s} {'range':11s}" if with_cleanrl else "")
    )
    for cell in cells:
        print(
            f"{cell.preset:10s} {precision_label(cell.precision):16s} {cell.threads:7d} {cell.seeds:3d} "
            f"{statistics.median(cell.td3x):10.1f} {partner_text(cell.sb3_one, cell, 7)} "
            f"{partner_text(cell.sb3_two, cell, 11)}"
            + (f" {partner_text(cell.cleanrl, cell, 10)}" if with_cleanrl else "")
        )
    print(
        "(env steps per second per core, medians over repetitions; td3x counts all K seeds' steps; ratio: the median "
        "of the repetitions' td3x/SB3 (or td3x/CleanRL) ratios, each pair measured within the same minutes, and their "
        "range)"
    )


def precision_rows(cells: list[Cell]) -> list[tuple[Cell, list[float]]]:
    """Each non-fp32 cell with its per-repetition rate ratios to the fp32 cell of the same preset, threads and K
    (measured in the same repetition, minutes apart); none where fp32 was not measured."""
    fp32 = {(cell.preset, cell.threads, cell.seeds): cell for cell in cells if cell.precision == Precision.fp32.name}
    return [
        (cell, cell.ratios(fp32[cell.preset, cell.threads, cell.seeds].td3x))
        for cell in cells
        if cell.precision != Precision.fp32.name and (cell.preset, cell.threads, cell.seeds) in fp32
    ]


def print_precision_table(cells: list[Cell]) -> None:
    rows = precision_rows(cells)
    if not rows:
        return
    print(f"\n{'preset':10s} {'precision':16s} {'threads':>7s} {'K':>3s} {'/ fp32':>6s} {'range':11s}")
    for cell, ratios in rows:
        print(
            f"{cell.preset:10s} {precision_label(cell.precision):16s} {cell.threads:7d} {cell.seeds:3d} "
            f"{ratio_text(ratios)}"
        )
    print("(td3x's rate over its own fp32 rate, same preset, threads and K: the repetitions' ratios, median, range)")


# ---------------------------------------------------------------------- where a stacked loop step's time goes
class Clock:
    """Seconds spent in named parts, measured by wrapping the callables that do them."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(self, function: Callable[..., Any], part: str | Callable[..., str]) -> Callable[..., Any]:
        """``function``, timed into ``part`` (or into ``part(*args)``, a name chosen from the arguments)."""

        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                name = part if isinstance(part, str) else part(*args)
                self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started

        return timed

    def time_method(self, owner: Any, name: str, part: str) -> None:
        setattr(owner, name, self.wrap(getattr(owner, name), part))


@contextmanager
def timed_update_parts(clock: Clock, trainer: Trainer) -> Iterator[None]:
    """Time the parts of td3x's update: the module's own functions for the optimiser steps and the Polyak
    update (restored on exit), the agent's noise draw and its two losses for the rest."""
    agent = trainer.agent
    clock.time_method(agent, "smoothing_noise", "update: smoothing noise ε")
    clock.time_method(agent, "critic_loss", "update: target y, critic forward, loss")
    clock.time_method(agent, "actor_loss", "update: actor forward, loss (every d)")

    def step_part(optimizer: torch.optim.Optimizer, *_: Any) -> str:
        network = "critic" if optimizer is agent.critic_optimizer else "actor"
        return f"update: {network} backward + Adam"

    originals = {name: getattr(td3x.algo.td3, name) for name in ("optimizer_step", "polyak_update")}
    td3x.algo.td3.optimizer_step = clock.wrap(originals["optimizer_step"], step_part)  # type: ignore[assignment]
    td3x.algo.td3.polyak_update = clock.wrap(originals["polyak_update"], "update: Polyak")  # type: ignore[assignment]
    try:
        yield
    finally:
        for name, function in originals.items():
            setattr(td3x.algo.td3, name, function)


def profile_loop(preset: str, threads: int, seeds: int, steps: int, precision: str = "fp32") -> None:
    """ms per loop step (which steps every seed once and runs their update) by part, and per seed-step."""
    clock = Clock()
    with tempfile.TemporaryDirectory() as run_dir:
        config = td3x_config(preset, threads, steps, seeds, [f"run.precision={precision}"])
        trainer = start_trainer(config, Path(run_dir))
        loop_steps(trainer, WARMUP)
        for seed in trainer.seeds:
            clock.time_method(seed.env, "step", "env steps (MuJoCo)")
            clock.time_method(seed.tape, "record", "episode tapes")
            clock.time_method(seed, "noisy_action", "acting: exploration noise, per seed")
        clock.time_method(trainer.agent, "act", "acting: the K actors")
        clock.time_method(trainer.buffer, "add", "buffer writes")
        clock.time_method(trainer.agent.obs_normalizer, "update", "buffer writes")
        clock.time_method(trainer.buffer, "sample", "sampling")
        clock.time_method(trainer.agent, "update", "update")
        with timed_update_parts(clock, trainer):
            total = loop_steps(trainer, steps)
        trainer.close("complete")
    parts = clock.seconds
    update_parts = sum(seconds for name, seconds in parts.items() if name.startswith("update: "))
    rows = {name: seconds for name, seconds in parts.items() if name != "update"}
    rows["update: the rest (metrics, dispatch, bookkeeping)"] = parts["update"] - update_parts
    rows["loop: the rest (per-seed Python bookkeeping)"] = total - sum(
        seconds for name, seconds in parts.items() if not name.startswith("update: ")
    )
    print(
        f"\nwhere a loop step's time goes: {preset}, {precision_label(precision)}, K={seeds}, {threads} thread(s), "
        f"{steps} learning steps "
        f"({1e3 * total / steps:.2f} ms a loop step, {1e3 * total / steps / seeds:.2f} ms a seed-step)"
    )
    print(f"{'part':52s} {'ms/step':>8s} {'ms/seed-step':>12s} {'share':>6s}")
    for name, seconds in sorted(rows.items(), key=lambda item: -item[1]):
        per_step = 1e3 * seconds / steps
        print(f"{name:52s} {per_step:8.3f} {per_step / seeds:12.3f} {100 * seconds / total:5.1f}%")


def cleanrl_problems(args: argparse.Namespace) -> list[str]:
    """Why ``--cleanrl`` cannot be measured as asked (none without it)."""
    if args.cleanrl is None:
        return []
    problems = checkout_problems(args.cleanrl)
    if args.sb3_steps % 100:
        problems.append(f"--sb3-steps: {args.sb3_steps} is not a multiple of 100 (CleanRL prints its rate every 100)")
    reasons = {preset: mismatch(td3x_config(preset, 1, 100)) for preset in args.presets}
    if all(reasons.values()):
        problems.append(
            "--cleanrl: CleanRL's TD3 runs none of the presets: "
            + "; ".join(f"{preset}: {reason}" for preset, reason in reasons.items())
        )
    return problems


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 5, 10, 20], help="K: seeds in one process")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch threads of td3x")
    parser.add_argument("--presets", nargs="+", default=["td3", "td3_paper"], help="agent presets (conf/agent)")
    parser.add_argument("--precisions", nargs="+", default=["fp32"], choices=[p.name for p in Precision])
    parser.add_argument("--steps", type=int, default=300, help="learning-phase steps per seed timed, td3x")
    parser.add_argument("--sb3-steps", type=int, default=1000, help="learning-phase steps timed, SB3")
    parser.add_argument("--repeats", type=int, default=3, help="repetitions (alternating td3x and SB3)")
    parser.add_argument("--no-sb3-two", dest="sb3_two", action="store_false", help="skip SB3 on two threads")
    parser.add_argument("--no-profile", dest="profile", action="store_false", help="skip the loop-step profile")
    parser.add_argument("--cleanrl", type=Path, metavar="PATH", help="a checkout of CleanRL: time its TD3 too")
    args = parser.parse_args()
    register_configs()
    problems = cleanrl_problems(args)
    if problems:
        parser.exit(2, "".join(f"{parser.prog}: error: {problem}\n" for problem in problems))
    warnings.filterwarnings("ignore", message=".*precision lowered by casting to float32")  # Hopper's Box, via SB3
    numerics.apply(Numerics.native)  # as td3x-train: denormals flushed, from before either learner's first step
    print(
        f"Hopper-v5, learning phase after {WARMUP} random steps a seed: td3x {args.steps} steps a seed, SB3 "
        f"{args.sb3_steps}; {args.repeats} repetitions; torch {torch.__version__}; denormals "
        f"{'flushed to zero' if numerics.denormals_flushed() else 'kept'}, as td3x-train does, for both learners "
        "(one process)"
    )
    for preset in args.presets if args.cleanrl else []:
        reason = mismatch(td3x_config(preset, 1, 100))
        print(f"CleanRL's TD3 ({args.cleanrl}): " + (f"no partner for {preset}: {reason}" if reason else f"{preset}"))
    cells = run_table(args)
    print_table(cells)
    print_precision_table(cells)
    for preset, precision in itertools.product(args.presets, args.precisions) if args.profile else []:
        best = max(
            (cell for cell in cells if cell.preset == preset and cell.precision == precision),
            key=lambda cell: statistics.median(cell.td3x),
        )
        profile_loop(preset, best.threads, best.seeds, args.steps, precision)


if __name__ == "__main__":
    main()
