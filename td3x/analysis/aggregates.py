"""Aggregates across envs, one per table row: the IQM and mean of normalised scores, the probability of
improvement over the TD3 row, and performance profiles (rliable; Agarwal et al. 2021), with 95% intervals by the
interval rule (``metrics.interval_method``): stratified bootstrap CIs from 5 seeds per env; below, a Student-t
interval for the mean and none for the others.

Scores are each seed's Table 2 metric (last-10 mean), normalised per env so that envs of different return scales
can be pooled: ``score / paper TD3 Table 2 score`` on the paper's four Table 2 envs. On any other env (Pendulum,
Reacher, ...) the paper has no such number, so the scale is set by the report's own TD3 row with the untrained
policy (the step-0 evaluations) as zero: ``(score - untrained) / (our TD3 - untrained)``. The report prints
each env's normaliser.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from td3x.analysis.cells import Grid
from td3x.analysis.metrics import Estimate, iqm_and_mean, performance_profiles, probability_of_improvement
from td3x.analysis.paper import TD3_ROW, table2_score

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
        iqm: interquartile mean over all (seed, env) scores, with its interval (none below 5 seeds).
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
    """A row's raw scores on ``envs`` for the seeds it has on all of them: shape (seeds, envs), and the seeds.

    Args:
        scores: per (row, env), the seeds' last-10 means.
        row: the row label.
        envs: the envs, in column order.
    """
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
        reps: bootstrap replications.
        seed: seeds the resampling.
    """
    matrices: dict[str, tuple[np.ndarray, list[str], list[int]]] = {}
    for row in grid.rows:
        envs = [env_id for env_id in grid.envs if env_id in normalisers and scores.get((row, env_id))]
        raw, seeds = score_matrix(scores, row, envs)
        if seeds:
            matrices[row] = (_normalise(raw, envs, normalisers), envs, seeds)
    estimates = iqm_and_mean({row: matrix for row, (matrix, _, _) in matrices.items()}, reps, seed)
    return [
        RowAggregate(
            row,
            envs,
            {env_id: len(scores[(row, env_id)]) for env_id in envs},
            seeds,
            matrix,
            *estimates[row],
            *_improvement(grid, row, matrices, reps, seed),
        )
        for row, (matrix, envs, seeds) in matrices.items()
    ]


def _normalise(raw: np.ndarray, envs: list[str], normalisers: dict[str, Normaliser]) -> np.ndarray:
    return np.stack([normalisers[env_id](raw[:, i]) for i, env_id in enumerate(envs)], axis=1)


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


def profile_taus(aggregates: list[RowAggregate]) -> np.ndarray:
    """Thresholds for performance profiles: from min(0, lowest score) to the highest normalised score."""
    all_scores = np.concatenate([aggregate.scores.ravel() for aggregate in aggregates])
    return np.linspace(min(0.0, float(all_scores.min())), float(all_scores.max()), PROFILE_POINTS)


def row_profiles(
    aggregates: list[RowAggregate], reps: int, seed: int
) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Performance profiles of every aggregated row: the taus, and per row the profile and its CIs.

    Args:
        aggregates: from ``aggregate_rows`` (at least one).
        reps: bootstrap replications.
        seed: seeds the resampling.
    """
    taus = profile_taus(aggregates)
    profiles, cis = performance_profiles({a.row: a.scores for a in aggregates}, taus, reps, seed)
    return taus, profiles, cis
