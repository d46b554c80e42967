"""``td3x-sweep``: list a multirun's jobs before launching it; follow, relaunch, recheck and view a launched one.

``td3x-sweep list +experiment=table2`` prints every job the same ``td3x-train`` overrides would launch
(Hydra itself refuses ``-m --cfg job``): the count, each job's overrides, its run dir, and any job whose
config td3x would refuse. It composes each job's config exactly as Hydra's basic sweeper does (the
experiment's ``hydra.sweeper.params`` first, then the command line), through Hydra's public API and the rules
of :mod:`td3x.overrides`, and creates nothing. ``status`` reads a sweep dir (every launch into it, as
:mod:`td3x.launches` records them), a run dir, a K-seeds process dir or a folder of runs, and runs
nothing; ``rerun`` and ``recheck`` train. ``view`` gathers the W&B runs of any of these into one W&B directory
and opens them in ``wandb leet`` (:mod:`td3x.wandb_view`).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import DictConfig, open_dict, read_write
from omegaconf.errors import OmegaConfBaseException

from td3x.cli import HelpFormatter, OneLineParser, add_version_flag
from td3x.config import CONF_DIR, ConfigError, from_saved, register_configs, to_typed
from td3x.launches import LAUNCHED_HERE, Launch, is_sweep_dir, read_launches, sweep_dir_override
from td3x.overrides import apply_overrides, group_options, override_dirname, override_problems, sweep_jobs
from td3x.run_dir import (
    CONFIG_FILE,
    EVAL_FILE,
    PROVENANCE_FILE,
    SUMMARY_FILE,
    WANDB_DIR,
    RunFileError,
    config_int,
    is_timing_column,
    read_json_mapping,
    read_yaml_mapping,
    run_configs,
    seed_run_dirs,
)
from td3x.wandb_view import gather, view_command, view_lines


@dataclass(frozen=True)
class Job:
    overrides: list[str]
    run_dir: Path
    problems: list[str]  # td3x's range checks (empty when the job's config is accepted)
    total_steps: int = 0
    seed: int = 0
    num_seeds: int = 1  # run.num_seeds: the job trains this many seeds, each in its own dir below run_dir
    num_threads: int = 1  # run.num_threads: the cores the job trains on

    @property
    def seeds(self) -> range:
        return range(self.seed, self.seed + self.num_seeds)


@contextlib.contextmanager
def _composing() -> Iterator[None]:
    """Hydra initialised on td3x's configs, as for a launch, for the ``_compose`` calls inside."""
    register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        yield


def _compose(overrides: list[str]) -> DictConfig:
    """The full config (with ``hydra``) of a multirun job, composed by the initialized Hydra's config loader."""
    loader = GlobalHydra.instance().config_loader()
    return loader.load_configuration(
        config_name="train", overrides=overrides, run_mode=RunMode.MULTIRUN, from_shell=False
    )


def _parser() -> OverridesParser:
    """Hydra's override parser, with the config loader that ``glob()`` sweeps list a group's options from."""
    return OverridesParser.create(config_loader=GlobalHydra.instance().config_loader())


def _sweep_config(arguments: list[str]) -> DictConfig:
    """The config the sweep itself is set up from (its sweeper and launcher): the command line's sweeps aside."""
    return _compose([str(o.input_line) for o in _parser().parse_overrides(arguments) if not o.is_sweep_override()])


def job_overrides(arguments: list[str]) -> list[list[str]]:
    """Each job's overrides, in Hydra's order: the config's ``hydra.sweeper.params``, then the command line."""
    params = _sweep_config(arguments).hydra.sweeper.params or {}
    lines = [f"{key}={value}" for key, value in params.items()] + arguments
    return sweep_jobs(_parser().parse_overrides(lines))


