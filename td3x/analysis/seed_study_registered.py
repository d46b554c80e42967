"""The registered seed study (the pre-registration file's ``seed_study`` section), judged as the file registers it:
does one training source alone make as much spread across runs as all sources together?

Its runs are found by what the file fixes: the env, the ``seed_study`` group option (``all_vary``, ``weights``,
``warmup``), agent=td3_paper, ``run.num_seeds`` = ``computed.runs_per_condition`` = n, ``run.total_steps`` = the
registered steps, and each run's six training-source seeds as its condition sets them (``config.yaml``'s
``effective_seeds``: all_vary's every source at the run's seed, first..first + n - 1; a source condition's own
source at the run's seed, the other five pinned to the condition's first seed). Other runs in the folder (the first
study's, seeds 0..4) are not these.

Per run the statistic is ``registration.window_mean(run, env.random_steps, steps)``; per source condition against
all_vary: each SD with its 95% chi-square interval, the SD ratio with its 90% F interval, the Brown-Forsythe TOST p
within ``ratio_bound`` (``spread_tests.bf_tost_p``), its Holm adjustment over the family, the decision, the two-sided
Brown-Forsythe p, and the collapsed runs (final return below the run's step-0 return). The return at the last step
gets the same numbers, descriptive. A condition with fewer complete runs than registered gets no verdict; a family
member without one enters Holm at p = 1, so a claim made before it completes stands whatever it gives. Runs on CPUs of
different capability (``provenance.json``'s ``cpu_capability``, or none recorded), a seed complete twice, or runs
evaluated at other steps are not judged at all. The section's text is ``seed_study_registered_text``'s.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from td3x.analysis.cells import STUDY_GROUP, Registered
from td3x.analysis.registration import Registration, window_mean
from td3x.analysis.runs import NOT_RECORDED, Run, distinct
from td3x.analysis.seed_sources import ALL_VARY, SOURCES, Sample
from td3x.analysis.seed_study_checks import shared_runs
from td3x.analysis.spread_tests import bf_p, bf_tost_p
from td3x.analysis.two_sample import holm, ratio_interval, sd_interval

AGENT = "td3_paper"  # the section's `runs`: agent=td3_paper
PRIMARY, SECONDARY = "window_mean", "final"  # the registered statistic; the return at the last step (descriptive)
STATISTICS = {PRIMARY: "mean return over the evaluations after the warm-up", SECONDARY: "return at the last step"}
POWERS = ("bf_tost_power_ratio_1_holm_first_step", "bf_tost_power_sensitivity_ratio_holm_first_step")


@dataclass(frozen=True)
class Design:
    """What the file fixes: env, last step, conditions (name: first seed), the family, runs per condition, the
    ratio bound, alpha, the sensitivity ratio and the simulated power (``normal``/``collapsed``: the TOST's power at
    Holm's first step at a true ratio of 1 and at the sensitivity ratio) with the collapsed share."""

    env_id: str
    steps: int
    conditions: dict[str, int]
    family: tuple[str, ...]
    runs: int
    bound: tuple[float, float]
    alpha: float
    sensitivity_ratio: float
    power: dict[str, tuple[float, float]]
    collapsed_share: float


def read_design(registration: Registration) -> Design:
    """The seed study's design from the file (one ``PreregistrationError`` naming the first key it lacks)."""
    low, high = (float(value) for value in registration.value("seed_study.ratio_bound"))
    conditions = {str(name): int(seed) for name, seed in registration.mapping("seed_study.conditions").items()}
    family = tuple(str(name) for name in registration.value("seed_study.family"))
    if ALL_VARY not in conditions or not set(family) <= set(conditions) - {ALL_VARY}:
        raise registration.problem(f"seed_study.conditions must hold {ALL_VARY} and every member of seed_study.family")
    power = {
        scenario: tuple(float(registration.value(f"seed_study.computed.{scenario}.{key}")) for key in POWERS)
        for scenario in ("normal", "collapsed")
    }
    return Design(
        str(registration.value("seed_study.env")),
        int(registration.value("seed_study.steps")),
        conditions,
        family,
        int(registration.value("seed_study.computed.runs_per_condition")),
        (low, high),
        float(registration.value("common.alpha")),
        float(registration.value("seed_study.sensitivity_ratio")),
        {scenario: (values[0], values[1]) for scenario, values in power.items()},
        float(registration.value("seed_study.collapsed_runs.share")),
    )


# ---------------------------------------------------------------------------------------------------- the runs
def expected_seeds(design: Design, name: str, seed: int) -> dict[str, int]:
    """The six training sources' seeds of condition ``name``'s run ``seed``."""
    if name == ALL_VARY:
        return dict.fromkeys(SOURCES, seed)
    return dict.fromkeys(SOURCES, design.conditions[name]) | {name: seed}


def is_registered(run: Run, design: Design, name: str) -> bool:
    """Whether ``run`` is one of condition ``name``'s registered runs (complete or not)."""
    choices, settings = run.config.get("choices") or {}, run.config.get("run") or {}
    first = design.conditions[name]
    if (run.env_id, choices.get(STUDY_GROUP), choices.get("agent")) != (design.env_id, name, AGENT):
        return False
    if (run.num_seeds, settings.get("total_steps")) != (design.runs, design.steps):
        return False
    seeds = run.config.get("effective_seeds") or {}
    found = {source: seeds.get(source) for source in SOURCES}
    return first <= run.seed < first + design.runs and found == expected_seeds(design, name, run.seed)


def is_complete(run: Run, steps: int) -> bool:
    """A run that finished and was evaluated at step 0 and at the last step."""
    return run.problem is None and len(run.steps) > 1 and run.steps[0] == 0 and run.steps[-1] == steps


def _random_steps(run: Run) -> int:
    return int(run.config["env"]["random_steps"])


@dataclass(frozen=True, eq=False)
class Condition:
    """One condition's registered runs: every run dir found, and the complete ones by seed."""

    name: str
    first_seed: int
    found: list[Run]
    complete: list[Run]

    def values(self, statistic: str) -> np.ndarray:
        """Each complete run's statistic, by seed."""
        if statistic == PRIMARY:
            return np.array([window_mean(run, _random_steps(run), int(run.steps[-1])) for run in self.complete])
        return np.array([float(run.returns[-1]) for run in self.complete])

    @property
    def samples(self) -> list[Sample]:
        return [Sample(str(run.path), run.steps, run.returns) for run in self.complete]

    @property
    def collapsed(self) -> int:
        """Runs whose final return is below their own step-0 return."""
        return sum(sample.below_start for sample in self.samples)


def find_conditions(runs: list[Run], design: Design) -> dict[str, Condition]:
    """Each condition's registered runs (every condition of the file, with no run or some)."""
    conditions = {}
    for name, first in design.conditions.items():
        found = sorted((run for run in runs if is_registered(run, design, name)), key=lambda run: (run.seed, run.path))
        complete = [run for run in found if is_complete(run, design.steps)]
        conditions[name] = Condition(name, first, found, complete)
    return conditions


def mixed_capabilities(runs: list[Run]) -> str | None:
    """How many of ``runs`` ran on each CPU capability (``AVX2: 12 runs, AVX512: 4 runs``), when they do not all
    record one; None when they do (or there are none)."""
    capabilities = Counter(run.kernels or NOT_RECORDED for run in runs)
    if len(capabilities) <= 1 and NOT_RECORDED not in capabilities:
        return None
    return ", ".join(f"{name}: {count} runs" for name, count in sorted(capabilities.items()))


def seeds_complete_twice(runs: list[Run]) -> list[int]:
    """The seeds with more than one of ``runs`` (complete runs): which one a statistic counts is not defined."""
    return sorted(seed for seed, count in Counter(run.seed for run in runs).items() if count > 1)


def refusals(conditions: dict[str, Condition], design: Design) -> list[str]:
    """Why none of the study can be judged: CPUs of several capabilities (or one not recorded), a seed complete in
    two run dirs, or complete runs evaluated at other steps than the others (none: it can)."""
    runs = [run for condition in conditions.values() for run in condition.complete]
    problems = []
    mixed = mixed_capabilities(runs)
    if mixed:
        problems.append(f"the registration needs every run on CPUs of one capability, recorded; these ran on {mixed}")
    for condition in conditions.values():
        twice = seeds_complete_twice(condition.complete)
        if twice:
            problems.append(f"{condition.name}'s seed(s) {twice} have several complete run dirs: give td3x-report one")
    if len({tuple(run.steps.tolist()) for run in runs}) > 1:
        problems.append(f"the runs were not all evaluated at the same steps (0..{design.steps})")
    return problems


# ---------------------------------------------------------------------------------------------------- the judgement
@dataclass(frozen=True)
class Judgement:
    """One condition on one statistic (a source against all_vary; all_vary's own row has no ratio or test).

    Attributes:
        status: the decision, or ``descriptive`` (the secondary statistic), or why there is none
            (``incomplete: k of n``, ``not judged``).
    """

    condition: str
    statistic: str
    status: str
    runs: int
    mean: float = math.nan
    sd: float = math.nan
    sd_interval: tuple[float, float] = (math.nan, math.nan)
    ratio: float = math.nan
    ratio_interval: tuple[float, float] = (math.nan, math.nan)
    tost_p: float = math.nan
    holm_p: float = math.nan
    bf_p: float = math.nan
    collapsed: int = 0


@dataclass(frozen=True, eq=False)
class RegisteredStudy:
    """The registered seed study as found and judged.

    Attributes:
        design: the file's design.
        conditions: each condition's runs.
        judgements: per statistic, all_vary's row then the family's, in the file's order.
        refused: why nothing is judged (empty: judged).
        capability: the CPU capability every complete run records (or what they record, comma-separated).
        shared: per pair of conditions (``a/b``), the runs of ``b`` that are bit for bit one of ``a``'s.
    """

    design: Design
    conditions: dict[str, Condition]
    judgements: list[Judgement]
    refused: list[str]
    capability: str
    shared: dict[str, list[str]] = field(default_factory=dict)

    @property
    def commits(self) -> list[str]:
        """The code commits the complete runs record (:attr:`Run.commit`), each once."""
        return distinct(run.commit for condition in self.conditions.values() for run in condition.complete)

    def registered_runs(self) -> dict[Path, Registered]:
        """For the report's other tables: each condition's runs expect that condition's registered seeds (first ..
        first + runs − 1), not the other conditions' seeds on the same env."""
        return {
            run.path: Registered(frozenset(range(condition.first_seed, condition.first_seed + self.design.runs)))
            for condition in self.conditions.values()
            for run in condition.found
        }

    @property
    def window_steps(self) -> list[int]:
        """The evaluation steps the primary statistic averages (those of the first complete run)."""
        for condition in self.conditions.values():
            for run in condition.complete:
                after = _random_steps(run)
                return [int(step) for step in run.steps if after < step <= self.design.steps]
        return []


def claim(design: Design) -> str:
    """The registered words of an equivalence claim."""
    low, high = design.bound
    bound = f"a factor of {high:g}" if math.isclose(low * high, 1.0) else f"an SD ratio in [{low:g}, {high:g}]"
    return f"spread as large as all_vary's within {bound}"


def decision(adjusted: float, design: Design) -> str:
    """The registered decision for a Holm-adjusted TOST p: the claim, or ``not shown``."""
    return claim(design) if adjusted < design.alpha else "not shown"


def incomplete(condition: Condition, design: Design) -> str | None:
    """``incomplete: k of n`` for a condition with fewer complete runs than registered (None: complete)."""
    k = len(condition.complete)
    return f"incomplete: {k} of {design.runs}" if k < design.runs else None


def judge_statistic(study: RegisteredStudy, statistic: str) -> list[Judgement]:
    """all_vary's row and each family member's, on ``statistic``."""
    design, conditions = study.design, study.conditions
    base = conditions[ALL_VARY]
    rows = [_row(base, base, statistic, study.refused, design)]
    tests = [_row(conditions[name], base, statistic, study.refused, design) for name in design.family]
    # a member without a test enters the family at p = 1: the adjustment is then at least the full family's
    adjusted = holm(row.tost_p if math.isfinite(row.tost_p) else 1.0 for row in tests)
    for row, p in zip(tests, adjusted, strict=True):
        if math.isfinite(row.tost_p):
            status = decision(float(p), design) if statistic == PRIMARY else "descriptive"
            row = replace(row, holm_p=float(p), status=status)
        elif not row.status:  # every run of a condition alike: no deviation to test
            row = replace(row, status="no test: a condition without spread")
        rows.append(row)
    return rows


def _row(condition: Condition, base: Condition, statistic: str, refused: list[str], design: Design) -> Judgement:
    """A condition's numbers on ``statistic``, with the test against all_vary's when both are complete (none for
    all_vary itself)."""
    name, n, collapsed = condition.name, len(condition.complete), condition.collapsed
    missing = incomplete(condition, design)
    if refused or missing:
        return Judgement(name, statistic, "not judged" if refused else str(missing), n, collapsed=collapsed)
    values, reference = condition.values(statistic), base.values(statistic)
    sd = float(values.std(ddof=1))
    row = Judgement(name, statistic, "reference", n, float(values.mean()), sd, sd_interval(sd, n), collapsed=collapsed)
    base_missing = incomplete(base, design)
    if condition is base or base_missing:
        return row if condition is base else replace(row, status=f"no test: {ALL_VARY} {base_missing}")
    base_sd = float(reference.std(ddof=1))
    ratio = sd / base_sd if base_sd > 0 else math.nan
    low, high = design.bound
    return replace(
        row,
        status="",
        ratio=ratio,
        ratio_interval=ratio_interval(ratio, n, len(reference), 1 - 2 * design.alpha),
        tost_p=float(bf_tost_p(values, reference, low, high)),
        bf_p=float(bf_p(values, reference)),
    )


def judge_registered(runs: list[Run], registration: Registration) -> RegisteredStudy | None:
    """The registered seed study of ``runs`` (None when they hold none of its runs).

    Raises:
        PreregistrationError: the file lacks a key the judgement reads.
    """
    design = read_design(registration)
    conditions = find_conditions(runs, design)
    if not any(condition.found for condition in conditions.values()):
        return None
    complete = [run for condition in conditions.values() for run in condition.complete]
    capabilities = ", ".join(distinct(run.kernels for run in complete))
    study = RegisteredStudy(design, conditions, [], refusals(conditions, design), capabilities)
    samples = {name: condition.samples for name, condition in conditions.items()}
    names = list(conditions)
    for i, name in enumerate(names):
        later = {other: samples[other] for other in names[i + 1 :]}
        for other, indices in shared_runs(samples[name], later).items():
            study.shared[f"{name}/{other}"] = [samples[other][index].label for index in indices]
    study.judgements.extend(row for statistic in STATISTICS for row in judge_statistic(study, statistic))
    return study


# ---------------------------------------------------------------------------------------------------- the table
def frames(study: RegisteredStudy | None) -> dict[str, pd.DataFrame]:
    """``seed_study_registered``: per statistic and condition, its numbers (a :class:`Judgement`'s fields: ``tost_p``
    the Brown-Forsythe TOST p, ``holm_p`` its Holm adjustment, ``bf_p`` the two-sided Brown-Forsythe p), its status
    and the registered power (none without the study)."""
    if study is None:
        return {}
    design = study.design
    power: dict[str, float] = {"sensitivity_ratio": design.sensitivity_ratio}
    for scenario, (at_1, at_sensitivity) in design.power.items():
        power |= {f"power_{scenario}_ratio_1": at_1, f"power_{scenario}_sensitivity": at_sensitivity}
    rows = [
        {
            "env": design.env_id,
            "first_seed": design.conditions[row.condition],
            "registered_runs": design.runs,
            **_record(row),
            "cpu_capability": study.capability,
            **power,
        }
        for row in study.judgements
    ]
    return {"seed_study_registered": pd.DataFrame(rows)}


def _record(row: Judgement) -> dict[str, object]:
    """A judgement's fields as columns, each interval as its two ends (``sd_low_95``, ``ratio_high_90``)."""
    record = asdict(row)
    for name, confidence in (("sd_interval", 95), ("ratio_interval", 90)):
        low, high = record.pop(name)
        stem = name.removesuffix("_interval")
        record |= {f"{stem}_low_{confidence}": low, f"{stem}_high_{confidence}": high}
    return record
