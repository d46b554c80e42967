"""The fidelity section's tables and Markdown (its numbers are ``fidelity``'s; its peer part is ``peer``'s)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from td3x.analysis.render import comparison_columns, tables
from td3x.analysis.render.comparison_columns import ORIGIN_COLUMN
from td3x.analysis.render.tables import (
    EMPTY,
    difference_text,
    number,
    p_text,
    range_text,
    spread_text,
    statistic_or_nan,
    welch_csv_columns,
)
from td3x.analysis.sections.fidelity import PRIMARY, SENSITIVITY, SPREAD, STATISTICS, Fidelity
from td3x.analysis.stats.two_sample import ALPHA

MDD_DESIGN = "our seeds against the authors' 10, the authors' SD on both sides"
OUTCOME_COLUMN = "outcome"  # the difference test's verdict, shown first with equivalence's


def frames(results: list[Fidelity]) -> dict[str, pd.DataFrame]:
    """The section's table by name, ``fidelity`` (none without a cell on an env with the authors' curves)."""
    return {"fidelity": fidelity_frame(results)} if results else {}


def fidelity_frame(results: list[Fidelity]) -> pd.DataFrame:
    """``fidelity.csv``: one line per cell of an env with the authors' curves. Per statistic (``run_mean``, the
    primary: each seed's mean return over the evaluations 5k..T; ``final``: the return at T; ``after_warmup``: the
    mean over the evaluations after env.random_steps), our and the authors' means, the difference with its 95%
    Welch interval, Welch's p (and Holm's for the primary), TOST at the bound (``comparison_columns.csv_columns``)
    and the exact permutation test; then the band count and the returns at the first and last step both evaluated."""
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
            **{name: values for statistic in STATISTICS for name, values in _test_columns(results, statistic).items()},
            "within": [f.within for f in results],
            "points": [f.points for f in results],
            f"within mean ± {SPREAD:g} std": [f.text for f in results],
            **{name: values for end in ("first", "last") for name, values in _ends_columns(results, end).items()},
        },
        index=pd.Index([f.row for f in results], name="row"),
    )


def _test_columns(results: list[Fidelity], statistic: str) -> dict[str, list[object]]:
    comparisons = [f.comparisons[statistic] for f in results]
    tests = [c.test for c in comparisons]
    columns: dict[str, list[Any]] = {
        f"{statistic}_ours": [float(c.ours.mean()) for c in comparisons],
        f"{statistic}_authors": [float(c.authors.mean()) for c in comparisons],
        **welch_csv_columns(statistic, tests),
    }
    if statistic == PRIMARY:
        columns[f"{statistic}_holm_p"] = [c.holm_p for c in comparisons]
    results_tost = [f.equivalence[statistic] for f in results]
    permutations = [c.permutation for c in comparisons]
    return columns | comparison_columns.csv_columns(statistic, tests, results_tost, permutations)


def outcome(result: Fidelity) -> str:
    """The primary test's outcome in words."""
    if not np.isfinite(result.run_mean.holm_p):
        return "no test"
    return "differs" if result.differs else "no difference detected"


def permutation_levels(results: list[Fidelity], statistic: str) -> list[float]:
    """The level each cell's permutation test would have to beat: Holm's first step, α over the row's envs, for the
    primary statistic; α for the others."""
    family = {row: sum(f.row == row for f in results) for row in {f.row for f in results}}
    return [ALPHA / family[f.row] if statistic == PRIMARY else ALPHA for f in results]


def fidelity_test_frame(results: list[Fidelity], statistic: str) -> pd.DataFrame:
    """The report's display table of one statistic's tests: per row and env, our and the authors' means, the
    difference [95% Welch interval], Welch's p (Holm's too, and the outcome, for the primary statistic), TOST at the
    cell's bound with the 90% interval, the MDD, how far the 90% interval reaches, the exact permutation test, and
    the equivalence decision.

    Args:
        results: the cells against the authors' curves.
        statistic: a key of ``STATISTICS``.
    """
    comparisons = [f.comparisons[statistic] for f in results]
    primary = statistic == PRIMARY
    columns: dict[str, list[object]] = {
        "env": [f.env_id for f in results],
        "seeds": [f.seeds for f in results],
        "T": [int(f.steps[-1]) if len(f.steps) else EMPTY for f in results],
        "ours": [number(float(c.ours.mean())) for c in comparisons],
        "authors'": [number(float(c.authors.mean())) for c in comparisons],
        "ours − authors [95% CI]": [difference_text(c.test) for c in comparisons],
        "Welch p": [p_text(c.test.p) for c in comparisons],
    }
    if primary:
        columns["Holm p"] = [p_text(c.holm_p) for c in comparisons]
        columns[OUTCOME_COLUMN] = [outcome(f) for f in results]
    columns |= comparison_columns.display_columns(
        [c.test for c in comparisons],
        [f.equivalence[statistic] for f in results],
        [c.permutation for c in comparisons],
        permutation_levels(results, statistic),
        holm=primary,
    )
    frame = pd.DataFrame(columns, index=pd.Index([f.row for f in results], name="row"))
    return tables.verdicts_first(frame, [OUTCOME_COLUMN, comparison_columns.DECISION_COLUMN], keys=1)


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


