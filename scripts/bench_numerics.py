"""What ``run.numerics=portable`` costs: env steps per second of native and portable runs, alternately.

    python scripts/bench_numerics.py [--env hopper] [--agent td3_paper] [--steps 4000] [--pairs 3]

Each pair trains the same short run (one thread, evaluated at its start and end only) natively, then portably, each
by ``td3x-train`` in a process of its own, back to back: a slow minute of a shared machine hits both sides of a pair.
Prints, per pair, each mode's env steps per second (steps over the run's wall time, from ``summary.json``) and their
ratio; then the median ratio, whether each mode gave one ``eval.csv`` every time (same seed, same numbers), and the
CPU with the instruction-set extensions that decide the kernels. Read the ratios: absolute rates drift on shared or
virtual machines.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from td3x.commands.common import OneLineParser
from td3x.host.provenance import cpu_flags, cpu_model
from td3x.rundir.layout import EVAL_FILE, SUMMARY_FILE, is_timing_column

MODES = ("native", "portable")


def parse_args() -> argparse.Namespace:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="hopper", help="env option (conf/env)")
    parser.add_argument("--agent", default="td3_paper", help="agent option (conf/agent)")
    parser.add_argument("--steps", type=int, default=4000, help="env steps per run (1000 of them the warm-up)")
    parser.add_argument("--pairs", type=int, default=3, help="native-then-portable pairs")
    args = parser.parse_args()
    if args.steps < 1 or args.pairs < 1:
        parser.error("--steps and --pairs must be >= 1")
    return args


def train(mode: str, args: argparse.Namespace, run_dir: Path) -> tuple[float, str]:
    """One run in its own process: its env steps per second and its eval.csv without the timing columns."""
    command = [
        str(Path(sys.executable).parent / "td3x-train"),
        f"env={args.env}",
        f"agent={args.agent}",
        f"run.total_steps={args.steps}",
        f"run.eval_every={args.steps}",
        f"run.numerics={mode}",
        "logging.wandb_mode=disabled",
        f"hydra.run.dir={run_dir}",
    ]
    finished = subprocess.run(command, capture_output=True, text=True)
    if finished.returncode != 0:
        sys.exit(f"bench_numerics: {mode} run failed: {finished.stderr.strip().splitlines()[-1:]}")
    summary = json.loads((run_dir / SUMMARY_FILE).read_text())
    lines = (run_dir / EVAL_FILE).read_text().splitlines()
    keep = [i for i, name in enumerate(lines[0].split(",")) if not is_timing_column(name)]
    evals = "\n".join(",".join(line.split(",")[i] for i in keep) for line in lines)
    return summary["steps"] / summary["wall_time_s"], evals


def main() -> None:
    args = parse_args()
    rates: dict[str, list[float]] = {mode: [] for mode in MODES}
    evals: dict[str, set[str]] = {mode: set() for mode in MODES}
    flags = ", ".join(cpu_flags() or ["flags unknown"])
    print(f"{args.env}, agent={args.agent}, {args.steps} steps, one thread; {cpu_model()} ({flags})")
    print("| pair | native steps/s | portable steps/s | ratio |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        for pair in range(1, args.pairs + 1):
            for mode in MODES:
                rate, result = train(mode, args, Path(scratch) / f"{mode}_{pair}")
                rates[mode].append(rate)
                evals[mode].add(result)
            print(
                f"| {pair} | {rates['native'][-1]:.1f} | {rates['portable'][-1]:.1f} | "
                f"{rates['portable'][-1] / rates['native'][-1]:.2f} |"
            )
    ratios = [p / n for n, p in zip(rates["native"], rates["portable"], strict=True)]
    print(f"median ratio {statistics.median(ratios):.2f} (range {min(ratios):.2f}-{max(ratios):.2f})")
    for mode in MODES:
        print(
            f"{mode}: {'one eval.csv' if len(evals[mode]) == 1 else f'{len(evals[mode])} different eval.csv'} "
            f"over {args.pairs} runs"
        )
    print("portable " + ("gives native's numbers" if evals["native"] == evals["portable"] else "changes the numbers"))


if __name__ == "__main__":
    main()
