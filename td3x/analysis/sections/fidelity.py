"""The fidelity section: do a cell's runs differ from the authors' published TD3 curves, and are they equivalent to
them within a bound?

The authors' curves (``td3x/data/sfujim_learning_curves``) are 10 seeds of TD3 on gym ``-v1`` MuJoCo tasks,
evaluated every 5000 env steps. Every row of the report (TD3, and any other row: a control) on an env with those
curves is compared with them over the steps both evaluated, 0..T, T the last of them. Every test here is post hoc:
a test against the authors' curves fixed before the runs is a registration file's (an ``authors_curves`` side),
judged by ``td3x-report --registration``.

- **The primary statistic**: each seed's mean return over the evaluations 5k..T (every shared step after 0),
  against the same statistic of the authors' 10 seeds. Welch's two-sample t-test at α = 0.05, Holm-adjusted per
  row (the family is the row's envs): a row differs from the authors on an env when the adjusted p is below α.
- **Equivalence** (``stats.equivalence``): TOST at a bound, the 90% Welch interval and whether it lies inside the
  bound, the TOST p Holm-adjusted per row, and the minimum detectable difference (MDD) of the difference test at the
  design (n seeds against the authors' 10, the authors' SD on both sides).
- **The exact permutation test** of the pooled seeds on Welch's t (``stats.two_sample``), with the smallest p the
  labellings can give.
- **Secondary, descriptive**: the same on the return at T, unadjusted; and, as a sensitivity check, the mean over
  the evaluations after the warm-up (env steps s with env.random_steps < s ≤ T, both sides), where the first
  evaluations measure an untrained td3x policy against the authors' policies trained during their warm-up.

Also kept, as a picture: how many of our (seed, step) points lie within the authors' 10-seed mean ± 2 std (the
band the curve plots draw). It is no test: a curve at half the authors' mean can stay inside a wide band.

Their tasks are gym v1 with mujoco-py, ours Gymnasium: a difference may be the env's, not the code's. The rows
against another implementation are the ``peer`` section's, printed right after this one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Self

import numpy as np
import pandas as pd

from td3x.analysis.reading.cell_stats import CellStats
from td3x.analysis.reading.paper import AUTHORS_SPREAD, authors_curves, paper_env, spread_band
from td3x.analysis.render import comparison_columns, tables
from td3x.analysis.render.comparison_columns import ORIGIN_COLUMN, csv_columns, test_frame
from td3x.analysis.render.tables import EMPTY, Notes, p_text, range_text, spread_text, statistic_or_nan
from td3x.analysis.sections.section import Frames, Report, Section
from td3x.analysis.stats.equivalence import BoundRule, Comparison, compare, holm_adjusted, post_hoc_bound, sd
from td3x.analysis.stats.two_sample import ALPHA

PRIMARY = "run_mean"  # the statistic of the primary test
SENSITIVITY = "after_warmup"  # the sensitivity table's: the mean over the evaluations after the warm-up
STATISTICS = {  # statistic name → how it reads in the report
    "run_mean": "mean return over evaluations 5k..T",
    "final": "return at T",
    "after_warmup": "mean return over evaluations after the warm-up (env.random_steps < s ≤ T)",
}
MDD_DESIGN = "our seeds against the authors' 10, the authors' SD on both sides"
WITHIN_COLUMN = f"within mean ± {AUTHORS_SPREAD:g} std"
ENDS = {"first": 0, "last": -1}  # the untrained policy (step 0) and the end of the shorter curves
TITLE = "## Fidelity to the authors' TD3 curves"


@dataclass(frozen=True, eq=False)  # holds arrays
class Fidelity:
    """One cell against the authors' TD3 curves.

    Attributes:
        row: our row label.
        env_id: our env.
        paper_env: the authors' gym id of the same task, e.g. ``Hopper-v1``.
        steps: the env steps both we and the authors evaluated (0..T).
        ours: our runs' returns at ``steps``, shape (seeds, len(steps)).
        authors: the authors' ten runs' returns at ``steps``, shape (10, len(steps)).
        comparisons: per statistic (``STATISTICS``' keys), our seeds' values against the authors'.
        within: how many (seed, step) points lie within the authors' mean ± 2 std, bounds included.
        random_steps: the cell's env.random_steps (from its runs' config.yaml).
    """

    row: str
    env_id: str
    paper_env: str
    steps: np.ndarray
    ours: np.ndarray
    authors: np.ndarray
    comparisons: dict[str, Comparison]
    within: int
    random_steps: int = 0

    @property
    def seeds(self) -> int:
        """How many of our runs were compared (the cell's complete runs)."""
        return len(self.ours)

    @property
    def points(self) -> int:
        """How many (seed, step) points were counted against the band."""
        return self.seeds * len(self.steps)

    @property
    def text(self) -> str:
        """``k of n`` points within the band."""
        return f"{self.within} of {self.points}"

    @property
    def run_mean(self) -> Comparison:
        """The primary statistic's comparison."""
        return self.comparisons[PRIMARY]

    @property
    def differs(self) -> bool:
        """The primary test's outcome: the Holm-adjusted p of the mean over 5k..T is below ``ALPHA``."""
        return bool(self.run_mean.holm_p < ALPHA)

    @property
    def outcome(self) -> str:
        """The primary test's outcome in words."""
        if not np.isfinite(self.run_mean.holm_p):
            return "no test"
        return "differs" if self.differs else "no difference detected"


@dataclass(frozen=True, eq=False)
class FidelitySection(Section):
    """Every cell on an env with the authors' curves against them (``fidelities``)."""

    results: list[Fidelity]

    @classmethod
    def build(cls, report: Report) -> Self:
        return cls(fidelities(report.stats.values(), report.settings.bounds))

    def frames(self, report: Report) -> Frames:
        """``fidelity`` (none without a cell on an env with the authors' curves)."""
        return {"fidelity": fidelity_frame(self.results)} if self.results else {}

    def markdown(self, report: Report, frames: Frames, notes: Notes) -> str:
        """The tests of every statistic, the points within the authors' band and the returns at both ends, each
        bound's origin a note given once."""
        results = self.results
        if not results:
            return (
                f"{TITLE}\n\nNo row on an env with the authors' published curves (HalfCheetah, Hopper, Walker2d, "
                "Ant, Reacher, InvertedPendulum, InvertedDoublePendulum)."
            )
        primary, secondary, sensitivity = (fidelity_test_frame(results, name) for name in STATISTICS)
        frame = frames["fidelity"]
        counts = frame[["env", "authors_env", "seeds", "steps", "last_step", WITHIN_COLUMN]]
        returns = frame[["env", "first_step", *end_columns("first"), "last_step", *end_columns("last")]]
        alpha = f"{ALPHA:g}"
        return (
            f"{TITLE}\n\nThe authors' published TD3 curves (sfujim/TD3, `learning_curves/`) are 10 seeds on "
            "the gym v1 MuJoCo tasks (mujoco-py, other dynamics than Gymnasium v5), evaluated every 5000 env steps. "
            "Every row on an env with those curves is compared with them over the env steps both evaluated, 0..T: TD3 "
            "rows, and any other row for contrast (a control expected to differ from TD3; whether it can be told apart "
            "depends on the horizon and the seeds, and the paper shows its gaps at 1M steps). A difference may be the "
            "task's (v5 against v1) as much as the code's.\n\n"
            "**The tests, all post hoc**: a test fixed before the runs is a registration file's (`--registration`), so "
            "every test in this section is post hoc. The primary statistic is each seed's "
            f"{STATISTICS[PRIMARY]} (every shared evaluation after step 0), against the same statistic of the authors' "
            "10 seeds. *Welch p* is Welch's "
            f"two-sample t-test of a difference at α = {alpha}; per row its envs' p-values are Holm-adjusted "
            f"(*Holm p*), and the *outcome* is that the row differs from the authors on an env when its Holm p is "
            f'below {alpha}; "no difference detected" is not sameness. '
            f"{comparison_columns.columns_text('authors', MDD_DESIGN)} "
            "`fidelity.csv` has every number."
            f"\n\n**Primary: {STATISTICS[PRIMARY]}**\n\n{notes.table(primary, [ORIGIN_COLUMN])}\n\n"
            f"**Secondary (descriptive): {STATISTICS['final']}**\n\n{notes.table(secondary, [ORIGIN_COLUMN])}\n\n"
            f"**Sensitivity (descriptive): the {STATISTICS[SENSITIVITY]}**, both sides over the same steps. During "
            "the random warm-up of td3_paper (env.random_steps, from each run's config.yaml) the policy is not "
            "updated, while the authors' code updated during theirs, so those evaluations compare an untrained "
            "policy with trained ones: a protocol difference, not the implementation's. Unadjusted."
            f"\n\n{notes.table(sensitivity, [ORIGIN_COLUMN])}\n\n"
            "The curve plots draw the authors' 10-seed mean ± 2 std (population std) in black and count our "
            "evaluation points (every seed at every step both evaluated) within it, bounds included. The count is a "
            "picture, not a test: a curve at half the authors' mean can stay inside a wide band."
            f"\n\n{tables.markdown(counts)}\n\n"
            "The returns at the first and the last step both evaluated: the untrained policy (step 0) and the end of "
            "our runs, our seeds' mean [min, max] beside the authors' 10-seed mean ± std. A gap at step 0 "
            "comes before any learning: it points to a difference between the tasks or the initial policies."
            f"\n\n{tables.markdown(returns)}"
        )


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


def fidelity(stats: CellStats, rule: BoundRule | None = None) -> Fidelity | None:
    """A cell against the authors' TD3 curves (Holm's adjustment not yet applied: see ``fidelities``); None for an
    env without the authors' curves. Each statistic is tested at the post-hoc bound (``rule.fraction`` × the
    authors' mean), its MDD at the authors' SD on both sides.

    Args:
        stats: the cell's numbers (its complete runs' curves and their shared evaluation steps).
        rule: where the equivalence bounds come from (the default rule when None).
    """
    curves, column = authors_curves(stats.cell.env_id), paper_env(stats.cell.env_id)
    if curves is None or column is None:
        return None
    rule = rule or BoundRule()
    band = spread_band(curves)
    steps, ours_columns, their_columns = np.intersect1d(stats.steps, band.x, return_indices=True)
    ours, theirs = stats.curves[:, ours_columns], curves[:, their_columns]
    inside = (ours >= band.low[their_columns]) & (ours <= band.high[their_columns])
    random_steps = max({int(run.config.get("env", {}).get("random_steps", 0)) for run in stats.cell.runs})
    ours_stats, their_stats = (per_seed_statistics(values, steps, random_steps) for values in (ours, theirs))
    compared = {}
    for name, values in their_stats.items():
        bound = post_hoc_bound(rule, float(values.mean()), "the authors'")
        compared[name] = compare(ours_stats[name], values, bound, (sd(values), sd(values)))
    cell = stats.cell
    return Fidelity(cell.row, cell.env_id, column, steps, ours, theirs, compared, int(inside.sum()), random_steps)


def fidelities(cells: Iterable[CellStats], rule: BoundRule | None = None) -> list[Fidelity]:
    """Every cell with the authors' curves against them, in the order given, the primary p-values (of the
    difference and of TOST) Holm-adjusted per row (over that row's envs)."""
    found = [result for stats in cells if (result := fidelity(stats, rule)) is not None]
    adjusted = holm_adjusted([f.row for f in found], [f.run_mean for f in found])
    return [replace(f, comparisons={**f.comparisons, PRIMARY: c}) for f, c in zip(found, adjusted, strict=True)]


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


# ---------------------------------------------------------------------------------------------------- tables
def fidelity_frame(results: list[Fidelity]) -> pd.DataFrame:
    """``fidelity.csv``: one line per cell of an env with the authors' curves. Per statistic (``run_mean``, the
    primary: each seed's mean return over the evaluations 5k..T; ``final``: the return at T; ``after_warmup``: the
    mean over the evaluations after env.random_steps), the tests' numbers (``comparison_columns.csv_columns``); then
    the band count and the returns at the first and last step both evaluated."""
    tests: dict[str, list[object]] = {}
    for statistic in STATISTICS:
        tests |= csv_columns(statistic, [f.comparisons[statistic] for f in results], "authors", statistic == PRIMARY)
    return pd.DataFrame(
        {
            "env": [f.env_id for f in results],
            "authors_env": [f.paper_env for f in results],
            "seeds": [f.seeds for f in results],
            "authors_seeds": [len(f.authors) for f in results],
            "steps": [len(f.steps) for f in results],
            "first_step": [int(f.steps[0]) if len(f.steps) else None for f in results],
            "last_step": [int(f.steps[-1]) if len(f.steps) else None for f in results],
            "outcome": [f.outcome for f in results],
            **tests,
            "within": [f.within for f in results],
            "points": [f.points for f in results],
            WITHIN_COLUMN: [f.text for f in results],
            **{name: values for end in ENDS for name, values in _ends_columns(results, end).items()},
        },
        index=pd.Index([f.row for f in results], name="row"),
    )


def fidelity_test_frame(results: list[Fidelity], statistic: str) -> pd.DataFrame:
    """The report's display table of one statistic's tests against the authors (``comparison_columns.test_frame``),
    with the authors' last step T and, for the primary statistic, the outcome."""
    return test_frame(
        [f.row for f in results],
        [f.env_id for f in results],
        [f.comparisons[statistic] for f in results],
        ("authors", "authors'"),
        statistic == PRIMARY,
        {"T": [int(f.steps[-1]) if len(f.steps) else EMPTY for f in results]},
        [f.outcome for f in results] if statistic == PRIMARY else [],
    )


def end_columns(end: str) -> list[str]:
    """The names of the display columns of ours and the authors' returns at ``end`` (first or last)."""
    return [f"ours at {end}_step: mean [min, max]", f"authors' at {end}_step: mean ± std"]


def _ends_columns(counts: list[Fidelity], end: str) -> dict[str, list[object]]:
    """Ours and the authors' returns at the first or the last step both evaluated: numbers and texts."""
    ours = [f.ours[:, ENDS[end]] if len(f.steps) else np.empty(0) for f in counts]
    authors = [f.authors[:, ENDS[end]] if len(f.steps) else np.empty(0) for f in counts]
    ours_text, authors_text = end_columns(end)
    return {
        f"ours_{end}_mean": [statistic_or_nan(values, np.mean) for values in ours],
        f"ours_{end}_min": [statistic_or_nan(values, np.min) for values in ours],
        f"ours_{end}_max": [statistic_or_nan(values, np.max) for values in ours],
        f"authors_{end}_mean": [statistic_or_nan(values, np.mean) for values in authors],
        f"authors_{end}_std": [statistic_or_nan(values, np.std) for values in authors],
        ours_text: [range_text(values) for values in ours],
        authors_text: [spread_text(values) for values in authors],
    }
