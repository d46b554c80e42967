"""``td3x-train``: the Hydra entrypoint (``main``) and its help.

``main`` checks the overrides and the config before anything is created and reports problems one line each;
inside a multirun job it raises instead of exiting, so the sweep goes on. Training itself is the library's,
:func:`td3x.training.run.run` (which also refuses what this machine cannot run), through
:func:`td3x.commands.train_and_report.run_and_report`.
"""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import DictConfig
from omegaconf.errors import OmegaConfBaseException

from td3x import __version__
from td3x.algo.envs import check_env
from td3x.commands.common import VERSION_LINE, exit_with
from td3x.commands.train_and_report import fail, remove_if_only_hydra_files, run_and_report
from td3x.config.hydra import CONF_DIR, register_configs, to_typed
from td3x.config.messages import composition_problem
from td3x.config.overrides import (
    compose_checked,
    default_choices,
    flag_problem,
    group_options,
    override_problems,
    overrides_in,
    run_choices,
)
from td3x.config.schema import ConfigError, TrainConfig
from td3x.host import numerics
from td3x.rundir.layout import unwritable_dir_problem
from td3x.sweeps.cost import launch_cost
from td3x.sweeps.multirun import planned_jobs, print_launch_summaries


def _checked_config(cfg: DictConfig, run_dir: Path, multirun: bool) -> TrainConfig | None:
    """The typed config; what this machine cannot run is refused by :func:`td3x.training.run.run` itself."""
    try:
        return to_typed(cfg)
    except ConfigError as error:
        remove_if_only_hydra_files(run_dir)
        fail(multirun, "config error", error.problems, 2, error)
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
    return run_and_report(config, run_dir, choices, multirun)


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


def printed_config_problems(arguments: list[str]) -> list[str]:
    """For ``--cfg job`` or ``--cfg all`` (Hydra prints the config and trains nothing): td3x's range checks of the
    config it prints and its env id, so that a config that could not train is not shown as if it could. What this
    machine can run (CUDA, memory) is not checked: a config may be printed here to run elsewhere."""
    flag = next((flag for flag in HYDRA_MODES[2] if flag in arguments), None)
    what = arguments[arguments.index(flag) + 1 : arguments.index(flag) + 2] if flag else []
    if what not in (["job"], ["all"]) or set(OTHER_CONFIG_OPTIONS) & set(arguments):
        return []  # Hydra's own config, or another config: Hydra's (and its error for a bad --cfg value)
    try:
        config = compose_checked(overrides_in(arguments))
    except ConfigError as error:
        return error.problems
    return check_env(config.env)


def launch_problems(arguments: list[str]) -> list[str]:
    """Every problem of what the command line would train, found before Hydra creates a dir or starts a job: each
    job's config (a single run is one job) under td3x's range checks and what this machine can run, and a dir it
    can write; in a multirun each line names its job. A multirun's size and cost is printed when it can start."""
    try:
        planned = planned_jobs(arguments)
    except ConfigError as error:
        return error.problems
    except (HydraException, OmegaConfBaseException) as error:  # a syntax error, an interpolation naming nothing
        return [composition_problem(error)]
    if planned is None:  # --cfg, --info, ...: Hydra prints, nothing trains
        return printed_config_problems(arguments)
    jobs, multirun = planned
    problems = [
        f"job {number} ({job.run_dir}): {problem}" if multirun else problem
        for number, job in enumerate(jobs)
        for problem in job.problems
    ]
    where = Path(os.path.commonpath([job.run_dir for job in jobs]))  # a single run's dir, or the sweep's
    unwritable = unwritable_dir_problem(where, f"{where} (the {'sweep' if multirun else 'run'}'s dir)")
    problems += [unwritable] if unwritable else []
    message = launch_cost(jobs) if multirun and not problems else None
    if message:
        print(message, file=sys.stderr)
    return problems


def main() -> None:
    """Console script ``td3x-train``: Hydra's command line (overrides, ``-m`` for multirun), with td3x's own
    ``--help`` and ``--version``, and every override checked against the schema and ``conf/`` first."""
    arguments = sys.argv[1:]
    if "--version" in arguments:
        print(VERSION_LINE)
        return
    if "--help" in arguments or "-h" in arguments:
        print(help_text())
        return
    flag = flag_problem(arguments, HYDRA_OPTIONS, takes_overrides=True)
    if flag:
        exit_with("td3x-train: error", [f"{flag} (see td3x-train --help)"])
    mode = mode_problem(arguments)
    if mode:
        exit_with("td3x-train: error", [f"{mode} (see td3x-train --help)"])
    problems = override_problems(overrides_in(arguments))
    if problems:
        exit_with("config error", problems)
    problems = launch_problems(arguments)
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
