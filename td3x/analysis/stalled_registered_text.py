"""The stalled-actors amendments' section of the report (``stalled_registered``'s judgement in words): what the file
registers, the verdicts with each arm's stall rate, the control's pairing by warm-up seed, what each test can detect
(the file's rejection rates) and the CPU capability with the deviation as the file states it."""

from __future__ import annotations

import math

import pandas as pd

from td3x.analysis import tables
from td3x.analysis.stalled_registered import CONTROL, NO_DIFFERENCE, TREATED, Design, FisherTest, Judgement
from td3x.analysis.tables import p_text


def display_frame(judgement: Judgement) -> pd.DataFrame:
    """The section's table: per amendment its verdict first (what a narrow screen shows), then its initial weights,
    stalled count, the count against and p."""
    shown = {
        test.section: {
            "verdict": test.status,
            "initial weights": f"seed {test.weights_seed}",
            "stalled [rate, exact 95%]": f"{len(test.stalled)} of {test.runs}" + _rate_text(test.rate_interval),
            "against": f"{test.against_count[0]} of {test.against_count[1]}: {test.against}",
            "Fisher p": p_text(test.p),
            "CPU": test.capability or tables.EMPTY,
        }
        for test in judgement.tests
    }
    frame = pd.DataFrame.from_dict(shown, orient="index")
    frame.index.name = "amendment"
    return frame


def _rate_text(interval: tuple[float, float]) -> str:
    return "" if math.isnan(interval[0]) else f" [{interval[0]:.1%}, {interval[1]:.1%}]"


def markdown(judgement: Judgement | None) -> str:
    """The section ('' without the amendments' runs)."""
    if judgement is None:
        return ""
    design = judgement.design
    parts = [
        "## Registered: stalled actors and the initial weights",
        _design_text(design),
        tables.markdown(display_frame(judgement)),
        *(_paired_text(test) for test in judgement.tests if test.paired),
        _power_text(design),
        _cpu_text(judgement),
    ]
    return "\n\n".join(part for part in parts if part)


def _design_text(design: Design) -> str:
    first, (stalled, runs) = design.first_seed, design.reference
    treated, control = design.runs[TREATED], design.runs[CONTROL]
    return (
        f"As the pre-registration file registers them (sections `{TREATED}` and `{CONTROL}`, amendments added after "
        f"the seed study's verdict): in the registered seed study, {stalled} of the {design.condition} condition's "
        f"{runs} runs ended with a stalled actor (the last actor gradient norm `metrics.jsonl` logs below "
        f"{design.threshold:g}), every one of them starting from seed {first}'s initial weights. `{TREATED}`: the "
        f"{design.condition} condition ({design.study.env_id}, agent=td3_paper, {design.study.steps} steps) on "
        f"warm-up seeds {first}..{first + treated - 1} with the initial weights pinned to seed "
        f"{design.weights[TREATED]} instead, {treated} runs, against the seed study's count as the file records it "
        "(counted from the seed study's committed runs). "
        f"`{CONTROL}`: the {design.condition} condition as the seed study ran it (initial weights at seed {first}) "
        f"on the same warm-up seeds, {control} runs, against `{TREATED}`' runs. Each test: Fisher's exact test of "
        f"the two stalled counts, two-sided at {design.study.alpha:g}; the verdict is the file's words where p is "
        f'below it, otherwise "{NO_DIFFERENCE}", which is no evidence that the weights change nothing. Beside each '
        "count, descriptive, not registered: the exact (Clopper-Pearson) 95% interval of its arm's stall rate. All "
        "numbers are in `stalled_registered.csv`, with the stalled runs' seeds."
    )


def _paired_text(test: FisherTest) -> str:
    pairs = test.paired
    return (
        f"Paired by warm-up seed (descriptive), `{test.section}`'s runs with `{TREATED}`': on the "
        f"{sum(pairs.values())} seeds both have, {pairs['both']} stall under both initial weights, "
        f"{pairs['this_only']} only under seed {test.weights_seed}'s, {pairs['other_only']} only under the other's, "
        f"{pairs['neither']} under neither."
    )


def _power_text(design: Design) -> str:
    power, (stalled, runs) = design.power, design.reference
    return (
        "What each test can detect (the file's exact rejection rates, computed before the runs): "
        f"`{TREATED}`, {design.runs[TREATED]} runs against {stalled} of {runs}, rejects with probability "
        f"{power['power_at_alternative_rate']:.1%} when a run stalls with probability "
        f"{power['alternative_rate']:g} under the other weights, {power['power_at_1_of_32']:.1%} at 1 in 32, and "
        f"{power['rejection_rate_at_reference_rate']:.1%} when the weights change nothing (the test is "
        f"conservative). `{CONTROL}`, {design.runs[CONTROL]} runs against `{TREATED}`' count: "
        f"{power['power_at_reference_rate']:.1%} when its runs stall as often as the seed study's "
        f"{design.condition} runs did, {power['power_at_half_the_reference_rate']:.1%} at half that rate."
    )


def _cpu_text(judgement: Judgement) -> str:
    arms = ", ".join(
        f"`{arm.name}`' on {arm.capability}" for arm in judgement.arms.values() if arm.complete and arm.capability
    )
    commits = ", ".join(judgement.commits) or "none"
    return (
        f"The complete runs' CPU capability (provenance.json): {arms or 'none yet'}. The registration asked "
        f"`{TREATED}`' runs to share the seed study's; the file states the deviation (`{CONTROL}.amendment`): "
        f"“{judgement.design.deviation}” Where the capabilities differ, `{TREATED}`' test compares runs on "
        "different kernels, whose bits differ; the control's compares runs on one. The code commits the runs record: "
        f"{commits} (that each descends from the commit adding its section is checked by td3x's tests for the "
        "published runs)."
    )
