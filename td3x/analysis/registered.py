"""The pre-registered two-group tests (``--preregistration``): the file's ``peer`` (td3x against Stable-Baselines3's
TD3), ``bf16`` (td3x in bf16 against fp32; its amendment ``bf16_fp32_tanh``, bf16 with the actor's tanh in fp32,
on new seeds) and ``paper_horizon`` (td3x at 1M steps against the authors' 10 seeds)
comparisons, judged exactly as ``docs/results/preregistration.yaml`` registers them. Every number (seeds, bound,
α, family, MDD, steps) is read from the file (``registration``); this module finds the registered runs and computes
the tests; ``registered_tables`` prints them. ``registered_runs`` tells the report's other tables what the file
fixes about the runs it found: their sides' seeds, and which are an amendment's.

- **The runs**: per comparison and env, each side's registered config and seeds (``sides``). Runs with
  other seeds, lengths or configs never enter a test. A comparison none of whose registered runs is in the folder
  is left out; one with some but not all of them complete is reported as incomplete, without numbers or verdict.
- **The statistic**: ``registration.window_mean`` of each seed, over the evaluations after env.random_steps up to
  the run's last step (peer, bf16), or at steps first_step..last_step (paper_horizon; the authors' the same from
  their curves).
- **The tests**: TOST with Welch's t at the registered bound, Holm-adjusted over the section's family (a member
  without a complete test counts as p = 1, and no verdict is given until every member is complete); Welch's
  two-sided difference test, Holm-adjusted over the same family, with the file's MDD beside it; descriptive: the
  exact permutation test of the difference of means (as registered), the statistic with the warm-up evaluations
  in, the return at the last step, bf16's overestimation bias and its runs' frozen actors, and the 1M runs' Table 1
  maximum.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

import numpy as np

from td3x.analysis.cells import Registered
from td3x.analysis.equivalence import EQUIVALENT, NOT_SHOWN, Bound, Tost, tost
from td3x.analysis.metrics import max_average_return, return_at
from td3x.analysis.paper import TD3_ROW, authors_curves, authors_statistic, authors_steps
from td3x.analysis.peer import PEER_ROW
from td3x.analysis.registered_design import Design, designs
from td3x.analysis.registration import REGISTERED_AGENT, Registration, window_mean
from td3x.analysis.runs import Run
from td3x.analysis.tables import number
from td3x.analysis.two_sample import Permutation, Welch, holm, mean_difference_permutation_test, welch

T = TypeVar("T")
BIAS_COLUMNS = ("bias_q1", "bias_min_q")  # eval.csv's overestimation bias, the bf16 comparison's descriptive part


class RegisteredRunsError(ValueError):
    """Registered runs that cannot be judged: two complete runs of one registered seed, or a side's runs that
    disagree on env.random_steps or on their evaluation steps."""


@dataclass(frozen=True)
class Side:
    """One side's registered runs.

    Attributes:
        label: whose runs ("td3x", "SB3 TD3", "bf16", "fp32", "the authors").
        seeds: the registered seeds (empty for the authors, whose curves are packaged).
        runs: the runs found with a registered seed and config, complete or not, in seed order.
        reruns: the seeds with more than one run dir (a failed or lost run rerun with the same seed and config).
    """

    label: str
    seeds: tuple[int, ...] = ()
    runs: tuple[Run, ...] = ()
    reruns: tuple[int, ...] = ()

    @property
    def complete(self) -> tuple[Run, ...]:
        return tuple(run for run in self.runs if run.problem is None)

    @property
    def missing(self) -> tuple[int, ...]:
        """The registered seeds without a complete run."""
        done = {run.seed for run in self.complete}
        return tuple(seed for seed in self.seeds if seed not in done)


@dataclass(frozen=True, eq=False)  # holds arrays
class Outcome:
    """The numbers of a complete comparison.

    Attributes:
        ours: each of our seeds' statistic (td3x's, bf16's).
        other: the other side's.
        steps: the evaluation steps the statistic averages (ours).
        test: Welch's comparison ours − other (95% and 90% intervals, two-sided p).
        tost: TOST at the registered bound, with the file's MDD.
        permutation: the exact permutation test of the difference of means of the same two groups (registered).
        warmup_in: Welch on the statistic with the warm-up evaluations in (5000..T); None for paper_horizon.
        at_end: Welch on the return at the last step.
        bias: the bf16 sections only: per bias column, Welch of its mean over the same evaluations, or why there is
            none.
        table1: paper_horizon only: Table 1's max average return, ours and the authors'.
        frozen_actors: the bf16 sections only: how many runs of each side (ours, other's) logged an actor gradient
            of exactly 0 at their last log row (tanh = ±1 at every action of the batch: an actor that no longer
            learns); None elsewhere.
    """

    ours: np.ndarray
    other: np.ndarray
    steps: np.ndarray
    test: Welch
    tost: Tost
    permutation: Permutation
    warmup_in: Welch | None
    at_end: Welch
    bias: dict[str, Welch | str] = field(default_factory=dict)
    table1: tuple[float, float] | None = None
    frozen_actors: tuple[int, int] | None = None


@dataclass(frozen=True, eq=False)
class RegisteredTest:
    """One registered comparison on one env, as the report shows it.

    Attributes:
        design: what the file registers for it.
        ours: our side's runs.
        other: the other side's (the authors' has none).
        outcome: the numbers, None while the comparison is incomplete.
        holm_tost_p: the TOST p Holm-adjusted over the section's family.
        holm_p: the difference test's p Holm-adjusted over the same family.
        family_pending: the family's envs without a complete test (no verdict while any is).
    """

    design: Design
    ours: Side
    other: Side
    outcome: Outcome | None = None
    holm_tost_p: float = float("nan")
    holm_p: float = float("nan")
    family_pending: tuple[str, ...] = ()

    @property
    def runs_found(self) -> int:
        return len(self.ours.complete) + len(self.other.complete)

    @property
    def runs_registered(self) -> int:
        return len(self.ours.seeds) + len(self.other.seeds)

    @property
    def status(self) -> str:
        if self.design.pending:
            return self.design.pending
        if self.outcome is None:
            return f"incomplete: {self.runs_found} of {self.runs_registered} runs"
        return "complete"

    @property
    def decision(self) -> str:
        """The file's decision words, or why there is none yet."""
        if self.outcome is None:
            return self.status
        if self.family_pending:
            return f"no verdict yet: the family's {', '.join(self.family_pending)} not complete"
        if self.holm_tost_p < self.design.alpha:
            return EQUIVALENT.format(bound=number(self.design.bound, 0))
        return NOT_SHOWN

    @property
    def difference_decision(self) -> str:
        """``difference detected`` only when Holm's difference p is below α."""
        if self.outcome is None or self.family_pending:
            return "no verdict"
        return "difference detected" if self.holm_p < self.design.alpha else "no difference detected"