def markdown(results: list[Fidelity], notes: tables.Notes) -> str:
    """The report's fidelity section (its peer part is ``peer.markdown``).

    Args:
        results: from :func:`fidelities`.
        notes: the report's notes so far (each bound's origin is one, given once).
    """
    if not results:
        return (
            f"{FIDELITY_TITLE}\n\nNo row on an env with the authors' published curves (HalfCheetah, Hopper, "
            "Walker2d, Ant, Reacher, InvertedPendulum, InvertedDoublePendulum)."
        )
    primary, secondary, sensitivity = (fidelity_test_frame(results, name) for name in STATISTICS)
    frame = fidelity_frame(results)
    counts = frame[["env", "authors_env", "seeds", "steps", "last_step", f"within mean ± {SPREAD:g} std"]]
    ends = ["first_step", *fidelity_text_columns("first"), "last_step", *fidelity_text_columns("last")]
    returns = frame[["env", *ends]]
    alpha = f"{ALPHA:g}"
    return (
        f"{FIDELITY_TITLE}\n\nThe authors' published TD3 curves (sfujim/TD3, `learning_curves/`) are 10 seeds on "
        "the gym v1 MuJoCo tasks (mujoco-py, other dynamics than Gymnasium v5), evaluated every 5000 env steps. "
        "Every row on an env with those curves is compared with them over the env steps both evaluated, 0..T: TD3 "
        "rows, and any other row for contrast (a control expected to differ from TD3; whether it can be told apart "
        "depends on the horizon and the seeds, and the paper shows its gaps at 1M steps). A difference may be the "
        "task's (v5 against v1) as much as the code's.\n\n"
        "**The tests, all post hoc**: a test fixed before the runs is a registration file's (`--registration`), so "
        "every test in this section is post hoc. The primary statistic is each seed's "
        f"{STATISTICS[PRIMARY]} (every shared evaluation after step 0), against the same statistic of the authors' "
        "10 seeds. *Welch p* is Welch's "
        f"two-sample t-test of a difference at α = {alpha}; per row its envs' p-values are Holm-adjusted (*Holm p*), "
        f"and the *outcome* is that the row differs from the authors on an env when its Holm p is below {alpha}; "
        '"no difference detected" is not sameness. '
        f"{comparison_columns.columns_text('authors', MDD_DESIGN)} "
        "`fidelity.csv` has every number."
        f"\n\n**Primary: {STATISTICS[PRIMARY]}**\n\n{notes.table(primary, [ORIGIN_COLUMN])}\n\n"
        f"**Secondary (descriptive): {STATISTICS['final']}**\n\n{notes.table(secondary, [ORIGIN_COLUMN])}\n\n"
        f"**Sensitivity (descriptive): the {STATISTICS[SENSITIVITY]}**, both sides over the same steps. During "
        "the random warm-up of td3_paper (env.random_steps, from each run's config.yaml) the policy is not "
        "updated, while the authors' code updated during theirs, so those evaluations compare an untrained "
        "policy with trained ones: a protocol difference, not the implementation's. Unadjusted."
        f"\n\n{notes.table(sensitivity, [ORIGIN_COLUMN])}\n\n"
        "The curve plots draw the authors' 10-seed mean ± 2 std (population std) in black and count our evaluation "
        "points (every seed at every step both evaluated) within it, bounds included. The count is a picture, not a "
        "test: a curve at half the authors' mean can stay inside a wide band."
        f"\n\n{tables.markdown(counts)}\n\n"
        "The returns at the first and the last step both evaluated: the untrained policy (step 0) and the end of "
        "our runs, our seeds' mean [min, max] beside the authors' 10-seed mean ± std. A gap at step 0 "
        "comes before any learning: it points to a difference between the tasks or the initial policies."
        f"\n\n{tables.markdown(returns)}"
    )
