"""Stacked TD3 updates per second on a GPU, by seeds K, precision and compilation; and td3x's loop on Hopper there.

    python scripts/bench_gpu.py [--device cuda] [--seeds 1 10 110] [--precisions fp32 bf16]
                                [--compile off on graphs] [--updates 200] [--blocks 3]
                                [--loop-seeds 1 10] [--loop-compile off graphs] [--loop-steps 2000] [--out FILE]

**Updates.** td3x's own ``TD3.update`` for K seeds of one row stacked in one process (``agent=td3_paper``: 400-300
networks, batch 100, policy delay 2; Hopper-v5's sizes), on one mini-batch per seed already on the device, so
that only the update is timed: after a warm-up (compilation, kernel selection), ``--blocks`` blocks of ``--updates``
updates, each ended by a device synchronisation; the median block. K = 110 is all of Table 2's runs of one env
(11 rows x 10 seeds), an upper bound: the rows differ in critics, delay and batch and cannot share one update.
``seed-updates/s`` is K x updates/s: TD3's loop runs one update per env step, so it bounds the env steps per
second that K stacked seeds could reach if stepping the envs cost nothing.

**Compilation.** ``off``: eager; ``on``: ``run.compile=true`` (the two losses through ``torch.compile``'s default
mode); ``graphs``: an experiment td3x has no key for, the same two losses compiled with ``mode="reduce-overhead"``,
which replays them as CUDA graphs (one launch for each loss's forward and backward instead of one per kernel).

**Loop.** td3x's training loop (``Trainer``, as ``bench_sps.py``) on Hopper-v5 with K seeds and the networks on
the device: the learning phase's env steps per second, all seeds counted (the envs step on one CPU core).

Each measurement prints as it ends and the table is rewritten to ``--out`` after each, so a run stopped early keeps
what it measured. ``--device cpu`` runs the same on the CPU (small sizes in the tests). bf16 runs here wherever
asked, to be measured; ``td3x-train`` refuses it where the hardware has no bf16 units (td3x.algo.precision), and the
table marks such rows ``emulated``.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from bench_sps import WARMUP, loop_steps, start_trainer, td3x_config  # scripts/, beside this file

from td3x.algo.envs import env_spec, make_env
from td3x.algo.precision import problems as precision_problems
from td3x.algo.replay_buffer import Batch
from td3x.algo.seeding import generators_of
from td3x.algo.td3 import TD3, actor_loss, critic_loss
from td3x.commands.common import OneLineParser
from td3x.config.enums import Precision
from td3x.config.hydra import register_configs
from td3x.config.schema import TrainConfig
from td3x.host.provenance import cpu_flags

PRESET = "td3_paper"  # the paper's networks and batch: Table 2's runs


COMPILE_MODES = {"off": None, "on": "default", "graphs": "reduce-overhead"}  # --compile: torch.compile's mode


@dataclass
class UpdateRow:
    seeds: int
    precision: str
    compiled: str  # a key of COMPILE_MODES
    ms_per_update: float
    compile_s: float  # the warm-up's seconds (compilation and kernel selection included)
    emulated: bool

    @property
    def seed_updates_per_s(self) -> float:
        return self.seeds * 1e3 / self.ms_per_update


@dataclass
class LoopRow:
    seeds: int
    precision: str
    compiled: str
    env_steps_per_s: float  # all seeds' env steps over wall time


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def config_for(device: torch.device, seeds: int, precision: str, compiled: str, steps: int = 1) -> TrainConfig:
    torch._dynamo.reset()  # each measurement compiles anew: past dynamo's recompile limit the losses would run eager
    extra = [f"run.device={device.type}", f"run.precision={precision}", f"run.compile={compiled == 'on'}".lower()]
    return td3x_config(PRESET, 1, steps, seeds, extra)


def compile_as_graphs(agent: TD3, compiled: str) -> None:
    """``--compile graphs``: the agent's two losses compiled with CUDA graphs (td3x compiles them in the default
    mode, ``run.compile``); nothing for the other modes."""
    if compiled == "graphs":
        agent.critic_loss = torch.compile(critic_loss, mode=COMPILE_MODES[compiled])
        agent.actor_loss = torch.compile(actor_loss, mode=COMPILE_MODES[compiled])


def random_batch(config: TrainConfig, obs_dim: int, action_dim: int, device: torch.device) -> Batch:
    """One mini-batch per seed of plausible scale (the update's cost does not depend on the values)."""
    generator = torch.Generator(device=device).manual_seed(0)
    shape = (config.run.num_seeds, config.agent.batch_size)

    def normal(*dims: int) -> torch.Tensor:
        return torch.randn(*shape, *dims, generator=generator, device=device)

    return Batch(
        obs=normal(obs_dim),
        action=(torch.rand(*shape, action_dim, generator=generator, device=device) * 2 - 1),
        reward=normal(),
        next_obs=normal(obs_dim),
        terminated=(torch.rand(*shape, generator=generator, device=device) < 0.01).float(),
    )


def time_blocks(function: Callable[[], object], calls: int, blocks: int, device: torch.device) -> float:
    """The median over ``blocks`` of the ms per call of ``calls`` calls, each block ended by a synchronisation."""
    times = []
    for _ in range(blocks):
        synchronize(device)
        started = time.perf_counter()
        for _ in range(calls):
            function()
        synchronize(device)
        times.append(1e3 * (time.perf_counter() - started) / calls)
    return statistics.median(times)


def measure_update(
    device: torch.device, seeds: int, precision: str, compiled: str, args: argparse.Namespace
) -> UpdateRow:
    config = config_for(device, seeds, precision, compiled)
    env = make_env(config.env)
    spec = env_spec(env)
    env.close()
    generators = [generators_of(seed, device) for seed in range(seeds)]
    agent = TD3(
        spec, config.agent, device, generators, config.env.normalize_obs, compiled == "on", Precision(precision)
    )
    compile_as_graphs(agent, compiled)
    batch = random_batch(config, spec.obs_dim, spec.action_dim, device)
    started = time.perf_counter()
    for _ in range(max(10, 2 * config.agent.policy_delay)):  # both kinds of update compiled and tuned
        agent.update(batch)
    synchronize(device)
    warmup = time.perf_counter() - started
    ms = time_blocks(lambda: agent.update(batch), args.updates, args.blocks, device)
    emulated = bool(precision_problems(Precision(precision), device, cpu_flags()))
    return UpdateRow(seeds, precision, compiled, ms, warmup, emulated)


def measure_loop(device: torch.device, seeds: int, precision: str, compiled: str, steps: int) -> LoopRow:
    config = config_for(device, seeds, precision, compiled, steps=steps)
    with tempfile.TemporaryDirectory() as run_dir:
        trainer = start_trainer(config, Path(run_dir))
        compile_as_graphs(trainer.agent, compiled)
        loop_steps(trainer, WARMUP)
        elapsed = loop_steps(trainer, steps)
        trainer.close("complete")
    return LoopRow(seeds, precision, compiled, seeds * steps / elapsed)


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)} (CUDA {torch.version.cuda})"
    return f"{platform.processor() or platform.machine()} CPU, {torch.get_num_threads()} thread(s)"


