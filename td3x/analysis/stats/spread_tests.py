"""Tests of spread between two groups of runs, defined once for a registration's ``spread`` comparisons
(``comparisons.kinds``) and the seed-sources section's power (``seed_study_checks``).

Every function works row by row: the last axis holds one group's runs, any leading axes are replicates (the
simulation passes thousands of samples at once; the report one sample, a 1-D array, and gets 0-d arrays back).

- Brown-Forsythe's transform: each run's absolute deviation from its group's median.
- The two-sided Brown-Forsythe test of equal spread: the pooled two-sample t-test of the deviations, which is
  scipy's ``levene(center="median")`` for two groups.
- Brown-Forsythe TOST of "SD(x) / SD(y) lies inside (low, high)": two one-sided Welch t-tests of x's deviations
  against ``high`` (and ``low``) times y's; scaling a group's runs by r scales its deviations by r, so each one-sided
  test is Brown-Forsythe's at the bound. The TOST p is the larger one-sided p.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from td3x.analysis.stats.two_sample import welch_t


def welch_t_df(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Welch's t of the rows of ``x`` against the rows of ``y`` and its Welch-Satterthwaite df (NaN where neither
    row spreads)."""
    vx, vy = x.var(axis=-1, ddof=1) / x.shape[-1], y.var(axis=-1, ddof=1) / y.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (vx + vy) ** 2 / (vx**2 / (x.shape[-1] - 1) + vy**2 / (y.shape[-1] - 1))
    return welch_t(x, y), df


def deviations(x: np.ndarray) -> np.ndarray:
    """Absolute deviations from each row's median (Brown-Forsythe's transform)."""
    return np.abs(x - np.median(x, axis=-1, keepdims=True))


def bf_one_sided_p(x: np.ndarray, y: np.ndarray, ratio: float, alternative: str) -> np.ndarray:
    """One half of the Brown-Forsythe TOST: Welch's one-sided p of x's deviations against ``ratio`` times y's.

    Args:
        x: the source condition's runs (last axis).
        y: the reference condition's runs (all_vary's).
        ratio: the SD ratio at the bound.
        alternative: ``less`` (H0: SD(x)/SD(y) >= ratio) or ``greater`` (H0: SD(x)/SD(y) <= ratio).
    """
    t, df = welch_t_df(deviations(x), ratio * deviations(y))
    if alternative == "less":
        return np.asarray(stats.t.cdf(t, df))
    if alternative == "greater":
        return np.asarray(stats.t.sf(t, df))
    raise ValueError(f"alternative must be 'less' or 'greater', not {alternative!r}")


def bf_tost_p(x: np.ndarray, y: np.ndarray, low: float, high: float) -> np.ndarray:
    """TOST p of 'SD(x)/SD(y) lies in (low, high)', Brown-Forsythe style: the larger of the one-sided p-values at
    ``high`` (H0: ratio >= high) and at ``low`` (H0: ratio <= low)."""
    return np.maximum(bf_one_sided_p(x, y, high, "less"), bf_one_sided_p(x, y, low, "greater"))


def bf_p(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The two-sided Brown-Forsythe p of equal spread, row by row: scipy's ``levene(center="median")`` for two
    groups, i.e. the pooled two-sample t-test of the absolute deviations from each group's median (NaN where
    neither group spreads)."""
    dx, dy = deviations(x), deviations(y)
    nx, ny = dx.shape[-1], dy.shape[-1]
    pooled = ((nx - 1) * dx.var(axis=-1, ddof=1) + (ny - 1) * dy.var(axis=-1, ddof=1)) / (nx + ny - 2)
    with np.errstate(divide="ignore", invalid="ignore"):  # no deviation on either side: NaN
        t = (dx.mean(axis=-1) - dy.mean(axis=-1)) / np.sqrt(pooled * (1 / nx + 1 / ny))
    return np.asarray(2 * stats.t.sf(np.abs(t), nx + ny - 2))
