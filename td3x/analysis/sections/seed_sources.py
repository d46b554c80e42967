"""The seed-sources section (``+experiment=seed_study``): per study its table (per condition its spreads, the
determinism control as bit-identity) and what the study can and cannot tell (its power, the runs its conditions
share, how much is measurement), ``seed_sources.csv`` and ``seed_sources_runs.csv``, and its figures. The numbers are
``source_studies``'.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Self

import numpy as np
import pandas as pd

from td3x.analysis.reading.source_studies import (
    ALL_VARY,
    OUTLIER_MADS,
    REPEAT,
    SOURCES,
    STATISTICS,
    Sample,
    SourceStudy,
    bit_identical,
    study_sources,
)
from td3x.analysis.render import group_plots, tables
from td3x.analysis.render.plots import Figures
from td3x.analysis.render.tables import EMPTY, Notes
from td3x.analysis.sections.section import Frames, Report, Section
from td3x.analysis.stats.spread_tests import Spread, ratio_interval, sd_interval, study_power
from td3x.analysis.stats.two_sample import ALPHA


@dataclass(frozen=True, eq=False)
class SeedSourcesSection(Section):
    """The seed studies by source (``source_studies.study_sources``): none without ``+experiment=seed_study`` runs."""

    studies: list[SourceStudy]

    @classmethod
    def build(cls, report: Report) -> Self:
        return cls(study_sources(report.runs))

    def frames(self, report: Report) -> Frames:
        """``seed_sources`` and ``seed_sources_runs`` (none without a study)."""
        frames = {"seed_sources": spread_frame(self.studies), "seed_sources_runs": samples_frame(self.studies)}
        return frames if self.studies else {}

    def markdown(self, report: Report, frames: Frames, notes: Notes) -> str:
        return markdown(self.studies)

    def plot(self, report: Report, figures: Figures) -> None:
        """Per study, the learning curves of each condition side by side, and a strip and box plot of each
        statistic per condition; outliers in red, runs that end below their start dashed (a triangle in the strip
        plot)."""
        for study in self.studies:
            figures.directory.mkdir(parents=True, exist_ok=True)
            name = re.sub(r"[^A-Za-z0-9._-]+", "_", study.label)
            figures.files += [
                group_plots.group_curves_png(
                    study.samples,
                    f"{study.label}: evaluation return of every run, by what varies (red: outlier; dashed: ends "
                    "below its start)",
                    figures.directory / f"seed_sources_curves_{name}.png",
                ),
                group_plots.group_strip_png(
                    study.samples,
                    STATISTICS,
                    f"{study.label}: each run's return, by what varies (red x: outlier; v: ends below its start)",
                    figures.directory / f"seed_sources_strip_{name}.png",
                ),
            ]


def spread_frame(studies: list[SourceStudy]) -> pd.DataFrame:
    """``seed_sources.csv``: per env, condition and statistic, the spread, its interval, the ratio and the test."""
    rows = []
    for study in studies:
        for (name, statistic), spread in study.spreads.items():
            samples = study.samples[name]
            control = name == REPEAT  # n = 2 copies of one run: no spread to estimate, only bit-identity
            if control:
                nan = (math.nan, math.nan)
                spread = Spread(spread.n, spread.mean, spread.sd, nan, math.nan, nan, math.nan)
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
                    "bit_identical": bit_identical(samples) if control else None,
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


def _interval_text(interval: tuple[float, float]) -> str:
    return f"[{interval[0]:.3g}, {interval[1]:.3g}]"


def display_frame(study: SourceStudy) -> pd.DataFrame:
    """The section's table of one env: per condition, each statistic's SD [interval], ratio [interval] and p; the
    determinism control (two copies of one run) shows whether they are bit-identical instead."""
    rows = {}
    for name in study.samples:
        row: dict[str, str] = {"runs": str(study.spreads[(name, "final")].n)}
        for statistic in STATISTICS:
            spread = study.spreads[(name, statistic)]
            if name == REPEAT:
                identical = "yes" if bit_identical(study.samples[name]) else "no"
                row |= {f"{statistic}: SD [95%]": f"bit-identical: {identical}", f"{statistic}: ratio [95%]": EMPTY}
                row[f"{statistic}: p"] = EMPTY
                continue
            row[f"{statistic}: SD [95%]"] = f"{spread.sd:.3g} {_interval_text(spread.sd_interval)}"
            row[f"{statistic}: ratio [95%]"] = f"{spread.ratio:.2f} {_interval_text(spread.ratio_interval)}"
            row[f"{statistic}: p"] = "n/a" if math.isnan(spread.p_value) else f"{spread.p_value:.3f}"
        row["outliers"] = str(sum(sample.outlier for sample in study.samples[name]))
        row["below start"] = str(sum(sample.below_start for sample in study.samples[name]))
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("condition")


def markdown(studies: list[SourceStudy]) -> str:
    """The report's section on the studies ('' without one)."""
    if not studies:
        return ""
    parts = [
        "## Sources of seed variance",
        "Each condition varies one source of randomness across its runs and pins the others "
        "(`+experiment=seed_study`); *all_vary* varies them all (the usual spread across seeds), *evaluation* is "
        "one trained run measured from N sets of evaluation start states, *repeat* is one seed trained twice (the"
        " determinism control: its runs are bit-identical or not; two copies of one run have no spread to "
        "estimate). Per run: its mean return over its evaluations after step 0, "
        "and its final return. **SD**: the standard deviation across the condition's runs (ddof = 1) with its 95%"
        " chi-square interval, which assumes normally distributed returns. **ratio**: SD / all_vary's SD, with "
        "the 95% F interval of a ratio of two normal SDs. **p**: the Brown-Forsythe test (Levene's test on "
        "deviations from the median) of equal spread with all_vary. **outliers**: runs whose final return lies "
        f"more than {OUTLIER_MADS:g} scaled MADs (1.4826 × the median absolute deviation) below their condition's"
        " median; marked in red in the plots, not removed. **below start**: runs whose final return is lower than "
        "their own step-0 return, the untrained policy's (a rule added after seeing the first seed study's runs; "
        "the MAD rule misses such a run when the others spread widely); dashed in the curves, a triangle in the "
        "strip plot, not removed. All numbers per run are in `seed_sources_runs.csv`, "
        "the spreads in `seed_sources.csv`.",
    ]
    for study in studies:
        parts += [f"**{study.label}**", tables.markdown(display_frame(study)), _reading(study)]
        if study.left_out:
            parts.append("Left out (failed or unfinished): " + "; ".join(study.left_out) + ".")
    return "\n\n".join(parts)


