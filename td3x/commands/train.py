"""``td3x-train``: the Hydra entrypoint (``main``) and its help.

``main`` checks the overrides and the config before anything is created, once each, and reports problems one line
each. A single run is then trained through Hydra's ``run_job`` on the very config td3x composed and checked
(:func:`train_single_run`); a multirun goes through ``@hydra.main`` (``_hydra_main``), whose jobs Hydra's launcher
composes again and which raise instead of exiting, so the sweep goes on. Training itself is the library's,
:func:`td3x.training.run.run`, through :func:`td3x.commands.train_and_report.run_and_report`.
"""

from __future__ import annotations

import copy
import os
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import hydra
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.core.utils import configure_log, run_job
from hydra.errors import HydraException
from hydra.types import HydraContext, RunMode, TaskFunction
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import OmegaConfBaseException

from td3x import __version__
from td3x.algo.envs import check_env
from td3x.commands.common import VERSION_LINE, exit_with, quiet_on_closed_pipe
from td3x.commands.train_and_report import fail, remove_if_only_hydra_files, run_and_report
from td3x.config.command_line import dir_override_as_typed, flag_problem, spaced_assignment_problem, sweep_problem
from td3x.config.hydra import CONF_DIR, register_configs, to_typed, typed_task
from td3x.config.messages import composition_problem
from td3x.config.overrides import (
    composed_config,
    default_choices,
    group_options,
    home_dir_problem,
    override_problems,
    overrides_in,
    run_choices,
)
from td3x.config.schema import ConfigError, TrainConfig
from td3x.host import numerics
from td3x.rundir.layout import unwritable_dir_problem
from td3x.sweeps.cost import launch_cost
from td3x.sweeps.multirun import composed_jobs, composing, print_launch_summaries, run_config, sweep_config
from td3x.training.machine_checks import check_runtime


def _checked_config(cfg: DictConfig, run_dir: Path, multirun: bool) -> TrainConfig | None:
    """The typed config of a job Hydra started (a multirun's, or a run of another config: ``--config-name``), checked
    as :func:`td3x.training.run.run` would check it: td3x's range checks, then what this machine can run. A
    multirun's jobs were checked before the launch too, but a job may train on another machine (a SLURM or Ray
    node) and gets its config from Hydra's launcher, composed anew: this is its own first check."""
    try:
        config = to_typed(cfg)
        problems = check_runtime(config)
    except ConfigError as error:
        problems = error.problems
    if not problems:
        return config
    remove_if_only_hydra_files(run_dir)
    fail(multirun, "config error", problems, 2, ConfigError(problems))
    return None


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="train")
def _hydra_main(cfg: DictConfig) -> dict[str, Any] | None:
    hydra_config = HydraConfig.get()
    run_dir = Path(hydra_config.runtime.output_dir)
    multirun = hydra_config.mode == RunMode.MULTIRUN
    choices = run_choices(hydra_config.runtime.choices)
    config = _checked_config(cfg, run_dir, multirun)
    if config is None:
        return None
    if multirun and config.logging.group is None:  # a command-line sweep is one W&B group, as an experiment's
        config.logging.group = Path(hydra_config.sweep.dir).name
    return run_and_report(config, run_dir, choices, multirun, checked=True)


# td3x-train's options: Hydra 1.3's command line (its parser is internal: tests compare the two); any other argument
# with a dash is refused first, with the override or option meant
HYDRA_OPTIONS = (
    *("--help", "-h", "--hydra-help", "--version", "--cfg", "-c", "--resolve", "--package", "-p", "--run", "-r"),
    *("--multirun", "-m", "--shell-completion", "-sc", "--config-path", "-cp", "--config-name", "-cn"),
    *("--config-dir", "-cd", "--experimental-rerun", "--info", "-i"),
)

# Hydra runs one of these modes (long and short spelling); given two, it raises a traceback
HYDRA_MODES = (
    ("--run", "-r"),
    ("--multirun", "-m"),
    ("--cfg", "-c"),
    ("--info", "-i"),
    ("--shell-completion", "-sc"),
)

OTHER_CONFIG_OPTIONS = ("--config-path", "-cp", "--config-name", "-cn", "--config-dir", "-cd")