def table(device: torch.device, updates: list[UpdateRow], loops: list[LoopRow]) -> str:
    lines = [
        f"td3x's stacked TD3 updates, {PRESET} (400-300, batch 100) on Hopper-v5's sizes; {device_name(device)}, "
        f"torch {torch.__version__}",
        "",
        "| K seeds | precision | compiled | ms per update | updates/s | seed-updates/s | warm-up s |",
        "| ---: | --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for row in updates:
        precision = f"{row.precision} (emulated)" if row.emulated else row.precision
        lines.append(
            f"| {row.seeds} | {precision} | {row.compiled} | {row.ms_per_update:.3f} | "
            f"{1e3 / row.ms_per_update:.0f} | {row.seed_updates_per_s:.0f} | {row.compile_s:.1f} |"
        )
    if loops:
        lines += [
            "",
            "td3x's loop on Hopper-v5 (learning phase, envs on one CPU core, networks on the device):",
            "",
            "| K seeds | precision | compiled | env steps/s (all seeds) | per seed |",
            "| ---: | --- | --- | ---: | ---: |",
        ]
        lines += [
            f"| {row.seeds} | {row.precision} | {row.compiled} | {row.env_steps_per_s:.0f} | "
            f"{row.env_steps_per_s / row.seeds:.0f} |"
            for row in loops
        ]
    return "\n".join(lines) + "\n"


def parse_arguments() -> argparse.Namespace:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 10, 110])
    parser.add_argument("--precisions", nargs="+", default=["fp32", "bf16"], choices=[p.name for p in Precision])
    parser.add_argument("--compile", nargs="+", default=list(COMPILE_MODES), choices=list(COMPILE_MODES))
    parser.add_argument("--updates", type=int, default=200, help="updates per timed block")
    parser.add_argument("--blocks", type=int, default=3, help="timed blocks (the median is reported)")
    parser.add_argument("--loop-seeds", type=int, nargs="*", default=[1, 10], help="K of the loop runs (none: skip)")
    parser.add_argument("--loop-compile", nargs="*", default=["off", "graphs"], choices=list(COMPILE_MODES))
    parser.add_argument("--loop-steps", type=int, default=2000, help="timed learning steps of each loop run")
    parser.add_argument("--out", type=Path, help="also write the table here (rewritten after each measurement)")
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA device here; use --device cpu")
    return args


def main() -> None:
    args = parse_arguments()
    register_configs()
    torch.set_num_threads(1)
    device = torch.device(args.device)
    updates: list[UpdateRow] = []
    loops: list[LoopRow] = []

    def report(line: str) -> None:
        print(line, flush=True)
        if args.out:
            args.out.write_text(table(device, updates, loops))

    for compiled in args.compile:  # eager first: compilation is the slow part
        for seeds in args.seeds:
            for precision in args.precisions:
                row = measure_update(device, seeds, precision, compiled, args)
                updates.append(row)
                report(
                    f"update K={seeds} {precision} compiled={compiled}: {row.ms_per_update:.3f} ms, "
                    f"{row.seed_updates_per_s:.0f} seed-updates/s (warm-up {row.compile_s:.1f} s)"
                )
        if compiled in args.loop_compile:
            for seeds in args.loop_seeds:
                for precision in args.precisions:
                    loop = measure_loop(device, seeds, precision, compiled, args.loop_steps)
                    loops.append(loop)
                    report(f"loop K={seeds} {precision} compiled={compiled}: {loop.env_steps_per_s:.0f} env steps/s")
    print("\n" + table(device, updates, loops))


if __name__ == "__main__":
    main()
