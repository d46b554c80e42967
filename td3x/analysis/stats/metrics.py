"""The paper's metrics on learning curves, the report's 95% intervals over seeds, and rliable's statistics
(stratified bootstrap CIs, IQM, probability of improvement, performance profiles; Agarwal et al., NeurIPS 2021).

Curves are arrays of shape (seeds, evaluations) on one grid of env steps; entry 0 is the evaluation of the
untrained policy at step 0.

**The interval rule** (``interval_method``, the one place it is decided): a mean over 10 or more seeds gets a 95%
percentile bootstrap CI; a mean over 2 to 9 seeds gets a Student-t 95% interval, mean ± t(0.975, n − 1)·s/√n. A
percentile bootstrap is too narrow at small n: with n = 3 its 2.5% and 97.5% points are the min and max of the
seeds (each is drawn three times over with probability 1/27 > 2.5%), the range, not a 95% CI; at n = 5 its "95%"
interval covers a normal mean only about 86% of the time, where Student-t's covers 95%. Statistics with no
Student-t form (the IQM, the probability of improvement, performance profiles) get rliable's stratified bootstrap
from 5 seeds per env and no interval below; their real coverage at the report's sizes is measured by
``scripts/aggregate_coverage.py``, not assumed.

Every bootstrap here takes ``reps`` replications and a ``seed`` that seeds its resampling (``seeded_bootstrap``).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np
from rliable import library as rly
from rliable import metrics as rly_metrics
from scipy import stats
from scipy.integrate import trapezoid

from td3x.algo.seed_statistics import CONFIDENCE, t_interval

MIN_BOOTSTRAP_SEEDS = 10  # a mean over fewer seeds gets Student-t: a percentile bootstrap's "95%" covers ~86% at 5
MIN_AGGREGATE_BOOTSTRAP_SEEDS = 5  # a statistic with no Student-t form gets no interval below this
BOOTSTRAP = "percentile bootstrap"
STUDENT_T = "Student-t"
NO_INTERVAL = "none"


def interval_method(n_seeds: int, has_t_form: bool = True) -> str:
    """The report's rule for a 95% interval over ``n_seeds`` seeds. A mean: ``BOOTSTRAP`` from
    ``MIN_BOOTSTRAP_SEEDS`` seeds, ``STUDENT_T`` below (2 seeds at least), ``NO_INTERVAL`` below 2. A statistic
    without a Student-t form: ``BOOTSTRAP`` from ``MIN_AGGREGATE_BOOTSTRAP_SEEDS`` seeds, ``NO_INTERVAL`` below.

    Args:
        n_seeds: the seeds the statistic rests on (per env, for a statistic pooled over envs).
        has_t_form: whether the statistic is a mean (of means), for which a Student-t interval exists.
    """
    if not has_t_form:
        return BOOTSTRAP if n_seeds >= MIN_AGGREGATE_BOOTSTRAP_SEEDS else NO_INTERVAL
    if n_seeds >= MIN_BOOTSTRAP_SEEDS:
        return BOOTSTRAP
    return STUDENT_T if n_seeds >= 2 else NO_INTERVAL


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its 95% interval (NaN bounds when it has none) and sample size.

    Attributes:
        value: the estimate.
        low: the interval's lower bound.
        high: its upper bound.
        n: the seeds it rests on (per env, for a statistic pooled over envs).
        method: how the interval was made: ``BOOTSTRAP``, ``STUDENT_T`` or ``NO_INTERVAL`` (``interval_method``).
    """

    value: float
    low: float
    high: float
    n: int
    method: str = BOOTSTRAP


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
    """A mean curve with a band around it: a pointwise 95% interval over seeds (learning curves, made by the
    interval rule), a percentile range (the seed study's CI widths), or the mean ± 2 std across seeds (the
    authors' published curves)."""

    x: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray

    def until(self, step: float) -> Band:
        """The band up to ``step``, ending there: a step between two points gets their linear interpolation, the
        value a line drawn through them shows, so that a curve evaluated more sparsely (the authors' every 5000
        steps) stops where the runs beside it stop instead of running on to its next point."""
        keep = self.x <= step
        curves = (self.mean, self.low, self.high)
        if keep.all() or not keep.any() or self.x[keep][-1] == step:
            return Band(self.x[keep], *(values[keep] for values in curves))
        ends = [np.interp(step, self.x, values) for values in curves]
        return Band(
            np.append(self.x[keep], step), *(np.append(v[keep], end) for v, end in zip(curves, ends, strict=True))
        )