# ---------------------------------------------------------------------------------------------------- runs
def _run_key(run: Run) -> tuple[str, str, str, int, str]:
    """What picks a run for a registered side: env, row, agent option, length and precision."""
    run_config = run.config.get("run") or {}
    agent = str((run.config.get("choices") or {}).get("agent", ""))
    steps = run_config.get("total_steps")
    length = steps if isinstance(steps, int) else -1  # an unreadable config's: no registered length
    return run.env_id, run.paper_row, agent, length, str(run_config.get("precision", "fp32"))


def find_side(runs: list[Run], label: str, key: tuple[str, str, str, int, str], seeds: tuple[int, ...]) -> Side:
    """The runs of ``seeds`` whose env, row, agent, length and precision are ``key``, one per seed (the complete
    one where a seed has several run dirs).

    Raises:
        RegisteredRunsError: two complete runs of one seed.
    """
    found: dict[int, list[Run]] = {}
    for run in runs:
        if run.seed in seeds and _run_key(run) == key:
            found.setdefault(run.seed, []).append(run)
    picked = []
    for seed in seeds:
        complete = [run for run in found.get(seed, []) if run.problem is None]
        if len(complete) > 1:
            paths = ", ".join(str(run.path) for run in complete)
            raise RegisteredRunsError(f"two complete registered {label} runs of seed {seed}: {paths}")
        if complete or seed in found:
            picked.append((complete or found[seed])[0])
    return Side(label, seeds, tuple(picked), tuple(seed for seed in seeds if len(found.get(seed, [])) > 1))


