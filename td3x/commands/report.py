"""``td3x-report``: run dirs → the paper's tables, aggregate statistics and plots.

td3x-report outputs/table2 --out report/            # Markdown to stdout; CSV, LaTeX, PNG, HTML in report/
td3x-report outputs/multirun/a outputs/runs/b --out report/ --reps 5000 --wandb
td3x-report outputs/table2 outputs/other --peer 'Other TD3' --peer-bound HalfCheetah-v5=645  # against a peer row
td3x-report outputs/cdq --registration cdq.yaml --out report/   # judge the comparisons a registration file fixed
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from td3x.analysis.comparisons.plan import make_plan
from td3x.analysis.comparisons.render import plan_frame, plan_markdown
from td3x.analysis.comparisons.schema import RegistrationError, read_registration
from td3x.analysis.render.plots import PLOTLY_JS
from td3x.analysis.render.wandb_export import log_report, mode_problems
from td3x.analysis.report import Report, ReportError, Settings, Written, build_report, write_report
from td3x.analysis.stats.equivalence import DEFAULT_FRACTION, PEER_MEANS, BoundRule
from td3x.commands.common import (
    HelpFormatter,
    OneLineParser,
    Refused,
    add_version_flag,
    exit_with,
    given_path,
    quiet_on_closed_pipe,
    user_path,
)
from td3x.rundir.layout import walk_runs, write_text_atomic
from td3x.rundir.lock import process_alive
from td3x.rundir.outputs import REPORT_FILE

DEFAULT_OUT = Path("outputs/reports")  # git-ignored, beside Hydra's outputs/runs; one dir per report, by time
STAGING_PREFIX = ".td3x-report-partial-"  # the dir inside --out where the files are written before they move in
PLOTLY_HELP = (
    "how the interactive HTML plots get plotly.js: 'directory' writes one plotly.min.js (4.8 MB) beside them, so "
    "they open offline; 'cdn' loads it from cdn.plot.ly when a page is opened (no copy: for a report committed to "
    "git, but it needs a network); 'inline' puts a copy in every page (each opens alone, 4.8 MB each); 'none' "
    "writes no HTML plots (PNG only)"
)


def peer_bound(text: str) -> tuple[str, float]:
    """``ENV=BOUND`` as (env, bound): a named env and a finite bound above 0."""
    env_id, equals, value = text.partition("=")
    try:
        bound = float(value)
    except ValueError:
        bound = math.nan
    if not (env_id and equals and math.isfinite(bound) and bound > 0):
        raise argparse.ArgumentTypeError(f"{text!r}: must be ENV=BOUND, a bound above 0 (HalfCheetah-v5=645)")
    return env_id, bound


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
    parser.add_argument(
        "paths",
        nargs="*",
        type=given_path,
        help="sweep dirs, run dirs, or folders above them (default: none, for --plan alone)",
    )
    parser.add_argument(
        "--plan",
        type=given_path,
        metavar="REGISTRATION",
        help="print a registration file's plan before any of its runs (each comparison's power and MDD at the assumed "
        "SDs and at sd_factor times them, the sizing rule's n; docs: Registered comparisons) instead of a report; with "
        "--out, also plan.md and plan.csv there. Takes no run dirs (default: none: a report of the run dirs)",
    )
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
        type=user_path,
        help="a coverage table of scripts/aggregate_coverage.py (e.g. docs/results/aggregate_coverage.csv): the "
        "aggregates section quotes how often their bootstrap CIs cover the truth (default: none, and the section says "
        "the coverage is not measured)",
    )
    parser.add_argument(
        "--peer",
        metavar="ROW",
        help="a row of the report, another implementation of TD3 under the same protocol: every TD3 row is compared "
        "with it on each env it has runs on (default: none, no peer section)",
    )
    parser.add_argument(
        "--peer-bound",
        type=peer_bound,
        action="append",
        default=[],
        metavar="ENV=BOUND",
        help="the equivalence bound (return units) of every peer test on ENV, fixed before the runs (say by a "
        "registration); repeat it per env. The tests stay post hoc: a registered comparison is judged by "
        "--registration (default: none: each peer bound follows --peer-bound-of)",
    )
    parser.add_argument(
        "--peer-bound-of",
        choices=list(PEER_MEANS),
        default="peer",
        help=f"whose mean a peer test's post-hoc bound is {DEFAULT_FRACTION:g} x: the peer row's or ours, the compared "
        f"row's (the fidelity tests' bound is always {DEFAULT_FRACTION:g} x the authors' mean)",
    )
    parser.add_argument(
        "--registration",
        type=given_path,
        help="a registration file (docs: Registered comparisons): its comparisons are judged on the runs found, "
        "verdicts only for those whose runs are all complete ('incomplete: k of n runs' otherwise), first in "
        "report.md and in registration.csv (default: none: no comparison is judged)",
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
    if args.plan is not None and args.paths:
        parser.error("--plan takes a registration file alone: the plan comes before any run (drop the run dirs)")
    if args.plan is None and not args.paths:
        parser.error("name the run dirs to report on (sweep dirs, run dirs or folders above them), or --plan FILE")
    if args.reps < 1:
        parser.error(f"--reps {args.reps}: must be >= 1")
    if args.at_step is not None and args.at_step < 0:
        parser.error(f"--at-step {args.at_step}: must be >= 0")
    envs = [env_id for env_id, _ in args.peer_bound]
    twice = next((env_id for env_id in envs if envs.count(env_id) > 1), None)
    if twice is not None:
        parser.error(f"--peer-bound {twice}: given twice (one bound per env)")
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


def runless_problems(paths: list[Path]) -> list[str]:
    """One line per path that is missing or holds no run dir, found by the run-dir walker alone (each stops at its
    first run), before any run is loaded: a wrong folder is refused at once, not after the runs of the others
    are read, nor left out of the report in silence."""
    problems = []
    for path in paths:
        skipped: list[str] = []  # broken run dirs: named when the path has no other run, else warned by the report
        if not path.exists():
            problems.append(f"no such file or directory: {path}")  # as the report has always named it
        elif path.is_dir() and next(walk_runs(path, skipped.append), None) is None:
            problems += skipped
            problems.append(
                f"{path} holds no run dir (a directory with a td3x config.yaml) at or below it: td3x-report takes "
                "run dirs, sweep dirs or folders above them"
            )
    return problems


def unwritable(out: Path, shown_out: str) -> str | None:
    """Why no file can be written in ``out``, or None: found by creating it (as ``write_report`` will) and a file in
    it, before the analysis rather than after; what this creates is removed again, so a refusal, here or later,
    leaves nothing behind."""
    try:
        with made_dir(out, keep=False), tempfile.TemporaryFile(dir=out):
            pass
    except OSError as error:
        return f"{shown_out} cannot be written: {error.strerror or error}"
    return None


@contextlib.contextmanager
def made_dir(out: Path, keep: bool) -> Iterator[None]:
    """``out`` created with the dirs above it that are missing; those it created are removed again (when empty) on
    leaving, or only on an exception with ``keep``."""
    created = [path for path in (out, *out.parents) if not path.exists()]  # deepest first
    try:
        out.mkdir(parents=True, exist_ok=True)
        yield
    except BaseException:
        _remove_empty(created)
        raise
    if not keep:
        _remove_empty(created)


def _remove_empty(dirs: list[Path]) -> None:
    for path in dirs:
        with contextlib.suppress(OSError):  # not empty (or never made): kept
            path.rmdir()


class WriteError(Refused):
    """The report's files could not be written or moved into ``--out``: ``problems`` holds one line each (exit 1:
    the input was fine, the disk was not)."""


def write_into(report: Report, out: Path, plotly_js: str) -> Written:
    """Write the report into ``out``, all or nothing: its files are written in a dir of their own inside ``out`` and
    moved into place once every one is complete, so a write that fails (a full disk, a file too large) leaves ``out``
    as it was, without a half-written file; a missing ``out`` it made is removed again.

    Raises:
        WriteError: a file that could not be written, or a path in ``out`` that takes no file (a folder where a file
            goes, a file where a folder goes, a folder it cannot write); nothing was moved.
    """
    with made_dir(out, keep=True):
        _remove_stale_staging(out)
        staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=out))
        try:
            written = _staged(report, staging, out, plotly_js)
            moves = [(path, out / path.relative_to(staging)) for path in sorted(staging.rglob("*")) if path.is_file()]
            problems = [problem for _, target in moves for problem in _placement_problems(target, out)]
            if problems:
                raise WriteError(list(dict.fromkeys(problems)))  # a folder in the way of several files: named once
            for path, target in moves:
                _move(path, target, out)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    written.files = [out / path.relative_to(staging) for path in written.files]
    return written


def _remove_stale_staging(out: Path) -> None:
    """Remove the staging dirs in ``out`` of a td3x-report that was killed while writing (its ``finally`` never ran):
    those whose process, named in the dir's name, is gone; a running report's is left alone."""
    for path in out.glob(f"{STAGING_PREFIX}*"):
        pid = path.name.removeprefix(STAGING_PREFIX).partition("-")[0]
        if pid.isdigit() and not process_alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _staged(report: Report, staging: Path, out: Path, plotly_js: str) -> Written:
    """``write_report`` into ``staging``; an OSError names the file in ``out`` it was writing (or ``out`` itself when
    the system's error names no file, as a full disk's does not)."""
    try:
        return write_report(report, staging, plotly_js)
    except OSError as error:
        where = out
        if error.filename is not None and Path(error.filename).is_relative_to(staging):
            where = out / Path(error.filename).relative_to(staging)
        reason = error.strerror or str(error)
        raise WriteError([f"{where} cannot be written: {reason} (no file of the report written)"]) from error


def _placement_problems(target: Path, out: Path) -> list[str]:
    """Why the report's file ``target`` cannot be moved into place, one line each (its dirs below ``out`` included)."""
    if target.is_dir():
        return [f"{target} is a folder, where td3x-report writes a file: move it away (no file of the report written)"]
    folder = target.parent
    while folder != out and not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        return [f"{folder} is a file, where td3x-report makes a folder: move it away (no file of the report written)"]
    if not os.access(folder, os.W_OK | os.X_OK):
        return [f"{folder} is not writable here: td3x-report writes files in it (no file of the report written)"]
    return []


