"""How a study scores one seed of a trial, from the evaluations in its ``eval.csv``.

The metrics are those td3x logs (``summary.json``'s ``final_return`` and ``last10_return``) and the mean return
over all the evaluations, the default: an area under the learning curve, which rewards learning early and late.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from td3x.algo.seed_statistics import CONFIDENCE, last10_return, t_interval
from td3x.rundir.eval_file import read_evals
from td3x.rundir.layout import EVAL_FILE

METRICS: dict[str, Callable[[Sequence[float]], float]] = {
    "mean_return": lambda returns: float(np.mean(returns)),  # the mean over every evaluation, step 0 included
    "final_return": lambda returns: float(returns[-1]),  # the last evaluation's
    "last10_return": lambda returns: float(last10_return(returns)),  # the paper's: the last ten evaluations'
}


def eval_returns(seed_dir: Path, until_step: int | None) -> list[float]:
    """Each evaluation's mean return (``return_mean``) up to env step ``until_step`` (None: all), in order.

    Raises:
        RunFileError: ``eval.csv`` cannot be the seed's evaluations (one line naming the file and why).
    """
    evals = read_evals(seed_dir / EVAL_FILE)
    kept = evals if until_step is None else evals[evals["step"] <= until_step]
    return [float(value) for value in kept["return_mean"]]


def score_until(seed_dir: Path, metric: str, until_step: int | None) -> float:
    """A seed's ``metric`` over its evaluations up to ``until_step`` (None: all); NaN before the first."""
    returns = eval_returns(seed_dir, until_step)
    return METRICS[metric](returns) if returns else math.nan


def mean_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """The mean of per-seed scores and its Student-t interval (seeds are independent draws); NaN ends for one."""
    mean, low, high = t_interval(values, confidence)
    return float(mean), float(low), float(high)