class JobComposer:
    """Composes jobs as Hydra would, composing each distinct choice of config groups once: a job is a copy of
    its groups' composition with its value overrides (``key=v``, ``+``, ``++``, ``~``) applied in Hydra's order."""

    def __init__(self) -> None:
        self.groups = set(group_options())
        self.cache: dict[tuple[str, ...], DictConfig] = {}

    def _is_group(self, override: Override) -> bool:
        return override.key_or_group in self.groups or "/" in override.key_or_group

    def _composed(self, group_lines: tuple[str, ...]) -> DictConfig:
        """The full config (with ``hydra``) of one choice of groups, composed once (shared: copy it)."""
        if group_lines not in self.cache:
            self.cache[group_lines] = _compose(list(group_lines))
        return self.cache[group_lines]

    def configs(self, overrides: list[str]) -> tuple[Path, DictConfig]:
        """A job's run dir, as Hydra resolves it, and its task config (the full config without ``hydra``)."""
        parsed = _parser().parse_overrides(overrides)
        cfg = self._composed(tuple(str(o.input_line) for o in parsed if self._is_group(o))).copy()  # a deep copy
        with read_write(cfg.hydra):  # Hydra applies overrides before it marks its own node read-only
            apply_overrides(cfg, [o for o in parsed if not self._is_group(o)])
        dirname = cfg.hydra.job.config.override_dirname
        with read_write(cfg.hydra.job):
            cfg.hydra.job.override_dirname = override_dirname(
                [o for o in parsed if not o.is_hydra_override()],  # Hydra names dirs by task overrides only
                list(dirname.exclude_keys),
                dirname.item_sep,
                dirname.kv_sep,
            )
        HydraConfig.instance().set_config(cfg)  # the ${hydra:...} resolvers in the dir names read it
        run_dir = Path(cfg.hydra.sweep.dir) / str(cfg.hydra.sweep.subdir)
        with open_dict(cfg):
            del cfg["hydra"]
        return run_dir, cfg

    def describe(self, overrides: list[str]) -> Job:
        run_dir, task = self.configs(overrides)
        return Job(
            overrides=overrides,
            run_dir=run_dir,
            problems=_problems(task),
            total_steps=int(task.run.total_steps),
            seed=int(task.seed),
            num_seeds=int(task.run.num_seeds),
            num_threads=int(task.run.num_threads),
        )


def _problems(task: DictConfig) -> list[str]:
    try:
        to_typed(task)
    except ConfigError as error:
        return error.problems
    return []


def check_overrides(arguments: list[str]) -> None:
    """Refuse overrides as ``td3x-train`` does before Hydra sees them: unknown keys and options, values of the
    wrong type (raises ConfigError, one line a problem)."""
    problems = override_problems([argument for argument in arguments if "=" in argument and argument[0] != "-"])
    if problems:
        raise ConfigError(problems)


def list_jobs(arguments: list[str]) -> list[Job]:
    """The jobs of a multirun with these overrides (checked first, as td3x-train checks them: ConfigError)."""
    check_overrides(arguments)
    with _composing():
        composer = JobComposer()
        return with_seed_overlaps([composer.describe(overrides) for overrides in job_overrides(arguments)])


def with_seed_overlaps(jobs: list[Job]) -> list[Job]:
    """Refuse jobs that would train a seed another job of the same settings trains too: with K stacked seeds,
    ``seed=0,1`` means seeds 0..K-1 and 1..K, not two seeds."""
    first_job: dict[tuple[tuple[str, ...], int], int] = {}
    checked = []
    for number, job in enumerate(jobs):
        settings = tuple(sorted(line for line in job.overrides if not line.lstrip("+").startswith("seed=")))
        twice = [seed for seed in job.seeds if (settings, seed) in first_job]
        for seed in job.seeds:
            first_job.setdefault((settings, seed), number)
        problem = (
            f"seeds {twice[0]}-{twice[-1]} are trained by job {first_job[settings, twice[0]]} too"
            f" (run.num_seeds={job.num_seeds}: seed=S trains seeds S..S+{job.num_seeds - 1}); sweep seed in"
            f" steps of {job.num_seeds}, e.g. seed=0,{job.num_seeds}"
            if twice
            else ""
        )
        checked.append(dataclasses.replace(job, problems=[*job.problems, problem]) if twice else job)
    return checked