def _move(path: Path, target: Path, out: Path) -> None:
    """Rename a complete file into place (on the same file system: nothing is copied)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
    except OSError as error:
        raise WriteError(
            [f"{target} cannot be written: {error.strerror or error}; the report in {out} is incomplete"]
        ) from error


def plan_main(path: Path, out: Path | None) -> int:
    """``td3x-report --plan FILE [--out DIR]``: the registration's plan on stdout (and in DIR); 2 for a file td3x
    cannot use (one line per problem), or an --out it cannot write."""
    problem = unwritable(out, f"--out {out}") if out is not None else None
    if problem:
        exit_with("report error", [problem])
    try:
        plan = make_plan(read_registration(path))
    except RegistrationError as error:
        exit_with("report error", error.problems)
    text = plan_markdown(plan)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / "plan.md", text)
        write_text_atomic(out / "plan.csv", plan_frame(plan).to_csv(index=False))
    print(text, end="")
    return 0


def print_markdown(markdown: str, out: Path) -> None:
    """The report's Markdown on stdout; exit 1 in one line when stdout cannot take it (a full disk: the files are
    complete, the Markdown is not). A reader that went away (``| head -1``) is :func:`quiet_on_closed_pipe`'s."""
    try:
        print(markdown, flush=True)
    except BrokenPipeError:
        raise
    except OSError as error:
        with contextlib.suppress(OSError, ValueError):  # the rest goes nowhere: the exit's own flush cannot fail
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        where = f"the Markdown is in {out / REPORT_FILE}"
        exit_with("report error", [f"stdout cannot be written: {error.strerror or error} ({where})"], exit_code=1)