# ---------------------------------------------------------------------------------------------------- paper metrics
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


def area_under_curve(steps: np.ndarray, returns: np.ndarray) -> np.ndarray:
    """The area under the learning curve divided by its length in steps (trapezoid rule): the return averaged
    over training, in return units, so runs of one length compare on how fast they learn, not only where they end.

    Args:
        steps: the env step of each evaluation (increasing).
        returns: the return of each evaluation, of one curve or of several (the last axis holds a curve's).
    """
    span = float(steps[-1] - steps[0])
    return np.asarray(trapezoid(returns, steps, axis=-1) / span if span > 0 else returns[..., 0])


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
    func: Callable[..., np.ndarray], reps: int, seed: int,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """rliable's ``get_interval_estimates`` (percentile stratified bootstrap, 95%), made deterministic.

    Args:
        scores: per key, scores of shape (runs, tasks[, ...]), or a pair of them for a two-sample ``func``.
        func: the aggregate, returning a 1-D array.

    Returns:
        Point estimates per key, and CIs per key of shape (2, n_aggregates) (lower row, upper row).
    """
    with seeded_bootstrap(seed) as random_state:
        return rly.get_interval_estimates(
            dict(scores), func, reps=reps, confidence_interval_size=CONFIDENCE, random_state=random_state
        )


