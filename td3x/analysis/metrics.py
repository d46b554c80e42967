"""The paper's metrics on learning curves, and rliable's statistics (stratified bootstrap CIs, IQM, probability
of improvement, performance profiles; Agarwal et al., NeurIPS 2021).

Curves are arrays of shape (seeds, evaluations) on one grid of env steps; entry 0 is the evaluation of the
untrained policy at step 0.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np
from rliable import library as rly
from rliable import metrics as rly_metrics
from scipy.integrate import trapezoid

PAPER_LAST_EVALUATIONS = 10  # Table 2: "average return over the last 10 evaluations"
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its 95% bootstrap CI (NaN bounds when fewer than 2 samples) and sample size."""

    value: float
    low: float
    high: float
    n: int


@dataclass(frozen=True)
class Peak:
    """Table 1's "max average return": the peak of the seed-averaged curve, the across-seed population std
    (ddof=0) at that evaluation, and the evaluation's index and env step."""

    value: float
    std: float
    index: int
    step: int


@dataclass(frozen=True, eq=False)  # arrays have no single truth value
class Band:
    """A mean curve with a band around it: a pointwise 95% bootstrap CI (learning curves), a percentile range
    (the seed study's CI widths), or the mean ± 2 std across seeds (the authors' published curves)."""

    x: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray


# ---------------------------------------------------------------------------------------------------- paper metrics
def last10_scores(curves: np.ndarray) -> np.ndarray:
    """Each seed's mean of its last 10 evaluations (Table 2's per-seed score); shape (seeds,)."""
    return np.asarray(curves, dtype=np.float64)[:, -PAPER_LAST_EVALUATIONS:].mean(axis=1)


def max_average_return(curves: np.ndarray, steps: np.ndarray) -> Peak:
    """Table 1 (the first author in sfujim/TD3#34): the max over evaluations 1..end of the seed-averaged curve,
    ± the population std (ddof=0) across seeds at that evaluation. Entry 0, the untrained policy, is excluded.

    Args:
        curves: returns, shape (seeds, evaluations).
        steps: the env step of each evaluation.
    """
    curves = np.asarray(curves, dtype=np.float64)
    index = 1 + int(np.argmax(curves.mean(axis=0)[1:]))
    return Peak(float(curves[:, index].mean()), float(curves[:, index].std(ddof=0)), index, int(steps[index]))


def return_at(steps: np.ndarray, returns: np.ndarray, step: int) -> float:
    """The return at an env step, linearly interpolated between evaluations; NaN outside the evaluated range.

    Args:
        steps: the env step of each evaluation (increasing).
        returns: the return of each evaluation.
        step: the env step asked for, e.g. 100_000.
    """
    return float(np.interp(step, steps, returns, left=np.nan, right=np.nan))


def area_under_curve(steps: np.ndarray, returns: np.ndarray) -> float:
    """The area under the learning curve divided by its length in steps (trapezoid rule): the return averaged
    over training, in return units, so runs of one length compare on how fast they learn, not only where they end.

    Args:
        steps: the env step of each evaluation (increasing).
        returns: the return of each evaluation.
    """
    span = float(steps[-1] - steps[0])
    return float(trapezoid(returns, steps) / span) if span > 0 else float(returns[0])


# ---------------------------------------------------------------------------------------------------- rliable
@contextlib.contextmanager
def seeded_bootstrap(seed: int) -> Iterator[np.random.RandomState]:
    """A RandomState for rliable's ``random_state``, with numpy's global RNG seeded too and restored afterwards.

    rliable 1.2.0's StratifiedBootstrap draws its resampling indices with ``np.random.choice`` (the global RNG),
    so ``random_state`` alone leaves the CIs varying from call to call; seeding both makes the report
    deterministic without changing anyone else's global random state.
    """
    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():
            # arch (under rliable) deprecates random_state= in favour of generator=, which rliable does not pass
            warnings.filterwarnings("ignore", message="random_state is deprecated", category=FutureWarning)
            yield np.random.RandomState(seed)
    finally:
        np.random.set_state(saved)


