"""The fidelity section: do a cell's runs differ from the authors' published TD3 curves, and by how much at most?

The authors' curves (``td3x/data/sfujim_learning_curves``) are 10 seeds of TD3 on gym ``-v1`` MuJoCo tasks,
evaluated every 5000 env steps. Every row of the report (TD3, and any other row: a control) on an env with those
curves is compared with them over the steps both evaluated, 0..T, T the last of them:

- **The primary test**, named before the runs it judges: Welch's two-sample t-test, at α = 0.05, of each seed's
  mean return over the evaluations 5k..T (every shared step after 0) against the same statistic of the authors'
  10 seeds. Per row, the p-values of its envs are Holm-adjusted (the family is the row's envs); a row differs from
  the authors on an env when the adjusted p is below α.
- **Secondary, descriptive**: the same test on the return at T, unadjusted.
- For each statistic: the difference of means (ours − authors) with its 95% Welch interval, and the equivalence
  margin Δ beyond which differences are ruled out (TOST at α; ``two_sample``).
- **A held-out yardstick**: for n = our seeds, every split of the authors' 10 seeds into n held out and 10 − n
  kept, the same test of the held-out n against the kept; the share of splits whose p is at or below ours says
  how unusual our p would be for a draw of n of the authors' own runs (C(10, 3) = 120 splits, C(10, 5) = 252).

Also kept, as a picture: how many of our (seed, step) points lie within the authors' 10-seed mean ± 2 std (the
band the curve plots draw). It is no test: a curve at half the authors' mean can stay inside a wide band.

Their tasks are gym v1 with mujoco-py, ours Gymnasium: a difference may be the env's, not the code's. Here are the
section's numbers, tables (``fidelity.csv``, the display tables), Markdown, and what the curve plots draw of it (the
authors' band, each row's p in its legend entry).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from td3x.analysis import tables
from td3x.analysis.cell_stats import CellStats
from td3x.analysis.metrics import Band
from td3x.analysis.paper import AUTHORS_EVAL_EVERY, authors_curves, authors_steps, paper_env
from td3x.analysis.tables import (
    EMPTY,
    MARGIN_COLUMN,
    difference_text,
    margin_text,
    number,
    p_text,
    range_text,
    spread_text,
    statistic_or_nan,
    welch_csv_columns,
)
from td3x.analysis.two_sample import ALPHA, Comparison, compare, holm_by_row

SPREAD = 2.0  # the band is the authors' mean ± SPREAD population stds across their seeds
PRIMARY = "run_mean"  # the statistic of the primary test
STATISTICS = {  # statistic name → how it reads in the report
    "run_mean": "mean return over evaluations 5k..T",
    "final": "return at T",
}


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


# ---------------------------------------------------------------------------------------------------- tables
def frames(results: list[Fidelity]) -> dict[str, pd.DataFrame]:
    """The section's table by name, ``fidelity`` (none without a cell on an env with the authors' curves)."""
    return {"fidelity": fidelity_frame(results)} if results else {}


def fidelity_frame(results: list[Fidelity]) -> pd.DataFrame:
    """``fidelity.csv``: one line per cell of an env with the authors' curves. Per statistic (``run_mean``, the
    primary: each seed's mean return over the evaluations 5k..T; ``final``: the return at T), our and the authors'
    means, the difference with its 95% Welch interval, Welch's p (and Holm's for the primary), the TOST margin and
    the held-out yardstick; then the band count and the returns at the first and last step both evaluated."""
    return pd.DataFrame(
        {
            "env": [f.env_id for f in results],
            "authors_env": [f.paper_env for f in results],
            "seeds": [f.seeds for f in results],
            "authors_seeds": [len(f.authors) for f in results],
            "steps": [len(f.steps) for f in results],
            "first_step": [int(f.steps[0]) if len(f.steps) else None for f in results],
            "last_step": [int(f.steps[-1]) if len(f.steps) else None for f in results],
            "outcome": [outcome(f) for f in results],
            **{
                name: values
                for statistic in ("run_mean", "final")
                for name, values in _test_columns([f.comparisons[statistic] for f in results], statistic).items()
            },
            "within": [f.within for f in results],
            "points": [f.points for f in results],
            f"within mean ± {SPREAD:g} std": [f.text for f in results],
            **{name: values for end in ("first", "last") for name, values in _ends_columns(results, end).items()},
        },
        index=pd.Index([f.row for f in results], name="row"),
    )


def _test_columns(comparisons: list[Comparison], statistic: str) -> dict[str, list[float | int]]:
    columns: dict[str, list[float | int]] = {
        f"{statistic}_ours": [float(c.ours.mean()) for c in comparisons],
        f"{statistic}_authors": [float(c.authors.mean()) for c in comparisons],
        **welch_csv_columns(statistic, [c.test for c in comparisons]),
    }
    if statistic == PRIMARY:
        columns[f"{statistic}_holm_p"] = [c.holm_p for c in comparisons]
    columns |= {
        f"{statistic}_margin": [c.test.margin for c in comparisons],
        f"{statistic}_held_out_splits": [len(c.held_out) for c in comparisons],
        f"{statistic}_held_out_at_or_below": [c.at_or_below for c in comparisons],
        f"{statistic}_held_out_share": [c.share for c in comparisons],
    }
    return columns


def outcome(result: Fidelity) -> str:
    """The primary test's outcome in words."""
    if not np.isfinite(result.run_mean.holm_p):
        return "no test"
    return "differs" if result.differs else "no difference detected"


