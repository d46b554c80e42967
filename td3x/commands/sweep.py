"""``td3x-sweep``: list a multirun's jobs before launching it; follow, relaunch, recheck and view a launched one.

``td3x-sweep list +experiment=table2`` prints every job the same ``td3x-train`` overrides would launch
(Hydra itself refuses ``-m --cfg job``): the count, each job's overrides, its run dir, and any job whose
config td3x would refuse. It composes each job's config exactly as Hydra's basic sweeper does (the
experiment's ``hydra.sweeper.params`` first, then the command line), through Hydra's public API and the rules
of :mod:`td3x.config.overrides`, and creates nothing. ``status`` reads a sweep dir (every launch into it, as
:mod:`td3x.sweeps.launches` records them), a run dir, a K-seeds process dir or a folder of runs, and runs
nothing; ``rerun`` and ``recheck`` train. ``view`` gathers the W&B runs of any of these into one W&B directory
and opens them in ``wandb leet`` (:mod:`td3x.sweeps.wandb_view`); ``workspace`` saves a view of them, once synced, in
the W&B app (:mod:`td3x.sweeps.wandb_workspace`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from hydra.errors import HydraException

from td3x.commands.common import (
    HelpFormatter,
    OneLineParser,
    Refused,
    add_version_flag,
    exit_with,
    int_at_least,
    quiet_on_closed_pipe,
    resume_command,
    user_path,
)
from td3x.config.command_line import dir_override_as_typed
from td3x.config.hydra import from_saved
from td3x.config.messages import composition_problem
from td3x.config.schema import ConfigError
from td3x.rundir.layout import (
    CONFIG_FILE,
    PROVENANCE_FILE,
    RunFileError,
    read_yaml_mapping,
    seed_run_dirs,
)
from td3x.rundir.state import COMPLETE, FAILED, STALE, STATES, STOPPED, RunState, compute_left
from td3x.sweeps.launches import cwd_problem, launch_records, sweep_dir_override
from td3x.sweeps.multirun import Job, check_overrides, launcher_resources, list_jobs, path_states, sweep_states
from td3x.sweeps.recheck import eval_prefix, first_difference, provenance_changes
from td3x.sweeps.wandb_view import gather, view_command, view_lines
from td3x.sweeps.wandb_workspace import (
    WorkspaceNotSaved,
    WorkspaceRefused,
    build_workspace,
    save_workspace,
    sweep_runs,
    workspace_project,
    workspace_spec,
)


def _print_list(jobs: list[Job], resources: str | None = None) -> int:
    for number, job in enumerate(jobs):
        seeds = f"seed={job.seed}" if len(job.seeds) == 1 else f"seeds={job.seeds[0]}-{job.seeds[-1]}"
        threads = f"{job.num_threads} thread" + "s" * (job.num_threads > 1)
        print(f"{number:4d}  {job.run_dir}  {' '.join(job.overrides)}  [{job.total_steps} steps, {seeds}, {threads}]")
        for problem in job.problems:
            print(f"      config error: {problem}")
        if job.no_update is not None:
            print(f"      warning: {job.no_update}")
    refused = sum(bool(job.problems) for job in jobs)
    runs = sum(job.num_seeds for job in jobs)
    print(f"{len(jobs)} jobs, {runs} runs" + (f", {refused} with config errors" if refused else ""))
    if resources:
        print(resources)
    return 2 if refused else 0


def _print_status(states: list[RunState]) -> int:
    """A line for each run that needs looking at, then the counts, the steps done and the compute left. Exit code
    0 when every run is complete, else 1 (2, bad input, is the caller's)."""
    counts: dict[str, int] = {}
    for state in states:
        counts[state.state] = counts.get(state.state, 0) + 1
        line = _run_line(state)
        if line is not None:
            print(line)
    print(", ".join(f"{counts.get(name, 0)} {name}" for name in STATES))
    print(compute_left(states))
    return 0 if counts.get(COMPLETE, 0) == len(states) else 1


def _run_line(state: RunState) -> str | None:
    """A failed, stale or stopped run's line, why, and for the last two (resumable) the command that continues it
    (its process's dir: the K seeds of one process resume together); None for the others."""
    if state.state not in (FAILED, STALE, STOPPED):
        return None
    at_step = f"  at step {state.steps}" if state.readable else ""  # an unreadable run's steps are unknown
    resume = (
        ""
        if state.state == FAILED or state.process_dir is None
        else f"; resume with: {resume_command(state.process_dir)}"
    )
    return f"{state.state:8s} {state.run_dir}{at_step}: {state.reason}{resume}"


def rerun(sweep_dir: Path) -> int:
    """Launch every launch into the sweep dir again, in that dir, with its own overrides and launcher: finished
    jobs return at once, the others resume from their checkpoints (or start, if they never wrote one). Ctrl-C
    stops the launch at the running jobs' next checkpoint, as it stops td3x-train."""
    records = launch_records(sweep_dir)
    for _, launch in records:  # every launch checked before the first one trains: none is relaunched half-way
        check_overrides(launch.task_overrides)
    problems = [problem for record, launch in records if (problem := cwd_problem(record, launch))]
    if problems:
        raise Refused(problems)
    codes = []
    for _, launch in records:
        arguments = ["-m", *launch.task_overrides, *launch.hydra_overrides, sweep_dir_override(sweep_dir)]
        print("relaunching: td3x-train", " ".join(arguments), flush=True)
        codes.append(_train_until_done([sys.executable, "-m", "td3x.commands.train", *arguments], launch.cwd))
    return max(codes)


def _train_until_done(command: list[str], cwd: Path) -> int:
    """Run ``command``; on Ctrl-C (which the terminal sends the launch too) wait for it to stop at its
    checkpoint rather than kill it, then raise :class:`SweepStopped`."""
    with subprocess.Popen(command, cwd=cwd) as launch:
        try:
            return launch.wait()
        except KeyboardInterrupt:
            while launch.poll() is None:
                try:
                    launch.wait()
                except KeyboardInterrupt:  # again: the launch is already stopping
                    continue
            raise SweepStopped from None


class SweepStopped(Exception):
    """Ctrl-C during ``rerun``: the launch stopped its jobs at their checkpoints."""


def recheck(sweep_dir: Path, runs: int, steps: int | None) -> int:
    """Re-run the first ``runs`` complete runs of a sweep for ``steps`` env steps (by default
    2 ``run.eval_every`` + 1) in a scratch dir (the sweep is never touched) and check that their ``eval.csv``
    prefixes match bit for bit (timing columns aside). A run no longer than that is re-run whole, every evaluation
    compared; ``steps`` past a run's ``run.total_steps`` is refused before any run trains (:class:`Refused`): the
    re-run would evaluate where the run never did."""
    from td3x.training.run import run  # the training stack, only for this command

    complete = [s.run_dir for s in sweep_states(sweep_dir) if s.state == COMPLETE][:runs]
    if not complete:
        raise FileNotFoundError(f"{sweep_dir} has no complete run to recheck")
    originals = [(run_dir, from_saved(read_yaml_mapping(run_dir / CONFIG_FILE))) for run_dir in complete]
    shortest_dir, shortest = min(originals, key=lambda item: item[1].run.total_steps)
    if steps is not None and steps > shortest.run.total_steps:
        raise Refused(
            [
                f"--steps {steps} is more than the {shortest.run.total_steps} env steps of {shortest_dir} "
                f"(its run.total_steps): give --steps {shortest.run.total_steps} or fewer"
            ]
        )
    mismatches = 0
    for run_dir, original in originals:
        total = original.run.total_steps
        default = 2 * original.run.eval_every + 1  # evaluations 0, e and 2e compare
        length = min(default if steps is None else steps, total)
        # the last evaluation of a shorter re-run may differ; a whole re-run is the run itself: all of it compares
        before = total + 1 if length == total else length
        replay = dataclasses.replace(
            original,
            run=dataclasses.replace(original.run, total_steps=length),
            logging=dataclasses.replace(original.logging, wandb_mode="disabled"),
        )
        with tempfile.TemporaryDirectory(prefix="td3x-recheck-") as scratch:
            run(replay, Path(scratch))  # a seed of a K-seed process reruns first of K again, in the same mode
            rerun_dir = seed_run_dirs(Path(scratch), replay.seed, replay.run.num_seeds)[0]
            ours, theirs = eval_prefix(rerun_dir, before), eval_prefix(run_dir, before)
            difference = first_difference(theirs, ours)
            provenance = json.loads((rerun_dir / PROVENANCE_FILE).read_text())
        mismatches += difference is not None
        compared = f"the whole run of {total} steps" if length == total else f"before step {length}"
        print(
            f"{'identical' if difference is None else 'DIFFERENT'}  {run_dir}  ({len(ours)} evaluations, {compared})"
            f"{'' if difference is None else ': ' + difference}"
        )
        if difference is not None:
            for line in provenance_changes(json.loads((run_dir / PROVENANCE_FILE).read_text()), provenance):
                print(f"      {line}")
    return 1 if mismatches else 0


def show(command: str, path: Path, no_open: bool) -> int:
    """``td3x-sweep status`` (with the command that views the runs) or ``td3x-sweep view``: both run nothing."""
    if command == "view":
        return open_view(path, no_open)
    code = _print_status(path_states(path))
    print(f"all its runs in W&B's terminal viewer: {view_command(path)}")
    return code


def open_view(path: Path, no_open: bool) -> int:
    """``td3x-sweep view``: gather the runs at or below ``path`` (:func:`td3x.sweeps.wandb_view.gather`), then open them
    in ``wandb leet`` (in a terminal, unless ``no_open``) or print the command that does."""
    view = gather(path)
    if view.segments == 0:  # nothing to view: gather made no view dir, so no line names one
        print(
            f"td3x-sweep: {path} holds no W&B run to view: its {view.runs_without_wandb} run(s) logged none "
            "(logging.wandb_mode=disabled)",
            file=sys.stderr,
        )
        return 1
    for line in view_lines(view):
        print(line)
    if no_open or not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(f"open them with: {view.command()}")
        return 0
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", "wandb", "leet", str(view.wandb_dir)])


def workspace(path: Path, entity: str, project: str | None, name: str | None, dry_run: bool) -> int:
    """``td3x-sweep workspace``: build the W&B workspace of the runs at or below ``path``
    (:mod:`td3x.sweeps.wandb_workspace`), then print it (``dry_run``) or save it to W&B and print its URL."""
    runs = sweep_runs(path)
    built = build_workspace(runs, entity, workspace_project(runs, project), name or f"td3x {path.resolve().name}")
    if dry_run:
        print(json.dumps(workspace_spec(built), indent=2))
        return 0
    print(f"workspace '{built.name}' of {built.entity}/{built.project}: {runs.summary()}", flush=True)
    try:
        url = save_workspace(built)
    except WorkspaceNotSaved as error:
        print(f"td3x-sweep: {error}", file=sys.stderr)
        return 1
    print(f"saved: {url}")
    return 0


DESCRIPTION = (
    "List a multirun's jobs before launching it; follow, relaunch and recheck a launched one; view its runs, in a "
    "terminal or in the W&B app."
)
COMMANDS = {
    "list": "print every job a td3x-train multirun with these overrides would launch (its run dir, overrides, "
    "steps, seeds, threads and config errors), the counts of jobs and runs, and what a SLURM launcher asks for "
    "each job; runs and creates nothing",
    "status": "count the complete, running, stopped (resumable), stale (killed), failed and not started runs of a "
    "sweep dir (every launch into it), a run dir, a K-seeds process dir or a folder of runs, with the steps done, "
    "the compute left and the td3x-resume command of each stopped or stale run; runs nothing; exit code 0 when every "
    "run is complete, 1 when any is not, 2 on bad input",
    "rerun": "trains: launch a sweep again in its dir, with its own overrides and launcher (each launch into it, in "
    "turn); complete jobs return at once, the others resume from their checkpoints (or start); Ctrl-C stops them "
    "at their next checkpoint; for one run dir use td3x-resume",
    "recheck": "trains briefly: re-run the first --runs complete runs of a sweep for --steps env steps in a "
    "scratch dir (the sweep is left alone) and compare their eval.csv bit for bit",
    "view": "link every W&B run of a sweep dir, a K-seeds dir or a folder of runs into its wandb/ dir, named by "
    "row, env and seed, and open them together in W&B's terminal viewer (wandb leet); runs nothing",
    "workspace": "save a workspace (a view) in the W&B app for the runs of a sweep dir, a K-seeds dir or a folder of "
    "runs, once synced: grouped by Table 2 row and env, with panels of their returns and of the critics' "
    "overestimation bias; needs an API key and the network (--dry-run prints it instead); runs nothing",
}


def build_parser() -> argparse.ArgumentParser:
    """td3x-sweep's command line: one subcommand per entry of ``COMMANDS``."""
    parser = OneLineParser(prog="td3x-sweep", description=DESCRIPTION, formatter_class=HelpFormatter)
    add_version_flag(parser)
    commands = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    sub = {
        name: commands.add_parser(
            name, help=text, description=text, formatter_class=HelpFormatter, takes_overrides=name == "list"
        )
        for name, text in COMMANDS.items()
    }
    sub["list"].add_argument(
        "overrides",
        nargs="*",
        help="td3x-train overrides, e.g. +experiment=table2 seed=0,1 (default: none, conf/train.yaml as it is)",
    )
    sub["status"].add_argument(
        "sweep_dir",
        type=user_path,
        metavar="path",
        help="a sweep dir (with multirun.yaml), a run dir, a K-seeds dir or a folder of runs",
    )
    for name in ("rerun", "recheck"):
        sub[name].add_argument("sweep_dir", type=user_path, help="a sweep dir (the one holding multirun.yaml)")
    for name in ("view", "workspace"):
        sub[name].add_argument(
            "sweep_dir",
            type=user_path,
            metavar="path",
            help="a sweep dir, a run dir, a K-seeds dir or a folder of runs",
        )
    sub["view"].add_argument(
        "--no-open", action="store_true", help="link the runs and print the wandb leet command, without opening it"
    )
    _add_workspace_options(sub["workspace"])
    sub["recheck"].add_argument(
        "--runs", type=int_at_least(1), default=2, metavar="N", help="how many complete runs to re-run"
    )
    sub["recheck"].add_argument(
        "--steps",
        type=int_at_least(1),
        metavar="N",
        help="env steps per re-run, at most a run's run.total_steps, which re-runs it whole (default: 2 "
        "run.eval_every + 1, so 3 evaluations compare, or the whole run when it is no longer)",
    )
    return parser


def _add_workspace_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--entity", required=True, metavar="E", help="the W&B entity (user or team) the runs were synced to"
    )
    parser.add_argument(
        "--project", metavar="P", help="the W&B project (default: the one the runs logged to, logging.project)"
    )
    parser.add_argument("--name", metavar="N", help="the workspace's name (default: td3x and the folder's name)")
    parser.add_argument(
        "--dry-run", action="store_true", help="print the workspace as W&B would save it (JSON), without W&B"
    )