def _reading(study: SourceStudy) -> str:
    """What the intervals at this N can tell apart, the study's power, the shared runs, and how much of the spread
    is measurement."""
    n = study.spreads[(ALL_VARY, "final")].n
    low, high = sd_interval(1.0, n)
    lines = [
        f"With {n} runs a condition's SD is known within a factor of about {low:.2f} to {high:.2f} of the measured "
        "value (95%), so a ratio to all_vary whose interval contains 1 is not told apart from all_vary: a source "
        "whose true share of the spread is small and one whose share is large can both give such an interval.",
        _power_text(study, n),
        _shared_text(study),
    ]
    if not study.spreads[(ALL_VARY, "final")].sd > 0:
        lines.append("all_vary has no spread: no ratio can be formed.")
    lines += [_measurement_text(study, statistic, title) for statistic, title in STATISTICS.items()]
    return " ".join(line for line in lines if line)


def _detected(study: SourceStudy) -> list[str]:
    """The source conditions whose spread a test tells apart from all_vary's (ratio interval without 1, or
    Brown-Forsythe p < alpha), on either statistic."""
    found = []
    for name in (name for name in SOURCES if name in study.samples):
        spreads = [study.spreads[(name, statistic)] for statistic in STATISTICS]
        if any(not s.ratio_interval[0] <= 1 <= s.ratio_interval[1] or s.p_value < ALPHA for s in spreads):
            found.append(name)
    return found