def launcher_resources(arguments: list[str]) -> str | None:
    """What a SLURM launcher asks for each job (one value for the whole array, resolved from the sweep's config as
    Hydra's launcher resolves it), or None for launchers without these settings."""
    with _composing():
        launcher = _sweep_config(arguments).hydra.launcher
        if "cpus_per_task" not in launcher:
            return None
        return f"each job asks SLURM for cpus_per_task={launcher.cpus_per_task}, mem_gb={launcher.mem_gb}"


def _print_list(jobs: list[Job], resources: str | None = None) -> int:
    for number, job in enumerate(jobs):
        last_seed = job.seed + job.num_seeds - 1
        seeds = f"seed={job.seed}" if last_seed == job.seed else f"seeds={job.seed}-{last_seed}"
        threads = f"{job.num_threads} thread" + "s" * (job.num_threads > 1)
        print(f"{number:4d}  {job.run_dir}  {' '.join(job.overrides)}  [{job.total_steps} steps, {seeds}, {threads}]")
        for problem in job.problems:
            print(f"      config error: {problem}")
    refused = sum(bool(job.problems) for job in jobs)
    runs = sum(job.num_seeds for job in jobs)
    print(f"{len(jobs)} jobs, {runs} runs" + (f", {refused} with config errors" if refused else ""))
    if resources:
        print(resources)
    return 2 if refused else 0


# ---------------------------------------------------------------------- a launch's size and cost, before it starts
# the speed a launch's cost is estimated at, measured and committed: td3x's reference runs of TD3 (agent=td3_paper)
# on Hopper-v5, 100k env steps each with the paper's evaluations, one thread, 2-3 seeds a process, on an AMD EPYC
# (docs/results/report/compute.csv, "env steps per core-second"; tests/test_sweep.py checks it is that table's)
MEASURED_STEPS_PER_CORE_SECOND = 69.4
MEASURED_ON = "TD3 agent=td3_paper on Hopper-v5 in td3x's reference runs, one thread, AMD EPYC; docs/results"
ANNOUNCE_FROM_CORE_HOURS = 1.0  # a launch estimated at less is not announced


def launch_cost(jobs: list[Job], now: float) -> str | None:
    """One line with the size and estimated cost of what the jobs have left to train (steps their run dirs
    already hold are not counted again), or None below ANNOUNCE_FROM_CORE_HOURS."""
    runs = sum(job.num_seeds for job in jobs)
    steps = 0
    for job in jobs:
        for seed_dir in seed_run_dirs(job.run_dir, job.seed, job.num_seeds):
            try:
                steps += max(job.total_steps - run_state(seed_dir, job.total_steps, now).steps, 0)
            except RunFileError:  # a broken summary: the run trains again from what its checkpoint holds
                steps += job.total_steps
    core_hours = steps / MEASURED_STEPS_PER_CORE_SECOND / 3600
    if core_hours < ANNOUNCE_FROM_CORE_HOURS:
        return None
    return (
        f"this sweep: {len(jobs)} jobs, {runs} runs, {steps:,} env steps to train: about {core_hours:,.0f} "
        f"core-hours at {MEASURED_STEPS_PER_CORE_SECOND} env steps per core-second ({MEASURED_ON}); your CPU, env "
        "and agent set the real rate; td3x-sweep list shows its jobs"
    )


def announce_launch(arguments: list[str]) -> None:
    """Print a multirun's size and estimated cost (``launch_cost``) to stderr before Hydra starts its jobs;
    nothing for a single run, a command that trains nothing (``--cfg``, ``--info``, ...) or overrides td3x-train
    refuses (it reports those itself)."""
    flags = [argument for argument in arguments if argument.startswith("-")]
    overrides = [argument for argument in arguments if not argument.startswith("-")]
    if any(flag not in ("-m", "--multirun") for flag in flags):
        return
    if not flags and not any("experiment=" in override for override in overrides):
        return  # no -m and no experiment: a single run, not composed twice
    try:
        if not flags and not _is_multirun(overrides):
            return
        message = launch_cost(list_jobs(overrides), time.time())
    except (ConfigError, HydraException, OmegaConfBaseException, RunFileError):
        return  # the launch itself reports the problem, one line
    if message:
        print(message, file=sys.stderr)