def _check_path(command: str, path: Path) -> None:
    """Refuse a path that is not a folder (:class:`FileNotFoundError`), naming what the subcommand takes."""
    if path.is_dir():
        return
    kind = "is a file" if path.exists() else "does not exist"
    takes = (
        "a sweep dir"
        if command in ("rerun", "recheck")
        else "a sweep dir, a run dir, a K-seeds dir or a folder of runs"
    )
    raise FileNotFoundError(f"{path} {kind}: td3x-sweep {command} takes {takes}")


def _run(args: argparse.Namespace) -> int:
    """The chosen subcommand, run: its exit code."""
    if args.command == "list":  # a sweep dir as td3x-train reads it: ~ expanded, quoted for Hydra where it must be
        overrides = [dir_override_as_typed(line) for line in args.overrides]
        return _print_list(list_jobs(overrides), launcher_resources(overrides))
    _check_path(args.command, args.sweep_dir)
    if args.command in ("status", "view"):
        return show(args.command, args.sweep_dir, no_open=getattr(args, "no_open", False))
    if args.command == "workspace":
        return workspace(args.sweep_dir, args.entity, args.project, args.name, args.dry_run)
    if args.command == "recheck":
        return recheck(args.sweep_dir, args.runs, args.steps)
    return rerun(args.sweep_dir)


@quiet_on_closed_pipe
def main(argv: Sequence[str] | None = None) -> None:
    """Console script ``td3x-sweep``: list, status, rerun, recheck, view, workspace."""
    args = build_parser().parse_args(argv)
    try:
        sys.exit(_run(args))
    except SweepStopped:
        print(f"training stopped: interrupted; resume with: td3x-sweep rerun {args.sweep_dir}", file=sys.stderr)
        sys.exit(1)
    except (FileNotFoundError, RunFileError, WorkspaceRefused) as error:
        exit_with("td3x-sweep", [str(error)])
    except Refused as error:
        exit_with("td3x-sweep", error.problems)
    except ConfigError as error:  # a job's overrides, or a config this machine cannot run (recheck)
        exit_with("config error", error.problems)
    except HydraException as error:  # an override Hydra refuses that td3x does not check (its syntax, a hydra key)
        exit_with("td3x-sweep", [composition_problem(error)])


if __name__ == "__main__":
    main()
