"""The pre-registration file's two amendments on the seed study's stalled actors, ``stalled_actors`` and its
control ``stalled_actors_control``, judged as the file registers them: do the warmup condition's initial weights
(its first seed's) make its actors stall?

- ``stalled_actors``: the warmup condition with only the initial weights changed (``seeds.weights`` =
  ``weights_seed``), ``computed.runs`` runs, against the registered seed study's warmup runs. Their count is the
  file's (``computed.reference_stalled`` of ``reference_runs``), which scripts/preregistration_power.py counts
  from the seed study's committed runs and whose ``--check`` fails when the two disagree: this report needs none
  of the seed study's runs.
- ``stalled_actors_control``: the warmup condition as registered (initial weights at its first seed) on the same
  warm-up seeds, ``runs_per_side`` runs, against ``stalled_actors``' runs, on one CPU capability.

A run is stalled when the last ``actor_grad_norm`` its ``metrics.jsonl`` logs is below the file's
``stall_threshold``. Each test is Fisher's exact test, two-sided, at ``common.alpha``, with the file's verdict words.
The runs are found by what the file fixes: the env, ``+seed_study`` option, agent and steps of the seed study,
``run.num_seeds``, and each run's six training-source seeds (``effective_seeds``: warm-up at the run's seed, the
initial weights at the arm's seed, every other source at the condition's first seed). An arm with fewer complete
runs than registered gets no verdict, nor does one whose runs log no actor gradient; the control gets none when
its runs and ``stalled_actors``' do not all record one CPU capability. Descriptive: each arm's stall rate with its
exact 95% interval, and the control's runs paired with ``stalled_actors``' by warm-up seed. The section's words are
``stalled_registered_text``'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
from scipy import stats

from td3x.analysis.cells import STUDY_GROUP, Registered
from td3x.analysis.registration import REGISTERED_AGENT, Registration
from td3x.analysis.runs import Run, distinct
from td3x.analysis.seed_study_registered import Design as StudyDesign
from td3x.analysis.seed_study_registered import (
    expected_seeds,
    is_complete,
    mixed_capabilities,
    read_design,
    seeds_complete_twice,
)

TREATED, CONTROL = "stalled_actors", "stalled_actors_control"
WEIGHTS = "weights"  # the training source the amendments change
NO_DIFFERENCE = "no difference shown"
RATE_CONFIDENCE = 0.95  # the descriptive interval on each arm's stall rate
# the registered verdict words (each section's ``decision``)
CLAIMS = {
    TREATED: "The initial weights change how many actors stall",
    CONTROL: "On one CPU, the initial weights change how many actors stall",
}


TREATED_POWER = ("power_at_alternative_rate", "power_at_1_of_32", "rejection_rate_at_reference_rate")
CONTROL_POWER = ("power_at_reference_rate", "power_at_half_the_reference_rate")


@dataclass(frozen=True)
class Design:
    """What the file fixes for both amendments.

    Attributes:
        study: the registered seed study's design (env, steps, conditions, alpha).
        condition: the seed study's condition both amendments rerun (``reference_condition``).
        weights: each arm's initial-weights seed: ``stalled_actors``' ``weights_seed``; the control's the
            condition's first seed, as the condition pins it.
        runs: registered runs per arm (``stalled_actors``' ``computed.runs``, the control's ``runs_per_side``).
        threshold: ``stall_threshold``.
        reference: the seed study's count, (stalled, runs), as the file records it.
        power: the file's computed rejection rates and ``stalled_actors``' alternative rate, by key.
        deviation: the control's ``amendment`` text, which states how ``stalled_actors``' runs deviate.
    """

    study: StudyDesign
    condition: str
    weights: dict[str, int]
    runs: dict[str, int]
    threshold: float
    reference: tuple[int, int]
    power: dict[str, float]
    deviation: str

    @property
    def first_seed(self) -> int:
        return self.study.conditions[self.condition]


def read_stalled_design(registration: Registration) -> Design:
    """Both amendments' design from the file (one ``PreregistrationError`` naming the first key it lacks)."""
    study, value = read_design(registration), registration.value
    condition = str(value(f"{TREATED}.reference_condition"))
    if condition not in study.conditions:
        raise registration.problem(f"{TREATED}.reference_condition must be one of {sorted(study.conditions)}")
    power = {key: float(value(f"{TREATED}.computed.{key}")) for key in TREATED_POWER}
    power |= {key: float(value(f"{CONTROL}.computed.{key}")) for key in CONTROL_POWER}
    return Design(
        study,
        condition,
        {TREATED: int(value(f"{TREATED}.weights_seed")), CONTROL: study.conditions[condition]},
        {TREATED: int(value(f"{TREATED}.computed.runs")), CONTROL: int(value(f"{CONTROL}.runs_per_side"))},
        float(value(f"{TREATED}.stall_threshold")),
        (int(value(f"{TREATED}.computed.reference_stalled")), int(value(f"{TREATED}.computed.reference_runs"))),
        power | {"alternative_rate": float(value(f"{TREATED}.alternative_rate"))},
        " ".join(str(value(f"{CONTROL}.amendment")).split()),
    )