MOST_USED_KEYS = (
    ("seed", "the run's seed (a K-seeds run trains seed .. seed + K - 1)"),
    ("run.total_steps", "env steps (default: the env option's budget: 15000 for pendulum, 1M for MuJoCo)"),
    ("run.eval_every", "env steps between evaluations of run.eval_episodes deterministic episodes"),
    ("run.num_seeds", "K seeds trained side by side in this process (faster per core)"),
    ("run.num_threads", "torch threads (part of the config: it changes float results)"),
    ("agent.policy_delay", "d: actor and target updates every d critic updates (1 = no delay)"),
    ("agent.n_critics", "critics whose min forms the target (1 = no clipped double Q)"),
    ("agent.target_policy_noise", "σ̃ of target policy smoothing (0 = none)"),
    ("noise.std", "exploration noise σ, in agent.noise_units (normalised unless agent=td3_paper)"),
    ("logging.wandb_mode", "offline (default), online or disabled; also the WANDB_MODE variable"),
)


def help_text() -> str:
    """``td3x-train --help``: what it does, the groups and their options, the most used keys, examples."""
    defaults = default_choices()
    groups = "\n".join(
        textwrap.fill(
            ", ".join(options) + (f" (default: {defaults[group]})" if group in defaults else ""),
            width=100,
            initial_indent=f"  {group:<11} ",
            subsequent_indent=" " * 14,
        )
        for group, options in group_options().items()
    )
    keys = "\n".join(f"  {key:<27} {meaning}" for key, meaning in MOST_USED_KEYS)
    return f"""td3x-train {__version__}: train TD3 (Fujimoto et al., 2018) or one of its ablations on a Gymnasium env.

Usage: td3x-train [GROUP=OPTION] [KEY=VALUE] [+experiment=NAME] [-m]

With no arguments it is the demo: TD3 on Pendulum-v1 for 15000 env steps, a few minutes on a CPU.

Config groups (GROUP=OPTION; ablation options are the rows of the paper's Table 2,
+experiment=NAME launches a whole sweep):
{groups}

Most used keys (KEY=VALUE; every key is in the docs' configuration reference, and
`td3x-train --cfg job` prints the composed config without training):
{keys}

Examples:
  td3x-train                                          the demo
  td3x-train env=hopper ablation=no_twin seed=3       an ablation row on Hopper, 1M steps
  td3x-train env=hopper run.total_steps=20000         a short MuJoCo run
  td3x-train -m env=hopper ablation=none,ahe seed=0,1 a small sweep (see also td3x-sweep list)
  td3x-train +experiment=table2                       the paper's whole ablation table

A run writes config.yaml, eval.csv, metrics.jsonl, summary.json and checkpoint.pt in its run dir.
Related: td3x-resume RUN_DIR, td3x-sweep, td3x-eval, td3x-report; td3x.load(RUN_DIR) in Python.
Docs: the docs/ pages of the repository (`mkdocs serve` with the docs extra installed).
Exit codes: 0 done; 2 a config or resume refusal, for a sweep any job's (nothing created);
1 training stopped.
--hydra-help shows Hydra's own help; --version td3x's version."""


def mode_problem(arguments: list[str]) -> str | None:
    """One line when the command line asks Hydra for two of its modes (``--cfg job -m``), naming them."""
    given = [next(flag for flag in mode if flag in arguments) for mode in HYDRA_MODES if set(mode) & set(arguments)]
    if len(given) < 2:
        return None
    modes = ", ".join(mode[0] for mode in HYDRA_MODES)
    return f"{' and '.join(given)} cannot be given together: Hydra runs one of {modes}"


def launch_mode(arguments: list[str]) -> RunMode | None:
    """How ``td3x-train ARGUMENTS`` runs, as Hydra decides it: ``MULTIRUN`` with ``-m`` or an experiment (or a
    ``hydra.mode`` override) that sets it, else ``RUN``; None for a command line that trains nothing (``--cfg``,
    ``--info``, ...) or names another config (``--config-name``, ...), which Hydra handles alone.

    Raises:
        HydraException, OmegaConfBaseException: an experiment's config Hydra cannot compose.
    """
    flags = [argument for argument in arguments if argument.startswith("-")]
    overrides = [argument for argument in arguments if not argument.startswith("-")]
    if any(flag not in ("-m", "--multirun", "-r", "--run") for flag in flags):
        return None
    if {"-m", "--multirun"} & set(flags):
        return RunMode.MULTIRUN
    # only an experiment or a hydra.mode override can set the mode: a plain command line is composed once, later
    sets_mode = any(override.lstrip("+").startswith(("experiment=", "hydra.mode=")) for override in overrides)
    return RunMode.MULTIRUN if sets_mode and _is_multirun(overrides) else RunMode.RUN


def _is_multirun(overrides: list[str]) -> bool:
    """Whether these overrides, without ``-m``, launch a multirun (an experiment that sets ``hydra.mode``)."""
    with composing():
        return bool(sweep_config(overrides).hydra.mode == RunMode.MULTIRUN)


