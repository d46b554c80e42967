"""The report's "Pre-registered tests" section: the registered two-group comparisons (:mod:`registered`) as
``registered.csv`` (every number), a display table per comparison and the Markdown that says what each test can
and cannot detect. Printed after the fidelity and peer section, only with ``--preregistration`` and registered runs
in the folder.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from td3x.analysis import tables
from td3x.analysis.equivalence import interval_text, permutation_text
from td3x.analysis.registered import (
    BIAS_COLUMNS,
    Outcome,
    RegisteredTest,
    Side,
)
from td3x.analysis.runs import distinct
from td3x.analysis.tables import difference_text, number, p_text, signed
from td3x.analysis.two_sample import Welch

NAN = float("nan")


def frames(tests: list[RegisteredTest]) -> dict[str, pd.DataFrame]:
    """The section's table by name, ``registered`` (none without a registered comparison in the folder)."""
    return {"registered": registered_frame(tests)} if tests else {}


def _numbers(tests: list[RegisteredTest], value: Callable[[Outcome], Any], default: Any = NAN) -> list[Any]:
    """``value`` of each test's outcome, ``default`` where a test has none (incomplete)."""
    return [default if t.outcome is None else value(t.outcome) for t in tests]


def registered_frame(tests: list[RegisteredTest]) -> pd.DataFrame:
    """``registered.csv``: one line per registered comparison and env, in the file's order."""
    columns: dict[str, list[Any]] = {
        "env": [t.design.env_id for t in tests],
        "ours": [t.design.labels[0] for t in tests],
        "other": [t.design.labels[1] for t in tests],
        "status": [t.status for t in tests],
        "missing_seeds": [_missing(t) for t in tests],
        "rerun_seeds": [_reruns(t) for t in tests],
        "n_ours": _numbers(tests, lambda o: len(o.ours), 0),
        "n_other": _numbers(tests, lambda o: len(o.other), 0),
        "first_step": _numbers(tests, lambda o: int(o.steps[0]) if len(o.steps) else None, None),
        "last_step": _numbers(tests, lambda o: int(o.steps[-1]) if len(o.steps) else None, None),
        "evaluations": _numbers(tests, lambda o: len(o.steps), 0),
        "mean_ours": _numbers(tests, lambda o: float(o.ours.mean())),
        "mean_other": _numbers(tests, lambda o: float(o.other.mean())),
        "difference": _numbers(tests, lambda o: o.test.difference),
        "ci95_low": _numbers(tests, lambda o: o.test.low),
        "ci95_high": _numbers(tests, lambda o: o.test.high),
        "ci90_low": _numbers(tests, lambda o: o.test.low90),
        "ci90_high": _numbers(tests, lambda o: o.test.high90),
        "bound": [t.design.bound for t in tests],
        "bound_from": [t.design.bound_origin for t in tests],
        "tost_p": _numbers(tests, lambda o: o.tost.p),
        "holm_tost_p": [t.holm_tost_p if t.outcome else NAN for t in tests],
        "decision": [t.decision for t in tests],
        "difference_p": _numbers(tests, lambda o: o.test.p),
        "holm_difference_p": [t.holm_p if t.outcome else NAN for t in tests],
        "difference_decision": [t.difference_decision for t in tests],
        "mdd": [t.design.mdd for t in tests],
        "mdd_design": [t.design.mdd_design for t in tests],
        "sd_ours": _numbers(tests, lambda o: _sd(o.ours)),
        "sd_other": _numbers(tests, lambda o: _sd(o.other)),
        "sd_assumed_ours": [t.design.assumed_sd[0] for t in tests],
        "sd_assumed_other": [t.design.assumed_sd[1] for t in tests],
        "family": [" ".join(t.design.family) for t in tests],
        "permutation_p": _numbers(tests, lambda o: o.permutation.p),
        "permutation_smallest_p": _numbers(tests, lambda o: o.permutation.smallest),
        "permutation_relabellings": _numbers(tests, lambda o: o.permutation.relabellings, 0),
        **_welch_columns(tests, "warmup_in", lambda o: o.warmup_in),
        **_welch_columns(tests, "at_last_step", lambda o: o.at_end),
        **{name: values for column in BIAS_COLUMNS for name, values in _bias_columns(tests, column).items()},
        "frozen_actors_ours": _numbers(tests, lambda o: o.frozen_actors[0] if o.frozen_actors else NAN),
        "frozen_actors_other": _numbers(tests, lambda o: o.frozen_actors[1] if o.frozen_actors else NAN),
        "table1_ours": _numbers(tests, lambda o: o.table1[0] if o.table1 else NAN),
        "table1_other": _numbers(tests, lambda o: o.table1[1] if o.table1 else NAN),
        "table1_mean_at_5_of_their_seeds": [t.design.table1_at_5 for t in tests],
        "cpu_capability_ours": [_provenance(t.ours, "kernels") for t in tests],
        "cpu_capability_other": [_provenance(t.other, "kernels") for t in tests],
        "commits_ours": [_provenance(t.ours, "commit") for t in tests],
        "commits_other": [_provenance(t.other, "commit") for t in tests],
    }
    return pd.DataFrame(columns, index=pd.Index([t.design.section for t in tests], name="section"))