# ---------------------------------------------------------------------------------------------------- the runs
@dataclass(frozen=True, eq=False)
class Arm:
    """One amendment's registered runs: every run dir found, and the complete ones by seed."""

    name: str
    registered: int
    found: list[Run]
    complete: list[Run]

    @property
    def capability(self) -> str:
        """The CPU capabilities its complete runs record, comma-separated (``not recorded`` for a run without)."""
        return ", ".join(distinct(run.kernels for run in self.complete))

    def stalled(self, threshold: float) -> set[int]:
        """The warm-up seeds of its complete runs whose actor stalled."""
        return {run.seed for run in self.complete if (norm := run.actor_grad_norm) is not None and norm < threshold}


def is_arm_run(run: Run, design: Design, arm: str) -> bool:
    """Whether ``run`` is one of ``arm``'s registered runs (complete or not)."""
    choices, settings = run.config.get("choices") or {}, run.config.get("run") or {}
    study, first, runs = design.study, design.first_seed, design.runs[arm]
    registered = (study.env_id, design.condition, REGISTERED_AGENT)
    if (run.env_id, choices.get(STUDY_GROUP), choices.get("agent")) != registered:
        return False
    if (run.num_seeds, settings.get("total_steps")) != (runs, study.steps) or not first <= run.seed < first + runs:
        return False
    expected = expected_seeds(study, design.condition, run.seed) | {WEIGHTS: design.weights[arm]}
    seeds = run.config.get("effective_seeds") or {}
    return {source: seeds.get(source) for source in expected} == expected


def find_arm(runs: list[Run], design: Design, arm: str) -> Arm:
    """``arm``'s registered runs among ``runs``."""
    found = sorted((run for run in runs if is_arm_run(run, design, arm)), key=lambda run: (run.seed, run.path))
    return Arm(arm, design.runs[arm], found, [run for run in found if is_complete(run, design.study.steps)])


# ---------------------------------------------------------------------------------------------------- the tests
@dataclass(frozen=True)
class FisherTest:
    """One amendment's Fisher test: its runs' stalled count against the count it is set against.

    Attributes:
        status: the registered verdict, or why there is none (``incomplete: k of n``, ``not judged: ...``).
        paired: for the control, its runs and ``stalled_actors``' paired by warm-up seed: how many seeds stall
            under both, under this arm's weights only, under the other's only, and under neither (empty otherwise).
    """

    section: str
    weights_seed: int
    registered: int
    runs: int
    stalled: tuple[int, ...]
    against: str
    against_count: tuple[int, int]
    p: float
    status: str
    capability: str
    paired: dict[str, int] = field(default_factory=dict)

    @property
    def rate_interval(self) -> tuple[float, float]:
        """The stall rate's exact (Clopper-Pearson) 95% interval from this arm's count, descriptive; NaN without
        runs."""
        if not self.runs:
            return (math.nan, math.nan)
        interval = stats.binomtest(len(self.stalled), self.runs).proportion_ci(RATE_CONFIDENCE, method="exact")
        return (float(interval.low), float(interval.high))


@dataclass(frozen=True, eq=False)
class Judgement:
    """Both amendments as found and judged."""

    design: Design
    arms: dict[str, Arm]
    tests: list[FisherTest]

    def registered_runs(self) -> dict[Path, Registered]:
        """For the report's other tables: each arm's runs expect its registered seeds and get a row of their own,
        named by the amendment (their config is the seed study's warmup condition's, or differs from it only in the
        initial weights' seed)."""
        first = self.design.first_seed
        return {
            run.path: Registered(frozenset(range(first, first + arm.registered)), arm.name)
            for arm in self.arms.values()
            for run in arm.found
        }

    @property
    def commits(self) -> list[str]:
        """The code commits the complete runs record, each once."""
        return distinct(run.commit for arm in self.arms.values() for run in arm.complete)


def fisher_p(count: tuple[int, int], against: tuple[int, int]) -> float:
    """Fisher's exact test, two-sided, of two (stalled, runs) counts."""
    (stalled, runs), (other, other_runs) = count, against
    return float(stats.fisher_exact([[stalled, runs - stalled], [other, other_runs - other]])[1])