def sides(design: Design, runs: list[Run]) -> tuple[Side, Side]:
    """Our side and the other of ``design`` among ``runs``."""
    agent, steps = REGISTERED_AGENT, design.last_step
    ours = find_side(runs, design.labels[0], (design.env_id, TD3_ROW, agent, steps, design.precision), design.seeds[0])
    if design.section == "paper_horizon":
        return ours, Side(design.labels[1])
    other_row = PEER_ROW if design.section == "peer" else TD3_ROW
    other = find_side(runs, design.labels[1], (design.env_id, other_row, agent, steps, "fp32"), design.seeds[1])
    return ours, other


# ---------------------------------------------------------------------------------------------------- statistic
def _shared(runs: tuple[Run, ...], label: str, what: str, value: Callable[[Run], T]) -> T:
    """The one ``value`` every run of a side shares; an error naming ``what`` where they differ."""
    values = {repr(value(run)): value(run) for run in runs}
    if len(values) != 1:
        raise RegisteredRunsError(f"the registered {label} runs disagree on {what}: {sorted(values)}")
    return next(iter(values.values()))


def window(design: Design, side: Side) -> tuple[int, int]:
    """The (after, last] steps of the side's statistic: after env.random_steps up to T (peer, bf16), or steps
    first_step..last_step (paper_horizon).

    Raises:
        RegisteredRunsError: the side's runs disagree on env.random_steps.
    """
    if design.first_step is not None:
        return design.first_step - 1, design.last_step
    random_steps = _shared(
        side.complete, side.label, "env.random_steps", lambda r: int(r.config["env"]["random_steps"])
    )
    return random_steps, design.last_step


def statistic(design: Design, side: Side) -> tuple[np.ndarray, np.ndarray]:
    """Each complete run's statistic, and the evaluation steps it averages.

    Raises:
        RegisteredRunsError: the runs evaluate at different steps inside the window.
    """
    after, last = window(design, side)
    inside = _shared(
        side.complete,
        side.label,
        "their evaluation steps",
        lambda r: tuple(int(s) for s in r.steps if after < s <= last),
    )
    values = np.array([window_mean(run, after, last) for run in side.complete])
    return values, np.array(inside, dtype=np.int64)


# ---------------------------------------------------------------------------------------------------- tests
def registered_tests(registration: Registration, runs: list[Run]) -> list[RegisteredTest]:
    """Every registered comparison with at least one of its registered runs among ``runs``, judged as the file
    registers it (none without such runs).

    Raises:
        PreregistrationError: the file lacks a key a comparison needs.
        RegisteredRunsError: see :class:`RegisteredRunsError`.
    """
    found, registered = [], designs(registration)
    for design in registered:
        ours, other = sides(design, runs)
        if not (ours.runs or other.runs):
            continue
        complete = not design.pending and not ours.missing and not other.missing
        found.append(RegisteredTest(design, ours, other, outcome(design, ours, other) if complete else None))
    return _holm(found, {(design.section, design.env_id) for design in registered if design.not_run})


def registered_runs(tests: list[RegisteredTest]) -> dict[Path, Registered]:
    """What the registration fixes about each run its tests found, for the report's general tables: its side's
    registered seeds (a run in several sections' sides, e.g. the fp32 runs of peer and bf16: all of theirs), and
    its amendment (our side of a design with an ``arm``)."""
    seeds: dict[Path, set[int]] = {}
    arms: dict[Path, str] = {}
    for test in tests:
        for side in (test.ours, test.other):
            for run in side.runs:
                seeds.setdefault(run.path, set()).update(side.seeds)
        if test.design.arm is not None:
            arms.update({run.path: test.design.arm for run in test.ours.runs})
    return {path: Registered(frozenset(found), arms.get(path)) for path, found in seeds.items()}


def outcome(design: Design, ours: Side, other: Side) -> Outcome:
    """The numbers of a comparison whose registered runs are all complete."""
    x, steps = statistic(design, ours)
    levels = (design.alpha, 1 - design.alpha)  # TOST's 1 - 2α interval; the difference test's 1 - α interval
    if design.section == "paper_horizon":
        y, other_end, authors_table1 = _authors(design)
        at_end = welch(_at(ours.complete, design.last_step), other_end, *levels)
        table1 = (_table1(ours), authors_table1)
        warmup_in = None
    else:
        y, _ = statistic(design, other)
        at_end = welch(_at(ours.complete, design.last_step), _at(other.complete, design.last_step), *levels)
        warmup_in = welch(_warmup_in(ours, design.last_step), _warmup_in(other, design.last_step), *levels)
        table1 = None
    test = welch(x, y, *levels)
    tested = tost(test, Bound(design.bound, design.bound_origin, registered_test=True), design.mdd)
    bf16 = design.precision == "bf16"
    bias = _bias(design, ours, other) if bf16 else {}
    frozen = (_frozen_actors(ours), _frozen_actors(other)) if bf16 else None
    permutation = mean_difference_permutation_test(x, y)
    return Outcome(x, y, steps, test, tested, permutation, warmup_in, at_end, bias, table1, frozen)


