"""Fidelity: do a cell's runs differ from the authors' published TD3 curves, and by how much at most?

The authors' curves (``td3x/data/sfujim_learning_curves``) are 10 seeds of TD3 on gym ``-v1`` MuJoCo tasks,
evaluated every 5000 env steps. Every row of the report (TD3, and any other row: a control) on an env with those
curves is compared with them over the steps both evaluated, 0..T, T the last of them:

- **The primary test**, named before the runs it judges: Welch's two-sample t-test, at α = 0.05, of each seed's
  mean return over the evaluations 5k..T (every shared step after 0) against the same statistic of the authors'
  10 seeds. Per row, the p-values of its envs are Holm-adjusted (the family is the row's envs); a row differs from
  the authors on an env when the adjusted p is below α.
- **Secondary, descriptive**: the same test on the return at T, unadjusted.
- For each statistic: the difference of means (ours − authors) with its 95% Welch interval, and the equivalence
  margin Δ: the smallest symmetric margin that two one-sided tests (TOST) at α accept, i.e. the largest |bound|
  of the 90% Welch interval: differences beyond ±Δ are ruled out at α.
- **A held-out yardstick**: for n = our seeds, every split of the authors' 10 seeds into n held out and 10 − n
  kept, the same test of the held-out n against the kept; the share of splits whose p is at or below ours says
  how unusual our p would be for a draw of n of the authors' own runs (C(10, 3) = 120 splits, C(10, 5) = 252).

**Against a peer**: where the folder holds the peer row (``SB3 TD3``: Stable-Baselines3's TD3 under the same
protocol, ``scripts/sb3_reference.py``), every TD3 row on that env (another algorithm, AHE say, would differ for
its own reasons) is compared with it by the same test of the same statistic, Holm-adjusted per row. Against the
authors a difference may be the task's (v5 against v1) or the code's; against the peer, on the same v5 task, it is
the code's (or the implementation's choices).

Also kept, as a picture: how many of our (seed, step) points lie within the authors' 10-seed mean ± 2 std (the
band the curve plots draw). It is no test: a curve at half the authors' mean can stay inside a wide band.

Their tasks are gym v1 with mujoco-py, ours Gymnasium: a difference may be the env's, not the code's.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from td3x.analysis.cell_stats import CellStats
from td3x.analysis.metrics import Band
from td3x.analysis.paper import authors_curves, authors_steps, paper_env

SPREAD = 2.0  # the band is the authors' mean ± SPREAD population stds across their seeds
ALPHA = 0.05  # the primary test's level, and TOST's
CONFIDENCE = 0.95  # the difference of means' interval
PRIMARY = "run_mean"  # the statistic of the primary test
PEER_ROW = "SB3 TD3"  # scripts/sb3_reference.py's row: another implementation under td3x's protocol
PEER_OF = "TD3"  # the paper row the peer implements: only rows of it are compared with the peer
STATISTICS = {  # statistic name → how it reads in the report
    "run_mean": "mean return over evaluations 5k..T",
    "final": "return at T",
}


@dataclass(frozen=True)
class Welch:
    """Welch's two-sample comparison of ``x`` (ours) against ``y`` (the authors').

    Attributes:
        difference: mean(x) − mean(y).
        low: the 95% Welch interval's lower bound.
        high: its upper bound.
        p: the two-sided p-value of Welch's t-test.
        margin: the equivalence margin: the smallest Δ for which TOST at ``ALPHA`` rejects |difference| ≥ Δ.
        df: the Welch-Satterthwaite degrees of freedom.
    """

    difference: float
    low: float
    high: float
    p: float
    margin: float
    df: float


@dataclass(frozen=True, eq=False)  # holds arrays
class Comparison:
    """One statistic of one cell against the authors'.

    Attributes:
        ours: our seeds' values of the statistic.
        authors: the authors' 10 seeds' values.
        test: the Welch comparison of ours against theirs.
        held_out: the p-value of every split of the authors' seeds into ``len(ours)`` held out and the rest kept.
        holm_p: the p-value Holm-adjusted over the row's envs (the primary statistic only; NaN otherwise).
    """

    ours: np.ndarray
    authors: np.ndarray
    test: Welch
    held_out: np.ndarray
    holm_p: float = float("nan")

    @property
    def at_or_below(self) -> int:
        """How many held-out splits have a p at or below ours."""
        return int(np.sum(self.held_out <= self.test.p)) if np.isfinite(self.test.p) else 0

    @property
    def share(self) -> float:
        """The share of held-out splits whose p is at or below ours (NaN without splits or without our p)."""
        if not len(self.held_out) or not np.isfinite(self.test.p):
            return float("nan")
        return self.at_or_below / len(self.held_out)


@dataclass(frozen=True, eq=False)  # holds arrays
class Fidelity:
    """One cell against the authors' TD3 curves.

    Attributes:
        row: our row label.
        env_id: our env.
        paper_env: the authors' gym id of the same task, e.g. ``Hopper-v1``.
        seeds: how many of our runs were compared (the cell's complete runs).
        steps: the env steps both we and the authors evaluated (0..T).
        ours: our runs' returns at ``steps``, shape (seeds, len(steps)).
        authors: the authors' ten runs' returns at ``steps``, shape (10, len(steps)).
        run_mean: the primary statistic's comparison (each seed's mean return over the steps after 0).
        final: the return at T's comparison (descriptive).
        within: how many (seed, step) points lie within the authors' mean ± 2 std, bounds included.
    """

    row: str
    env_id: str
    paper_env: str
    seeds: int
    steps: np.ndarray
    ours: np.ndarray
    authors: np.ndarray
    run_mean: Comparison
    final: Comparison
    within: int

    @property
    def points(self) -> int:
        """How many (seed, step) points were counted against the band."""
        return self.seeds * len(self.steps)

    @property
    def text(self) -> str:
        """``k of n`` points within the band."""
        return f"{self.within} of {self.points}"

    @property
    def comparisons(self) -> dict[str, Comparison]:
        """The comparisons by statistic name (``STATISTICS``' keys)."""
        return {"run_mean": self.run_mean, "final": self.final}

    @property
    def differs(self) -> bool:
        """The primary test's outcome: the Holm-adjusted p of the mean over 5k..T is below ``ALPHA``."""
        return bool(self.run_mean.holm_p < ALPHA)


# ---------------------------------------------------------------------------------------------------- statistics
def welch(x: np.ndarray, y: np.ndarray, alpha: float = ALPHA, confidence: float = CONFIDENCE) -> Welch:
    """Welch's comparison of two samples: difference of means, its interval, p-value and TOST margin.

    NaN throughout when a sample has fewer than 2 values; p and the bounds are NaN when neither sample spreads.

    Args:
        x: the first sample (ours).
        y: the second sample (the authors').
        alpha: TOST's level (the margin comes from the 1 − 2α interval).
        confidence: the level of the reported interval.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    nan = float("nan")
    if len(x) < 2 or len(y) < 2:
        difference = float(x.mean() - y.mean()) if len(x) and len(y) else nan
        return Welch(difference, nan, nan, nan, nan, nan)
    difference = float(x.mean() - y.mean())
    vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    se = math.sqrt(vx + vy)
    if se == 0:
        return Welch(difference, nan, nan, nan, nan, nan)
    df = (vx + vy) ** 2 / (vx**2 / (len(x) - 1) + vy**2 / (len(y) - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se
    tost_half = float(stats.t.ppf(1 - alpha, df)) * se  # the 1 - 2α interval's half-width
    p = float(2 * stats.t.sf(abs(difference) / se, df))
    margin = abs(difference) + tost_half  # = max(|low|, |high|) of the 1 - 2α interval
    return Welch(difference, difference - half, difference + half, p, margin, float(df))


def welch_p(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Welch's two-sided p-values of rows of ``x`` against rows of ``y`` (the last axis holds the samples)."""
    with warnings.catch_warnings():  # groups without spread (a solved task): NaN p, no warning
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(stats.ttest_ind(x, y, axis=-1, equal_var=False).pvalue, dtype=np.float64)


def held_out_p(authors: np.ndarray, n: int) -> np.ndarray:
    """The yardstick: for every split of the authors' seeds into ``n`` held out and the rest kept, Welch's p of the
    held-out values against the kept ones. Empty when no split leaves 2 seeds on each side.

    Args:
        authors: one statistic's value per authors' seed.
        n: how many seeds to hold out (our number of seeds).
    """
    authors = np.asarray(authors, dtype=np.float64)
    if n < 2 or len(authors) - n < 2:
        return np.empty(0)
    held = np.array(list(itertools.combinations(range(len(authors)), n)))
    kept = np.array([np.setdiff1d(np.arange(len(authors)), split) for split in held])
    return welch_p(authors[held], authors[kept])


def holm(p_values: Iterable[float]) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (NaN ones are left out of the family and stay NaN).

    The k-th smallest of m p-values becomes max over j ≤ k of min(1, (m − j + 1) · p_(j)).
    """
    p = np.asarray(list(p_values), dtype=np.float64)
    adjusted = np.full_like(p, np.nan)
    finite = np.flatnonzero(np.isfinite(p))
    order = finite[np.argsort(p[finite], kind="stable")]
    m = len(order)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p[index])))
        adjusted[index] = running
    return adjusted


@dataclass(frozen=True, eq=False)  # holds arrays
class PeerComparison:
    """One row's primary statistic against the peer row's on one env, over the same evaluation steps.

    Attributes:
        row: the compared row's label.
        env_id: the env.
        ours: the row's seeds' mean return over 5k..T.
        peer: the peer's seeds' values of the same statistic.
        test: the Welch comparison of ours against the peer's.
        holm_p: the p-value Holm-adjusted over the row's envs with a peer.
    """

    row: str
    env_id: str
    ours: np.ndarray
    peer: np.ndarray
    test: Welch
    holm_p: float = float("nan")


# ---------------------------------------------------------------------------------------------------- cells
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


def per_seed_statistics(curves: np.ndarray, steps: np.ndarray) -> dict[str, np.ndarray]:
    """Each seed's statistics over the evaluations at ``steps``: the mean over those after step 0, and the last.

    Args:
        curves: returns, shape (seeds, len(steps)).
        steps: the env steps of the columns (0..T).
    """
    after_start = steps > 0
    run_mean = curves[:, after_start].mean(axis=1) if after_start.any() else np.full(len(curves), np.nan)
    final = curves[:, -1] if len(steps) else np.full(len(curves), np.nan)
    return {"run_mean": run_mean, "final": final}


def compare(ours: np.ndarray, authors: np.ndarray) -> Comparison:
    """One statistic of our seeds against the authors' seeds, with the held-out yardstick.

    Args:
        ours: our seeds' values.
        authors: the authors' seeds' values.
    """
    return Comparison(ours, authors, welch(ours, authors), held_out_p(authors, len(ours)))


def fidelity(stats: CellStats) -> Fidelity | None:
    """A cell against the authors' TD3 curves (Holm's adjustment not yet applied: see ``fidelities``); None for an
    env without the authors' curves.

    Args:
        stats: the cell's numbers (its complete runs' curves and their shared evaluation steps).
    """
    curves, column = authors_curves(stats.cell.env_id), paper_env(stats.cell.env_id)
    if curves is None or column is None:
        return None
    band = _spread_band(curves)
    steps, ours_columns, their_columns = np.intersect1d(stats.steps, band.x, return_indices=True)
    ours, theirs = stats.curves[:, ours_columns], curves[:, their_columns]
    inside = (ours >= band.low[their_columns]) & (ours <= band.high[their_columns])
    ours_stats, their_stats = per_seed_statistics(ours, steps), per_seed_statistics(theirs, steps)
    run_mean, final = (compare(ours_stats[name], their_stats[name]) for name in STATISTICS)
    cell = stats.cell
    return Fidelity(cell.row, cell.env_id, column, len(ours), steps, ours, theirs, run_mean, final, int(inside.sum()))


def fidelities(cells: Iterable[CellStats]) -> list[Fidelity]:
    """Every cell with the authors' curves against them, in the order given, the primary p-values Holm-adjusted
    per row (over that row's envs).

    Args:
        cells: the cells' numbers.
    """
    found = [result for stats in cells if (result := fidelity(stats)) is not None]
    adjusted = holm_by_row([f.row for f in found], [f.run_mean.test.p for f in found])
    return [replace(f, run_mean=replace(f.run_mean, holm_p=p)) for f, p in zip(found, adjusted, strict=True)]


def peer_comparisons(results: list[Fidelity], rows: Collection[str], peer_row: str = PEER_ROW) -> list[PeerComparison]:
    """Each of ``rows`` against the peer row, on each env where both were compared with the authors' curves over
    the same steps: Welch's test of each seed's mean return over 5k..T, Holm-adjusted per row over its envs.

    Args:
        results: from :func:`fidelities`.
        rows: the row labels to compare (the rows of the algorithm the peer implements).
        peer_row: the peer's row label.
    """
    peers = {f.env_id: f for f in results if f.row == peer_row}
    found = [
        PeerComparison(f.row, f.env_id, f.run_mean.ours, peer.run_mean.ours, welch(f.run_mean.ours, peer.run_mean.ours))
        for f in results
        if f.row in rows and (peer := peers.get(f.env_id)) is not None and np.array_equal(f.steps, peer.steps)
    ]
    adjusted = holm_by_row([c.row for c in found], [c.test.p for c in found])
    return [replace(c, holm_p=p) for c, p in zip(found, adjusted, strict=True)]


def holm_by_row(rows: list[str], p_values: list[float]) -> list[float]:
    """Holm's adjustment within each row's family of p-values (one per env), in the order given."""
    adjusted = [float("nan")] * len(rows)
    for row in dict.fromkeys(rows):
        members = [i for i, name in enumerate(rows) if name == row]
        for i, p in zip(members, holm(p_values[i] for i in members), strict=True):
            adjusted[i] = float(p)
    return adjusted
