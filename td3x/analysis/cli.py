"""``td3x-report``: run dirs → the paper's tables, aggregate statistics and plots.

td3x-report outputs/table2 --out report/            # Markdown to stdout; CSV, LaTeX, PNG, HTML in report/
td3x-report outputs/multirun/a outputs/runs/b --out report/ --reps 5000 --wandb
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from td3x.analysis.report import ReportError, Settings, build_report, write_report
from td3x.analysis.wandb_export import log_report


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line, checked (argparse exits 2 with a message on a bad one).

    Args:
        argv: the arguments (``sys.argv[1:]`` when None).
    """
    defaults = Settings()
    parser = argparse.ArgumentParser(
        prog="td3x-report",
        description="Turn td3x run dirs into the paper's tables (Markdown on stdout, CSV and LaTeX), aggregate "
        "statistics (rliable) and plots (PNG, interactive HTML). Run dirs are found by their config.yaml.",
    )
    parser.add_argument("paths", nargs="+", type=Path, help="sweep dirs, run dirs, or folders above them")
    parser.add_argument("--out", type=Path, required=True, help="directory for the tables, plots and report.md")
    parser.add_argument("--reps", type=int, default=defaults.reps, help="bootstrap replications per CI")
    parser.add_argument("--seed", type=int, default=defaults.seed, help="seed of every bootstrap")
    parser.add_argument("--at-step", type=int, default=defaults.at_step, help="env step of the 'return at' table")
    parser.add_argument(
        "--wandb", action="store_true", help="also log tables and plots to a W&B run (mode: WANDB_MODE, else offline)"
    )
    args = parser.parse_args(argv)
    if args.reps < 1 or args.at_step < 0:
        parser.error("--reps must be >= 1 and --at-step >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    """Console script ``td3x-report``; returns the exit code (2 when no run dir is found).

    Args:
        argv: the arguments (``sys.argv[1:]`` when None).
    """
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        report = build_report(args.paths, Settings(reps=args.reps, seed=args.seed, at_step=args.at_step))
    except (ReportError, FileNotFoundError) as error:
        print(f"report error: {error}", file=sys.stderr)
        return 2
    written = write_report(report, args.out)
    print(written.markdown)
    if args.wandb:
        wandb_dir = log_report(report.runs, written.frames, written.images, args.out)
        print(f"W&B run: {wandb_dir}" if wandb_dir else "W&B logging failed; see the warning above", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
