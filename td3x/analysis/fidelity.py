"""Fidelity at a glance: how many of our TD3 evaluation points lie within the authors' published spread.

The authors' curves (``td3x/data/sfujim_learning_curves``) are 10 seeds of TD3 on gym ``-v1`` MuJoCo tasks,
evaluated every 5000 env steps. At each env step they evaluated, their 10-seed mean ± 2 std (population std,
ddof=0, as Table 1) is a band that about 95% of their own runs' points fall in; each of our runs' evaluations at
that step (every seed, every step both evaluated) is counted in or out of it. Steps the authors did not evaluate
are not counted. Their tasks are gym v1 with mujoco-py, ours Gymnasium: a point outside is a difference to look
at, not by itself a bug.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from td3x.analysis.cell_stats import CellStats
from td3x.analysis.metrics import Band
from td3x.analysis.paper import authors_curves, authors_steps, paper_env

SPREAD = 2.0  # the band is the authors' mean ± SPREAD population stds across their seeds


@dataclass(frozen=True, eq=False)  # holds an array
class Fidelity:
    """One cell's count of evaluation points within the authors' band.

    Attributes:
        row: our row label (a row of ``paper_row`` TD3).
        env_id: our env.
        paper_env: the authors' gym id of the same task, e.g. ``Hopper-v1``.
        seeds: how many of our runs were counted (the cell's complete runs).
        steps: the env steps both we and the authors evaluated.
        within: how many (seed, step) points lie within the band, bounds included.
        authors_within: the fraction of the authors' own points at ``steps`` within their band (for scale: about
            0.92 to 0.98 over all their steps, by env).
        ours: our runs' returns at ``steps``, shape (seeds, len(steps)).
        authors: the authors' ten runs' returns at ``steps``, shape (10, len(steps)).
    """

    row: str
    env_id: str
    paper_env: str
    seeds: int
    steps: np.ndarray
    within: int
    authors_within: float
    ours: np.ndarray
    authors: np.ndarray

    @property
    def points(self) -> int:
        """How many (seed, step) points were counted."""
        return self.seeds * len(self.steps)

    @property
    def text(self) -> str:
        """``k of n``."""
        return f"{self.within} of {self.points}"


def authors_band(env_id: str) -> Band | None:
    """The authors' TD3 curves of the task named like ``env_id`` as their 10-seed mean ± 2 std, or None.

    Args:
        env_id: a Gymnasium id; matched to the authors' gym ``-v1`` task by name.
    """
    curves = authors_curves(env_id)
    return None if curves is None else _spread_band(curves)


def _spread_band(curves: np.ndarray) -> Band:
    mean, std = curves.mean(axis=0), curves.std(axis=0)
    return Band(authors_steps(curves.shape[1]), mean, mean - SPREAD * std, mean + SPREAD * std)


def _inside(points: np.ndarray, band: Band, columns: np.ndarray) -> np.ndarray:
    """Which points (seeds, len(columns)) lie within the band's entries ``columns``, bounds included."""
    return (points >= band.low[columns]) & (points <= band.high[columns])


def fidelity(stats: CellStats) -> Fidelity | None:
    """Count a cell's evaluation points within the authors' band; None for an env without the authors' curves.

    Args:
        stats: the cell's numbers (its complete runs' curves and their shared evaluation steps).
    """
    curves, column = authors_curves(stats.cell.env_id), paper_env(stats.cell.env_id)
    if curves is None or column is None:
        return None
    band = _spread_band(curves)
    steps, ours, theirs = np.intersect1d(stats.steps, band.x, return_indices=True)
    within = int(_inside(stats.curves[:, ours], band, theirs).sum())
    authors_within = float(_inside(curves[:, theirs], band, theirs).mean()) if len(steps) else float("nan")
    cell, seeds = stats.cell, len(stats.curves)
    return Fidelity(
        cell.row, cell.env_id, column, seeds, steps, within, authors_within, stats.curves[:, ours], curves[:, theirs]
    )