def stratified_t_interval(scores: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """The mean over envs of the means over seeds, with a Student-t interval whose variance sums the envs'
    (seeds are independent between envs) and whose degrees of freedom are Welch-Satterthwaite's.

    Args:
        scores: shape (seeds, envs), at least 2 seeds.
        confidence: the interval's level.
    """
    scores = np.asarray(scores, dtype=np.float64)
    n, envs = scores.shape
    mean = float(scores.mean())
    if n < 2:
        return mean, float("nan"), float("nan")
    variances = scores.var(axis=0, ddof=1) / n / envs**2  # each env's share of the variance of the mean
    total = float(variances.sum())
    if not np.isfinite(total):
        return mean, float("nan"), float("nan")
    if total == 0:
        return mean, mean, mean
    df = total**2 / float(np.sum(variances**2 / (n - 1)))
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * np.sqrt(total)
    return mean, mean - half, mean + half


def pointwise_means(samples: np.ndarray, reps: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means over seeds (axis 0) with 95% intervals by the interval rule (``interval_method``), for any number of
    metrics or curve points at once: Student-t below ``MIN_BOOTSTRAP_SEEDS`` seeds, else percentile bootstrap.

    The stratified bootstrap resamples seeds independently in every column, as one call per column would, at the
    cost of one call. Columns holding a NaN (a run too short for the metric), and all columns below 2 seeds (no
    spread), get NaN bounds.

    Args:
        samples: shape (seeds, ...).

    Returns:
        The means, lower bounds and upper bounds, each of shape ``samples.shape[1:]``.
    """
    samples = np.asarray(samples, dtype=np.float64)
    if interval_method(len(samples)) != BOOTSTRAP:
        return t_interval(samples)
    flat = samples.reshape(len(samples), -1)
    mean = flat.mean(axis=0)
    low, high = np.full_like(mean, np.nan), np.full_like(mean, np.nan)
    finite = np.isfinite(flat).all(axis=0)
    if finite.any():
        _, ci = interval_estimates({"x": flat[:, finite]}, _column_means, reps, seed)
        low[finite], high[finite] = ci["x"]
    shape = samples.shape[1:]
    return mean.reshape(shape), low.reshape(shape), high.reshape(shape)


def mean_estimates(scores: np.ndarray, reps: int, seed: int) -> list[Estimate]:
    """Each metric's mean over seeds with its 95% interval (see ``pointwise_means``).

    Args:
        scores: shape (seeds, metrics).
    """
    means, lows, highs = pointwise_means(scores, reps, seed)
    method = interval_method(len(scores))
    return [
        Estimate(float(m), float(lo), float(hi), len(scores), method if np.isfinite(lo) else NO_INTERVAL)
        for m, lo, hi in zip(means, lows, highs, strict=True)
    ]


def curve_bands(curves: np.ndarray, x: np.ndarray, reps: int, seed: int) -> list[Band]:
    """Mean curves over seeds with pointwise 95% intervals (see ``pointwise_means``).

    Args:
        curves: shape (seeds, curves, points), e.g. the return and the bias columns of a cell's runs.
        x: the env step (or other x) of each point.
    """
    means, lows, highs = pointwise_means(curves, reps, seed)
    return [Band(x, m, lo, hi) for m, lo, hi in zip(means, lows, highs, strict=True)]


def iqm_and_mean(
    score_matrices: Mapping[str, np.ndarray], reps: int, seed: int
) -> dict[str, tuple[Estimate, Estimate]]:
    """The IQM and the mean of each key's (seeds, envs) normalised scores, each with a 95% interval by the
    interval rule: the IQM, which has no Student-t form, gets a stratified bootstrap CI from
    ``MIN_AGGREGATE_BOOTSTRAP_SEEDS`` seeds and none below; the mean, a mean of means, gets a stratified bootstrap
    CI from ``MIN_BOOTSTRAP_SEEDS`` seeds and a Student-t interval below (``stratified_t_interval``).

    Args:
        score_matrices: per key, normalised scores of shape (seeds, envs).
    """
    bootstrapped = {
        key: m for key, m in score_matrices.items() if interval_method(m.shape[0], has_t_form=False) == BOOTSTRAP
    }
    points, cis = interval_estimates(bootstrapped, _iqm_and_mean, reps, seed) if bootstrapped else ({}, {})
    estimates = {}
    for key, matrix in score_matrices.items():
        n = matrix.shape[0]
        if key in bootstrapped:
            iqm, mean = (
                Estimate(float(point), float(low), float(high), n)
                for point, low, high in zip(points[key], *cis[key], strict=True)
            )
        else:
            nan = float("nan")
            iqm = Estimate(float(rly_metrics.aggregate_iqm(matrix)), nan, nan, n, NO_INTERVAL)
        if interval_method(n) != BOOTSTRAP:
            value, low, high = stratified_t_interval(matrix)
            mean = Estimate(value, low, high, n, interval_method(n) if np.isfinite(low) else NO_INTERVAL)
        estimates[key] = (iqm, mean)
    return estimates


def probability_of_improvement(x: np.ndarray, y: np.ndarray, reps: int, seed: int) -> Estimate:
    """P(X > Y): the probability that a run of X scores above a run of Y on a random env (Mann-Whitney U over
    runs, averaged over envs), with a stratified bootstrap CI when both have ``MIN_AGGREGATE_BOOTSTRAP_SEEDS``
    seeds or more (no interval below: it has no Student-t form).

    Args:
        x: scores of shape (seeds of X, envs).
        y: scores of shape (seeds of Y, the same envs).
    """
    n = min(len(x), len(y))
    if interval_method(n, has_t_form=False) != BOOTSTRAP:
        value = float(rly_metrics.probability_of_improvement(x, y))
        return Estimate(value, float("nan"), float("nan"), n, NO_INTERVAL)
    points, cis = interval_estimates({"x,y": (x, y)}, rly_metrics.probability_of_improvement, reps, seed)
    return Estimate(float(points["x,y"]), float(cis["x,y"][0, 0]), float(cis["x,y"][1, 0]), n)


def performance_profiles(
    score_matrices: Mapping[str, np.ndarray], taus: np.ndarray, reps: int, seed: int
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """rliable's performance profiles: per key, the fraction of runs (over seeds and envs) scoring above each tau,
    with bootstrap CIs for the keys with ``MIN_AGGREGATE_BOOTSTRAP_SEEDS`` seeds or more (the others get none: a
    profile has no Student-t form).

    Args:
        score_matrices: per key, normalised scores of shape (seeds, envs).
        taus: the thresholds.
    """
    with seeded_bootstrap(seed):  # create_performance_profile takes no random_state at all
        profiles, cis = rly.create_performance_profile(
            dict(score_matrices), taus, custom_profile_func=run_score_distribution, reps=reps
        )
    return profiles, {
        key: ci for key, ci in cis.items() if interval_method(len(score_matrices[key]), has_t_form=False) == BOOTSTRAP
    }


def run_score_distribution(scores: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """rliable's default profile (``score_distributions``: per tau, the fraction of all runs scoring above it), bit for
    bit, in one comparison: rliable calls a Python function per tau and bootstrap sample (a report's 2,000 samples
    of 100 taus took seconds)."""
    return np.mean(scores.reshape(1, -1) > np.asarray(taus).reshape(-1, 1), axis=1)


def _column_means(scores: np.ndarray) -> np.ndarray:
    return scores.mean(axis=0)


def _iqm_and_mean(scores: np.ndarray) -> np.ndarray:
    return np.array([rly_metrics.aggregate_iqm(scores), rly_metrics.aggregate_mean(scores)])
