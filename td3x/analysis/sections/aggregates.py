"""The aggregates section: across envs, one per table row, the IQM and mean of normalised scores, the probability
of improvement over the TD3 row, and performance profiles (rliable; Agarwal et al. 2021), with 95% intervals by the
interval rule (``metrics.interval_method``): the mean gets a Student-t interval below 10 seeds per env and a
stratified bootstrap CI from 10; the IQM, the probability of improvement and the profiles, with no Student-t form,
get a stratified bootstrap CI from 5 seeds per env and none below.

Scores are each seed's Table 2 metric (last-10 mean), normalised per env so that envs of different return scales
can be pooled: ``score / paper TD3 Table 2 score`` on the paper's four Table 2 envs. On any other env (Pendulum,
Reacher, ...) the paper has no such number, so the scale is set by the report's own TD3 row with the untrained
policy (the step-0 evaluations) as zero: ``(score - untrained) / (our TD3 - untrained)``. The report prints
each env's normaliser.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Self

import numpy as np
import pandas as pd

from td3x.analysis.reading.cell_stats import CellStats
from td3x.analysis.reading.cells import Grid
from td3x.analysis.reading.input_files import COVERAGE_SCRIPT
from td3x.analysis.reading.paper import TD3_ROW, table2_score
from td3x.analysis.render import aggregate_plots, tables
from td3x.analysis.render.plots import PLOTS_DIR, Figures
from td3x.analysis.render.tables import EMPTY, Notes, estimate_text, number
from td3x.analysis.sections.section import Frames, Report, Section
from td3x.analysis.stats.metrics import (
    BOOTSTRAP,
    MIN_AGGREGATE_BOOTSTRAP_SEEDS,
    MIN_BOOTSTRAP_SEEDS,
    Estimate,
    iqm_and_mean,
    performance_profiles,
    probability_of_improvement,
)

Scores = dict[tuple[str, str], dict[int, float]]  # (row, env) → seed → that seed's last-10 mean
PROFILE_POINTS = 101


@dataclass(frozen=True)
class Normaliser:
    """``(score - zero) / (reference - zero)`` for one env, and where its two numbers come from."""

    env_id: str
    zero: float
    reference: float
    source: str

    def __call__(self, scores: np.ndarray) -> np.ndarray:
        return (np.asarray(scores, dtype=np.float64) - self.zero) / (self.reference - self.zero)


@dataclass(frozen=True, eq=False)
class RowAggregate:
    """One row's normalised scores over envs and their aggregates.

    Attributes:
        row: the row label.
        envs: the normalisable envs the row has complete runs on.
        cell_seeds: per env, how many complete seeds the row's cell there has.
        seeds: the seeds complete on every one of those envs (the bootstrap needs one score per seed and env).
        scores: normalised scores, shape (seeds, envs).
        iqm: interquartile mean over all (seed, env) scores, with its bootstrap CI (none below 5 seeds).
        mean: mean over envs of the mean over seeds, with its interval.
        reference: the TD3 row it is compared with (None for that row itself or when there is none).
        improvement: P(row > reference) over the envs both have, with CI.
    """

    row: str
    envs: list[str]
    cell_seeds: dict[str, int]
    seeds: list[int]
    scores: np.ndarray
    iqm: Estimate
    mean: Estimate
    reference: str | None
    improvement: Estimate | None


def make_normalisers(grid: Grid, scores: Scores, untrained: dict[str, float]) -> dict[str, Normaliser]:
    """Each env's normaliser: the paper's TD3 Table 2 score where it has one, else our TD3 row over the untrained
    policy, used only when every seed of that row beats the untrained policy (below that, the scale would be
    noise). Envs with neither are left out of the aggregates.

    Args:
        grid: the report's cells.
        scores: per (row, env), the seeds' last-10 means.
        untrained: per env, the mean step-0 return of its complete runs.
    """
    normalisers = {}
    td3_rows = [row for row in grid.rows if grid.paper_row(row) == TD3_ROW]
    for env_id in grid.envs:
        paper = table2_score(TD3_ROW, env_id)
        ours = [(row, list(scores[(row, env_id)].values())) for row in td3_rows if scores.get((row, env_id))]
        if paper is not None:
            normalisers[env_id] = Normaliser(env_id, 0.0, paper, "paper's TD3 score (Table 2)")
        elif ours and env_id in untrained and min(ours[0][1]) > untrained[env_id]:
            row, td3_scores = ours[0]
            normalisers[env_id] = Normaliser(
                env_id, untrained[env_id], float(np.mean(td3_scores)), f"our {row} row; 0 = untrained policy (step 0)"
            )
    return normalisers


def score_matrix(scores: Scores, row: str, envs: list[str]) -> tuple[np.ndarray, list[int]]:
    """A row's raw scores on ``envs`` for the seeds it has on all of them: shape (seeds, envs), and the seeds."""
    per_env = [scores.get((row, env_id), {}) for env_id in envs]
    seeds = sorted(set.intersection(*(set(seed_scores) for seed_scores in per_env))) if per_env else []
    matrix = np.array([[seed_scores[seed] for seed_scores in per_env] for seed in seeds])
    return matrix.reshape(len(seeds), len(envs)), seeds


