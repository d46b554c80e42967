"""A study's loop on Optuna's ask/tell: each trial one process training K seeds stacked, scored by the mean over its
seeds of a metric of its evaluations, pruned from those evaluations, and resumed from its checkpoint after a kill.

Files of a study dir: ``study.journal`` (Optuna's JournalStorage: several processes or SLURM array jobs share it),
``study.yaml`` (the settings a relaunch must repeat), ``trial_<n>/`` (an ordinary run dir; ``seed_<k>/`` per seed
with K > 1), ``fresh_trial_<n>/`` (the chosen config on fresh seeds) and ``summary/``.

Liveness is td3x's own, as JournalStorage has no heartbeat: a RUNNING trial is dead when no process holds its run
dir's lock (:mod:`td3x.rundir.lock`, the lock training holds); it is then resumed under its own number. New trials
are drawn under a study-wide lock, so no process sees a trial before its params are drawn.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import yaml
from optuna.storages.journal import JournalFileBackend
from optuna.trial import FrozenTrial, TrialState

from td3x.config.hydra import ComposedConfig
from td3x.config.overrides import FREE_FORM, compose_checked
from td3x.config.schema import ConfigError, TrainConfig
from td3x.rundir.layout import RunFileError, read_yaml_mapping, seed_range, seed_run_dirs
from td3x.rundir.lock import ResumeError, exclusive, is_locked
from td3x.rundir.outputs import STUDY_FILE
from td3x.tuning.scores import METRICS, score_until
from td3x.tuning.space import SearchSpace, choice_label, override_value

log = logging.getLogger("td3x")

JOURNAL_FILE = "study.journal"
LOCK_FILE = "study.lock"
FINISH_LOCK_FILE = "summary.lock"
RUN_DIR_ATTR = "run_dir"  # a trial's run dir, relative to the study dir; set once its params are drawn


def _train(config: ComposedConfig, run_dir: Path, on_evaluation: EvaluationReporter | None = None) -> None:
    """Train ``config`` in ``run_dir`` as td3x-train does. Training, and torch (seconds to import), load here: a
    study refused before its first trial costs none."""
    from td3x.training.run import run

    run(config, run_dir, config.choices, on_evaluation=on_evaluation)


class TrialPruned(Exception):
    """Raised from a trial's evaluation callback: the pruner stopped it (its summary records this as the failure)."""


@dataclass(frozen=True)
class StudySettings:
    """What a study is: the same on every relaunch and in every process that works on it (``trials`` may grow)."""

    name: str  # the study's name: its dir's name, and the W&B group of its runs
    search: str  # the search space's option of conf/search/ or file
    space: dict[str, Any]  # the search space's entries as read
    overrides: list[str]  # td3x-train's overrides for every trial
    trials: int  # trials in the study, across all its processes
    seed: int  # the sampler's seed: trial n's sampler is seeded from (seed, n)
    metric: str  # mean_return | final_return | last10_return
    sampler: str  # tpe | random
    pruner: str  # median | percentile | none
    percentile: float  # the percentile pruner's kept top percentile
    startup_trials: int  # trials finished before the pruner prunes (Optuna's n_startup_trials)
    warmup_steps: int  # env steps of a trial before it may be pruned (Optuna's n_warmup_steps)
    fresh_seeds: int  # seeds the chosen config is trained on afresh after the search (0: none)

    def must_match(self) -> dict[str, Any]:
        """The settings a relaunch must repeat: all but the trial count and the fresh seeds."""
        fields = dataclasses.asdict(self)
        return {key: value for key, value in fields.items() if key not in ("trials", "fresh_seeds")}


def make_sampler(settings: StudySettings, trial_number: int) -> optuna.samplers.BaseSampler:
    """Trial ``trial_number``'s sampler, seeded from (study seed, trial number): a relaunched study draws the same
    trials as an uninterrupted one (a sampler seeded once would restart its stream with each process)."""
    seed = int(np.random.SeedSequence([settings.seed, trial_number]).generate_state(1)[0])
    if settings.sampler == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.TPESampler(seed=seed, constant_liar=True)  # liar: parallel processes draw apart


def make_pruner(settings: StudySettings) -> optuna.pruners.BasePruner:
    if settings.pruner == "none":
        return optuna.pruners.NopPruner()
    common = {"n_startup_trials": settings.startup_trials, "n_warmup_steps": settings.warmup_steps}
    if settings.pruner == "percentile":
        return optuna.pruners.PercentilePruner(settings.percentile, **common)
    return optuna.pruners.MedianPruner(**common)


def open_study(study_dir: Path, settings: StudySettings) -> optuna.Study:
    """Create or load the study in ``study_dir``'s journal (the default symlink lock also suits NFS)."""
    backend = JournalFileBackend(str(study_dir / JOURNAL_FILE))
    return optuna.create_study(
        storage=optuna.storages.JournalStorage(backend),
        study_name=settings.name,
        direction="maximize",
        load_if_exists=True,
        sampler=make_sampler(settings, 0),
        pruner=make_pruner(settings),
    )


