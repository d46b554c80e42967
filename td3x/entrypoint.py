"""``td3x-train``: the Hydra entrypoint (``main``), and ``run``, which trains one run without Hydra.

``run`` decides what the run dir asks for (start, resume, nothing: ``td3x.resume``), then drives a
:class:`~td3x.trainer.Trainer`. ``main`` checks the config before anything is created and reports
problems one line each; inside a multirun job it raises instead of exiting, so the sweep goes on.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hydra
import numpy as np
import torch
import yaml
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from td3x import __version__
from td3x.checkpoint import CheckpointError
from td3x.cli import VERSION_LINE
from td3x.config import (
    CONF_DIR,
    ConfigError,
    Device,
    TrainConfig,
    register_configs,
    seed_run_dirs,
    to_container,
    to_typed,
)
from td3x.envs import check_env, env_spec, make_env
from td3x.episode_tape import ReplayMismatch
from td3x.loggers import CONFIG_FILE, EVAL_FILE, METRICS_FILE, SUMMARY_FILE, truncate_after, write_json_atomic
from td3x.overrides import default_choices, group_options, override_problems
from td3x.provenance import collect_provenance
from td3x.resume import Plan, ResumeError, exclusive, plan
from td3x.trainer import RunInterrupted, Trainer, TrainingError, seed_configs

log = logging.getLogger(__name__)


def check_runtime(config: TrainConfig) -> list[str]:
    """Problems only the installed libraries can see: the env id and action space, CUDA."""
    problems = check_env(config.env)
    if config.run.device is Device.cuda and not torch.cuda.is_available():
        problems.append("run.device='cuda' is not allowed: torch sees no CUDA device here; use auto or cpu")
    return problems or buffer_memory_problems(config)


def buffer_memory_problems(config: TrainConfig) -> list[str]:
    """Refuse a replay buffer that cannot fit in the memory available now, before anything is allocated."""
    env = make_env(config.env)
    spec = env_spec(env)
    env.close()
    floats_per_transition = 2 * spec.obs_dim + spec.action_dim + 2  # obs, next_obs, action, reward, terminated
    needed = config.run.num_seeds * config.agent.buffer_size * floats_per_transition * np.dtype(np.float32).itemsize
    available = _available_memory_bytes()
    if available is None or needed <= available:
        return []
    return [
        f"agent.buffer_size={config.agent.buffer_size} is not allowed: the replay buffers of "
        f"run.num_seeds={config.run.num_seeds} seed(s) need {needed / 1e9:.1f} GB, more than the "
        f"{available / 1e9:.1f} GB of memory available here"
    ]


def _available_memory_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None  # not Linux: no check


@contextlib.contextmanager
def stop_after_checkpoint(trainer: Trainer) -> Iterator[None]:
    """SIGTERM/SIGINT ask the loop to checkpoint after the current env step and stop (never mid-update);
    a second SIGINT stops at once. Under submitit, whose own handlers requeue the job, nothing is changed."""
    if threading.current_thread() is not threading.main_thread() or "SUBMITIT_EXECUTOR" in os.environ:
        yield
        return

    def request_stop(signum: int, frame: object) -> None:
        if trainer.stop_requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        trainer.stop_requested = signal.Signals(signum).name

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# SIGTERM/SIGINT after a checkpoint; SystemExit is submitit's exit after it requeued a preempted job
INTERRUPTIONS = (RunInterrupted, KeyboardInterrupt, SystemExit)


def _prepare_run_dirs(run_dirs: list[Path], decision: Plan) -> None:
    """A resumed run drops the rows it will write again; a fresh start drops a killed attempt's rows."""
    for run_dir in run_dirs:
        if decision.action == "resume":
            truncate_after(run_dir, decision.parts["counters"]["step"])
        else:
            for name in (EVAL_FILE, METRICS_FILE, SUMMARY_FILE):
                (run_dir / name).unlink(missing_ok=True)