def why_not(arm: Arm) -> str | None:
    """Why an arm's count cannot be tested (None: it can)."""
    twice = seeds_complete_twice(arm.complete)
    if twice:
        return f"not judged: seed(s) {twice} have several complete run dirs: give td3x-report one"
    if len(arm.complete) < arm.registered:
        return f"incomplete: {len(arm.complete)} of {arm.registered}"
    unlogged = sum(run.actor_grad_norm is None for run in arm.complete)
    return f"not judged: {unlogged} runs log no actor gradient" if unlogged else None


def capability_problem(arms: list[Arm]) -> str | None:
    """Why runs of several arms do not share one recorded CPU capability (None: they do)."""
    mixed = mixed_capabilities([run for arm in arms for run in arm.complete])
    if mixed is None:
        return None
    return f"not judged: the control needs every run on CPUs of one capability, recorded; these ran on {mixed}"


def judge_arm(design: Design, arm: Arm, against: str, count: tuple[int, int], problem: str | None) -> FisherTest:
    """One arm's test against ``count`` (its runs' status first, then ``problem``, a reason to give no verdict)."""
    stalled = tuple(sorted(arm.stalled(design.threshold)))
    status = why_not(arm) or problem
    if status is None:
        p = fisher_p((len(stalled), len(arm.complete)), count)
        status = CLAIMS[arm.name] if p < design.study.alpha else NO_DIFFERENCE
    else:
        p = float("nan")
    weights, found = design.weights[arm.name], len(arm.complete)
    return FisherTest(arm.name, weights, arm.registered, found, stalled, against, count, p, status, arm.capability)


def paired(design: Design, arm: Arm, other: Arm) -> dict[str, int]:
    """Seeds complete in both arms, by where their actor stalled: both, ``arm`` only, ``other`` only, neither."""
    seeds = {run.seed for run in arm.complete} & {run.seed for run in other.complete}
    mine, theirs = arm.stalled(design.threshold) & seeds, other.stalled(design.threshold) & seeds
    return {
        "both": len(mine & theirs),
        "this_only": len(mine - theirs),
        "other_only": len(theirs - mine),
        "neither": len(seeds - mine - theirs),
    }


def judge_stalled(runs: list[Run], registration: Registration) -> Judgement | None:
    """Both amendments of ``runs`` (None when they hold no run of either).

    Raises:
        PreregistrationError: the file lacks a key the judgement reads.
    """
    design = read_stalled_design(registration)
    arms = {name: find_arm(runs, design, name) for name in (TREATED, CONTROL)}
    if not any(arm.found for arm in arms.values()):
        return None
    treated, control = arms[TREATED], arms[CONTROL]
    reference = f"the seed study's {design.condition} runs (the file's count)"
    tests = [judge_arm(design, treated, reference, design.reference, None)]
    if control.found:
        treated_count = (len(treated.stalled(design.threshold)), len(treated.complete))
        missing = why_not(treated)
        problem = f"no test: {TREATED} {missing}" if missing else capability_problem([treated, control])
        test = judge_arm(design, control, f"{TREATED}' runs", treated_count, problem)
        tests.append(replace(test, paired=paired(design, control, treated)) if problem is None else test)
    return Judgement(design, arms, tests)


# ---------------------------------------------------------------------------------------------------- the table
def frames(judgement: Judgement | None) -> dict[str, pd.DataFrame]:
    """``stalled_registered``: per amendment its runs, stalled count and seeds, the count it is set against,
    Fisher's p, the status, the CPU capability and (the control) the pairing by warm-up seed (none without runs)."""
    if judgement is None:
        return {}
    design = judgement.design
    rows = [
        {
            "amendment": test.section,
            "env": design.study.env_id,
            "weights_seed": test.weights_seed,
            "registered_runs": test.registered,
            "runs": test.runs,
            "stalled": len(test.stalled),
            "stalled_seeds": " ".join(map(str, test.stalled)),
            "stalled_rate_low_95": test.rate_interval[0],
            "stalled_rate_high_95": test.rate_interval[1],
            "against": test.against,
            "against_stalled": test.against_count[0],
            "against_runs": test.against_count[1],
            "fisher_p": test.p,
            "alpha": design.study.alpha,
            "status": test.status,
            "cpu_capability": test.capability,
            **{f"paired_{key}": test.paired.get(key) for key in ("both", "this_only", "other_only", "neither")},
        }
        for test in judgement.tests
    ]
    frame = pd.DataFrame(rows)
    paired_columns = [column for column in frame if column.startswith("paired_")]
    return {"stalled_registered": frame.astype(dict.fromkeys(paired_columns, "Int64"))}
