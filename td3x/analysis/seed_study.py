"""What a seed study shows (``+experiment=seed_study``): how much of the spread of results across seeds each source of
randomness causes.

A study's runs carry their condition in ``config.yaml``'s ``choices`` (the ``seed_study`` group option): per source,
runs where only that source varies; ``all_vary``, the usual spread; ``evaluation``, one run evaluated from N sets of
start states (``seeds.evaluation_sets``); ``repeat_1``/``repeat_2``, one seed twice (the determinism control).

Per condition and statistic (each run's mean return over its evaluations after step 0, and its final return):
the standard deviation across runs with a 95% chi-square interval (exact for normal data:
s·sqrt((n-1)/χ²(0.975, n-1)) .. s·sqrt((n-1)/χ²(0.025, n-1))); its ratio to the all-vary SD with the 95% F interval of
a ratio of two normal SDs; and the Brown-Forsythe test (Levene's test on deviations from the median,
``scipy.stats.levene(center="median")``) of equal spread with all-vary. A run is an *outlier* when its final return
lies more than OUTLIER_MADS scaled median absolute deviations below its condition's median (Bjorck et al.'s runs "far
below the rest"); outliers are marked, not removed. A run ends *below its start* when its final return is lower than
its own step-0 return, the untrained policy's (a run that unlearned, whatever its condition's spread: the MAD rule
misses such a run when the other runs spread widely); marked too. Failed and unfinished runs are listed and left
out.

A folder may hold several studies of one env (the experiment's sweep dir is literal): studies with other group
options (``agent``, ``noise``) or another ``paper_row`` stay apart, as the report's rows do. Two *launches* with the
same options but other settings (``run.total_steps``, N, the job's seed, any other key) would mix their conditions
in one row each, so the report refuses them with one line that says how to separate them
(:class:`MixedLaunchesError`).
"""

from __future__ import annotations

import math
import re
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from scipy import stats

from td3x.analysis import tables
from td3x.analysis.cells import STUDY_GROUP, differing, result_keys
from td3x.analysis.runs import Run

ALL_VARY = "all_vary"
EVALUATION = "evaluation"
REPEAT = "repeat"  # repeat_1, repeat_2: one condition, the determinism control
SOURCES = ("weights", "env", "warmup", "exploration", "replay", "smoothing")  # a condition each, pinning the others
# the conditions in display order: the all-vary reference, each training source, measurement, the control
CONDITIONS = (ALL_VARY, *SOURCES, EVALUATION, REPEAT)
SOURCE_KEYS = frozenset(f"seeds.{source}" for source in SOURCES)  # what tells a launch's conditions apart
STATISTICS = {"mean_over_run": "mean return over the run", "final": "final return"}
OUTLIER_MADS = 3.0  # a run this many scaled MADs (1.4826·MAD ≈ SD for normal data) below its condition's median
CONFIDENCE = 0.95
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
        """Whether the final return is lower than the step-0 one (the untrained policy's): the run unlearned."""
        return bool(self.steps[0] == 0 and len(self.returns) > 1 and self.returns[-1] < self.returns[0])

    def value(self, statistic: str) -> float:
        """The sample's ``mean_over_run`` (evaluations after step 0) or ``final`` return."""
        later = self.returns[self.steps > 0]
        return float(self.returns[-1] if statistic == "final" else (later.mean() if len(later) else np.nan))


@dataclass(frozen=True)
class Spread:
    """One condition's spread of one statistic, beside all-vary's."""

    n: int
    mean: float
    sd: float
    sd_interval: tuple[float, float]
    ratio: float  # sd / all-vary's sd
    ratio_interval: tuple[float, float]
    p_value: float  # Brown-Forsythe against all-vary (NaN for all-vary itself or without spread)


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
    """

    env_id: str
    label: str
    samples: dict[str, list[Sample]]
    spreads: dict[tuple[str, str], Spread]
    left_out: list[str]
    measurement_sd: dict[str, float]


def condition(run: Run) -> str | None:
    """The run's seed-study condition, or None when it belongs to no study."""
    option = (run.config.get("choices") or {}).get(STUDY_GROUP)
    if option is None:
        return None
    return REPEAT if str(option).startswith(REPEAT) else str(option)


class MixedLaunchesError(ValueError):
    """Runs of several launches of one study that the report's rows cannot tell apart (see the module doc)."""