def interval_estimates(
    scores: Mapping[str, np.ndarray | tuple[np.ndarray, np.ndarray]],
    func: Callable[..., np.ndarray],
    reps: int,
    seed: int,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """rliable's ``get_interval_estimates`` (percentile stratified bootstrap, 95%), made deterministic.

    Args:
        scores: per key, scores of shape (runs, tasks[, ...]), or a pair of them for a two-sample ``func``.
        func: the aggregate, returning a 1-D array.
        reps: bootstrap replications.
        seed: seeds the resampling.

    Returns:
        Point estimates per key, and CIs per key of shape (2, n_aggregates) (lower row, upper row).
    """
    with seeded_bootstrap(seed) as random_state:
        return rly.get_interval_estimates(
            dict(scores), func, reps=reps, confidence_interval_size=CONFIDENCE, random_state=random_state
        )


def pointwise_means(samples: np.ndarray, reps: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means over seeds (axis 0) with 95% bootstrap CIs, for any number of metrics or curve points at once.

    The stratified bootstrap resamples seeds independently in every column, as one call per column would, at the
    cost of one call. Columns holding a NaN (a run too short for the metric), and all columns below 2 seeds (no
    spread to resample), get NaN bounds.

    Args:
        samples: shape (seeds, ...).
        reps: bootstrap replications.
        seed: seeds the resampling.

    Returns:
        The means, lower bounds and upper bounds, each of shape ``samples.shape[1:]``.
    """
    samples = np.asarray(samples, dtype=np.float64)
    flat = samples.reshape(len(samples), -1)
    mean = flat.mean(axis=0)
    low, high = np.full_like(mean, np.nan), np.full_like(mean, np.nan)
    finite = np.isfinite(flat).all(axis=0)
    if len(flat) >= 2 and finite.any():
        _, ci = interval_estimates({"x": flat[:, finite]}, _column_means, reps, seed)
        low[finite], high[finite] = ci["x"]
    shape = samples.shape[1:]
    return mean.reshape(shape), low.reshape(shape), high.reshape(shape)


def mean_estimates(scores: np.ndarray, reps: int, seed: int) -> list[Estimate]:
    """Each metric's mean over seeds with its bootstrap CI (see ``pointwise_means``).

    Args:
        scores: shape (seeds, metrics).
        reps: bootstrap replications.
        seed: seeds the resampling.
    """
    means, lows, highs = pointwise_means(scores, reps, seed)
    return [Estimate(float(m), float(lo), float(hi), len(scores)) for m, lo, hi in zip(means, lows, highs, strict=True)]


def curve_bands(curves: np.ndarray, x: np.ndarray, reps: int, seed: int) -> list[Band]:
    """Mean curves over seeds with pointwise bootstrap CIs (see ``pointwise_means``).

    Args:
        curves: shape (seeds, curves, points), e.g. the return and the bias columns of a cell's runs.
        x: the env step (or other x) of each point.
        reps: bootstrap replications.
        seed: seeds the resampling.
    """
    means, lows, highs = pointwise_means(curves, reps, seed)
    return [Band(x, m, lo, hi) for m, lo, hi in zip(means, lows, highs, strict=True)]


def iqm_and_mean(
    score_matrices: Mapping[str, np.ndarray], reps: int, seed: int
) -> dict[str, tuple[Estimate, Estimate]]:
    """The IQM and the mean of each key's (seeds, envs) normalised scores, each with a stratified bootstrap CI.

    Args:
        score_matrices: per key, normalised scores of shape (seeds, envs).
        reps: bootstrap replications.
        seed: seeds the resampling.
    """
    points, cis = interval_estimates(score_matrices, _iqm_and_mean, reps, seed)
    estimates = {}
    for key, matrix in score_matrices.items():
        iqm, mean = (
            Estimate(float(point), float(low), float(high), matrix.shape[0])
            for point, low, high in zip(points[key], *cis[key], strict=True)
        )
        estimates[key] = (iqm, mean)
    return estimates


def probability_of_improvement(x: np.ndarray, y: np.ndarray, reps: int, seed: int) -> Estimate:
    """P(X > Y): the probability that a run of X scores above a run of Y on a random env (Mann-Whitney U over
    runs, averaged over envs), with a stratified bootstrap CI.

    Args:
        x: scores of shape (seeds of X, envs).
        y: scores of shape (seeds of Y, the same envs).
        reps: bootstrap replications.
        seed: seeds the resampling.
    """
    points, cis = interval_estimates({"x,y": (x, y)}, rly_metrics.probability_of_improvement, reps, seed)
    return Estimate(float(points["x,y"]), float(cis["x,y"][0, 0]), float(cis["x,y"][1, 0]), min(len(x), len(y)))


def performance_profiles(
    score_matrices: Mapping[str, np.ndarray], taus: np.ndarray, reps: int, seed: int
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """rliable's performance profiles: per key, the fraction of runs (over seeds and envs) scoring above each tau,
    with bootstrap CIs.

    Args:
        score_matrices: per key, normalised scores of shape (seeds, envs).
        taus: the thresholds.
        reps: bootstrap replications.
        seed: seeds the resampling.
    """
    with seeded_bootstrap(seed):  # create_performance_profile takes no random_state at all
        return rly.create_performance_profile(dict(score_matrices), taus, reps=reps)


def _column_means(scores: np.ndarray) -> np.ndarray:
    return scores.mean(axis=0)


def _iqm_and_mean(scores: np.ndarray) -> np.ndarray:
    return np.array([rly_metrics.aggregate_iqm(scores), rly_metrics.aggregate_mean(scores)])