def _welch_columns(tests: list[RegisteredTest], name: str, pick: Callable[[Outcome], Welch | None]) -> dict[str, list]:
    """A descriptive Welch comparison's difference and 95% interval (NaN where there is none)."""

    def value(attribute: str) -> list[Any]:
        return _numbers(tests, lambda o: NAN if pick(o) is None else getattr(pick(o), attribute))

    return {
        f"{name}_difference": value("difference"),
        f"{name}_ci95_low": value("low"),
        f"{name}_ci95_high": value("high"),
    }


def _bias_columns(tests: list[RegisteredTest], column: str) -> dict[str, list[Any]]:
    """bf16 − fp32 of a bias column with its 90% interval; NaN where not computed."""

    def value(attribute: str) -> list[Any]:
        return _numbers(tests, lambda o: getattr(o.bias[column], attribute) if _has_bias(o.bias, column) else NAN)

    return {
        f"{column}_difference": value("difference"),
        f"{column}_ci90_low": value("low90"),
        f"{column}_ci90_high": value("high90"),
    }


def _has_bias(bias: dict[str, Welch | str], column: str) -> bool:
    return isinstance(bias.get(column), Welch)


def _missing(test: RegisteredTest) -> str:
    """The registered seeds without a complete run, per side."""
    parts = [f"{side.label}: {', '.join(map(str, side.missing))}" for side in (test.ours, test.other) if side.missing]
    return "; ".join(parts)


def _reruns(test: RegisteredTest) -> str:
    """The registered seeds with more than one run dir (rerun after a failure or loss), per side."""
    parts = [f"{side.label}: {', '.join(map(str, side.reruns))}" for side in (test.ours, test.other) if side.reruns]
    return "; ".join(parts)


def _provenance(side: Side, fact: str) -> str:
    """A provenance fact of the side's complete runs (``kernels`` or ``commit``, :class:`Run`'s), each value once;
    '' for the authors."""
    return " ".join(distinct(getattr(run, fact) for run in side.complete)) if side.seeds else ""


# ---------------------------------------------------------------------------------------------------- display
def display_frame(tests: list[RegisteredTest]) -> pd.DataFrame:
    """One section's display table: per env, the decisions first (what a narrow screen shows), then the runs, the
    means and the tests."""
    columns: dict[str, list[object]] = {
        "equivalence": [t.decision for t in tests],
        "difference": [t.difference_decision for t in tests],
        "runs": [_runs_text(t) for t in tests],
        "statistic's steps": _numbers(tests, lambda o: _steps_text(o.steps), "n/a"),
        "ours": _numbers(tests, lambda o: number(float(o.ours.mean())), "n/a"),
        "other's": _numbers(tests, lambda o: number(float(o.other.mean())), "n/a"),
        "ours − other [95% CI]": _numbers(tests, lambda o: difference_text(o.test), "n/a"),
        "bound ±": [number(t.design.bound, 0) for t in tests],
        "90% CI [inside ±bound?]": _numbers(tests, lambda o: interval_text(o.tost), "n/a"),
        "TOST p": _numbers(tests, lambda o: p_text(o.tost.p), "n/a"),
        "Holm TOST p": [p_text(t.holm_tost_p) if t.outcome else "n/a" for t in tests],
        "Welch p (Holm)": [_difference_p(t) for t in tests],
        "MDD (80%)": [number(t.design.mdd) for t in tests],
        "CPU; commits": [_cpu_text(t) for t in tests],
    }
    return pd.DataFrame(columns, index=pd.Index([t.design.env_id for t in tests], name="env"))