def study_sources(runs: list[Run]) -> list[SourceStudy]:
    """One study per env and options (agent, noise, row: runs of other options are not each other's controls)
    whose runs hold an all-vary condition and at least one other; none without a study.

    Args:
        runs: every run found.

    Raises:
        MixedLaunchesError: a study's runs come from several launches (one line: which, and how to separate them).
    """
    by_setting: dict[tuple[str, ...], list[Run]] = {}
    for run in runs:
        if condition(run) is not None:
            by_setting.setdefault(_setting(run), []).append(run)
    for setting_runs in by_setting.values():
        _check_one_launch(setting_runs)
    per_env = Counter(setting[0] for setting in by_setting)
    studies = [
        _study(setting[0], _label(setting, per_env[setting[0]] > 1), setting_runs)
        for setting, setting_runs in by_setting.items()
    ]
    return [study for study in studies if ALL_VARY in study.samples and len(study.samples) > 1]


def _setting(run: Run) -> tuple[str, ...]:
    """What sets a study apart in the report's rows too: env, agent and noise options, and row."""
    choices = run.config.get("choices") or {}
    return (run.env_id, str(choices.get("agent")), str(choices.get("noise")), run.paper_row)


def _label(setting: tuple[str, ...], several: bool) -> str:
    env_id, agent, noise, row = setting
    return f"{env_id} {row} agent={agent} noise={noise}" if several else env_id


def _check_one_launch(runs: list[Run]) -> None:
    """Refuse runs of one study's setting that come from several launches: other result keys besides the
    sources' seeds, another N, or another first seed of the job."""
    job_dirs = {run: run.path.parent if run.num_seeds > 1 else run.path for run in runs}
    first_seed: dict[Path, int] = {}
    for run, job_dir in job_dirs.items():
        first_seed[job_dir] = min(first_seed.get(job_dir, run.seed), run.seed)
    launches: dict[tuple[tuple[str, str], ...], set[Path]] = {}
    for run, job_dir in job_dirs.items():
        keys = {key: value for key, value in result_keys(run).items() if key not in SOURCE_KEYS}
        keys["seeds.evaluation_sets"] = str((run.config.get("seeds") or {}).get("evaluation_sets"))  # N
        keys["seed"] = str(first_seed[job_dir])
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
    return SourceStudy(env_id, label, samples, spreads, left_out, _measurement_sd(complete))


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


def sd_interval(sd: float, n: int) -> tuple[float, float]:
    """The 95% chi-square interval of a normal population's SD from a sample SD ``sd`` of ``n`` values."""
    if n < 2:
        return (math.nan, math.nan)
    alpha = 1 - CONFIDENCE
    dof = n - 1
    return (
        sd * math.sqrt(dof / stats.chi2.ppf(1 - alpha / 2, dof)),
        sd * math.sqrt(dof / stats.chi2.ppf(alpha / 2, dof)),
    )


def ratio_interval(ratio: float, n: int, m: int) -> tuple[float, float]:
    """The 95% interval of σ_1/σ_2 from a sample SD ratio of ``n`` and ``m`` normal values (F distribution)."""
    if n < 2 or m < 2:
        return (math.nan, math.nan)
    alpha = 1 - CONFIDENCE
    high, low = stats.f.ppf(1 - alpha / 2, n - 1, m - 1), stats.f.ppf(alpha / 2, n - 1, m - 1)
    return (ratio / math.sqrt(high), ratio / math.sqrt(low))


def _spread(samples: list[Sample], reference: list[Sample], statistic: str) -> Spread:
    values = np.array([sample.value(statistic) for sample in samples])
    base = np.array([sample.value(statistic) for sample in reference])
    sd = float(values.std(ddof=1)) if len(values) > 1 else math.nan
    base_sd = float(base.std(ddof=1)) if len(base) > 1 else math.nan
    ratio = sd / base_sd if base_sd > 0 else math.nan
    p_value = math.nan
    if samples is not reference and len(values) > 1 and len(base) > 1:
        with warnings.catch_warnings():  # two groups without spread: scipy warns and returns NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            p_value = float(stats.levene(values, base, center="median").pvalue)
    return Spread(
        len(values),
        float(values.mean()),
        sd,
        sd_interval(sd, len(values)),
        ratio,
        ratio_interval(ratio, len(values), len(base)),
        p_value,
    )


def _measurement_sd(runs: list[Run]) -> dict[str, float]:
    variances: dict[str, list[float]] = {statistic: [] for statistic in STATISTICS}
    for run in runs:
        if not _sets(run):
            continue
        sets = _run_samples(run, every_set=True)
        for statistic in STATISTICS:
            variances[statistic].append(float(np.var([s.value(statistic) for s in sets], ddof=1)))
    return {name: math.sqrt(np.mean(values)) if values else math.nan for name, values in variances.items()}