def _is_multirun(overrides: list[str]) -> bool:
    """Whether these overrides, without ``-m``, launch a multirun (an experiment that sets ``hydra.mode``)."""
    with _composing():
        return bool(_sweep_config(overrides).hydra.mode == RunMode.MULTIRUN)


# ---------------------------------------------------------------------- status and rerun of a launched sweep
HYDRA_DIR = ".hydra"  # Hydra's copy of a job's config.yaml lies here: not a run's
STALE_AFTER_S = 30 * 60  # a "running" run whose summary.json has not changed for this long is reported stale


@dataclass(frozen=True)
class RunState:
    run_dir: Path
    state: str  # complete | running | stale | failed | not started
    steps: int
    total_steps: int
    steps_per_second: float | None
    failure: str | None


def run_state(run_dir: Path, total_steps: int, now: float) -> RunState:
    summary_path = run_dir / SUMMARY_FILE
    if not summary_path.exists():
        return RunState(run_dir, "not started", 0, total_steps, None, None)
    summary = read_json_mapping(summary_path)
    if not isinstance(summary.get("status"), str) or not isinstance(summary.get("steps"), int):
        raise RunFileError(f"{summary_path} is not a td3x summary: it lacks a status or a steps count")
    state = summary["status"]
    if state == "running" and now - summary_path.stat().st_mtime > STALE_AFTER_S:
        state = "stale"
    wall = summary.get("wall_time_s")
    rate = summary["steps"] / wall if isinstance(wall, (int, float)) and wall > 0 else None
    return RunState(run_dir, state, summary["steps"], total_steps, rate, summary.get("failure"))


def launch_jobs(sweep_dir: Path, launch: Launch) -> list[Job]:
    """The jobs of one launch into ``sweep_dir``, their run dirs in ``sweep_dir`` wherever it was launched to."""
    return list_jobs([*launch.task_overrides, *launch.hydra_overrides, sweep_dir_override(sweep_dir)])


def sweep_states(sweep_dir: Path) -> list[RunState]:
    """The state of every run of every launch into ``sweep_dir``, each run once (launches may share jobs)."""
    now, seen, states = time.time(), set(), []
    for launch in read_launches(sweep_dir):
        for job in launch_jobs(sweep_dir, launch):
            for seed_dir in seed_run_dirs(job.run_dir, job.seed, job.num_seeds):
                if seed_dir not in seen:
                    seen.add(seed_dir)
                    states.append(run_state(seed_dir, job.total_steps, now))
    return states


def launch_summary(sweep_dir: Path, launch: Launch) -> str:
    """The line a multirun ends with: how many of its jobs are complete, failed, stopped (resumable) or not started
    (refused, or never reached), and where."""
    now, counts = time.time(), dict.fromkeys(("complete", "failed", "stopped", "not started"), 0)
    jobs = launch_jobs(sweep_dir, launch)
    for job in jobs:
        states = {run_state(d, job.total_steps, now).state for d in seed_run_dirs(job.run_dir, job.seed, job.num_seeds)}
        counts[_job_outcome(states)] += 1
    runs = sum(job.num_seeds for job in jobs)
    outcome = ", ".join(f"{number} {state}" for state, number in counts.items() if number or state == "complete")
    line = f"multirun: {len(jobs)} jobs ({runs} runs): {outcome}; sweep dir {sweep_dir}"
    if counts["complete"] == len(jobs):
        return line
    return f"{line}; `td3x-sweep status {sweep_dir}` lists its runs, `td3x-sweep rerun {sweep_dir}` relaunches it"


def _job_outcome(run_states: set[str]) -> str:
    """A job's outcome from its runs' states (K seeds share one process: they end alike)."""
    if "failed" in run_states:
        return "failed"
    if len(run_states) == 1 and run_states & {"complete", "not started"}:
        return run_states.pop()
    return "stopped"  # running (a stop interrupted it), stale (killed): resumable


