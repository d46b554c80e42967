"""A run's score and an interval over seeds, defined once for the run's summary, the report and td3x-tune.

- **The paper's last-10 metric** (Table 2: "average return over the last 10 evaluations"): the mean of a run's
  last ``PAPER_LAST_EVALUATIONS`` evaluation returns, or of all of them in a shorter run.
- **The Student-t interval** of a mean over seeds (independent draws): mean ± t((1 + confidence) / 2, n − 1)·s/√n,
  s with ddof=1.
- **A stalled actor**: a run whose last actor gradient norm is below ``STALLED_ACTOR_NORM`` (training warns of it,
  the report counts it).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

PAPER_LAST_EVALUATIONS = 10
CONFIDENCE = 0.95

# Below this actor gradient norm at a run's end, its actor has most likely stopped learning: tanh saturated on the
# whole batch (exactly 0 once every output rounds to ±1). A heuristic: in td3x's published runs the last norms fall
# in two groups, up to 5e-6 (policies whose evaluation returns no longer change) and from 0.058 (learning). Early in
# training healthy actors can dip below it and recover, so only a run's last norm is judged by it.
STALLED_ACTOR_NORM = 1e-3


def last10_return(returns: ArrayLike) -> np.ndarray:
    """The paper's last-10 metric along the last axis: a run's evaluation returns in order give a 0-d array, curves
    of shape (seeds, evaluations) one score per seed. At least one evaluation."""
    return np.asarray(returns, dtype=np.float64)[..., -PAPER_LAST_EVALUATIONS:].mean(axis=-1)


def t_interval(samples: ArrayLike, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means over seeds (axis 0) with Student-t intervals, column by column; NaN bounds below 2 seeds or where a
    column holds a NaN.

    Args:
        samples: shape (seeds, ...).
        confidence: the interval's level.

    Returns:
        The means, lower bounds and upper bounds, each of shape ``samples.shape[1:]``.
    """
    # scipy only where an interval is asked for: a run's summary, on the training path, needs the last-10 mean alone
    from scipy import stats

    samples = np.asarray(samples, dtype=np.float64)
    n = len(samples)
    mean = samples.mean(axis=0)
    if n < 2:
        nan = np.full_like(mean, np.nan)
        return mean, nan, nan.copy()
    half = stats.t.ppf(0.5 + confidence / 2, n - 1) * samples.std(axis=0, ddof=1) / np.sqrt(n)
    return mean, mean - half, mean + half