@quiet_on_closed_pipe
def main(argv: list[str] | None = None) -> int:
    """Console script ``td3x-report``; returns the exit code (2 when no run dir is found, ``--out`` cannot be
    written, ``--at-step`` is past every run, ``WANDB_MODE`` is no mode, or the registration file cannot be used;
    1 when a file of the report or its Markdown on stdout cannot be written after the analysis).

    Args:
        argv: the arguments (``sys.argv[1:]`` when None).
    """
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.plan is not None:
        return plan_main(args.plan, args.out)
    out = args.out or DEFAULT_OUT / time.strftime("%Y-%m-%d_%H-%M-%S")
    shown_out = f"--out {out}" if args.out else f"the default --out {out}"
    path_error = path_problem(args.paths, out, shown_out)
    problems = [path_error] if path_error else runless_problems(args.paths)
    problems += mode_problems() if args.wandb else []
    if problems:
        for problem in problems:
            print(f"report error: {problem}", file=sys.stderr)
        return 2
    try:
        bounds = BoundRule(given=tuple(args.peer_bound), peer_of=args.peer_bound_of)
        settings = Settings(args.reps, args.seed, args.at_step, bounds, args.coverage, args.registration, args.peer)
        report = build_report(args.paths, settings)
    except RegistrationError as error:
        exit_with("report error", error.problems)
    except (ReportError, FileNotFoundError) as error:
        print(f"report error: {error}", file=sys.stderr)
        return 2
    try:
        written = write_into(report, out, args.plotly)
    except WriteError as error:
        for problem in error.problems:
            print(f"report error: {problem}", file=sys.stderr)
        return 1
    print_markdown(written.markdown, out)
    print(f"report written to {out}", file=sys.stderr)  # stdout holds the Markdown alone
    if args.wandb:
        wandb_dir = log_report(report.runs, written.frames, written.images, out)
        print(f"W&B run: {wandb_dir}" if wandb_dir else "W&B logging failed; see the warning above", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