def print_launch_summaries() -> None:
    """After ``td3x-train -m``: one :func:`launch_summary` line per launch this process made."""
    for sweep_dir, launch in LAUNCHED_HERE:
        try:
            print(launch_summary(sweep_dir, launch), flush=True)
        except (ConfigError, HydraException, RunFileError, OSError) as error:  # never hides how the sweep ended
            print(f"multirun: ended; its runs could not be counted ({error}): td3x-sweep status {sweep_dir}")


def runs_below(path: Path) -> list[Path]:
    """The ``config.yaml`` of a run dir, of a K-seeds process dir's seeds in seed order, or of every run at or
    below a folder of runs (as td3x-report finds them), in path order."""
    configs = run_configs(path)
    if configs:
        return configs
    found = []
    for dirpath, dirnames, filenames in os.walk(path):
        if CONFIG_FILE in filenames and Path(dirpath).name != HYDRA_DIR:
            found.append(Path(dirpath) / CONFIG_FILE)
            dirnames.clear()  # a run dir holds no other runs
        else:
            dirnames[:] = sorted(name for name in dirnames if name not in (HYDRA_DIR, WANDB_DIR))
    return sorted(found)


def path_states(path: Path) -> list[RunState]:
    """The state of every run of a sweep dir (every launch into it), of a run dir, of each seed of a K-seeds
    process dir, or of every run below a folder of runs.

    Raises:
        FileNotFoundError: ``path`` is none of these.
    """
    if is_sweep_dir(path):
        return sweep_states(path)
    configs = runs_below(path)
    if not configs:
        raise FileNotFoundError(
            f"{path} holds no run: not a sweep dir (no multirun.yaml), a run dir or a folder of runs"
        )
    now = time.time()
    return [
        run_state(config.parent, config_int(read_yaml_mapping(config), "run.total_steps", config), now)
        for config in configs
    ]


def _print_status(states: list[RunState]) -> int:
    counts: dict[str, int] = {}
    for state in states:
        counts[state.state] = counts.get(state.state, 0) + 1
        if state.state in ("failed", "stale"):
            print(f"{state.state:8s} {state.run_dir}  at step {state.steps}: {state.failure or 'no update for 30 min'}")
    done, total = sum(s.steps for s in states), sum(s.total_steps for s in states)
    rates = [s.steps_per_second for s in states if s.steps_per_second]
    print(
        ", ".join(f"{counts.get(name, 0)} {name}" for name in ("complete", "running", "stale", "failed", "not started"))
    )
    left = (total - done) / (sum(rates) / len(rates)) / 3600 if rates else float("nan")
    share = f"steps: {done}/{total} ({100 * done / max(total, 1):.1f}%)"
    if done >= total:
        print(f"{share}; finished: no compute left")
    else:
        print(f"{share}; about {left:.1f} h of compute left at the mean speed of the runs so far")
    return 0 if counts.get("complete", 0) == len(states) else 1


