"""A multirun's jobs, their runs' states, and a launch's closing line: what td3x-train, td3x-sweep and the W&B view
share (a launch's cost before it starts: :mod:`td3x.sweeps.cost`).

:func:`list_jobs` composes each job of a ``td3x-train`` command line exactly as Hydra's basic sweeper does (the
experiment's ``hydra.sweeper.params`` first, then the command line), through Hydra's public API and the rules of
:mod:`td3x.config.overrides`, and creates nothing. :func:`path_states` reads the state (:mod:`td3x.rundir.state`) of
every run of a sweep dir (every launch into it, as :mod:`td3x.sweeps.launches` records them), a run dir, a K-seeds
process dir or a folder of runs (found as ``td3x-report`` finds them: :func:`td3x.rundir.layout.walk_runs`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from td3x.algo.envs import check_env
from td3x.config.hydra import CONF_DIR, register_configs, typed_task
from td3x.config.overrides import (
    apply_overrides,
    group_options,
    override_dirname,
    override_problems,
    overrides_in,
    sweep_jobs,
)
from td3x.config.schema import ConfigError, TrainConfig
from td3x.rundir.layout import (
    CONFIG_FILE,
    RunFileError,
    config_int,
    read_yaml_mapping,
    run_configs,
    seed_range,
    seed_run_dirs,
    walk_runs,
)
from td3x.rundir.state import (
    COMPLETE,
    FAILED,
    NOT_STARTED,
    STOPPED,
    RunState,
    listed_run_state,
    unreadable_state,
)
from td3x.sweeps.launches import LAUNCHED_HERE, Launch, is_sweep_dir, read_launches, sweep_dir_override
from td3x.training.machine_checks import check_runtime

log = logging.getLogger(__name__)


# Hydra launchers whose jobs train on this machine (basic, joblib, submitit's local one): their jobs get the machine
# checks before the launch; a SLURM or Ray job gets them on its own node, when it starts
LOCAL_LAUNCHERS = ("BasicLauncher", "JoblibLauncher", "LocalLauncher")


@dataclass(frozen=True)
class Job:
    overrides: list[str]
    run_dir: Path
    problems: list[str]  # td3x's range checks (empty when the job's config is accepted)
    total_steps: int = 0
    seed: int = 0
    num_seeds: int = 1  # run.num_seeds: the job trains this many seeds, each in its own dir below run_dir
    num_threads: int = 1  # run.num_threads: the cores the job trains on
    no_update: str | None = None  # why its runs end before their first update (TrainConfig.no_update_warning)

    @property
    def seeds(self) -> range:
        return seed_range(self.seed, self.num_seeds)


@contextlib.contextmanager
def composing() -> Iterator[None]:
    """Hydra initialised on td3x's configs, as ``td3x-train`` initialises it (its job named ``train``), for the
    compositions inside and a run started with its config loader."""
    register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3", job_name="train"):
        yield


def _compose(overrides: list[str], run_mode: RunMode = RunMode.MULTIRUN) -> DictConfig:
    """The full config (with ``hydra``) of a multirun job or a single run, composed by the initialized Hydra's
    config loader."""
    loader = GlobalHydra.instance().config_loader()
    return loader.load_configuration(config_name="train", overrides=overrides, run_mode=run_mode, from_shell=False)


def run_config(overrides: list[str]) -> DictConfig:
    """A single run's full config (with ``hydra``), inside :func:`composing`: Hydra's own composition of
    ``td3x-train OVERRIDES``, with the ``hydra.mode=RUN`` that Hydra adds to a command line that sets no mode (no
    experiment does)."""
    sets_mode = any(override.lstrip("+").startswith("hydra.mode=") for override in overrides)
    return _compose([*overrides, *([] if sets_mode else ["hydra.mode=RUN"])], RunMode.RUN)


def _parser() -> OverridesParser:
    """Hydra's override parser, with the config loader that ``glob()`` sweeps list a group's options from."""
    return OverridesParser.create(config_loader=GlobalHydra.instance().config_loader())


def sweep_config(arguments: list[str]) -> DictConfig:
    """The config the sweep itself is set up from (its sweeper and launcher): the command line's sweeps aside."""
    return _compose([str(o.input_line) for o in _parser().parse_overrides(arguments) if not o.is_sweep_override()])


def job_overrides(arguments: list[str]) -> list[list[str]]:
    """Each job's overrides, in Hydra's order: the config's ``hydra.sweeper.params``, then the command line."""
    params = sweep_config(arguments).hydra.sweeper.params or {}
    lines = [f"{key}={value}" for key, value in params.items()] + arguments
    return sweep_jobs(_parser().parse_overrides(lines))


