"""``td3x-tune STUDY_DIR [OVERRIDE ...]``: a hyper-parameter search on Optuna that scores each trial on K seeds
(``run.num_seeds``), prunes from its evaluations, resumes exactly after a kill, and re-evaluates its choice on
fresh seeds. The study's logic is :mod:`td3x.tuning`'s; this module parses and checks what the user gives.
"""

from __future__ import annotations

import argparse
import difflib
import logging
import sys
from pathlib import Path

import optuna
from optuna.trial import TrialState

from td3x.commands.common import (
    HelpFormatter,
    OneLineParser,
    add_version_flag,
    exit_with,
    log_to,
    quiet_on_closed_pipe,
    user_path,
)
from td3x.config.command_line import looks_like_override
from td3x.config.overrides import compose_checked, hydra_text
from td3x.config.schema import ConfigError, TrainConfig
from td3x.rundir.layout import RunFileError, unwritable_dir_problem
from td3x.training.machine_checks import refuse_unrunnable
from td3x.tuning.journal import repair_cut_record
from td3x.tuning.scores import METRICS
from td3x.tuning.space import SearchSpace, load_space, space_path, space_problems, space_record
from td3x.tuning.study import (
    JOURNAL_FILE,
    LOCK_FILE,
    StudyRunner,
    StudySettings,
    finishing,
    fresh_evaluation,
    record_settings,
)
from td3x.tuning.summary import SUMMARY_DIR, write_summary

DEFAULT_PERCENTILE = 25.0  # the percentile pruner's kept top percent

log = logging.getLogger("td3x")


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="td3x-tune",
        takes_overrides=True,
        description="Search td3x's hyper-parameters with Optuna: each trial trains run.num_seeds seeds side by side "
        "and scores their mean; trials are pruned from their evaluations; a killed study resumes where it stopped "
        "when relaunched with the same command; the chosen config is then trained on fresh seeds.",
        formatter_class=HelpFormatter,
    )
    add_version_flag(parser)
    parser.add_argument("study_dir", type=_path, help="the study's dir (its name is the study's and the W&B group)")
    parser.add_argument(
        "overrides", nargs="*", metavar="OVERRIDE", help="td3x-train's overrides for every trial, e.g. run.num_seeds=3"
    )
    parser.add_argument("--search", default="td3_core", help="the search space: an option of conf/search/ or a file")
    parser.add_argument("--trials", type=int, default=20, help="trials in the study, across all its processes")
    parser.add_argument("--study-seed", type=int, default=0, help="seeds trial n's sampler with (seed, n)")
    parser.add_argument("--metric", default="mean_return", help="mean_return, final_return or last10_return")
    parser.add_argument("--sampler", choices=("tpe", "random"), default="tpe", help="Optuna's sampler")
    parser.add_argument("--pruner", choices=("median", "percentile", "none"), default="median", help="the pruner")
    parser.add_argument(
        "--percentile", type=float, help=f"the percentile pruner's kept top percent (default: {DEFAULT_PERCENTILE})"
    )
    parser.add_argument("--startup-trials", type=int, default=5, help="complete trials before any pruning")
    parser.add_argument("--warmup-steps", type=int, default=0, help="env steps of a trial before it may be pruned")
    parser.add_argument("--fresh-seeds", type=int, default=5, help="seeds the chosen config is trained on afresh")
    return parser


