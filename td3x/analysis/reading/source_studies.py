"""The numbers of the seed-sources section (``sections.seed_sources``, ``+experiment=seed_study``): which source of
randomness makes the spread of results across seeds. (How much one config spreads, in any cell with many seeds, is
``seed_spread``'s.)

A study's runs carry their condition in ``config.yaml``'s ``choices`` (the ``seed_study`` group option): per source,
runs where only that source varies; ``all_vary``, the usual spread; ``evaluation``, one run evaluated from N sets of
start states (``seeds.evaluation_sets``); ``repeat_1``/``repeat_2``, one seed twice (the determinism control).
Per condition and statistic (each run's mean return over its evaluations after step 0, and its final return): the SD
across runs with its 95% chi-square interval, its ratio to all-vary's with the F interval
(``stats.spread_tests.sd_interval``, ``stats.spread_tests.ratio_interval``), the Brown-Forsythe test of equal spread
with all-vary, and the runs marked as outliers (more than OUTLIER_MADS scaled MADs below their condition's median;
Bjorck et al.'s runs "far below the rest") or as ending below their step-0 evaluation; the section's text says each
in full.

A folder may hold several studies of one env (the experiment's sweep dir is literal): studies with other group
options (``agent``, ``noise``) or another ``paper_row`` stay apart, as the report's rows do. Two *launches* with the
same options but other settings (``run.total_steps``, N, the job's seed, any other key) would mix their conditions
in one row each, so the report refuses them with one line that says how to separate them (:func:`check_launches`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from td3x.analysis.reading.cells import STUDY_GROUP, differing, result_keys
from td3x.analysis.reading.runs import Run
from td3x.analysis.stats.spread_tests import Spread, spread_against

ALL_VARY = "all_vary"
EVALUATION = "evaluation"
REPEAT = "repeat"  # repeat_1, repeat_2: one condition, the determinism control
SOURCES = ("weights", "env", "warmup", "exploration", "replay", "smoothing")  # a condition each, pinning the others
# the conditions in display order: the all-vary reference, each training source, measurement, the control
CONDITIONS = (ALL_VARY, *SOURCES, EVALUATION, REPEAT)
SOURCE_KEYS = frozenset(f"seeds.{source}" for source in SOURCES)  # what tells a launch's conditions apart
STATISTICS = {"mean_over_run": "mean return over the run", "final": "final return"}
OUTLIER_MADS = 3.0  # a run this many scaled MADs (1.4826·MAD ≈ SD for normal data) below its condition's median
SET_COLUMN = "return_mean_set_"  # eval.csv's columns of evaluation sets 1.. (set 0 is return_mean)


@dataclass(frozen=True)
class Sample:
    """One measured curve of a condition: a run's, or one evaluation set of the evaluation run.

    Attributes:
        label: the run dir, with ``[set j]`` for an evaluation set.
        steps: the evaluation steps.
        returns: the mean evaluation return at each.
        outlier: whether its final return is an outlier of its condition (see the module doc).
    """

    label: str
    steps: np.ndarray
    returns: np.ndarray
    outlier: bool = False

    @property
    def below_start(self) -> bool:
        """Whether the final return is lower than the step-0 one (the untrained policy's): the run ended below its
        step-0 evaluation (a rule added after seeing the first seed study's runs)."""
        return bool(self.steps[0] == 0 and len(self.returns) > 1 and self.returns[-1] < self.returns[0])

    def value(self, statistic: str) -> float:
        """The sample's ``mean_over_run`` (evaluations after step 0) or ``final`` return."""
        later = self.returns[self.steps > 0]
        return float(self.returns[-1] if statistic == "final" else (later.mean() if len(later) else np.nan))

    def same_as(self, other: Sample) -> bool:
        """Whether the two curves are bit for bit the same (every step and every evaluation return)."""
        return bool(np.array_equal(self.steps, other.steps) and np.array_equal(self.returns, other.returns))


def bit_identical(samples: list[Sample]) -> bool:
    """Whether every sample is bit for bit the first (the determinism control)."""
    return len(samples) > 1 and all(samples[0].same_as(sample) for sample in samples[1:])


@dataclass(frozen=True, eq=False)
class SourceStudy:
    """The seed study of one env.

    Attributes:
        env_id: the env.
        label: the study's name in headings and file names: the env id, followed by what sets it apart when the
            folder holds several studies of that env (another agent, row, or number of steps).
        samples: per condition present, its samples.
        spreads: per (condition, statistic), its spread.
        left_out: the runs not used, each with its reason.
        measurement_sd: per statistic, the SD across evaluation sets within a run, pooled over every complete run
            with several sets (root of the mean within-run variance); NaN when no run has several.
        measurement_df: the degrees of freedom of that pooled variance (each run's sets less one, summed).
    """

    env_id: str
    label: str
    samples: dict[str, list[Sample]]
    spreads: dict[tuple[str, str], Spread]
    left_out: list[str]
    measurement_sd: dict[str, float]
    measurement_df: int = 0


def condition(run: Run) -> str | None:
    """The run's seed-study condition, or None when it belongs to no study."""
    option = (run.config.get("choices") or {}).get(STUDY_GROUP)
    if option is None:
        return None
    return REPEAT if str(option).startswith(REPEAT) else str(option)


class MixedLaunchesError(ValueError):
    """Runs of several launches of one study that the report's rows cannot tell apart (see the module doc)."""


def check_launches(runs: list[Run]) -> None:
    """Refuse a study whose runs come from several launches, before any number is computed.

    Raises:
        MixedLaunchesError: one line: which launches, and how to separate them.
    """
    for setting_runs in _by_setting(runs).values():
        _check_one_launch(setting_runs)


def study_sources(runs: list[Run]) -> list[SourceStudy]:
    """One study per env and options (agent, noise, row: runs of other options are not each other's controls)
    whose runs hold an all-vary condition and at least one other; none without a study (the launches checked by
    :func:`check_launches`)."""
    by_setting = _by_setting(runs)
    per_env = Counter(setting[0] for setting in by_setting)
    studies = [
        _study(setting[0], _label(setting, per_env[setting[0]] > 1), setting_runs)
        for setting, setting_runs in by_setting.items()
    ]
    return [study for study in studies if ALL_VARY in study.samples and len(study.samples) > 1]


def _by_setting(runs: list[Run]) -> dict[tuple[str, ...], list[Run]]:
    """The runs of a study by what sets the study apart (``_setting``)."""
    by_setting: dict[tuple[str, ...], list[Run]] = {}
    for run in runs:
        if condition(run) is not None:
            by_setting.setdefault(_setting(run), []).append(run)
    return by_setting


def _setting(run: Run) -> tuple[str, ...]:
    """What sets a study apart in the report's rows too: env, agent and noise options, and row."""
    choices = run.config.get("choices") or {}
    return (run.env_id, str(choices.get("agent")), str(choices.get("noise")), run.paper_row)


def _label(setting: tuple[str, ...], several: bool) -> str:
    env_id, agent, noise, row = setting
    return f"{env_id} {row} agent={agent} noise={noise}" if several else env_id


def _check_one_launch(runs: list[Run]) -> None:
    """Refuse runs of one study's setting that come from several launches: other result keys besides the
    sources' seeds, another N, or a condition's jobs starting at other seeds (``_launch_seeds``)."""
    job_dirs = {run: run.path.parent if run.num_seeds > 1 else run.path for run in runs}
    launch_seeds = _launch_seeds(job_dirs)
    launches: dict[tuple[tuple[str, str], ...], set[Path]] = {}
    for run, job_dir in job_dirs.items():
        keys = {key: value for key, value in result_keys(run).items() if key not in SOURCE_KEYS}
        keys["seeds.evaluation_sets"] = str((run.config.get("seeds") or {}).get("evaluation_sets"))  # N
        keys["seed"] = launch_seeds[job_dir]
        launches.setdefault(tuple(sorted(keys.items())), set()).add(job_dir)
    if len(launches) > 1:
        shown = sorted(differing([dict(launch) for launch in launches]))
        described = "; ".join(
            f"{', '.join(f'{key}={dict(launch).get(key)}' for key in shown)}: {len(dirs)} job dirs such as {min(dirs)}"
            for launch, dirs in launches.items()
        )
        raise MixedLaunchesError(
            f"the seed study of {runs[0].paper_row} on {runs[0].env_id} has runs of {len(launches)} launches that "
            f"its rows would mix ({described}): report one launch at a time by giving td3x-report its job dirs "
            "(td3x-report DIR [DIR ...]), or move the other launches' job dirs out of the folder"
        )


def _launch_seeds(job_dirs: dict[Run, Path]) -> dict[Path, str]:
    """Per job dir, the first seeds of the launch it belongs to, as far as seeds tell launches apart.

    A condition's job dirs that start at other seeds are other launches (the k-th smallest first seed of each
    condition: the k-th launch). Conditions of one launch may start at their own seeds: the registered study's
    jobs start at 3000, 3100 and 3200, one a condition, and are one launch with the seeds "3000,3100,3200".
    """
    first_seed: dict[Path, int] = {}
    for run, job_dir in job_dirs.items():
        first_seed[job_dir] = min(first_seed.get(job_dir, run.seed), run.seed)
    by_condition: dict[str | None, set[int]] = {}
    for run, job_dir in job_dirs.items():
        by_condition.setdefault(condition(run), set()).add(first_seed[job_dir])
    rank = {
        job_dir: sorted(by_condition[condition(run)]).index(first_seed[job_dir]) for run, job_dir in job_dirs.items()
    }
    seeds_of_rank: dict[int, set[int]] = {}
    for job_dir, k in rank.items():
        seeds_of_rank.setdefault(k, set()).add(first_seed[job_dir])
    return {job_dir: ",".join(map(str, sorted(seeds_of_rank[k]))) for job_dir, k in rank.items()}


def _study(env_id: str, label: str, runs: list[Run]) -> SourceStudy:
    samples: dict[str, list[Sample]] = {}
    left_out = [f"{run.path}: {run.problem}" for run in runs if run.problem is not None]
    for run in (run for run in runs if run.problem is None):
        name = condition(run)
        assert name is not None
        samples.setdefault(name, []).extend(_run_samples(run, every_set=name == EVALUATION))
    samples = {name: _mark_outliers(samples[name]) for name in CONDITIONS if name in samples}
    spreads = {
        (name, statistic): _spread(condition_samples, samples.get(ALL_VARY, []), statistic)
        for name, condition_samples in samples.items()
        for statistic in STATISTICS
    }
    complete = [run for run in runs if run.problem is None]
    dof = sum(len(_sets(run)) for run in complete)  # a run with k sets besides set 0 gives k degrees of freedom
    return SourceStudy(env_id, label, samples, spreads, left_out, _measurement_sd(complete), dof)


def _run_samples(run: Run, every_set: bool) -> list[Sample]:
    """The run's curve; with ``every_set``, one per evaluation set (the evaluation condition's N measurements)."""
    samples = [Sample(str(run.path), run.steps, run.returns)]
    if every_set:
        samples += [
            Sample(f"{run.path} [set {j}]", run.steps, run.evals[column].to_numpy(float)) for j, column in _sets(run)
        ]
    return samples


def _sets(run: Run) -> list[tuple[int, str]]:
    """(j, column) of the run's evaluation sets 1.. in eval.csv."""
    columns = [str(column) for column in run.evals.columns if str(column).startswith(SET_COLUMN)]
    return sorted((int(column.removeprefix(SET_COLUMN)), column) for column in columns)


def _mark_outliers(samples: list[Sample]) -> list[Sample]:
    finals = np.array([sample.value("final") for sample in samples])
    median = np.median(finals)
    scale = 1.4826 * np.median(np.abs(finals - median))
    below = median - finals
    flags = below > OUTLIER_MADS * scale if scale > 0 else np.zeros(len(finals), dtype=bool)
    return [Sample(s.label, s.steps, s.returns, bool(flag)) for s, flag in zip(samples, flags, strict=True)]


def _spread(samples: list[Sample], reference: list[Sample], statistic: str) -> Spread:
    values = np.array([sample.value(statistic) for sample in samples])
    base = np.array([sample.value(statistic) for sample in reference])
    return spread_against(values, base, is_reference=samples is reference)


def _measurement_sd(runs: list[Run]) -> dict[str, float]:
    variances: dict[str, list[float]] = {statistic: [] for statistic in STATISTICS}
    for run in runs:
        if not _sets(run):
            continue
        sets = _run_samples(run, every_set=True)
        for statistic in STATISTICS:
            variances[statistic].append(float(np.var([s.value(statistic) for s in sets], ddof=1)))
    return {name: math.sqrt(np.mean(values)) if values else math.nan for name, values in variances.items()}