def descriptive_frame(tests: list[RegisteredTest]) -> pd.DataFrame:
    """The same comparisons' descriptive numbers (no verdict): the exact permutation test, the statistic with
    the warm-up evaluations in, the return at the last step, and where they apply the bias and Table 1."""
    level = tests[0].design.alpha / len(tests[0].design.family)  # Holm's first step: "never < level" below it
    columns: dict[str, list[object]] = {
        "permutation p (smallest possible)": _numbers(tests, lambda o: permutation_text(o.permutation, level), "n/a"),
        "warm-up in: ours − other [95% CI]": _numbers(
            tests, lambda o: difference_text(o.warmup_in) if o.warmup_in else "n/a", "n/a"
        ),
        "at the last step: ours − other [95% CI]": _numbers(tests, lambda o: difference_text(o.at_end), "n/a"),
        "the statistic's SD: ours; other's (the design assumed)": [_sd_text(t) for t in tests],
    }
    if any(t.outcome and t.outcome.bias for t in tests):
        for column in BIAS_COLUMNS:
            columns[f"{column}: bf16 − fp32 [90% CI]"] = _numbers(tests, _bias_cell(column), "n/a")
    if any(t.outcome and t.outcome.frozen_actors for t in tests):
        columns["actors with a gradient of exactly 0 at the last log row: ours; other's"] = _numbers(
            tests, _frozen_text, "n/a"
        )
    if any(t.outcome and t.outcome.table1 for t in tests):
        columns["Table 1 max average return: ours; the authors' (biased upward at 5 seeds against 10)"] = _numbers(
            tests, lambda o: _table1_text(o.table1), "n/a"
        )
    return pd.DataFrame(columns, index=pd.Index([t.design.env_id for t in tests], name="env"))


def _runs_text(test: RegisteredTest) -> str:
    counts = f"{len(test.ours.complete)} {test.ours.label}, " + (
        f"{len(test.other.complete)} {test.other.label}" if test.other.seeds else f"{test.other.label}'"
    )
    notes = [counts]
    if missing := _missing(test):
        notes.append(f"missing seeds {missing}")
    if reruns := _reruns(test):
        notes.append(f"rerun seeds {reruns}")
    return "; ".join(notes)


def _steps_text(steps: np.ndarray) -> str:
    return f"{int(steps[0])}..{int(steps[-1])} ({len(steps)} evaluations)" if len(steps) else "none"


def _difference_p(test: RegisteredTest) -> str:
    if test.outcome is None:
        return "n/a"
    return f"{p_text(test.outcome.test.p)} ({p_text(test.holm_p)})"


def _cpu_text(test: RegisteredTest) -> str:
    sides = [side for side in (test.ours, test.other) if side.seeds and side.complete]
    return "; ".join(f"{side.label}: {_provenance(side, 'kernels')} @ {_provenance(side, 'commit')}" for side in sides)


def _bias_cell(column: str) -> Callable[[Outcome], str]:
    """An outcome's bias column as text: bf16 − fp32 [90% interval], or why there is none."""
    return lambda outcome: _bias_text(outcome.bias, column)


def _bias_text(bias: dict[str, Welch | str], column: str) -> str:
    found = bias.get(column)
    if not isinstance(found, Welch):
        return found or "n/a"
    return f"{signed(found.difference)} [{number(found.low90)}, {number(found.high90)}]"


def _sd_text(test: RegisteredTest) -> str:
    assumed = "; ".join(map(number, test.design.assumed_sd))
    if test.outcome is None:
        return f"n/a ({assumed})"
    return f"{number(_sd(test.outcome.ours))}; {number(_sd(test.outcome.other))} ({assumed})"


def _sd(values: np.ndarray) -> float:
    """The sample SD over seeds (n − 1), as the design's assumed SD is one; NaN below two values."""
    return float(np.std(values, ddof=1)) if len(values) > 1 else NAN