def _path(text: str) -> Path:
    """A study dir's path; an empty one (an unset shell variable) would be the working dir itself, and an override in
    its place (the dir left out) would become the study dir, and a line Hydra cannot parse once td3x-tune adds its
    W&B group (logging.group=run.total_steps=3000)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path: name the study's dir (it is created if missing)")
    if looks_like_override(text):
        raise argparse.ArgumentTypeError(
            f"missing: {text} is an override, and the study's dir comes first: td3x-tune STUDY_DIR [OVERRIDE ...]"
        )
    return user_path(text)


def _option_problems(args: argparse.Namespace, metrics: list[str]) -> list[str]:
    problems = []
    if args.metric not in metrics:
        close = difflib.get_close_matches(args.metric, metrics, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        problems.append(f"--metric {args.metric} is not a metric td3x logs: choose one of {', '.join(metrics)}{hint}")
    for option, value, least in (
        ("--trials", args.trials, 1),
        ("--study-seed", args.study_seed, 0),
        ("--startup-trials", args.startup_trials, 0),
        ("--warmup-steps", args.warmup_steps, 0),
        ("--fresh-seeds", args.fresh_seeds, 0),
    ):
        if value < least:
            problems.append(f"{option} {value} is not allowed: must be an integer >= {least}")
    if args.percentile is not None and not 0 < args.percentile < 100:
        problems.append(f"--percentile {args.percentile} is not allowed: must be in (0, 100)")
    if args.percentile is not None and args.pruner != "percentile":
        problems.append(f"--percentile is the percentile pruner's: it needs --pruner percentile, not {args.pruner}")
    return problems + _study_dir_problems(args.study_dir)


def _study_dir_problems(study_dir: Path) -> list[str]:
    """A study dir must be new, empty or a study's (another tool's dir would get trials mixed into its files), and
    writable."""
    if study_dir.exists() and not study_dir.is_dir():
        return [f"{study_dir} is a file, not a directory: name a study dir (it is created if missing)"]
    if study_dir.is_dir() and any(study_dir.iterdir()) and not (study_dir / LOCK_FILE).exists():
        return [f"{study_dir} holds files but no study: name a new or empty dir, or a study's dir to resume it"]
    found = unwritable_dir_problem(study_dir, f"the study dir {study_dir}")
    return [found] if found else []


def _base_config(overrides: list[str]) -> TrainConfig:
    config = compose_checked(overrides)
    refuse_unrunnable(config)  # as each trial's training will, but before the study dir is created
    return config


def _study_settings(args: argparse.Namespace, overrides: list[str], space: SearchSpace) -> StudySettings:
    return StudySettings(
        name=args.study_dir.resolve().name,
        search=args.search,
        space=space_record(space),
        overrides=overrides,
        trials=args.trials,
        seed=args.study_seed,
        metric=args.metric,
        sampler=args.sampler,
        pruner=args.pruner,
        percentile=DEFAULT_PERCENTILE if args.percentile is None else args.percentile,
        startup_trials=args.startup_trials,
        warmup_steps=args.warmup_steps,
        fresh_seeds=args.fresh_seeds,
    )


def checked_study(args: argparse.Namespace) -> tuple[StudySettings, SearchSpace, TrainConfig]:
    """Everything checked before anything is created (ConfigError, one line a problem): the options, the base
    config, the search space against the schema; then the study dir made and its settings recorded or compared."""
    overrides = list(args.overrides)
    if not any(line.lstrip("+").startswith("logging.group=") for line in overrides):
        # one W&B group per study; quoted: a study dir's name may hold what Hydra's grammar refuses bare (é, =, a comma)
        overrides.append(f"logging.group={hydra_text(args.study_dir.resolve().name)}")
    problems = _option_problems(args, list(METRICS))
    try:
        base = _base_config(overrides)
    except ConfigError as error:
        raise ConfigError(problems + error.problems) from error
    space = load_space(args.search)
    problems += space_problems(space, overrides, str(space_path(args.search)))
    if problems:
        raise ConfigError(problems)
    settings = _study_settings(args, overrides, space)
    args.study_dir.mkdir(parents=True, exist_ok=True)
    record_settings(args.study_dir, settings)
    return settings, space, base


def run_study(study_dir: Path, settings: StudySettings, space: SearchSpace, base: TrainConfig) -> int:
    """Train this process's share of the study; the process that sees it finished re-evaluates the choice on
    fresh seeds and writes the summary. The exit code: 0, or 1 when a signal stopped it (relaunch to resume)."""
    from td3x.training.loop import RunInterrupted  # training (and torch) loads where the study trains

    runner = StudyRunner(study_dir, settings, space, base)
    try:
        runner.run()
    except (RunInterrupted, KeyboardInterrupt) as error:
        print(f"tune stopped: {error}; relaunch the same command to resume the study", file=sys.stderr)
        return 1
    running = runner.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    if running:
        log.info("%d trial(s) still train in other processes: the last to finish writes the summary", len(running))
        return 0
    with finishing(study_dir) as chosen:
        if not chosen:
            log.info("another process is finishing the study: it re-evaluates the choice and writes the summary")
            return 0
        fresh = fresh_evaluation(runner)
        summary = write_summary(runner.study, study_dir, settings, fresh, base.run.num_seeds)
    log.info(
        "study %s: best trial %s, %s %s; summary in %s",
        settings.name,
        summary["best_trial"],
        settings.metric,
        summary["search_score"],
        study_dir / SUMMARY_DIR,
    )
    if summary["fresh"] is not None:
        low, high = summary["fresh"]["interval95"]
        log.info(
            "on fresh seeds %s: %.2f, 95%% interval [%.2f, %.2f]",
            summary["fresh"]["seeds"],
            summary["fresh"]["score"],
            low,
            high,
        )
    return 0


@quiet_on_closed_pipe
def main(argv: list[str] | None = None) -> None:
    """Console script ``td3x-tune``: check everything, then run (or resume, or join) the study and sum it up."""
    args = _parser().parse_intermixed_args(argv)
    try:
        settings, space, base = checked_study(args)
    except ConfigError as error:
        exit_with("config error", error.problems)
    log_to(args.study_dir / "tune.log")
    try:  # a relaunch after a crash: a record the crash cut would corrupt the journal at Optuna's next write
        repair_cut_record(args.study_dir / JOURNAL_FILE)
    except RunFileError as error:
        exit_with("td3x-tune", [str(error)])
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # td3x says one line per trial itself
    try:
        code = run_study(args.study_dir, settings, space, base)
    except RunFileError as error:  # the fresh seeds' eval.csv, or a trial's read while it trains, not a run's
        exit_with("td3x-tune", [str(error)], exit_code=1)
    sys.exit(code)


if __name__ == "__main__":
    main()