def aggregate_rows(
    grid: Grid, scores: Scores, normalisers: dict[str, Normaliser], reps: int, seed: int
) -> list[RowAggregate]:
    """Each row's IQM and mean of normalised scores, and P(row > its TD3 row); rows without a seed complete on
    all their normalisable envs are left out.

    Args:
        grid: the report's cells.
        scores: per (row, env), the seeds' last-10 means.
        normalisers: per env, from ``make_normalisers``.
    """
    matrices: dict[str, tuple[np.ndarray, list[str], list[int]]] = {}
    for row in grid.rows:
        envs = [env_id for env_id in grid.envs if env_id in normalisers and scores.get((row, env_id))]
        raw, seeds = score_matrix(scores, row, envs)
        if seeds:
            normalised = np.stack([normalisers[env_id](raw[:, i]) for i, env_id in enumerate(envs)], axis=1)
            matrices[row] = (normalised, envs, seeds)
    estimates = iqm_and_mean({row: matrix for row, (matrix, _, _) in matrices.items()}, reps, seed)
    return [
        RowAggregate(
            row, envs, {env_id: len(scores[(row, env_id)]) for env_id in envs}, seeds, matrix, *estimates[row],
            *_improvement(grid, row, matrices, reps, seed),
        )
        for row, (matrix, envs, seeds) in matrices.items()
    ]


def _improvement(
    grid: Grid, row: str, matrices: dict[str, tuple[np.ndarray, list[str], list[int]]], reps: int, seed: int
) -> tuple[str | None, Estimate | None]:
    reference = grid.reference_row(row)
    if reference is None or reference == row or reference not in matrices:
        return None, None
    (x, x_envs, _), (y, y_envs, _) = matrices[row], matrices[reference]
    shared = [env_id for env_id in x_envs if env_id in y_envs]  # P(X > Y) compares runs env by env
    if not shared:
        return reference, None
    x_cols, y_cols = [x_envs.index(e) for e in shared], [y_envs.index(e) for e in shared]
    return reference, probability_of_improvement(x[:, x_cols], y[:, y_cols], reps, seed)


def untrained_levels(stats: dict[tuple[str, str], CellStats]) -> dict[str, float]:
    """Per env, the mean step-0 return of its complete runs: the untrained policies' level."""
    by_env: dict[str, list[float]] = {}
    for (_, env_id), numbers in stats.items():
        by_env.setdefault(env_id, []).extend(numbers.curves[:, 0])
    return {env_id: float(np.mean(values)) for env_id, values in by_env.items()}