def rerun(sweep_dir: Path) -> int:
    """Launch every launch into the sweep dir again, in that dir, with its own overrides and launcher: finished
    jobs return at once, the others resume from their checkpoints (or start, if they never wrote one). Ctrl-C
    stops the launch at the running jobs' next checkpoint, as it stops td3x-train."""
    codes = []
    for launch in read_launches(sweep_dir):
        check_overrides(launch.task_overrides)
        arguments = ["-m", *launch.task_overrides, *launch.hydra_overrides, sweep_dir_override(sweep_dir)]
        print("relaunching: td3x-train", " ".join(arguments), flush=True)
        codes.append(_train_until_done([sys.executable, "-m", "td3x.entrypoint", *arguments], launch.cwd))
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
    """Re-run the first ``runs`` complete runs of a sweep for a few thousand steps in a scratch dir (the sweep
    is never touched) and check that their ``eval.csv`` prefixes match bit for bit (timing columns aside)."""
    from td3x.training import run  # the training stack, only for this command

    complete = [s.run_dir for s in sweep_states(sweep_dir) if s.state == "complete"][:runs]
    if not complete:
        raise FileNotFoundError(f"{sweep_dir} has no complete run to recheck")
    mismatches = 0
    for run_dir in complete:
        original = from_saved(read_yaml_mapping(run_dir / CONFIG_FILE))
        length = steps or 2 * original.run.eval_every + 1  # evaluations 0, e and 2e compare
        replay = dataclasses.replace(
            original,
            run=dataclasses.replace(original.run, total_steps=length),
            logging=dataclasses.replace(original.logging, wandb_mode="disabled"),
        )
        with tempfile.TemporaryDirectory(prefix="td3x-recheck-") as scratch:
            run(replay, Path(scratch))  # a seed of a K-seed process reruns first of K again, in the same mode
            rerun_dir = seed_run_dirs(Path(scratch), replay.seed, replay.run.num_seeds)[0]
            ours, theirs = _eval_prefix(rerun_dir, length), _eval_prefix(run_dir, length)
            difference = _first_difference(theirs, ours)
            provenance = json.loads((rerun_dir / PROVENANCE_FILE).read_text())
        mismatches += difference is not None
        print(
            f"{'identical' if difference is None else 'DIFFERENT'}  {run_dir}  ({len(ours)} evaluations before "
            f"step {length}){'' if difference is None else ': ' + difference}"
        )
        if difference is not None:
            for line in _provenance_changes(json.loads((run_dir / PROVENANCE_FILE).read_text()), provenance):
                print(f"      {line}")
    return 1 if mismatches else 0


def _eval_prefix(run_dir: Path, before_step: int) -> list[dict[str, str]]:
    """eval.csv rows before ``before_step`` (the last one of a shorter run may differ), timing columns aside."""
    with (run_dir / EVAL_FILE).open() as file:
        return [
            {k: v for k, v in row.items() if not is_timing_column(k)}
            for row in csv.DictReader(file)
            if int(row["step"]) < before_step
        ]


def _first_difference(expected: list[dict[str, str]], got: list[dict[str, str]]) -> str | None:
    for want, have in zip(expected, got, strict=False):
        changed = [key for key in want if want[key] != have.get(key)]
        if changed:
            return f"at step {want['step']}, {changed[0]}: {want[changed[0]]} then, {have.get(changed[0])} now"
    return None if len(expected) == len(got) else f"{len(expected)} evaluations then, {len(got)} now"