class JobComposer:
    """Composes jobs as Hydra would, composing each distinct choice of config groups once: a job is a copy of
    its groups' composition with its value overrides (``key=v``, ``+``, ``++``, ``~``) applied in Hydra's order."""

    def __init__(self, run_mode: RunMode = RunMode.MULTIRUN, check_machine: bool = True) -> None:
        self.groups = set(group_options())
        self.cache: dict[tuple[str, ...], DictConfig] = {}
        self.run_mode = run_mode  # a single run's dir is hydra.run.dir, a multirun job's the sweep dir's subdir
        self.check_machine = check_machine  # False: the range checks alone, no env made
        # the env's and machine's problems, once per (env, device, precision, buffer, seeds) and place it trains
        self.machine_problems: dict[tuple[tuple[object, ...], bool], list[str]] = {}

    def _is_group(self, override: Override) -> bool:
        return override.key_or_group in self.groups or "/" in override.key_or_group

    def _composed(self, group_lines: tuple[str, ...]) -> DictConfig:
        """The full config (with ``hydra``) of one choice of groups, composed once (shared: copy it)."""
        if group_lines not in self.cache:
            self.cache[group_lines] = _compose(list(group_lines), self.run_mode)
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
        if self.run_mode is RunMode.RUN:
            run_dir = Path(cfg.hydra.run.dir)
        else:
            run_dir = Path(cfg.hydra.sweep.dir) / str(cfg.hydra.sweep.subdir)
        with open_dict(cfg):
            del cfg["hydra"]
        return run_dir, cfg

    def trains_here(self, overrides: list[str]) -> bool:
        """Whether the job trains on this machine (a single run, or a local launcher's job) rather than on one SLURM
        or Ray picks, whose CUDA, bf16 units and memory this machine cannot check."""
        if self.run_mode is RunMode.RUN:
            return True
        parsed = _parser().parse_overrides(overrides)
        cfg = self._composed(tuple(str(o.input_line) for o in parsed if self._is_group(o)))
        return str(OmegaConf.select(cfg, "hydra.launcher._target_", default="")).endswith(LOCAL_LAUNCHERS)

    def describe(self, overrides: list[str]) -> Job:
        run_dir, task = self.configs(overrides)
        config, problems = self._checked(task, self.trains_here(overrides))
        return Job(
            overrides=overrides,
            run_dir=run_dir,
            problems=problems,
            total_steps=int(task.run.total_steps),
            seed=int(task.seed),
            num_seeds=int(task.run.num_seeds),
            num_threads=int(task.run.num_threads),
            no_update=None if config is None else config.no_update_warning(),
        )

    def _checked(self, task: DictConfig, here: bool) -> tuple[TrainConfig | None, list[str]]:
        """The typed config (None if refused) and its problems: td3x's range checks, the env id and, for a job that
        trains ``here``, what this machine can run (:func:`check_runtime`), made once per env, device and buffer."""
        try:
            config = typed_task(task)
        except ConfigError as error:
            return None, error.problems
        if not self.check_machine:
            return config, []
        machine = (
            repr(config.env),
            config.run.device,
            config.run.precision,
            config.agent.buffer_size,
            config.run.num_seeds,
        )
        if (machine, here) not in self.machine_problems:
            self.machine_problems[machine, here] = check_runtime(config) if here else check_env(config.env)
        return config, self.machine_problems[machine, here]


def check_overrides(arguments: list[str]) -> None:
    """Refuse overrides as ``td3x-train`` does before Hydra sees them: unknown keys and options, values of the
    wrong type (raises ConfigError, one line a problem)."""
    problems = override_problems(overrides_in(arguments))
    if problems:
        raise ConfigError(problems)


def list_jobs(arguments: list[str], run_mode: RunMode = RunMode.MULTIRUN, check_machine: bool = True) -> list[Job]:
    """The jobs of a multirun with these overrides, or the one job of a single run (``RunMode.RUN``); the
    overrides checked first, as td3x-train checks them (ConfigError). ``check_machine=False`` leaves out the checks
    that make the job's env (its id, what this machine can run): for what reads a launched sweep's runs."""
    check_overrides(arguments)
    return composed_jobs(arguments, run_mode, check_machine)