def printed_config_problems(arguments: list[str]) -> list[str]:
    """For ``--cfg job`` or ``--cfg all`` (Hydra prints the config and trains nothing): td3x's range checks of the
    config it prints and its env id, so that a config that could not train is not shown as if it could. What this
    machine can run (CUDA, memory) is not checked: a config may be printed here to run elsewhere. The overrides'
    text is the caller's to check; Hydra composes the config again to print it (``--cfg`` has no way in for a
    composed config)."""
    flag = next((flag for flag in HYDRA_MODES[2] if flag in arguments), None)
    what = arguments[arguments.index(flag) + 1 : arguments.index(flag) + 2] if flag else []
    if what not in (["job"], ["all"]) or set(OTHER_CONFIG_OPTIONS) & set(arguments):
        return []  # Hydra's own config, or another config: Hydra's (and its error for a bad --cfg value)
    try:
        config = composed_config(overrides_in(arguments))
    except ConfigError as error:
        return error.problems
    return check_env(config.env)


def multirun_problems(arguments: list[str]) -> list[str]:
    """Every problem of what a multirun would train, found before Hydra creates a dir or starts a job: each job's
    config under td3x's range checks and, for a job that trains on this machine, what the machine can run, and a
    dir it can write; each line names its job. The multirun's size and cost is printed when it can start. The
    overrides' text is the caller's to check.

    Each distinct choice of groups is composed here once, and Hydra's launcher composes each job again: a job may
    start in another process or on another node, and Hydra's sweeper takes no composed config."""
    try:
        jobs = composed_jobs([argument for argument in arguments if not argument.startswith("-")])
    except ConfigError as error:
        return error.problems
    except (HydraException, OmegaConfBaseException) as error:  # a syntax error, an interpolation naming nothing
        return [composition_problem(error)]
    problems = [
        f"job {number} ({job.run_dir}): {problem}" for number, job in enumerate(jobs) for problem in job.problems
    ]
    where = Path(os.path.commonpath([job.run_dir for job in jobs]))
    unwritable = home_dir_problem("hydra.sweep.dir", where) or unwritable_dir_problem(
        where, f"{where} (the sweep's dir)"
    )
    problems += [unwritable] if unwritable else []
    message = launch_cost(jobs) if not problems else None
    if message:
        print(message, file=sys.stderr)
    return problems


def _checked_run(overrides: list[str]) -> tuple[DictConfig, TrainConfig, Path]:
    """A single run's full config, composed once as Hydra's own run composes it, its checked task config and its run
    dir; inside :func:`~td3x.sweeps.multirun.composing`.

    Raises:
        ConfigError: td3x's range checks, what this machine cannot run, a dir it cannot write; a line Hydra cannot
            compose, an interpolation naming nothing (one line each).
    """
    try:
        cfg = run_config(overrides)
        HydraConfig.instance().set_config(cfg)  # the run dir's ${hydra:runtime.choices...} read it
        run_dir = Path(cfg.hydra.run.dir)  # ${now:...} resolved once: Hydra's run_job reads the same (cached) value
        task = copy.deepcopy(cfg)
        with open_dict(task):
            del task["hydra"]
        config = typed_task(task)
    except (HydraException, OmegaConfBaseException) as error:  # a syntax error, a missing group option
        raise ConfigError([composition_problem(error)]) from error
    unwritable = home_dir_problem("hydra.run.dir", run_dir) or unwritable_dir_problem(
        run_dir, f"{run_dir} (the run's dir)"
    )
    problems = check_runtime(config) + ([unwritable] if unwritable else [])
    if problems:
        raise ConfigError(problems)
    return cfg, config, run_dir


class RunCallbacks:
    """The callbacks of a run as Hydra 1.3 calls them (its ``Callbacks``, in a private module td3x does not import):
    each of ``hydra.callbacks`` instantiated, called in order, the ends in reverse; one that raises is a warning."""

    def __init__(self, cfg: DictConfig) -> None:
        configured = OmegaConf.select(cfg, "hydra.callbacks") or {}
        self.callbacks = [instantiate(params) for params in configured.values()]

    def _notify(self, name: str, reverse: bool = False, **kwargs: Any) -> None:
        for callback in reversed(self.callbacks) if reverse else self.callbacks:
            try:
                getattr(callback, name)(**kwargs)
            except Exception as error:  # Hydra's rule: a callback never stops the run
                message = f"Callback {type(callback).__name__}.{name} raised {type(error).__name__}: {error}"
                warnings.warn(message, stacklevel=2)

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._notify("on_run_start", config=config, **kwargs)

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        self._notify("on_run_end", reverse=True, config=config, **kwargs)

    def on_job_start(self, config: DictConfig, *, task_function: TaskFunction, **kwargs: Any) -> None:
        self._notify("on_job_start", config=config, task_function=task_function, **kwargs)

    def on_job_end(self, config: DictConfig, job_return: Any, **kwargs: Any) -> None:
        self._notify("on_job_end", reverse=True, config=config, job_return=job_return, **kwargs)


