"""The seed-spread section (the report's "Seed study"), for cells with many seeds of one config: how much its
results spread across seeds, how the CI narrows with more seeds, and how often two disjoint groups of seeds of the
*same* config look "significantly different" under a naive Welch t-test (Henderson et al., *Deep RL that Matters*,
AAAI 2018, made this point with 5 vs 5 seeds). It reads any cell with enough seeds; which source of randomness
makes the spread is the experiment ``+experiment=seed_study`` and its section, ``seed_sources``.

Scores are each seed's Table 2 metric (the mean of its last 10 evaluations).
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass
from typing import Self

import numpy as np
import pandas as pd
from scipy import stats

from td3x.algo.seed_statistics import CONFIDENCE, last10_return, t_interval
from td3x.analysis.reading.cell_stats import CellStats
from td3x.analysis.reading.source_studies import condition
from td3x.analysis.render import tables
from td3x.analysis.render.plots import PLOTS_DIR, Curve, Figures, Panel
from td3x.analysis.render.tables import Notes, number
from td3x.analysis.sections.section import Frames, Report, Section
from td3x.analysis.sections.seed_sources import SeedSourcesSection
from td3x.analysis.stats.metrics import MIN_BOOTSTRAP_SEEDS, STUDENT_T, Band, interval_method

MIN_SEEDS = 6  # two disjoint groups of at least 3 seeds, the fewest for which a t-test has a spread to compare
MAX_SUBSETS = 200  # seed subsets per size for the CI-width curve (every subset when there are fewer)
SPLITS = 1000  # random disjoint splits per group size for the Welch test
ALPHA = 0.05
WIDTH_PERCENTILES = (10, 90)  # the band around the mean CI width: how lucky or unlucky a draw of seeds can be
SPREAD = ("min", "q25", "median", "q75", "max", "std")  # the spread of per-seed scores (seed_study_welch.csv)


@dataclass(frozen=True)
class WelchRate:
    """How often two disjoint groups of ``group_size`` seeds of one config differ at p < 0.05 (Welch)."""

    group_size: int
    splits: int
    significant: float


@dataclass(frozen=True, eq=False)
class SeedStudy:
    """One cell's seed study.

    Attributes:
        row: the row label.
        env_id: the env.
        seeds: the complete seeds.
        scores: each seed's last-10 mean.
        spread: min, 25th percentile, median, 75th percentile, max and std (ddof=1) of the scores.
        ci_width: x = number of seeds k, mean = the mean width of the 95% interval of the mean (the report's
            interval rule) over subsets of k seeds, low/high = its 10th and 90th percentiles over those subsets.
        welch: the false-positive rate of Welch's t-test per group size.
    """

    row: str
    env_id: str
    seeds: list[int]
    scores: np.ndarray
    spread: dict[str, float]
    ci_width: Band
    welch: list[WelchRate]


def study_cell(numbers: CellStats, reps: int, seed: int) -> SeedStudy:
    """The seed study of one cell (at least MIN_SEEDS seeds) on its seeds' last-10 means, with ``reps`` bootstrap
    replications per CI and ``seed`` seeding the subsets, splits and resampling."""
    scores = np.asarray(last10_return(numbers.curves), dtype=np.float64)
    rng = np.random.default_rng(seed)
    cell = numbers.cell
    # a solved task (InvertedPendulum at 1000 on every seed) has groups without spread: scipy warns and returns NaN
    # widths and p-values, which the study already treats as "no CI" and "not significant"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        return SeedStudy(
            cell.row, cell.env_id, cell.seeds, scores, spread(scores), ci_width_by_seeds(scores, reps, rng),
            welch_rates(scores, rng),
        )


def spread(scores: np.ndarray) -> dict[str, float]:
    """Min, quartiles, max and std (ddof=1) of the per-seed scores."""
    q25, median, q75 = np.percentile(scores, [25, 50, 75])
    values = (scores.min(), q25, median, q75, scores.max(), scores.std(ddof=1))
    return {name: float(value) for name, value in zip(SPREAD, values, strict=True)}


def seed_subsets(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Index sets of k of n seeds: all of them when at most MAX_SUBSETS exist, else MAX_SUBSETS random ones."""
    if math.comb(n, k) <= MAX_SUBSETS:
        return np.array(list(itertools.combinations(range(n), k)))
    return np.array([rng.choice(n, size=k, replace=False) for _ in range(MAX_SUBSETS)])


def ci_width_by_seeds(scores: np.ndarray, reps: int, rng: np.random.Generator) -> Band:
    """The width of the report's 95% interval of the mean (``metrics.interval_method``: Student-t below 10 seeds, a
    percentile bootstrap from 10) as a function of the number of seeds k = 2..n."""
    sizes = np.arange(2, len(scores) + 1)
    widths = []
    for k in sizes:
        subsets = scores[seed_subsets(len(scores), int(k), rng)]
        if interval_method(int(k)) == STUDENT_T:
            _, low, high = t_interval(subsets.T)
            widths.append(high - low)
        else:
            widths.append(_bootstrap_widths(subsets, reps, rng))
    low, high = (np.array([np.nanpercentile(w, q) for w in widths]) for q in WIDTH_PERCENTILES)
    return Band(sizes, np.array([np.nanmean(w) for w in widths]), low, high)


