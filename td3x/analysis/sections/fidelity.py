"""The fidelity section's numbers: do a cell's runs differ from the authors' published TD3 curves, and are they
equivalent to them within a bound?

The authors' curves (``td3x/data/sfujim_learning_curves``) are 10 seeds of TD3 on gym ``-v1`` MuJoCo tasks,
evaluated every 5000 env steps. Every row of the report (TD3, and any other row: a control) on an env with those
curves is compared with them over the steps both evaluated, 0..T, T the last of them. Every test here is post hoc:
a test against the authors' curves fixed before the runs is a registration file's (an ``authors_curves`` side),
judged by ``td3x-report --registration``.

- **The primary statistic**: each seed's mean return over the evaluations 5k..T (every shared step after 0),
  against the same statistic of the authors' 10 seeds. Welch's two-sample t-test at α = 0.05, Holm-adjusted per
  row (the family is the row's envs): a row differs from the authors on an env when the adjusted p is below α.
- **Equivalence** (``equivalence``): TOST at a bound, the 90% Welch interval and whether it lies inside the bound,
  the TOST p Holm-adjusted per row, and the minimum detectable difference (MDD) of the difference test at the
  design (n seeds against the authors' 10, the authors' SD on both sides).
- **The exact permutation test** of the pooled seeds on Welch's t (``two_sample``), with the smallest p the
  labellings can give.
- **Secondary, descriptive**: the same on the return at T, unadjusted; and, as a sensitivity check, the mean over
  the evaluations after the warm-up (env steps s with env.random_steps < s ≤ T, both sides), where the first
  evaluations measure an untrained td3x policy against the authors' policies trained during their warm-up.

Also kept, as a picture: how many of our (seed, step) points lie within the authors' 10-seed mean ± 2 std (the
band the curve plots draw). It is no test: a curve at half the authors' mean can stay inside a wide band.

Their tasks are gym v1 with mujoco-py, ours Gymnasium: a difference may be the env's, not the code's. The tables and
Markdown are ``fidelity_tables``'.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np

from td3x.analysis.reading.cell_stats import CellStats
from td3x.analysis.reading.paper import authors_curves, authors_steps, paper_env
from td3x.analysis.render.tables import p_text
from td3x.analysis.stats.equivalence import BoundRule, Tost, detectable_difference, post_hoc_bound, tost
from td3x.analysis.stats.metrics import Band
from td3x.analysis.stats.two_sample import ALPHA, Comparison, compare, holm_by_row

SPREAD = 2.0  # the band is the authors' mean ± SPREAD population stds across their seeds
PRIMARY = "run_mean"  # the statistic of the primary test
SENSITIVITY = "after_warmup"  # the sensitivity table's: the mean over the evaluations after the warm-up
STATISTICS = {  # statistic name → how it reads in the report
    "run_mean": "mean return over evaluations 5k..T",
    "final": "return at T",
    "after_warmup": "mean return over evaluations after the warm-up (env.random_steps < s ≤ T)",
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
        after_warmup: the mean over the steps after env.random_steps (sensitivity, descriptive).
        equivalence: per statistic (``STATISTICS``' keys), TOST at the cell's bound with the design's MDD.
        seed_ids: our runs' seeds.
        random_steps: the cell's env.random_steps (from its runs' config.yaml).
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
    after_warmup: Comparison
    equivalence: dict[str, Tost]
    seed_ids: tuple[int, ...] = ()
    random_steps: int = 0

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
        return {"run_mean": self.run_mean, "final": self.final, "after_warmup": self.after_warmup}

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


def per_seed_statistics(curves: np.ndarray, steps: np.ndarray, random_steps: int = 0) -> dict[str, np.ndarray]:
    """Each seed's statistics over the evaluations at ``steps``: the mean over those after step 0, the last, and
    the mean over those after the warm-up (``random_steps`` < step).

    Args:
        curves: returns, shape (seeds, len(steps)).
        steps: the env steps of the columns (0..T).
        random_steps: env.random_steps of the runs.
    """

    def mean_after(first: int) -> np.ndarray:
        after = steps > first
        return curves[:, after].mean(axis=1) if after.any() else np.full(len(curves), np.nan)

    final = curves[:, -1] if len(steps) else np.full(len(curves), np.nan)
    return {"run_mean": mean_after(0), "final": final, "after_warmup": mean_after(random_steps)}


def random_steps_of(stats: CellStats) -> int:
    """The cell's env.random_steps, read from its runs' config.yaml (0 where a config lacks it)."""
    values = {int(run.config.get("env", {}).get("random_steps", 0)) for run in stats.cell.runs}
    return max(values) if values else 0


def _equivalence(comparison: Comparison, rule: BoundRule) -> Tost:
    """TOST at the post-hoc bound (``rule.fraction`` × the authors' mean), MDD at the authors' SD on both sides."""
    sd = float(comparison.authors.std(ddof=1)) if len(comparison.authors) > 1 else float("nan")
    bound = post_hoc_bound(rule, float(comparison.authors.mean()), "the authors'")
    return tost(comparison.test, bound, detectable_difference(sd, len(comparison.ours), sd, len(comparison.authors)))


def fidelity(stats: CellStats, rule: BoundRule | None = None) -> Fidelity | None:
    """A cell against the authors' TD3 curves (Holm's adjustment not yet applied: see ``fidelities``); None for an
    env without the authors' curves.

    Args:
        stats: the cell's numbers (its complete runs' curves and their shared evaluation steps).
        rule: where the equivalence bounds come from (the default rule when None).
    """
    curves, column = authors_curves(stats.cell.env_id), paper_env(stats.cell.env_id)
    if curves is None or column is None:
        return None
    rule = rule or BoundRule()
    band = _spread_band(curves)
    steps, ours_columns, their_columns = np.intersect1d(stats.steps, band.x, return_indices=True)
    ours, theirs = stats.curves[:, ours_columns], curves[:, their_columns]
    inside = (ours >= band.low[their_columns]) & (ours <= band.high[their_columns])
    random_steps = random_steps_of(stats)
    ours_stats, their_stats = (per_seed_statistics(values, steps, random_steps) for values in (ours, theirs))
    compared = {name: compare(ours_stats[name], their_stats[name]) for name in STATISTICS}
    cell = stats.cell
    return Fidelity(
        cell.row,
        cell.env_id,
        column,
        len(ours),
        steps,
        ours,
        theirs,
        compared["run_mean"],
        compared["final"],
        int(inside.sum()),
        compared["after_warmup"],
        {name: _equivalence(comparison, rule) for name, comparison in compared.items()},
        tuple(cell.seeds),
        random_steps,
    )


def fidelities(cells: Iterable[CellStats], rule: BoundRule | None = None) -> list[Fidelity]:
    """Every cell with the authors' curves against them, in the order given, the primary p-values (of the
    difference and of TOST) Holm-adjusted per row (over that row's envs).

    Args:
        cells: the cells' numbers.
        rule: where the equivalence bounds come from (the default rule when None).
    """
    found = [result for stats in cells if (result := fidelity(stats, rule)) is not None]
    rows = [f.row for f in found]
    adjusted = holm_by_row(rows, [f.run_mean.test.p for f in found])
    adjusted_tost = holm_by_row(rows, [f.equivalence[PRIMARY].p for f in found])
    return [
        replace(
            f,
            run_mean=replace(f.run_mean, holm_p=p),
            equivalence={**f.equivalence, PRIMARY: replace(f.equivalence[PRIMARY], holm_p=tost_p)},
        )
        for f, p, tost_p in zip(found, adjusted, adjusted_tost, strict=True)
    ]


# ---------------------------------------------------------------------------------------------------- curve plots
def curve_title(row: str, test: Fidelity | None) -> str:
    """A row's panel title: its name and, where it was compared with the authors' curve, a second line with the
    primary test's p (left out where there is none: no evaluation after step 0, or one seed) and the points within
    the authors' band."""
    if test is None:
        return row
    p = p_text(test.run_mean.test.p)
    relation = f"< {p[1:]}" if p.startswith("<") else f"= {p}"  # p < 0.001, not p = <0.001
    tested = "" if p == "n/a" else f"p {relation}, "
    return f"{row}\n{tested}{test.text} points"


def authors_band_until(env_id: str, last_step: int) -> Band | None:
    """The authors' TD3 mean ± 2 std up to a run's last step (``Band.until``), or None without their curves."""
    band = authors_band(env_id)
    return None if band is None else band.until(last_step)