# ---------------------------------------------------------------------------------------------------- tables
def _interval_text(interval: tuple[float, float]) -> str:
    return f"[{interval[0]:.3g}, {interval[1]:.3g}]"


def spread_frame(studies: list[SourceStudy]) -> pd.DataFrame:
    """``seed_sources.csv``: per env, condition and statistic, the spread, its interval, the ratio and the test."""
    rows = []
    for study in studies:
        for (name, statistic), spread in study.spreads.items():
            samples = study.samples[name]
            rows.append(
                {
                    "env": study.env_id,
                    "study": study.label,
                    "condition": name,
                    "statistic": statistic,
                    "n": spread.n,
                    "mean": spread.mean,
                    "sd": spread.sd,
                    "sd_low": spread.sd_interval[0],
                    "sd_high": spread.sd_interval[1],
                    "ratio_to_all_vary": spread.ratio,
                    "ratio_low": spread.ratio_interval[0],
                    "ratio_high": spread.ratio_interval[1],
                    "brown_forsythe_p": spread.p_value,
                    "outliers": sum(sample.outlier for sample in samples),
                    "below_start": sum(sample.below_start for sample in samples),
                }
            )
    return pd.DataFrame(rows)


def samples_frame(studies: list[SourceStudy]) -> pd.DataFrame:
    """``seed_sources_runs.csv``: every sample's two statistics and its outlier and below-start marks."""
    rows = [
        {
            "env": study.env_id,
            "study": study.label,
            "condition": name,
            "run": sample.label,
            **{s: sample.value(s) for s in STATISTICS},
        }
        | {"outlier": sample.outlier, "below_start": sample.below_start}
        for study in studies
        for name, samples in study.samples.items()
        for sample in samples
    ]
    return pd.DataFrame(rows)


def display_frame(study: SourceStudy) -> pd.DataFrame:
    """The section's table of one env: per condition, each statistic's SD [interval], ratio [interval] and p."""
    rows = {}
    for name in study.samples:
        row: dict[str, str] = {"runs": str(study.spreads[(name, "final")].n)}
        for statistic in STATISTICS:
            spread = study.spreads[(name, statistic)]
            row[f"{statistic}: SD [95%]"] = f"{spread.sd:.3g} {_interval_text(spread.sd_interval)}"
            row[f"{statistic}: ratio [95%]"] = f"{spread.ratio:.2f} {_interval_text(spread.ratio_interval)}"
            row[f"{statistic}: p"] = "n/a" if math.isnan(spread.p_value) else f"{spread.p_value:.3f}"
        row["outliers"] = str(sum(sample.outlier for sample in study.samples[name]))
        row["below start"] = str(sum(sample.below_start for sample in study.samples[name]))
        rows[name] = row
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "condition"
    return frame


# ---------------------------------------------------------------------------------------------------- plots
def plot_study(study: SourceStudy, directory: Path) -> list[Path]:
    """The learning curves of each condition side by side, and a strip and box plot of each statistic per
    condition; outliers in red. Returns the PNG files written.

    Args:
        study: one env's study.
        directory: where the PNG files go.
    """
    directory.mkdir(parents=True, exist_ok=True)
    return [
        _curves_png(study, directory / f"seed_sources_curves_{_file_name(study)}.png"),
        _strip_png(study, directory),
    ]


def _file_name(study: SourceStudy) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", study.label)