def _provenance_changes(then: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs between the machine and libraries of the original run and of the recheck: the CPU capability
    and its instruction-set extensions decide fp32 numerics (a host name would tell less, and is not recorded)."""
    keys = ("python", "cpu", "cpu_capability", "cpu_flags", "torch_threads", "git_commit", "os")
    changes = [f"{key}: {then.get(key)!r} then, {now.get(key)!r} now" for key in keys if then.get(key) != now.get(key)]
    versions_then, versions_now = then.get("versions", {}), now.get("versions", {})
    changes += [
        f"{name}: {versions_then.get(name)} then, {versions_now.get(name)} now"
        for name in sorted(versions_then | versions_now)
        if versions_then.get(name) != versions_now.get(name)
    ]
    return changes or ["same versions, threads, CPU capability and code: look for nondeterministic ops or a device"]


def show(command: str, path: Path, no_open: bool) -> int:
    """``td3x-sweep status`` (with the command that views the runs) or ``td3x-sweep view``: both run nothing."""
    if command == "view":
        return open_view(path, no_open)
    code = _print_status(path_states(path))
    print(f"all its runs in W&B's terminal viewer: {view_command(path)}")
    return code


def open_view(path: Path, no_open: bool) -> int:
    """``td3x-sweep view``: gather the runs at or below ``path`` (:func:`td3x.wandb_view.gather`), then open them
    in ``wandb leet`` (in a terminal, unless ``no_open``) or print the command that does."""
    view = gather(path)
    for line in view_lines(view):
        print(line)
    if view.segments == 0:
        print(f"td3x-sweep: {path} holds no W&B run to view", file=sys.stderr)
        return 1
    if no_open or not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(f"open them with: {view.command()}")
        return 0
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", "wandb", "leet", str(view.wandb_dir)])


DESCRIPTION = "List a multirun's jobs before launching it; follow, relaunch and recheck a launched one; view its runs."
COMMANDS = {
    "list": "print every job a td3x-train multirun with these overrides would launch (its run dir, overrides, "
    "steps, seeds, threads and config errors), the counts of jobs and runs, and what a SLURM launcher asks for "
    "each job; runs and creates nothing",
    "status": "count the complete, running, stale, failed and not started runs of a sweep dir (every launch into "
    "it), a run dir, a K-seeds process dir or a folder of runs, with the steps done and the compute left; runs nothing",
    "rerun": "trains: launch a sweep again in its dir, with its own overrides and launcher (each launch into it, in "
    "turn); complete jobs return at once, the others resume from their checkpoints (or start); Ctrl-C stops them "
    "at their next checkpoint; for one run dir use td3x-resume",
    "recheck": "trains briefly: re-run the first --runs complete runs of a sweep for --steps env steps in a "
    "scratch dir (the sweep is left alone) and compare their eval.csv bit for bit",
    "view": "link every W&B run of a sweep dir, a K-seeds dir or a folder of runs into its wandb/ dir, named by "
    "row, env and seed, and open them together in W&B's terminal viewer (wandb leet); runs nothing",
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
        type=Path,
        metavar="path",
        help="a sweep dir (with multirun.yaml), a run dir, a K-seeds dir or a folder of runs",
    )
    for name in ("rerun", "recheck"):
        sub[name].add_argument("sweep_dir", type=Path, help="a sweep dir (the one holding multirun.yaml)")
    sub["view"].add_argument(
        "sweep_dir", type=Path, metavar="path", help="a sweep dir, a run dir, a K-seeds dir or a folder of runs"
    )
    sub["view"].add_argument(
        "--no-open", action="store_true", help="link the runs and print the wandb leet command, without opening it"
    )
    sub["recheck"].add_argument("--runs", type=int, default=2, help="how many complete runs to re-run")
    sub["recheck"].add_argument(
        "--steps", type=int, help="env steps per re-run (default: 2 run.eval_every + 1, so 3 evaluations compare)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Console script ``td3x-sweep``: list, status, rerun, recheck, view."""
    args = build_parser().parse_args(argv)
    try:
        if args.command != "list" and not args.sweep_dir.is_dir():
            kind = "is a file" if args.sweep_dir.exists() else "does not exist"
            takes = (
                "a sweep dir, a run dir, a K-seeds dir or a folder of runs"
                if args.command in ("status", "view")
                else "a sweep dir"
            )
            raise FileNotFoundError(f"{args.sweep_dir} {kind}: td3x-sweep {args.command} takes {takes}")
        if args.command == "list":
            sys.exit(_print_list(list_jobs(list(args.overrides)), launcher_resources(list(args.overrides))))
        if args.command in ("status", "view"):
            sys.exit(show(args.command, args.sweep_dir, no_open=getattr(args, "no_open", False)))
        if args.command == "recheck":
            sys.exit(recheck(args.sweep_dir, args.runs, args.steps))
        sys.exit(rerun(args.sweep_dir))
    except SweepStopped:
        print(f"training stopped: interrupted; resume with: td3x-sweep rerun {args.sweep_dir}", file=sys.stderr)
        sys.exit(1)
    except (FileNotFoundError, RunFileError) as error:
        print(f"td3x-sweep: {error}", file=sys.stderr)
        sys.exit(2)
    except ConfigError as error:
        for problem in error.problems:
            print(f"config error: {problem}", file=sys.stderr)
        sys.exit(2)
    except HydraException as error:  # an override Hydra refuses that td3x does not check (its syntax, a hydra key)
        print(f"td3x-sweep: {' '.join(str(error).split())}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