def held_out_text(comparison: Comparison) -> str:
    """``k of N (x%)``: how many of the held-out splits have a p at or below ours; ``—`` without splits."""
    if not len(comparison.held_out) or not np.isfinite(comparison.test.p):
        return EMPTY
    return f"{comparison.at_or_below} of {len(comparison.held_out)} ({100 * comparison.share:.1f}%)"


def fidelity_test_frame(results: list[Fidelity], statistic: str) -> pd.DataFrame:
    """The report's display table of one statistic's test: per row and env, our and the authors' means, the
    difference [95% Welch interval], Welch's p (Holm's too, and the outcome, for the primary statistic), the margin
    beyond which differences are ruled out (TOST at α), and the held-out yardstick.

    Args:
        results: the cells against the authors' curves.
        statistic: ``run_mean`` (the primary) or ``final``.
    """
    comparisons = [f.comparisons[statistic] for f in results]
    columns: dict[str, list[object]] = {
        "env": [f.env_id for f in results],
        "seeds": [f.seeds for f in results],
        "T": [int(f.steps[-1]) if len(f.steps) else EMPTY for f in results],
        "ours": [number(float(c.ours.mean())) for c in comparisons],
        "authors'": [number(float(c.authors.mean())) for c in comparisons],
        "ours − authors [95% CI]": [difference_text(c.test) for c in comparisons],
        "Welch p": [p_text(c.test.p) for c in comparisons],
    }
    if statistic == PRIMARY:
        columns["Holm p"] = [p_text(c.holm_p) for c in comparisons]
    columns[MARGIN_COLUMN] = [margin_text(c.test) for c in comparisons]
    columns["held-out splits with p ≤ ours"] = [held_out_text(c) for c in comparisons]
    if statistic == PRIMARY:
        columns["outcome"] = [outcome(f) for f in results]
    return pd.DataFrame(columns, index=pd.Index([f.row for f in results], name="row"))


FIDELITY_ENDS = {"first": 0, "last": -1}  # the untrained policy (step 0) and the end of the shorter curves


def fidelity_text_columns(end: str) -> list[str]:
    """The names of the display columns of ours and the authors' returns at ``end`` (first or last)."""
    return [f"ours at {end}_step: mean [min, max]", f"authors' at {end}_step: mean ± std"]


def _ends_columns(counts: list[Fidelity], end: str) -> dict[str, list[object]]:
    """Ours and the authors' returns at the first or the last step both evaluated: numbers and texts."""
    ours = [f.ours[:, FIDELITY_ENDS[end]] if len(f.steps) else np.empty(0) for f in counts]
    authors = [f.authors[:, FIDELITY_ENDS[end]] if len(f.steps) else np.empty(0) for f in counts]
    ours_text, authors_text = fidelity_text_columns(end)
    return {
        f"ours_{end}_mean": [statistic_or_nan(values, np.mean) for values in ours],
        f"ours_{end}_min": [statistic_or_nan(values, np.min) for values in ours],
        f"ours_{end}_max": [statistic_or_nan(values, np.max) for values in ours],
        f"authors_{end}_mean": [statistic_or_nan(values, np.mean) for values in authors],
        f"authors_{end}_std": [statistic_or_nan(values, np.std) for values in authors],
        ours_text: [range_text(values) for values in ours],
        authors_text: [spread_text(values) for values in authors],
    }


# ---------------------------------------------------------------------------------------------------- Markdown
FIDELITY_TITLE = "## Fidelity to the authors' TD3 curves"


