"""The seed-sources section's part on the registered seed study (``seed_study_registered``): what was registered,
the verdict per source with the numbers beside it, what the test can detect (the file's simulated power), the CPU
capability and shared-run checks, and that the first study is another, post-hoc one."""

from __future__ import annotations

import math

import pandas as pd

from td3x.analysis import tables
from td3x.analysis.seed_sources import ALL_VARY
from td3x.analysis.seed_study_registered import PRIMARY, STATISTICS, Judgement, RegisteredStudy, claim
from td3x.analysis.tables import EMPTY


def _number(value: float, digits: str = ".3g") -> str:
    return EMPTY if math.isnan(value) else format(value, digits)


def _p(value: float) -> str:
    return EMPTY if math.isnan(value) else ("< 0.001" if value < 0.001 else f"{value:.3f}")


def _interval(interval: tuple[float, float], digits: str) -> str:
    return "" if math.isnan(interval[0]) else f" [{interval[0]:{digits}}, {interval[1]:{digits}}]"


def display_frame(rows: list[Judgement]) -> pd.DataFrame:
    """One statistic's table: per condition the status first (what a narrow screen shows), then its runs, SD [95%],
    ratio [90%], TOST p, Holm's p, the two-sided Brown-Forsythe p and the collapsed runs."""
    shown = {
        row.condition: {
            "verdict": row.status,
            "runs": str(row.runs),
            "SD [95%]": _number(row.sd) + _interval(row.sd_interval, ".3g"),
            "ratio to all_vary [90%]": _number(row.ratio, ".2f") + _interval(row.ratio_interval, ".2f"),
            "TOST p": _p(row.tost_p),
            "Holm p": _p(row.holm_p),
            "Brown-Forsythe p": _p(row.bf_p),
            "collapsed": str(row.collapsed),
        }
        for row in rows
    }
    frame = pd.DataFrame.from_dict(shown, orient="index")
    frame.index.name = "condition"
    return frame


def _design_text(study: RegisteredStudy) -> str:
    design = study.design
    n, low, high = design.runs, *design.bound
    seeds = ", ".join(f"{name} {first}..{first + n - 1}" for name, first in design.conditions.items())
    steps = ", ".join(map(str, study.window_steps))
    window = f"at {steps}" if steps else f"after env.random_steps up to {design.steps}"
    family = ", ".join(design.family)
    return (
        "**Registered seed study.** As the pre-registration file registers it (section `seed_study`): does one "
        "training source alone make as much spread across runs as all sources together? "
        f"{design.env_id}, agent=td3_paper, {design.steps} steps, {n} runs per condition trained side by side in "
        f"one process, runs {seeds}: all_vary varies every source with the run's seed, a source condition only its "
        "source, the other sources pinned to its first seed. Per run: its mean evaluation return over the "
        f"evaluations {window} (after the warm-up). The test: Brown-Forsythe TOST of the SD ratio (source over "
        f"all_vary) within [{low:g}, {high:g}], two one-sided Welch t-tests of the runs' absolute deviations from "
        f"their condition's median, the source's against {high:g} × and {low:g} × all_vary's; its p (the larger "
        f"one-sided p) is Holm-adjusted over the family ({family}), and the verdict is the registered one: "
        f'"{claim(design)}" where the adjusted p is below {design.alpha:g}, otherwise "not shown", which is no '
        "evidence of a difference. Beside it, descriptive: each SD with its 95% chi-square interval and the ratio "
        "with its 90% F interval (both assume normally distributed returns), the two-sided Brown-Forsythe p of "
        "equal spread, and the collapsed runs (final return below the run's own step-0 return). A condition with "
        f"fewer complete runs than {n} gets no verdict; until it has one, the other family member's p is adjusted as"
        " if it had p = 1, so its claim stands whatever the missing test gives. All numbers are in "
        "`seed_study_registered.csv`."
    )


def _power_text(study: RegisteredStudy) -> str:
    design = study.design
    normal, collapsed = design.power["normal"], design.power["collapsed"]
    ratio = f"{design.sensitivity_ratio:g}"
    return (
        "What the test can detect (the file's simulated power at Holm's first step, alpha / 2 each side, "
        f"{design.runs} runs a condition): with normally distributed runs it claims equivalence with probability "
        f"{normal[0]:.1%} when a source truly spreads as much as all_vary (ratio 1) and {normal[1]:.1%} at a true "
        f"ratio of {ratio}; with {design.collapsed_share:.0%} of the runs collapsed, {collapsed[0]:.1%} and "
        f'{collapsed[1]:.1%}. A "not shown" is therefore no evidence that a source spreads less than all_vary.'
    )


def _checks_text(study: RegisteredStudy) -> str:
    runs = sum(len(condition.complete) for condition in study.conditions.values())
    if not runs:
        return "No registered run is complete yet."
    if study.refused:
        cpu = "Not judged: " + "; ".join(study.refused) + "."
    else:
        cpu = f"Every one of the {runs} complete runs ran on a CPU of capability {study.capability} (provenance.json)."
    commits = ", ".join(study.commits) or "none"
    code = (
        f"The code commits they record: {commits}; that each descends from the commit adding the pre-registration, "
        "as the file requires, is a question for the repository's git history, which this report does not read "
        "(td3x's tests check it for the published runs)."
    )
    if study.shared:
        pairs = "; ".join(f"{pair}: {', '.join(labels)}" for pair, labels in study.shared.items())
        shared = f"Runs shared between conditions, bit for bit, which the registration rules out: {pairs}."
    else:
        shared = "No run of one condition is bit for bit a run of another (every evaluation step and return compared)."
    return f"{cpu} {shared} {code}"


def markdown(study: RegisteredStudy | None) -> str:
    """The registered seed study's part of the seed-sources section ('' without its runs)."""
    if study is None:
        return ""
    parts = [_design_text(study), _checks_text(study)]
    for statistic, title in STATISTICS.items():
        rows = [row for row in study.judgements if row.statistic == statistic]
        heading = "primary, registered" if statistic == PRIMARY else "secondary, descriptive: no verdict"
        parts += [f"*{title.capitalize()} ({heading})*", tables.markdown(display_frame(rows))]
    parts += [
        _power_text(study),
        "The first seed study (5 runs a condition, every source condition sharing "
        f"{ALL_VARY}'s seed-0 run) is a separate study, and any test of it is post hoc; its runs are not part of "
        "this test.",
    ]
    return "\n\n".join(parts)