def composed_jobs(arguments: list[str], run_mode: RunMode = RunMode.MULTIRUN, check_machine: bool = True) -> list[Job]:
    """:func:`list_jobs` for overrides the caller has checked (``td3x-train`` checks a command line's once)."""
    with composing():
        composer = JobComposer(run_mode, check_machine)
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
    with composing():
        launcher = sweep_config(arguments).hydra.launcher
        if "cpus_per_task" not in launcher:
            return None
        return f"each job asks SLURM for cpus_per_task={launcher.cpus_per_task}, mem_gb={launcher.mem_gb}"




# ---------------------------------------------------------------------- status and rerun of a launched sweep
def launch_jobs(sweep_dir: Path, launch: Launch) -> list[Job]:
    """The jobs of one launch into ``sweep_dir``, their run dirs in ``sweep_dir`` wherever it was launched to (for
    its runs' states: no env is made)."""
    overrides = [*launch.task_overrides, *launch.hydra_overrides, sweep_dir_override(sweep_dir)]
    return list_jobs(overrides, check_machine=False)


def sweep_states(sweep_dir: Path) -> list[RunState]:
    """The state of every run of every launch into ``sweep_dir``, each run once (launches may share jobs); a run
    whose files cannot be read is failed, named (:func:`td3x.rundir.state.listed_run_state`)."""
    seen: set[Path] = set()
    states: list[RunState] = []
    for launch in read_launches(sweep_dir):
        for job in launch_jobs(sweep_dir, launch):
            for seed_dir in seed_run_dirs(job.run_dir, job.seed, job.num_seeds):
                if seed_dir not in seen:
                    seen.add(seed_dir)
                    states.append(listed_run_state(seed_dir, job.total_steps, job.num_seeds))
    return states


def launch_summary(sweep_dir: Path, launch: Launch) -> str:
    """The line a multirun ends with: how many of its jobs are complete, failed, stopped (resumable) or not started
    (refused, or never reached), and where; a job with a run whose files cannot be read is failed, as
    ``td3x-sweep status`` lists it; and how many of its jobs make no update (their rows show untrained policies)."""
    counts = dict.fromkeys((COMPLETE, FAILED, STOPPED, NOT_STARTED), 0)
    jobs = launch_jobs(sweep_dir, launch)
    for job in jobs:
        seed_dirs = seed_run_dirs(job.run_dir, job.seed, job.num_seeds)
        states = {listed_run_state(d, job.total_steps, job.num_seeds).state for d in seed_dirs}
        counts[_job_outcome(states)] += 1
    runs = sum(job.num_seeds for job in jobs)
    outcome = ", ".join(f"{number} {state}" for state, number in counts.items() if number or state == "complete")
    line = f"multirun: {len(jobs)} jobs ({runs} runs): {outcome}; sweep dir {sweep_dir}"
    if idle := sum(job.no_update is not None for job in jobs):
        line += f"; {idle} of {len(jobs)} jobs made no update (their train.log says why): untrained policies' returns"
    if counts["complete"] == len(jobs):
        return line
    return f"{line}; `td3x-sweep status {sweep_dir}` lists its runs, `td3x-sweep rerun {sweep_dir}` relaunches it"


def _job_outcome(run_states: set[str]) -> str:
    """A job's outcome from its runs' states (K seeds share one process: they end alike)."""
    if FAILED in run_states:
        return FAILED
    if len(run_states) == 1 and run_states & {COMPLETE, NOT_STARTED}:
        return run_states.pop()
    return STOPPED  # stopped, stale (killed), running (another process trains it): resumable


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
    return run_configs(path) or sorted(run_dir / CONFIG_FILE for run_dir, _ in walk_runs(path, log.warning))


def path_states(path: Path) -> list[RunState]:
    """The state of every run of a sweep dir (every launch into it), of a run dir, of each seed of a K-seeds
    process dir, or of every run below a folder of runs. A run whose files cannot be read is failed, named, and
    the others follow (:func:`td3x.rundir.state.listed_run_state`).

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
    return [_config_state(config) for config in configs]


def _config_state(config_path: Path) -> RunState:
    """The state of the run whose ``config.yaml`` is ``config_path``, against its own ``run.total_steps`` (0 when
    the file cannot tell it: the run is then unreadable)."""
    try:
        config = read_yaml_mapping(config_path)
        total_steps = config_int(config, "run.total_steps", config_path)
    except RunFileError as error:
        return unreadable_state(config_path.parent, 0, error)
    run = config.get("run")
    num_seeds = run.get("num_seeds", 1) if isinstance(run, dict) else 1
    return listed_run_state(config_path.parent, total_steps, num_seeds if isinstance(num_seeds, int) else 1, config)