def _frozen_text(outcome: Outcome) -> str:
    if outcome.frozen_actors is None:
        return "n/a"
    ours, other = outcome.frozen_actors
    return f"{ours} of {len(outcome.ours)}; {other} of {len(outcome.other)}"


def _table1_text(table1: tuple[float, float] | None) -> str:
    return "n/a" if table1 is None else f"{number(table1[0])}; {number(table1[1])}"


# ---------------------------------------------------------------------------------------------------- Markdown
TITLES = {
    "peer": "td3x against Stable-Baselines3's TD3 (`peer`)",
    "bf16": "td3x in bf16 against fp32 (`bf16`)",
    "bf16_fp32_tanh": "td3x in bf16 with the actor's tanh in fp32 against fp32, on new bf16 seeds (`bf16_fp32_tanh`)",
    "paper_horizon": "td3x at the paper's horizon against the authors' seeds (`paper_horizon`)",
}


def markdown(tests: list[RegisteredTest]) -> str:
    """The section ('' without a registered comparison in the folder)."""
    if not tests:
        return ""
    parts = [
        "## Pre-registered tests",
        _intro(tests),
    ]
    for section in dict.fromkeys(t.design.section for t in tests):
        chosen = [t for t in tests if t.design.section == section]
        parts.append(f"**{TITLES[section]}**: Holm family {', '.join(chosen[0].design.family)}.")
        parts.append(tables.markdown(display_frame(chosen)))
        if any(t.outcome for t in chosen):
            parts.append(f"Descriptive, no verdict:\n\n{tables.markdown(descriptive_frame(chosen))}")
        if section == "paper_horizon" and any(t.outcome and t.outcome.table1 for t in chosen):
            parts.append(_table1_note(chosen[0]))
    return "\n\n".join(parts)


def _intro(tests: list[RegisteredTest]) -> str:
    alpha = tests[0].design.alpha
    return (
        "The comparisons the pre-registration fixed before their runs existed, judged exactly as it registers "
        "them: only the runs of the registered config and seeds (others never enter), each seed's registered "
        "statistic (its mean return over the evaluations after env.random_steps up to the last step; at the paper's "
        "horizon its last 10 evaluations), TOST with Welch's t at the registered bound, Holm-adjusted over the "
        f'section\'s family. *equivalence* reads "equivalent within ±bound" only when the Holm-adjusted TOST p is '
        f'below α = {alpha:g}, else "equivalence not shown"; a family member without a complete test counts as '
        "p = 1 and no verdict is given until every member is complete (an env the file registers as not run is "
        "not waited for). A comparison with runs missing is "
        "listed as incomplete, with the missing seeds and no numbers. Beside TOST: Welch's two-sided difference "
        f'test, its 95% interval and its p with Holm\'s over the same family ("difference detected" only when '
        f"Holm's p is below {alpha:g}), and the MDD (80%), the true difference that test detects with 80% power "
        "at the registered seeds and the SDs the design assumed (the file's computed value; the design is in "
        "`registered.csv`'s mdd_design). A smaller true difference is likely missed, so a non-rejection of the "
        "difference test is never read as equivalence: only TOST shows equivalence, and only that the difference "
        "is smaller than the bound, never that there is none. Descriptive, with no verdict: the exact permutation "
        "test of the difference of means over every relabelling of the pooled seeds (as registered; smallest "
        "possible p beside it), the statistic with the warm-up evaluations in, the return at the last step, and "
        "each side's SD of the statistic over its seeds, beside the SD the MDD's design assumed: an SD above it "
        "leaves the tests less power than registered. "
        "*CPU; commits*: each side's runs' CPU capability "
        "and the code commits they record (provenance.json; whether each descends from the commit adding the "
        "pre-registration is a question for the repository's git history, which this report does not read). "
        "`registered.csv` has every number."
    )


def _table1_note(test: RegisteredTest) -> str:
    return (
        "Table 1's max average return, the highest point of the seed-mean curve, is biased upward at 5 seeds "
        "against 10: the maximum of a noisier curve lands higher. On the authors' own runs, the mean over every "
        f"choice of 5 of their seeds is {number(test.design.table1_at_5 or NAN)} (the file's "
        "table1_mean_at_5_of_their_seeds)."
    )