def _power_text(study: SourceStudy, n: int) -> str:
    if n < 2:  # no spread to test
        return ""
    power = study_power(n)
    found = _detected(study)
    verdict = f"a difference was detected for {', '.join(found)}" if found else "none was detected"
    return (
        f"With {n} runs per condition this study could detect only about {power.f_test_ratio:.2f}-fold "
        f"differences in SD (the F test, two-sided, alpha {ALPHA:g}, at 80% power); Brown-Forsythe's real size "
        f"at {n} against {n} is {power.bf_size:.1%} (not 5%) and its power at a 4-fold difference "
        f"{power.bf_power_ratio_4:.0%} (simulated, normal runs); {verdict}."
    )


def _shared_text(study: SourceStudy) -> str:
    """Runs that source conditions share with all_vary, bit for bit, and the ratios without them."""
    reference = study.samples.get(ALL_VARY, [])
    sources = {name: study.samples[name] for name in SOURCES if name in study.samples}
    shared = shared_runs(reference, sources)
    if not shared:
        return ""
    first = sources[next(iter(shared))][shared[next(iter(shared))][0]]
    index = next(i for i, sample in enumerate(reference) if sample.same_as(first))
    extreme = [title for statistic, title in STATISTICS.items() if farthest(reference, statistic) == index]
    ranges = []
    for statistic, title in STATISTICS.items():
        ratios = list(ratios_without(reference, sources, statistic).values())
        if ratios:
            ranges.append(f"{min(ratios):.2f} to {max(ratios):.2f} ({title})")
    without = f"Without it on both sides, the SD ratios to all_vary run from {' and from '.join(ranges)}."
    return (
        f"**Shared run.** In {len(shared)} of {len(sources)} source conditions a run is bit for bit all_vary's "
        f"run {reference[index].label} (every evaluation return the same): with the other sources pinned to that run's "
        "values, varying one source at its seed varies nothing. "
        + (f"It is all_vary's run farthest from its mean ({', '.join(extreme)}). " if extreme else "")
        + "So those conditions are not independent of all_vary, as the F intervals and the Brown-Forsythe test "
        "assume, and one point pulls every ratio towards 1. " + (without if ranges else "")
    )


def _measurement_text(study: SourceStudy, statistic: str, title: str) -> str:
    within = study.measurement_sd[statistic]
    base = study.spreads[(ALL_VARY, statistic)]
    if not (math.isfinite(within) and base.sd > 0 and study.measurement_df > 0):
        return ""
    share = within**2 / base.sd**2
    low, high = (np.square(ratio_interval(within / base.sd, study.measurement_df + 1, base.n)) * 100).tolist()
    return (
        f"Measurement ({title}): evaluating one policy from other start states moves it by an SD of "
        f"{within:.3g} (pooled over every run's evaluation sets, {study.measurement_df} degrees of freedom), "
        f"{100 * share:.2g}% of all_vary's variance (95% F interval {low:.2g}% to {high:.2g}%: all_vary's "
        f"variance rests on {base.n - 1} degrees of freedom)."
    )


def shared_runs(reference: list[Sample], conditions: dict[str, list[Sample]]) -> dict[str, list[int]]:
    """Per condition, the indices of its samples that are bit for bit one of ``reference``'s (none: left out)."""
    shared = {
        name: [i for i, sample in enumerate(samples) if any(sample.same_as(ref) for ref in reference)]
        for name, samples in conditions.items()
    }
    return {name: indices for name, indices in shared.items() if indices}


def farthest(samples: list[Sample], statistic: str) -> int:
    """The index of the sample farthest from its condition's mean on ``statistic``."""
    values = np.array([sample.value(statistic) for sample in samples])
    return int(np.argmax(np.abs(values - values.mean())))


def ratios_without(reference: list[Sample], conditions: dict[str, list[Sample]], statistic: str) -> dict[str, float]:
    """Per condition sharing runs with ``reference``, its SD over the reference's SD (ddof = 1) with the shared
    runs left out of both."""
    ratios = {}
    for name, indices in shared_runs(reference, conditions).items():
        kept = [s for i, s in enumerate(conditions[name]) if i not in indices]
        shared = [conditions[name][i] for i in indices]
        base = [s for s in reference if not any(s.same_as(other) for other in shared)]
        if len(kept) > 1 and len(base) > 1:
            sd, base_sd = (np.std([s.value(statistic) for s in group], ddof=1) for group in (kept, base))
            ratios[name] = float(sd / base_sd) if base_sd > 0 else float("nan")
    return ratios
