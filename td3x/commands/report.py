"""``td3x-report``: run dirs → the paper's tables, aggregate statistics and plots.

td3x-report outputs/table2 --out report/            # Markdown to stdout; CSV, LaTeX, PNG, HTML in report/
td3x-report outputs/multirun/a outputs/runs/b --out report/ --reps 5000 --wandb
td3x-report docs/results/runs --out docs/results/report --plotly none \
    --preregistration docs/results/preregistration.yaml     # a committed report: bounds from the pre-registration
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

from td3x.analysis.equivalence import DEFAULT_FRACTION, BoundRule, load_rule
from td3x.analysis.plots import PLOTLY_JS
from td3x.analysis.registration import PreregistrationError
from td3x.analysis.report import ReportError, Settings, build_report, write_report
from td3x.analysis.wandb_export import log_report, mode_problems
from td3x.commands.common import HelpFormatter, OneLineParser, add_version_flag

DEFAULT_OUT = Path("outputs/reports")  # git-ignored, beside Hydra's outputs/runs; one dir per report, by time
PLOTLY_HELP = (
    "how the interactive HTML plots get plotly.js: 'directory' writes one plotly.min.js (4.8 MB) beside them, so "
    "they open offline; 'cdn' loads it from cdn.plot.ly when a page is opened (no copy: for a report committed to "
    "git, but it needs a network); 'inline' puts a copy in every page (each opens alone, 4.8 MB each); 'none' "
    "writes no HTML plots (PNG only)"
)


def given_path(text: str) -> Path:
    """A path argument as typed; an empty one (an unset shell variable, ``--out "$DIR"``) is refused, where ``Path``
    would take it for the current directory."""
    if not text:
        raise argparse.ArgumentTypeError("is empty: name a directory")
    return Path(text)


def build_parser() -> argparse.ArgumentParser:
    """td3x-report's command line."""
    defaults = Settings()
    parser = OneLineParser(
        prog="td3x-report",
        description="Turn td3x run dirs into the paper's tables (Markdown on stdout, CSV and LaTeX), aggregate "
        "statistics (rliable), a test of every row against the authors' published TD3 curves, and plots (PNG, "
        "interactive HTML). Run dirs are found by their config.yaml.",
        formatter_class=HelpFormatter,
    )
    add_version_flag(parser)
    parser.add_argument("paths", nargs="+", type=given_path, help="sweep dirs, run dirs, or folders above them")
    parser.add_argument(
        "--out",
        type=given_path,
        help=f"directory for the tables, plots and report.md (default: a new {DEFAULT_OUT}/<date>_<time> below "
        "the current directory; the path is printed)",
    )
    parser.add_argument("--reps", type=int, default=defaults.reps, help="bootstrap replications per CI")
    parser.add_argument("--seed", type=int, default=defaults.seed, help="seed of every bootstrap")
    parser.add_argument(
        "--at-step",
        type=int,
        default=defaults.at_step,
        help="env step of the 'return at' table, at most the longest complete run's last evaluation (default: the "
        "shortest run's run.total_steps, which every run reaches)",
    )
    parser.add_argument("--plotly", choices=list(PLOTLY_JS), default="directory", help=PLOTLY_HELP)
    parser.add_argument(
        "--coverage",
        type=Path,
        help="a coverage table of scripts/aggregate_coverage.py (e.g. docs/results/aggregate_coverage.csv): the "
        "aggregates section quotes how often their bootstrap CIs cover the truth (default: none, and the section says "
        "the coverage is not measured)",
    )
    parser.add_argument(
        "--preregistration",
        type=Path,
        help="a pre-registration file (docs/results/preregistration.yaml): the fidelity and peer tables' "
        "equivalence bounds are the ones it registers (peer.computed.<env>.bound), else its post-hoc rule "
        "(peer.bound_fraction x the reference's mean), and the seed-sources section states the seed study's post-hoc "
        "power from it (post_hoc.computed.seed_study); its registered comparisons are judged in a section of their "
        "own (registered.csv), and in the other tables a registered run's cell expects its side's (or seed study "
        "condition's) registered seeds "
        "and an amendment's runs get a row of their own "
        f"(default: none: the bounds are {DEFAULT_FRACTION:g} x the reference's mean, marked post hoc, no power is "
        "stated and nothing is judged)",
    )
    parser.add_argument(
        "--wandb", action="store_true", help="also log tables and plots to a W&B run (mode: WANDB_MODE, else offline)"
    )
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line, checked (argparse exits 2 with a message on a bad one).

    Args:
        argv: the arguments (``sys.argv[1:]`` when None).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.reps < 1:
        parser.error(f"--reps {args.reps}: must be >= 1")
    if args.at_step is not None and args.at_step < 0:
        parser.error(f"--at-step {args.at_step}: must be >= 0")
    return args


def path_problem(paths: list[Path], out: Path, shown_out: str) -> str | None:
    """Why the paths cannot be read or the output dir written (a file where a dir goes, a read-only file system, no
    permission), or None.

    Args:
        paths: the run dirs and folders to read.
        out: the output dir.
        shown_out: how a problem names it (``--out DIR``, or the default's path).
    """
    for path in paths:
        if path.exists() and not path.is_dir():
            return f"{path} is a file: td3x-report takes run dirs, sweep dirs or folders above them"
    blocking = next((p for p in (out, *out.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        where = "is" if blocking == out else f"lies below {blocking}, which is"
        return f"{shown_out} {where} a file, not a directory"
    return unwritable(out, shown_out)


def unwritable(out: Path, shown_out: str) -> str | None:
    """Why no file can be written in ``out``, or None: found by creating it (as ``write_report`` will) and a file in
    it, before the analysis rather than after; what this creates is removed again, so a refusal, here or later,
    leaves nothing behind."""
    created = [path for path in (out, *out.parents) if not path.exists()]  # deepest first
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as error:
        return f"{shown_out} cannot be written: {error.strerror or error}"
    finally:
        for path in created:
            if path.is_dir():
                path.rmdir()
    return None


def main(argv: list[str] | None = None) -> int:
    """Console script ``td3x-report``; returns the exit code (2 when no run dir is found, ``--out`` cannot be
    written, ``--at-step`` is past every run, ``WANDB_MODE`` is no mode, or the pre-registration file cannot be read).

    Args:
        argv: the arguments (``sys.argv[1:]`` when None).
    """
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    out = args.out or DEFAULT_OUT / time.strftime("%Y-%m-%d_%H-%M-%S")
    shown_out = f"--out {out}" if args.out else f"the default --out {out}"
    path_error = path_problem(args.paths, out, shown_out)
    problems = ([path_error] if path_error else []) + (mode_problems() if args.wandb else [])
    if problems:
        for problem in problems:
            print(f"report error: {problem}", file=sys.stderr)
        return 2
    try:
        bounds = load_rule(args.preregistration) if args.preregistration else BoundRule()
        settings = Settings(args.reps, args.seed, args.at_step, bounds, args.coverage, args.preregistration)
        report = build_report(args.paths, settings)
    except (ReportError, FileNotFoundError, PreregistrationError) as error:
        print(f"report error: {error}", file=sys.stderr)
        return 2
    written = write_report(report, out, args.plotly)
    print(written.markdown)
    print(f"report written to {out}", file=sys.stderr)  # stdout holds the Markdown alone
    if args.wandb:
        wandb_dir = log_report(report.runs, written.frames, written.images, out)
        print(f"W&B run: {wandb_dir}" if wandb_dir else "W&B logging failed; see the warning above", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