def markdown(results: list[Fidelity]) -> str:
    """The report's fidelity section (its peer part is ``peer.markdown``).

    Args:
        results: from :func:`fidelities`.
    """
    if not results:
        return (
            f"{FIDELITY_TITLE}\n\nNo row on an env with the authors' published curves (HalfCheetah, Hopper, "
            "Walker2d, Ant, Reacher, InvertedPendulum, InvertedDoublePendulum)."
        )
    primary, secondary = (fidelity_test_frame(results, name) for name in STATISTICS)
    frame = fidelity_frame(results)
    counts = frame[["env", "authors_env", "seeds", "steps", "last_step", "within mean ± 2 std"]]
    ends = ["first_step", *fidelity_text_columns("first"), "last_step", *fidelity_text_columns("last")]
    returns = frame[["env", *ends]]
    alpha = f"{ALPHA:g}"
    return (
        f"{FIDELITY_TITLE}\n\nThe authors' published TD3 curves (sfujim/TD3, `learning_curves/`) are 10 seeds on "
        "the gym v1 MuJoCo tasks (mujoco-py, other dynamics than Gymnasium v5), evaluated every 5000 env steps. "
        "Every row on an env with those curves is compared with them over the env steps both evaluated, 0..T: TD3 "
        "rows, and any other row as a control that the test should tell apart. A difference may be the task's (v5 "
        "against v1) as much as the code's.\n\n"
        f"**The primary test**, named before the runs it judges: Welch's two-sample t-test, at α = {alpha}, of each "
        f"seed's {STATISTICS[PRIMARY]} (every shared evaluation after step 0) against the same statistic of the "
        "authors' 10 seeds. The many comparisons are read per row: its envs' p-values are Holm-adjusted (*Holm p*), "
        f"and the row *differs* from the authors on an env when its Holm p is below {alpha}. The return at T is "
        "a secondary test, descriptive, unadjusted. Beside each p: the difference of means (ours − authors) with "
        "its 95% Welch interval; *ruled out beyond*, the equivalence margin: the smallest Δ that two one-sided "
        f"tests (TOST) at α = {alpha} accept, the largest |bound| of the 90% Welch interval, so differences beyond "
        "±Δ are ruled out and smaller ones are not (no difference detected is not equivalence); and the held-out "
        "yardstick: for n = our seeds, every split of the authors' 10 seeds into n held out and 10 − n kept, the "
        "same test of the held-out seeds against the kept ones, and how many of those splits have a p at or below "
        "ours. A small share says our p is rarer than a draw of the authors' own seeds gives; about half, that it "
        "is typical of one. `fidelity.csv` has every number."
        f"\n\n**Primary: {STATISTICS[PRIMARY]}**\n\n{tables.markdown(primary)}\n\n"
        f"**Secondary (descriptive): {STATISTICS['final']}**\n\n{tables.markdown(secondary)}\n\n"
        "The curve plots draw the authors' 10-seed mean ± 2 std (population std) in black and count our evaluation "
        "points (every seed at every step both evaluated) within it, bounds included. The count is a picture, not a "
        "test: a curve at half the authors' mean can stay inside a wide band."
        f"\n\n{tables.markdown(counts)}\n\n"
        "The returns at the first and the last step both evaluated: the untrained policy (step 0) and the end of "
        "our runs, our seeds' mean [min, max] beside the authors' 10-seed mean ± std. A gap at step 0 "
        "comes before any learning: it points to a difference between the tasks or the initial policies."
        f"\n\n{tables.markdown(returns)}"
    )


# ---------------------------------------------------------------------------------------------------- curve plots
def curve_label(row: str, test: Fidelity | None) -> str:
    """A row's legend entry: its name, and where it was tested against the authors' curve, the outcome's numbers."""
    if test is None:
        return row
    p = p_text(test.run_mean.test.p)
    relation = f"< {p[1:]}" if p.startswith("<") else f"= {p}"  # p < 0.001, not p = <0.001
    return f"{row}: p {relation}, {test.text} points"


def authors_band_until(env_id: str, max_step: int) -> Band | None:
    """The authors' TD3 mean ± 2 std over our runs' range of steps (at least their first two evaluations)."""
    band = authors_band(env_id)
    if band is None:
        return None
    keep = band.x <= max(max_step, AUTHORS_EVAL_EVERY)
    return Band(band.x[keep], band.mean[keep], band.low[keep], band.high[keep])