@contextlib.contextmanager
def study_lock(study_dir: Path) -> Iterator[None]:
    """One process at a time draws a trial or claims a dead one (blocking: the others wait a moment)."""
    descriptor = os.open(study_dir / LOCK_FILE, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def finishing(study_dir: Path) -> Iterator[bool]:
    """Whether this process is the one to re-evaluate the choice and write the summary (the first to ask, while it
    works: another finishing at the same moment leaves it to this one)."""
    descriptor = os.open(study_dir / FINISH_LOCK_FILE, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(descriptor)


@dataclass
class Claim:
    """A trial this process trains: a new one, or a dead one resumed under its own number. Its run dir's lock is
    taken under the study's lock and held until its outcome is told: no other process sees it dead meanwhile."""

    trial: optuna.trial.Trial
    params: dict[str, Any]
    run_dir: Path
    reported: set[int]  # env steps already reported (by the process that was killed)
    lock: contextlib.ExitStack = dataclasses.field(default_factory=contextlib.ExitStack)

    def __post_init__(self) -> None:
        self.lock.enter_context(exclusive(self.run_dir))


class StudyRunner:
    """The loop of one process over a study: claim a trial, train it, tell its score, until the study is full."""

    def __init__(self, study_dir: Path, settings: StudySettings, space: SearchSpace, base: TrainConfig) -> None:
        self.study_dir, self.settings, self.space, self.base = study_dir, settings, space, base
        self.study = open_study(study_dir, settings)

    def run(self) -> None:
        """Train trials until the study holds ``settings.trials`` trials (failed ones count: a space whose every
        draw fails ends) and none of them is left dead."""
        while (claim := self.claim()) is not None:
            with claim.lock:
                self.train(claim)

    # ------------------------------------------------------------------ claiming
    def claim(self) -> Claim | None:
        with study_lock(self.study_dir):
            trials = self.study.get_trials(deepcopy=False)
            for frozen in trials:
                if frozen.state is TrialState.RUNNING:
                    claim = self._claim_dead(frozen)
                    if claim is not None:
                        return claim
            return self._draw() if len(trials) < self.settings.trials else None

    def _claim_dead(self, frozen: FrozenTrial) -> Claim | None:
        if RUN_DIR_ATTR not in frozen.user_attrs:  # its process died while drawing it (under this very lock)
            self.study.tell(frozen.number, state=TrialState.FAIL)
            return None
        run_dir = self.study_dir / frozen.user_attrs[RUN_DIR_ATTR]
        if is_locked(run_dir):  # its process trains it, or has yet to tell its outcome
            return None
        # Optuna has no public way to reopen a RUNNING trial in another process: Trial(study, id) is its constructor
        trial = optuna.trial.Trial(self.study, frozen._trial_id)
        try:
            claim = Claim(trial, dict(frozen.params), run_dir, set(frozen.intermediate_values))
        except ResumeError:  # a process outside the study took its dir since the probe
            return None
        log.info("trial %d: its process is gone; resuming it from its checkpoint in %s", frozen.number, run_dir)
        return claim

    def _draw(self) -> Claim:
        trial = self.study.ask()
        self.study.sampler = make_sampler(self.settings, trial.number)  # consulted at each suggest below
        params = {key: self._suggest(trial, key) for key in self.space}
        run_dir = self.study_dir / f"trial_{trial.number}"
        trial.set_user_attr(RUN_DIR_ATTR, run_dir.name)
        return Claim(trial, params, run_dir, set())

    def _suggest(self, trial: optuna.trial.Trial, key: str) -> Any:
        distribution = self.space[key].optuna_distribution()
        if isinstance(distribution, optuna.distributions.CategoricalDistribution):
            return trial.suggest_categorical(key, distribution.choices)
        if isinstance(distribution, optuna.distributions.IntDistribution):
            return trial.suggest_int(key, distribution.low, distribution.high)
        assert isinstance(distribution, optuna.distributions.FloatDistribution)
        return trial.suggest_float(key, distribution.low, distribution.high, log=distribution.log)

    # ------------------------------------------------------------------ training
    def trial_overrides(self, params: dict[str, Any]) -> list[str]:
        """td3x-train's overrides of a trial: the study's, then the drawn values (lists as their override text)."""
        drawn = [
            f"{'+' if key.startswith(FREE_FORM) else ''}{key}={override_value(choice_label(value))}"
            for key, value in params.items()
        ]
        return [*self.settings.overrides, *drawn]

    def train(self, claim: Claim) -> None:
        """Train a claimed trial and tell its outcome. A signal (RunInterrupted) passes through: the trial stays
        RUNNING, and a relaunch resumes it."""
        from td3x.training.loop import TrainingError  # training (and torch) loads where a trial trains

        number = claim.trial.number
        try:
            config = compose_checked(self.trial_overrides(claim.params))
        except ConfigError as error:  # a combination of values td3x refuses, though each alone is allowed
            self._tell_failed(claim, "; ".join(error.problems))
            return
        seed_dirs = seed_run_dirs(claim.run_dir, config.seed, config.run.num_seeds)
        reporter = EvaluationReporter(claim, seed_dirs, self.settings.metric, config.update_start)
        try:
            _train(config, claim.run_dir, reporter)
        except TrialPruned as pruned:
            self.study.tell(claim.trial, state=TrialState.PRUNED)
            log.info("trial %d pruned: %s", number, pruned)
            return
        # ConfigError: drawn values this machine cannot run; ResumeError: the trial's dir holds another config's run
        except (TrainingError, ConfigError, ResumeError) as error:
            self._tell_failed(claim, "; ".join(getattr(error, "problems", [str(error)])))
            return
        try:
            score = float(np.mean([score_until(d, self.settings.metric, None) for d in seed_dirs]))
        except RunFileError as error:  # an eval.csv that cannot be the trial's evaluations: no score to give
            self._tell_failed(claim, str(error))
            return
        self.study.tell(claim.trial, score)
        log.info("trial %d complete: %s %.2f with %s", number, self.settings.metric, score, claim.params)

    def _tell_failed(self, claim: Claim, why: str) -> None:
        with contextlib.suppress(OSError):  # refused before training: the dir the claim's lock made stays empty
            claim.run_dir.rmdir()
        claim.trial.set_user_attr("failure", why)
        self.study.tell(claim.trial, state=TrialState.FAIL)
        log.warning("trial %d failed: %s", claim.trial.number, why)


class EvaluationReporter:
    """The trial's evaluation callback: reports the running score (the metric over the evaluations so far, mean
    over seeds) at each evaluation's env step, and raises :class:`TrialPruned` when the pruner says so.

    Evaluations before the first update (step 0 and the random warm-up, up to ``update_start``) are left
    unreported: they score the untrained actor, the same in every trial of the same seeds and network sizes, and
    Optuna's pruners compare a trial's best reported value with the others' current ones, so a shared early value
    would shelter every trial whose running score then falls.
    """

    def __init__(self, claim: Claim, seed_dirs: list[Path], metric: str, update_start: int) -> None:
        self.claim, self.seed_dirs, self.metric, self.update_start = claim, seed_dirs, metric, update_start
        assert metric in METRICS

    def __call__(self, step: int, mean_returns: list[float]) -> None:
        if step <= self.update_start:  # no update yet: the env steps before update_start earn none
            return
        trial = self.claim.trial
        score = float(np.mean([score_until(d, self.metric, step) for d in self.seed_dirs]))
        if step not in self.claim.reported:  # a resumed trial evaluates again the steps after its checkpoint
            trial.report(score, step)
            self.claim.reported.add(step)
        if trial.should_prune():
            raise TrialPruned(f"trial {trial.number} at env step {step}: running {self.metric} {score:.2f}")


def fresh_evaluation(runner: StudyRunner) -> dict[str, Any] | None:
    """Train the best trial's config on ``fresh_seeds`` seeds none of the trials used (the K seeds after the
    trials' own), in ``fresh_trial_<n>``: picking the best of many noisy trials overestimates it, a fresh draw
    does not. None when there is no complete trial, or no fresh seeds are asked for; each seed's score otherwise."""
    settings, base = runner.settings, runner.base
    complete = runner.study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    if not complete or settings.fresh_seeds == 0:
        return None
    best = runner.study.best_trial
    fresh_range = seed_range(seed_range(base.seed, base.run.num_seeds).stop, settings.fresh_seeds)
    overrides = [
        *runner.trial_overrides(best.params),
        f"seed={fresh_range[0]}",
        f"run.num_seeds={settings.fresh_seeds}",
    ]
    config = compose_checked(overrides)
    run_dir = runner.study_dir / f"fresh_trial_{best.number}"
    log.info(
        "training trial %d's config on fresh seeds %d-%d",
        best.number,
        fresh_range[0],
        fresh_range[-1],
    )
    _train(config, run_dir)
    seed_dirs = seed_run_dirs(run_dir, config.seed, config.run.num_seeds)
    return {
        "trial": best.number,
        "run_dir": run_dir.name,
        "seeds": list(fresh_range),
        "scores": [score_until(d, settings.metric, None) for d in seed_dirs],
        "overrides": overrides,
    }


def record_settings(study_dir: Path, settings: StudySettings) -> None:
    """Write ``study.yaml`` for a new study; for an existing one, refuse other settings (ConfigError, one line
    naming each differing setting): a study's trials compare only under one space, base config and metric."""
    path = study_dir / STUDY_FILE
    with study_lock(study_dir):
        if not path.exists():
            path.write_text(yaml.safe_dump(dataclasses.asdict(settings), sort_keys=False))
            return
    try:
        stored = StudySettings(**read_yaml_mapping(path))
    except (RunFileError, TypeError) as error:
        raise ConfigError([f"{path} is not a td3x-tune study's settings: {error}"]) from error
    old, new = stored.must_match(), settings.must_match()
    differing = [f"{key}: {old[key]!r} (study) vs {new[key]!r} (now)" for key in old if old[key] != new[key]]
    if differing:
        raise ConfigError(
            [
                f"{study_dir} holds a study with other settings ({'; '.join(differing)}): relaunch it with its own "
                "settings, or choose another study dir"
            ]
        )