@dataclass(frozen=True, eq=False)
class AggregatesSection(Section):
    """Each env's normaliser, and per row the aggregates of its normalised scores and their plots.

    Attributes:
        normalisers: per env that can be normalised, its normaliser (``make_normalisers``).
        rows: per row with a seed complete on its normalisable envs, its aggregates (``aggregate_rows``).
    """

    normalisers: dict[str, Normaliser]
    rows: list[RowAggregate]
    LATEX_CAPTIONS: ClassVar[dict[str, str]] = {
        "aggregates": "Scores normalised per env, aggregated over envs: IQM [95\\% stratified bootstrap CI from 5 "
        "seeds per env, none below] and mean [95\\% interval: Student-t below 10 seeds per env, stratified bootstrap "
        "from 10], and the probability of improvement over the TD3 row."
    }

    @classmethod
    def build(cls, report: Report) -> Self:
        scores = {key: numbers.scores for key, numbers in report.stats.items()}
        normalisers = make_normalisers(report.grid, scores, untrained_levels(report.stats))
        reps, seed = report.settings.reps, report.settings.seed
        return cls(normalisers, aggregate_rows(report.grid, scores, normalisers, reps, seed))

    def frames(self, report: Report) -> Frames:
        """``normalisers`` and ``aggregates`` (none without aggregates)."""
        frames = {"normalisers": normalisers_frame(self.normalisers), "aggregates": aggregates_frame(self.rows)}
        return frames if self.rows else {}

    def markdown(self, report: Report, frames: Frames, notes: Notes) -> str:
        """Each env's normaliser, the rows' aggregates with the measured coverage of their bootstrap CIs, the envs
        left out."""
        left_out = ", ".join(env_id for env_id in report.grid.envs if env_id not in self.normalisers)
        why = "with no paper TD3 score and no TD3 row whose every seed beats the untrained policy"
        note = f"Left out, {why}: {left_out}." if left_out else ""
        if not self.rows:
            return f"## Aggregates across envs\n\nNo env could be normalised. {note}"
        return (
            "## Aggregates across envs\n\nEach seed's last-10 mean, normalised per env (1 = reference, 0 = zero "
            "below), pooled over envs on the seeds every env of the row has (*envs* gives each cell's own seeds): IQM "
            "(interquartile mean) and mean, and P(row > TD3 row), the probability that a run of the row beats a run "
            "of TD3 on a random env (rliable; Agarwal et al., 2021). The mean gets a Student-t interval below "
            f"{MIN_BOOTSTRAP_SEEDS} seeds pooled per env ({tables.T_MARK}: the envs' variances summed, "
            "Welch-Satterthwaite degrees of freedom) and a 95% stratified bootstrap CI from "
            f"{MIN_BOOTSTRAP_SEEDS}. The IQM and P(row > TD3 row), which have no Student-t form, get a 95% stratified "
            f"bootstrap CI from {MIN_AGGREGATE_BOOTSTRAP_SEEDS} seeds pooled per env and none below. Performance "
            f"profiles (their bands likewise only from {MIN_AGGREGATE_BOOTSTRAP_SEEDS} seeds) are in "
            f"`{PLOTS_DIR}/performance_profiles.png`. {coverage_note(self.rows, report.coverage)} {note}\n\n"
            f"{tables.markdown(frames['normalisers'])}\n\n{tables.markdown(frames['aggregates'])}"
        )

    def plot(self, report: Report, figures: Figures) -> None:
        """rliable's plots of the aggregates: interval estimates, probability of improvement, performance profiles
        (their bands bootstrapped with the report's replications and seed)."""
        if not self.rows:
            return
        plots_dir, styles = figures.directory, figures.styles
        plots_dir.mkdir(parents=True, exist_ok=True)
        estimates = {a.row: (a.iqm, a.mean) for a in self.rows}
        files = [aggregate_plots.interval_plot(estimates, plots_dir / "aggregates.png", styles)]
        improvements = {(a.row, a.reference): a.improvement for a in self.rows if a.improvement and a.reference}
        if improvements:
            path = plots_dir / "probability_of_improvement.png"
            files.append(aggregate_plots.improvement_plot(improvements, path, styles))
        # thresholds from min(0, the lowest normalised score) to the highest
        scores = np.concatenate([a.scores.ravel() for a in self.rows])
        taus = np.linspace(min(0.0, float(scores.min())), float(scores.max()), PROFILE_POINTS)
        reps, seed = report.settings.reps, report.settings.seed
        profiles, cis = performance_profiles({a.row: a.scores for a in self.rows}, taus, reps, seed)
        files.append(aggregate_plots.profile_plot(taus, profiles, cis, plots_dir / "performance_profiles.png", styles))
        figures.files += files