def _run_as_hydra_does(cfg: DictConfig, task_function: TaskFunction) -> None:
    """Hydra 1.3's run of one job (``Hydra.run``) on a config already composed: its logging, callbacks, run dir with
    ``.hydra/`` and job logging; an exception the task raised is raised here, as ``Hydra.run`` raises it."""
    configure_log(cfg.hydra.hydra_logging, cfg.hydra.verbose)
    callbacks = RunCallbacks(cfg)
    callbacks.on_run_start(config=cfg, config_name="train")
    context = HydraContext(
        config_loader=GlobalHydra.instance().config_loader(),
        callbacks=callbacks,  # type: ignore[arg-type]  # the methods run_job calls, as Hydra's Callbacks has them
    )
    result = run_job(
        hydra_context=context,
        task_function=task_function,
        config=cfg,
        job_dir_key="hydra.run.dir",
        job_subdir_key=None,
    )
    callbacks.on_run_end(config=cfg, config_name="train", job_return=result)
    _ = result.return_value


def train_single_run(arguments: list[str]) -> None:
    """``td3x-train`` without ``-m``: the run composed once, checked once (range checks, this machine) before any dir
    is made, then trained through Hydra's ``run_job`` on that very config. ``@hydra.main`` would compose it twice
    more (once to find the mode, once to run) and hand the task a config to check again."""
    sweep = sweep_problem(arguments)
    if sweep:
        exit_with("td3x-train: error", [sweep])
    with composing():
        try:
            cfg, config, run_dir = _checked_run(overrides_in(arguments))
        except ConfigError as error:
            exit_with("config error", error.problems)
        numerics.restart_if_portable_asks(arguments)  # before the run dir is made
        choices = run_choices(cfg.hydra.runtime.choices)
        _run_as_hydra_does(cfg, lambda _: run_and_report(config, run_dir, choices, checked=True))


def usage_problem(arguments: list[str]) -> str | None:
    """One line for a command line Hydra would misread: an unknown ``-flag``, two of Hydra's modes, an override
    with spaces around its ``=``."""
    problem = (
        flag_problem(arguments, HYDRA_OPTIONS, takes_overrides=True)
        or mode_problem(arguments)
        or spaced_assignment_problem(arguments)
    )
    return f"{problem} (see td3x-train --help)" if problem else None


def dirs_as_typed() -> list[str]:
    """The command line with its run or sweep dir read as typed (:func:`~td3x.config.command_line.
    dir_override_as_typed`: ``~`` expanded, quoted for Hydra where its grammar would refuse or split the path), also
    in ``sys.argv``, which Hydra's own main reads; a ``~user`` of no user is refused in one line."""
    try:
        typed = [dir_override_as_typed(argument) for argument in sys.argv[1:]]
    except ConfigError as error:
        exit_with("config error", error.problems)
    sys.argv[1:] = typed
    return typed


@quiet_on_closed_pipe
def main() -> None:
    """Console script ``td3x-train``: Hydra's command line (overrides, ``-m`` for multirun), with td3x's own
    ``--help`` and ``--version``, and every override checked against the schema and ``conf/`` first: the text of
    the overrides once, the config (each job's, in a multirun) once, before any dir is made."""
    arguments = sys.argv[1:]
    if "--version" in arguments:
        print(VERSION_LINE)
        return
    if "--help" in arguments or "-h" in arguments:
        print(help_text())
        return
    arguments = dirs_as_typed()
    usage = usage_problem(arguments)
    if usage:
        exit_with("td3x-train: error", [usage])
    problems = override_problems(overrides_in(arguments))
    if problems:
        exit_with("config error", problems)
    try:
        mode = launch_mode(arguments)
    except (HydraException, OmegaConfBaseException) as error:  # an experiment Hydra cannot compose
        exit_with("config error", [composition_problem(error)])
    if mode is RunMode.RUN:
        train_single_run(arguments)
        return
    problems = multirun_problems(arguments) if mode is RunMode.MULTIRUN else printed_config_problems(arguments)
    if problems:
        exit_with("config error", problems)
    numerics.restart_if_portable_asks(arguments)  # before Hydra creates a dir or a launcher starts a worker
    register_configs()
    try:
        _hydra_main()
    finally:  # a multirun's jobs, counted however it ended (a job failed, a stop)
        print_launch_summaries()


if __name__ == "__main__":
    main()
