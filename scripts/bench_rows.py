"""What each Table 2 row costs against the TD3 row: env steps per core-second of td3x, row by row, same env and K.

    python scripts/bench_rows.py [--env walker2d] [--seeds 5] [--steps 300] [--repeats 3] [--rows none ddpg ...]

The rows differ in what an update does: one critic or two, an actor update every step or every other one, DQ-AC's
two actors, DDPG's 64-sample batch, its observation normaliser and Ornstein-Uhlenbeck noise. Each repetition times
every row's learning phase (``agent=td3_paper``, the row's ``ablation`` option, K seeds stacked on one thread, after
``bench_sps.py``'s random warm-up, no evaluation), the rows in Table 2's order, then backwards in the next
repetition, so that a slow minute of a shared machine falls on several rows. A row's cost is the median over
repetitions of the TD3 row's rate over its own, both measured in that repetition; Table 2's compute is the rows'
costs summed, in TD3 rows. Absolute rates drift on shared machines: read the costs.
"""

from __future__ import annotations

import argparse
import statistics

import yaml
from bench_sps import td3x_config, time_td3x  # scripts/, beside this file

from td3x.commands.common import OneLineParser
from td3x.config.enums import Numerics
from td3x.config.hydra import CONF_DIR, register_configs
from td3x.config.overrides import group_options
from td3x.host import numerics

TD3_ROW = "none"
TABLE2_SWEEP = yaml.safe_load((CONF_DIR / "experiment" / "table2.yaml").read_text())["hydra"]["sweeper"]["params"]
TABLE2_ROWS = TABLE2_SWEEP["ablation"].split(",")  # Table 2's rows in its order, as the experiment sweeps them


def time_rows(env: str, rows: list[str], seeds: int, steps: int, repeats: int) -> dict[str, list[float]]:
    """Each row's per-core rate, one per repetition (the rows' order reversed every other repetition)."""
    rates: dict[str, list[float]] = {row: [] for row in rows}
    for repetition in range(repeats):
        for row in rows if repetition % 2 == 0 else rows[::-1]:
            config = td3x_config("td3_paper", 1, steps, seeds, [f"ablation={row}"], env=env)
            rates[row].append(time_td3x(config, steps))
        print(
            f"  repetition {repetition + 1}/{repeats}: " + ", ".join(f"{row} {rates[row][-1]:.1f}" for row in rows),
            flush=True,
        )
    return rates


def costs(rates: dict[str, list[float]]) -> dict[str, list[float]]:
    """Each row's cost in TD3 rows, per repetition: the TD3 row's rate over the row's, same repetition."""
    return {
        row: [td3 / own for td3, own in zip(rates[TD3_ROW], row_rates, strict=True)] for row, row_rates in rates.items()
    }


def print_table(rates: dict[str, list[float]]) -> None:
    row_costs = costs(rates)
    print(f"\n{'row':14s} {'option':14s} {'per core':>8s} {'cost':>5s} {'range':11s}")
    for row, row_rates in rates.items():
        paper_row = td3x_config("td3_paper", 1, 1, 1, [f"ablation={row}"]).paper_row
        cost = row_costs[row]
        print(
            f"{paper_row:14s} {row:14s} {statistics.median(row_rates):8.1f} {statistics.median(cost):5.2f} "
            f"{min(cost):.2f}-{max(cost):.2f}"
        )
    total = sum(statistics.median(cost) for cost in row_costs.values())
    print(
        "(per core: env steps per second per core, all K seeds' steps, median over repetitions; cost: the TD3 row's "
        "rate over the row's, median of the repetitions' ratios, and their range)\n"
        f"the {len(rates)} rows cost {total:.2f} TD3 rows ({total / len(rates):.2f} per row on average)"
    )


def argument_problems(args: argparse.Namespace) -> list[str]:
    """Why the command line cannot be measured: an option td3x does not have, a count below one."""
    options = group_options()
    problems = [
        f"--{flag}: {name} is not an option of conf/{group}: {', '.join(options[group])}"
        for flag, group, names in (("env", "env", [args.env]), ("rows", "ablation", args.rows))
        for name in names
        if name not in options[group]
    ]
    return problems + [
        f"--{name}: {getattr(args, name)} is not a positive count"
        for name in ("seeds", "steps", "repeats")
        if getattr(args, name) < 1
    ]


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="walker2d", help="env option (conf/env)")
    parser.add_argument("--seeds", type=int, default=5, help="K: seeds in one process")
    parser.add_argument("--steps", type=int, default=300, help="learning-phase steps per seed timed")
    parser.add_argument("--repeats", type=int, default=3, help="repetitions")
    parser.add_argument("--rows", nargs="+", default=TABLE2_ROWS, help="ablation options")
    args = parser.parse_args()
    problems = argument_problems(args)
    if problems:
        parser.exit(2, "".join(f"{parser.prog}: error: {problem}\n" for problem in problems))
    register_configs()
    rows = [TD3_ROW, *(row for row in args.rows if row != TD3_ROW)]  # every cost is against the TD3 row
    numerics.apply(Numerics.native)  # as td3x-train: denormals flushed
    print(
        f"{args.env}, agent=td3_paper, K={args.seeds} seeds on one thread, {args.steps} learning steps a seed timed, "
        f"{args.repeats} repetitions"
    )
    print_table(time_rows(args.env, rows, args.seeds, args.steps, args.repeats))


if __name__ == "__main__":
    main()