# ---------------------------------------------------------------------------------------------------- tables
def aggregates_frame(aggregates: list[RowAggregate]) -> pd.DataFrame:
    """One line per row: its envs with each cell's seeds, the seeds pooled (those complete on every env), IQM and
    mean of normalised scores, P(row > TD3 row)."""
    return pd.DataFrame(
        {
            "envs (cell seeds)": [", ".join(f"{e} ({a.cell_seeds[e]})" for e in a.envs) for a in aggregates],
            "seeds pooled per env": [len(a.seeds) for a in aggregates],
            "IQM [95% CI]": [estimate_text(a.iqm, 3) for a in aggregates],
            "mean [95% interval]": [estimate_text(a.mean, 3) for a in aggregates],
            "P(row > TD3 row) [95% CI]": [_improvement_text(a) for a in aggregates],
        },
        index=pd.Index([a.row for a in aggregates], name="row"),
    )


def _improvement_text(aggregate: RowAggregate) -> str:
    if aggregate.improvement is None:
        return EMPTY
    return f"{estimate_text(aggregate.improvement, 3, with_n=False)} vs {aggregate.reference}"


def normalisers_frame(normalisers: dict[str, Normaliser]) -> pd.DataFrame:
    """Each env's normaliser: score 1 = reference, 0 = zero."""
    return pd.DataFrame(
        {
            "zero": [number(n.zero) for n in normalisers.values()],
            "reference": [number(n.reference) for n in normalisers.values()],
            "source": [n.source for n in normalisers.values()],
        },
        index=pd.Index(list(normalisers), name="env"),
    )


def coverage_note(aggregates: list[RowAggregate], coverage: pd.DataFrame | None) -> str:
    """What share of simulated samples the rows' 95% intervals cover, from the coverage table's lines for the
    rows with a bootstrap CI (the same row, envs and seeds per env); or that it was not measured."""
    bootstrapped = {(a.row, " ".join(a.envs), len(a.seeds)) for a in aggregates if a.iqm.method == BOOTSTRAP}
    if not bootstrapped:
        return ""
    lines = pd.DataFrame() if coverage is None else coverage
    if not lines.empty:
        keys = zip(lines["row"], lines["envs"], lines["seeds_per_env"].astype(int), strict=True)
        lines = lines[[key in bootstrapped for key in keys]]
    if lines.empty:
        return (
            "How often these bootstrap CIs cover the true value at so few seeds is not measured for this report "
            f"(`{COVERAGE_SCRIPT}` measures it; `td3x-report --coverage` quotes it)."
        )
    spans = [
        f"{statistic} by {interval}: {_span(group['coverage'])}"
        + (" (a row against another row of the report with the same envs)" if statistic.startswith("P(") else "")
        for (statistic, interval), group in lines.groupby(["statistic", "interval"], sort=False)
    ]
    return (
        f"Measured coverage of the 95% intervals at these rows' designs (`{COVERAGE_SCRIPT}`: each row's envs and "
        "seeds per env, normal per-seed scores at its cells' means and SDs, "
        f"{int(lines['replicates'].iloc[0])} simulated samples each; the share whose interval holds the true "
        f"value, lowest to highest over the rows): {'; '.join(spans)}. Below 95%, the CI is too narrow."
    )


def _span(values: pd.Series) -> str:
    low, high = float(values.min()), float(values.max())
    return f"{low:.0%}" if round(low, 2) == round(high, 2) else f"{low:.0%} to {high:.0%}"