def _bootstrap_widths(subsets: np.ndarray, reps: int, rng: np.random.Generator) -> np.ndarray:
    # one vectorised bootstrap for all subsets of one size (scipy resamples along the last axis)
    ci = stats.bootstrap(
        (subsets,),
        np.mean,
        axis=-1,
        vectorized=True,
        n_resamples=reps,
        confidence_level=CONFIDENCE,
        method="percentile",
        rng=rng,
    ).confidence_interval
    return np.asarray(ci.high - ci.low)


def welch_rates(scores: np.ndarray, rng: np.random.Generator) -> list[WelchRate]:
    """For each group size g = 3..n//2, the fraction of SPLITS random pairs of disjoint g-seed groups that Welch's
    t-test calls different at p < ALPHA. All seeds share one config, so every such call is a false positive."""
    rates = []
    for group_size in range(3, len(scores) // 2 + 1):
        order = np.array([rng.permutation(len(scores))[: 2 * group_size] for _ in range(SPLITS)])
        first, second = scores[order[:, :group_size]], scores[order[:, group_size:]]
        p_values = stats.ttest_ind(first, second, axis=1, equal_var=False).pvalue
        rates.append(WelchRate(group_size, SPLITS, float(np.mean(p_values < ALPHA))))
    return rates


@dataclass(frozen=True, eq=False)
class SeedSpreadSection(Section):
    """The seed study of every cell with at least MIN_SEEDS complete seeds, in the report's order."""

    studies: list[SeedStudy]

    @classmethod
    def build(cls, report: Report) -> Self:
        reps, seed = report.settings.reps, report.settings.seed
        return cls([study_cell(s, reps, seed) for s in report.stats.values() if len(s.cell.runs) >= MIN_SEEDS])

    def frames(self, report: Report) -> Frames:
        """``seed_study`` and ``seed_study_welch`` (none without a studied cell)."""
        frames = {"seed_study": seed_study_frame(self.studies), "seed_study_welch": welch_csv_frame(self.studies)}
        return frames if self.studies else {}

    def markdown(self, report: Report, frames: Frames, notes: Notes) -> str:
        """The "Seed study" section; without a studied cell, a line saying so, unless every run belongs to a
        seed-sources study (N = 5 runs a condition), whose section stands in for this one."""
        if not self.studies:
            sources = report.section(SeedSourcesSection).studies
            if sources and all(condition(run) is not None for run in report.runs):
                return ""
            return f"## Seed study\n\nNo cell has {MIN_SEEDS} or more complete seeds."
        return (
            f"## Seed study (cells with {MIN_SEEDS} or more seeds)\n\nThe spread of per-seed last-10 means, the mean "
            "width of the 95% interval of the mean with 3 seeds and with all of them (every size in "
            f"`{PLOTS_DIR}/seed_ci_width_*.png`), and how often a Welch t-test finds two disjoint groups of seeds of "
            "the same config different at p < 0.05: every such finding is a false positive (5% is the nominal rate; "
            "all group sizes in `seed_study_welch.csv`). The interval is the report's: Student-t below "
            f"{MIN_BOOTSTRAP_SEEDS} seeds, a percentile bootstrap from {MIN_BOOTSTRAP_SEEDS}.\n\n"
            f"{tables.markdown(frames['seed_study'])}"
        )

    def plot_env(self, report: Report, env_id: str, figures: Figures) -> None:
        """The env's CI width against the number of seeds, a band per studied cell."""
        studies = [study for study in self.studies if study.env_id == env_id]
        if not studies:
            return
        figures.bands(
            [Panel("", [Curve(study.row, study.ci_width, figures.styles[study.row]) for study in studies])],
            f"seed_ci_width_{env_id}",
            f"{env_id}: 95% interval width of the mean vs number of seeds (band: 10th-90th percentile over subsets)",
            ("seeds", "CI width (return)"),
            "no CI width is finite",
        )


# ---------------------------------------------------------------------------------------------------- tables
def seed_study_frame(studies: list[SeedStudy]) -> pd.DataFrame:
    """One line per studied cell: the spread of per-seed scores, the CI width with all seeds and with 3, and the
    Welch false-positive rate for the largest pair of disjoint groups."""
    return pd.DataFrame(
        {
            "env": [s.env_id for s in studies],
            "seeds": [len(s.seeds) for s in studies],
            "min / median / max": [" / ".join(number(s.spread[k]) for k in ("min", "median", "max")) for s in studies],
            "std": [number(s.spread["std"]) for s in studies],
            "CI width, 3 seeds": [number(float(s.ci_width.mean[1])) for s in studies],
            "CI width, all seeds": [number(float(s.ci_width.mean[-1])) for s in studies],
            "Welch p<0.05, same config": [_welch_text(s) for s in studies],
        },
        index=pd.Index([s.row for s in studies], name="row"),
    )


def _welch_text(study: SeedStudy) -> str:
    largest = study.welch[-1]
    return f"{100 * largest.significant:.1f}% of {largest.splits} splits {largest.group_size} vs {largest.group_size}"


def welch_csv_frame(studies: list[SeedStudy]) -> pd.DataFrame:
    """The seed study in full: per cell, its spread, and per group size the Welch false-positive rate."""
    return pd.DataFrame(
        [
            {"row": s.row, "env": s.env_id, "seeds": len(s.seeds), **s.spread, **vars(rate)}
            for s in studies
            for rate in s.welch
        ]
    )