def _frozen_actors(side: Side) -> int:
    """How many of the side's runs logged an actor gradient of exactly 0 at their last log row."""
    return sum(run.actor_frozen is True for run in side.complete)


def _warmup_in(side: Side, last: int) -> np.ndarray:
    """The published statistic, warm-up evaluations in: each run's mean return over 5000..T (step 0 out)."""
    return np.array([window_mean(run, 0, last) for run in side.complete])


def _at(runs: tuple[Run, ...], step: int) -> np.ndarray:
    return np.array([return_at(run.steps, run.returns, step) for run in runs])


def _authors(design: Design) -> tuple[np.ndarray, np.ndarray, float]:
    """The authors' statistic, their return at the last step, and their Table 1 maximum, for paper_horizon."""
    curves = authors_curves(design.env_id)
    values = authors_statistic(design.env_id, design.first_step or 0, design.last_step)
    if curves is None or values is None:
        raise RegisteredRunsError(f"no authors' curves for {design.env_id}")
    steps = authors_steps(curves.shape[1])
    return values, curves[:, steps == design.last_step][:, 0], max_average_return(curves, steps).value


def _table1(side: Side) -> float:
    """Table 1's max average return of the side's runs: the highest point of their seed-mean curve after step 0."""
    steps = _shared(side.complete, side.label, "their evaluation steps", lambda r: tuple(map(int, r.steps)))
    curves = np.stack([run.returns for run in side.complete])
    return max_average_return(curves, np.array(steps)).value


def _bias(design: Design, ours: Side, other: Side) -> dict[str, Welch | str]:
    """bf16 − fp32 of each bias column's mean over the statistic's evaluations, or which seeds lack it."""
    found: dict[str, Welch | str] = {}
    for name in BIAS_COLUMNS:
        lacking = [
            f"{s.label} seed {run.seed}" for s in (ours, other) for run in s.complete if run.column(name) is None
        ]
        if lacking:
            found[name] = f"no {name} column in eval.csv of {', '.join(lacking)}"
            continue
        found[name] = welch(_bias_means(design, ours, name), _bias_means(design, other, name), design.alpha)
    return found


def _bias_means(design: Design, side: Side, name: str) -> np.ndarray:
    after, last = window(design, side)
    means = []
    for run in side.complete:
        inside = (run.steps > after) & (run.steps <= last)
        means.append(float(np.asarray(run.column(name))[inside].mean()))
    return np.array(means)


def _holm(found: list[RegisteredTest], not_run: set[tuple[str, str]]) -> list[RegisteredTest]:
    """Holm's adjustment of the TOST and difference p-values over each section's family; a family member without a
    complete test counts as p = 1 (the adjustment can only be more lenient once it comes) and holds the verdicts,
    unless the file registers it as not run (``not_run``: (section, env) pairs), when none will come."""
    adjusted = []
    for test in found:
        members = {t.design.env_id: t for t in found if t.design.section == test.design.section}
        family = test.design.family
        pending = tuple(
            env
            for env in family
            if (members.get(env) is None or members[env].outcome is None) and (test.design.section, env) not in not_run
        )
        tost_p = holm(_p(members.get(env), lambda o: o.tost.p) for env in family)
        difference_p = holm(_p(members.get(env), lambda o: o.test.p) for env in family)
        index = family.index(test.design.env_id)
        adjusted.append(
            replace(test, holm_tost_p=float(tost_p[index]), holm_p=float(difference_p[index]), family_pending=pending)
        )
    return adjusted


def _p(test: RegisteredTest | None, p: Callable[[Outcome], float]) -> float:
    """A family member's p, 1 where it has none (no complete test, or no spread to test)."""
    value = float("nan") if test is None or test.outcome is None else p(test.outcome)
    return value if np.isfinite(value) else 1.0