def group_summary(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """What ``run`` returns: a plain run's summary; for K seeds, their mean returns and each seed's summary."""
    if len(summaries) == 1:
        return summaries[0]
    finals = [s["final_return"] for s in summaries if s["final_return"] is not None]
    last10 = [s["last10_return"] for s in summaries if s["last10_return"] is not None]
    return {
        **summaries[0],
        "final_return": float(np.mean(finals)) if finals else None,
        "last10_return": float(np.mean(last10)) if last10 else None,
        "seeds": summaries,
    }


def run(config: TrainConfig, run_dir: Path | str, choices: dict[str, str] | None = None) -> dict[str, Any]:
    """Train one run in ``run_dir`` (or resume it from its checkpoint) and return its summary; with
    ``run.num_seeds`` K > 1, K runs in ``run_dir/seed_<seed>`` and their :func:`group_summary`.

    Args:
        config: a checked config (building a ``TrainConfig`` runs the range checks).
        run_dir: where the run's files go; created if missing.
        choices: the Hydra group choices (env, agent, noise, ablation), recorded in ``config.yaml``.

    Raises:
        ResumeError: the run dir holds another config's results, or results with ``run.resume=never``.
        TrainingError: a non-finite loss or parameter; the logs and the last good checkpoint are kept.
        RunInterrupted: SIGTERM/SIGINT; a checkpoint was written first.
    """
    run_dir = Path(run_dir)
    with exclusive(run_dir):
        return _run_locked(config, run_dir, choices)


def _run_locked(config: TrainConfig, run_dir: Path, choices: dict[str, str] | None) -> dict[str, Any]:
    decision = plan(config, run_dir)
    if decision.action == "complete":
        log.info("%s already holds a complete run of %d steps: nothing to do", run_dir, config.run.total_steps)
        seeds = zip(decision.parts["seeds"], seed_run_dirs(run_dir, config.seed, config.run.num_seeds), strict=True)
        return group_summary([_finished_summary(decision.parts, state, seed_dir) for state, seed_dir in seeds])
    log.info(start_line(config, run_dir, choices))
    run_dir.mkdir(parents=True, exist_ok=True)
    run_dirs = seed_run_dirs(run_dir, config.seed, config.run.num_seeds)
    _prepare_run_dirs(run_dirs, decision)
    saved_seeds = decision.parts.get("seeds", [])
    trainer = Trainer(config, run_dir, choices, wandb_run_ids=[seed["wandb_run_id"] for seed in saved_seeds] or None)
    for seed_config, seed_dir in zip(seed_configs(config), run_dirs, strict=True):
        (seed_dir / CONFIG_FILE).write_text(
            yaml.safe_dump({**to_container(seed_config), "choices": choices or {}}, sort_keys=False)
        )
        write_json_atomic(seed_dir / "provenance.json", collect_provenance())
    try:
        if decision.action == "resume":
            trainer.restore(decision.parts)
            log.info("resuming %s from its checkpoint at env step %d", run_dir, trainer.step)
        with stop_after_checkpoint(trainer):
            trainer.train()
    except INTERRUPTIONS as error:  # resumable: the run is unfinished, not failed
        trainer.close("running", interrupted=f"{type(error).__name__}: {error}")
        raise
    except BaseException as error:
        with contextlib.suppress(OSError):  # a full disk may refuse the summary too; the original error matters
            trainer.close("failed", failure=f"{type(error).__name__}: {error}")
        raise
    return group_summary(trainer.close("complete"))


def start_line(config: TrainConfig, run_dir: Path, choices: dict[str, str] | None) -> str:
    """The one line that says what is about to run."""
    last_seed = config.seed + config.run.num_seeds - 1
    seeds = f"seed {config.seed}" if last_seed == config.seed else f"seeds {config.seed}-{last_seed}"
    agent = (choices or {}).get("agent", "as configured")
    return (
        f"training {config.env.id} | agent {agent} | row {config.paper_row} | {config.run.total_steps} steps | "
        f"{seeds} | {config.run.num_threads} thread(s) | run dir {run_dir}"
    )


def _finished_summary(parts: dict[str, Any], seed_state: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    evaluations = seed_state["eval_returns"]
    return {
        "status": "complete",
        "failure": None,
        "steps": parts["counters"]["step"],
        "final_return": evaluations[-1],
        "last10_return": float(np.mean(evaluations[-10:])),
        "wall_time_s": parts["wall_time_s"],
        "run_dir": str(run_dir),
    }


# ---------------------------------------------------------------------- Hydra entrypoint
def _remove_if_only_hydra_files(run_dir: Path) -> None:
    """Hydra creates the run dir (``.hydra/`` and a log) before td3x sees the config. Remove it when that is
    all it holds: a refused config leaves nothing behind, and a dir with results is never touched."""
    if run_dir.is_dir() and all(entry.name == ".hydra" or entry.suffix == ".log" for entry in run_dir.iterdir()):
        shutil.rmtree(run_dir, ignore_errors=True)


def _fail(multirun: bool, label: str, problems: list[str], exit_code: int, error: Exception) -> None:
    """A single run prints one line per problem and exits; a multirun job raises so the sweep goes on
    (under Hydra's basic launcher every job shares one process: one sys.exit would end them all)."""
    if multirun:
        raise error
    for problem in problems:
        print(f"{label}: {problem}", file=sys.stderr)
    sys.exit(exit_code)


def _checked_config(cfg: DictConfig, run_dir: Path, multirun: bool) -> TrainConfig | None:
    try:
        config = to_typed(cfg)
        problems = check_runtime(config)
        if problems:
            raise ConfigError(problems)
        return config
    except ConfigError as error:
        _remove_if_only_hydra_files(run_dir)
        _fail(multirun, "config error", error.problems, 2, error)
    return None


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="train")
def _hydra_main(cfg: DictConfig) -> dict[str, Any] | None:
    hydra_config = HydraConfig.get()
    run_dir = Path(hydra_config.runtime.output_dir)
    multirun = hydra_config.mode == RunMode.MULTIRUN
    choices = {
        group: str(option)
        for group, option in hydra_config.runtime.choices.items()
        if "/" not in group and option is not None and group != "schema"
    }
    config = _checked_config(cfg, run_dir, multirun)
    if config is None:
        return None
    return run_and_report(config, run_dir, choices, multirun)


def run_and_report(
    config: TrainConfig, run_dir: Path, choices: dict[str, str] | None, multirun: bool = False
) -> dict[str, Any] | None:
    """:func:`run` for a command line: a refusal or a stop is one line per problem and an exit code (2: resume
    refused; 1: training stopped), or, in a multirun job, an exception; the last line sums the run up."""
    try:
        summary = run(config, run_dir, choices)
    except (ResumeError, CheckpointError, ReplayMismatch) as error:  # the checkpoint cannot be resumed here
        _remove_if_only_hydra_files(run_dir)
        _fail(multirun, "resume error", [str(error)], 2, error)
        return None
    except (TrainingError, RunInterrupted) as error:
        _fail(multirun, "training stopped", [str(error), f"files in {run_dir}"], 1, error)
        return None
    except OSError as error:  # a full disk or an unwritable dir: checkpoints are atomic, so the last one is intact
        _fail(multirun, "training stopped", [f"cannot write in {run_dir}: {error}"], 1, error)
        return None
    log.info(
        "done: final eval return %.2f, last-10 mean %.2f; files in %s%s",
        summary["final_return"],
        summary["last10_return"],
        run_dir,
        f" (offline W&B run in {run_dir / 'wandb'}: `wandb sync` uploads it)" if (run_dir / "wandb").is_dir() else "",
    )
    return summary


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
Exit codes: 0 done; 2 a config or resume refusal (nothing created); 1 training stopped, or
another composition error reported by Hydra.
--hydra-help shows Hydra's own help; --version td3x's version."""


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
    problems = override_problems([argument for argument in arguments if "=" in argument and argument[0] != "-"])
    if problems:
        for problem in problems:
            print(f"config error: {problem}", file=sys.stderr)
        sys.exit(2)
    register_configs()
    _hydra_main()


if __name__ == "__main__":
    main()