def _curves_png(study: SourceStudy, path: Path) -> Path:
    names = list(study.samples)
    columns = min(len(names), 5)
    rows = math.ceil(len(names) / columns)
    figure, axes = plt.subplots(
        rows, columns, figsize=(3.2 * columns, 2.6 * rows), sharex=True, sharey=True, squeeze=False
    )
    for ax, name in zip(axes.ravel(), names, strict=False):
        for sample in study.samples[name]:
            style = "--" if sample.below_start else "-"
            color = "tab:red" if sample.outlier else "tab:blue"
            ax.plot(sample.steps, sample.returns, style, color=color, alpha=0.7, lw=1)
        ax.set_title(f"{name} ({len(study.samples[name])})", fontsize=9)
    for ax in axes.ravel()[len(names) :]:
        ax.set_visible(False)
    figure.suptitle(
        f"{study.label}: evaluation return of every run, by what varies (red: outlier; dashed: ends below its start)",
        fontsize=10,
    )
    figure.supxlabel("env steps", fontsize=9)
    figure.supylabel("average return", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def _strip_png(study: SourceStudy, directory: Path) -> Path:
    path = directory / f"seed_sources_strip_{_file_name(study)}.png"
    names = list(study.samples)
    figure, axes = plt.subplots(1, len(STATISTICS), figsize=(1.1 * len(names) + 3, 3.6), squeeze=False)
    jitter = np.random.default_rng(0)  # fixed: the same runs draw the same figure
    for ax, (statistic, title) in zip(axes[0], STATISTICS.items(), strict=True):
        values = [[sample.value(statistic) for sample in study.samples[name]] for name in names]
        ax.boxplot(values, widths=0.5, showfliers=False)
        for i, name in enumerate(names, 1):
            for sample, value in zip(study.samples[name], values[i - 1], strict=True):
                color = "tab:red" if sample.outlier else "tab:blue"
                marker = "v" if sample.below_start else "x" if sample.outlier else "o"
                ax.scatter(i + jitter.uniform(-0.12, 0.12), value, color=color, marker=marker, s=16, zorder=3)
        ax.set_xticks(range(1, len(names) + 1), names, rotation=45, ha="right", fontsize=8)
        ax.set_title(title, fontsize=9)
    figure.suptitle(
        f"{study.label}: each run's return, by what varies (red x: outlier; v: ends below its start)", fontsize=10
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


# ---------------------------------------------------------------------------------------------------- Markdown
def sources_section(studies: list[SourceStudy]) -> str:
    """The report's section on the studies ('' without one).

    Args:
        studies: from :func:`study_sources`.
    """
    if not studies:
        return ""
    parts = [
        "## Sources of seed variance",
        "Each condition varies one source of randomness across its runs and pins the others "
        "(`+experiment=seed_study`); *all_vary* varies them all (the usual spread across seeds), *evaluation* is "
        "one trained run measured from N sets of evaluation start states, *repeat* is one seed trained twice (the"
        " determinism control: SD 0 on one machine). Per run: its mean return over its evaluations after step 0, "
        "and its final return. **SD**: the standard deviation across the condition's runs (ddof = 1) with its 95%"
        " chi-square interval, which assumes normally distributed returns. **ratio**: SD / all_vary's SD, with "
        "the 95% F interval of a ratio of two normal SDs. **p**: the Brown-Forsythe test (Levene's test on "
        "deviations from the median) of equal spread with all_vary. **outliers**: runs whose final return lies "
        f"more than {OUTLIER_MADS:g} scaled MADs (1.4826 × the median absolute deviation) below their condition's"
        " median; marked in red in the plots, not removed. **below start**: runs whose final return is lower than "
        "their own step-0 return, the untrained policy's (they unlearned; the MAD rule misses such a run when the "
        "others spread widely); dashed in the curves, a triangle in the strip plot, not removed. All numbers per "
        "run are in `seed_sources_runs.csv`, "
        "the spreads in `seed_sources.csv`.",
    ]
    for study in studies:
        parts += [f"**{study.label}**", tables.markdown(display_frame(study)), _reading(study)]
        if study.left_out:
            parts.append("Left out (failed or unfinished): " + "; ".join(study.left_out) + ".")
    return "\n\n".join(parts)


def _reading(study: SourceStudy) -> str:
    """How much of the spread is measurement, and what the intervals at this N can tell apart."""
    n = study.spreads[(ALL_VARY, "final")].n
    low, high = sd_interval(1.0, n)
    lines = [
        f"With {n} runs a condition's SD is known within a factor of about {low:.2f} to {high:.2f} of the measured "
        "value (95%), so a ratio to all_vary whose interval contains 1 is not told apart from all_vary: a source "
        "whose true share of the spread is small and one whose share is large can both give such an interval."
    ]
    all_sd = study.spreads[(ALL_VARY, "final")].sd
    for statistic, title in STATISTICS.items():
        within = study.measurement_sd[statistic]
        base = study.spreads[(ALL_VARY, statistic)].sd
        if math.isfinite(within) and base > 0:
            lines.append(
                f"Measurement ({title}): evaluating one policy from other start states moves it by an SD of "
                f"{within:.3g} (pooled over every run's evaluation sets), {100 * within**2 / base**2:.2g}% of "
                "all_vary's variance."
            )
    if not all_sd > 0:
        lines.append("all_vary has no spread: no ratio can be formed.")
    return " ".join(lines)
