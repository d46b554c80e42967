"""The per-seed statistics a registration may name: each turns one run (or one of the authors' curves) into the
one number per seed its tests compare. Adding one is a class here and a line in ``STATISTICS``.

Every statistic reads ``return_mean`` (the mean over a run's evaluation episodes) at the run's evaluation steps, or
the eval.csv ``column`` it names (a critic's overestimation bias, ``bias_q1``), except ``stalled_actor``, a count: 1
for a run whose actor stopped learning, else 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

from td3x.analysis.comparisons.reader import MISSING, Reader
from td3x.analysis.reading.runs import Run
from td3x.analysis.stats.metrics import area_under_curve

AFTER_RANDOM_STEPS = "after_random_steps"  # window_mean's first: the evaluations after the run's env.random_steps
RETURN = "return_mean"  # the column a statistic reads unless it names another
OPTIONAL = ("column",)  # every curve statistic's optional key


def _column(reader: Reader, node: Mapping[str, Any], key: str) -> str:
    column = reader.text(node.get("column", MISSING), f"{key}.column", default=RETURN)
    return RETURN if column is None else column


def _curve(run: Run, column: str) -> np.ndarray:
    """The run's ``column`` at its evaluation steps; NaN throughout where its eval.csv has no such column."""
    values = run.column(column)
    return np.full(len(run.steps), np.nan) if values is None else values


def _of(column: str) -> str:
    return "" if column == RETURN else f" of {column}"


class Statistic(Protocol):
    """One number per seed from a run's files; each statistic here subclasses it for its defaults."""

    counts: ClassVar[bool] = False  # a 0/1 count (tested by counts) rather than a return
    KEYS: ClassVar[tuple[str, ...]] = ()  # the keys its entry in a registration file requires

    def of_run(self, run: Run) -> float:
        """The run's value; NaN when the run has nothing there (too few evaluations, no such step)."""

    def of_curves(self, steps: np.ndarray, curves: np.ndarray) -> np.ndarray | None:
        """Each curve's value (the authors' seeds: rows of ``curves`` at ``steps``); None where the statistic
        cannot be read from curves (by default: the authors published returns only)."""
        return None

    def describe(self) -> str:
        """The statistic in words, for the tables."""


@dataclass(frozen=True)
class LastEvaluations(Statistic):
    """The mean of the last ``count`` evaluations (Table 2's statistic with count 10)."""

    count: int
    column: str = RETURN
    KEYS: ClassVar[tuple[str, ...]] = ("count",)

    @classmethod
    def read(cls, reader: Reader, node: Mapping[str, Any], key: str) -> LastEvaluations | None:
        count = reader.integer(node.get("count", MISSING), f"{key}.count", low=1)
        return None if count is None else cls(count, _column(reader, node, key))

    def of_run(self, run: Run) -> float:
        values = _curve(run, self.column)
        return float(values[-self.count :].mean()) if len(values) >= self.count else float("nan")

    def of_curves(self, steps: np.ndarray, curves: np.ndarray) -> np.ndarray | None:
        return np.asarray(curves[:, -self.count :].mean(axis=1)) if self.column == RETURN else None

    def describe(self) -> str:
        return f"the mean of the last {self.count} evaluations{_of(self.column)}"


@dataclass(frozen=True)
class WindowMean(Statistic):
    """The mean of the evaluations at env steps ``first`` .. ``last`` (both included); ``first`` None: after the
    run's env.random_steps."""

    first: int | None
    last: int
    column: str = RETURN
    KEYS: ClassVar[tuple[str, ...]] = ("first", "last")

    @classmethod
    def read(cls, reader: Reader, node: Mapping[str, Any], key: str) -> WindowMean | None:
        first_value = node.get("first", MISSING)
        last = reader.integer(node.get("last", MISSING), f"{key}.last", low=1)
        column = _column(reader, node, key)
        if first_value == AFTER_RANDOM_STEPS:
            return None if last is None else cls(None, last, column)
        first = reader.integer(first_value, f"{key}.first (or '{AFTER_RANDOM_STEPS}')")
        if first is not None and last is not None and first > last:
            reader.problem(f"{key}.first", f"{first} is after last ({last})")
            return None
        return None if first is None or last is None else cls(first, last, column)

    def _inside(self, steps: np.ndarray, after: int) -> np.ndarray:
        low = (steps > after) if self.first is None else (steps >= self.first)
        return np.asarray(low & (steps <= self.last))

    def of_run(self, run: Run) -> float:
        inside = self._inside(run.steps, int(run.config["env"]["random_steps"]))
        return float(_curve(run, self.column)[inside].mean()) if inside.any() else float("nan")

    def of_curves(self, steps: np.ndarray, curves: np.ndarray) -> np.ndarray | None:
        if self.first is None or self.column != RETURN:
            return None  # the authors' runs record no env.random_steps of td3x's, and returns only
        inside = self._inside(steps, 0)
        return np.asarray(curves[:, inside].mean(axis=1)) if inside.any() else None

    def describe(self) -> str:
        first = "after env.random_steps" if self.first is None else f"from step {self.first}"
        return f"the mean of the evaluations {first} to step {self.last}{_of(self.column)}"


@dataclass(frozen=True)
class ReturnAt(Statistic):
    """The evaluation return at env step ``step``."""

    step: int
    column: str = RETURN
    KEYS: ClassVar[tuple[str, ...]] = ("step",)

    @classmethod
    def read(cls, reader: Reader, node: Mapping[str, Any], key: str) -> ReturnAt | None:
        step = reader.integer(node.get("step", MISSING), f"{key}.step")
        return None if step is None else cls(step, _column(reader, node, key))

    def of_run(self, run: Run) -> float:
        at = run.steps == self.step
        return float(_curve(run, self.column)[at][0]) if at.any() else float("nan")

    def of_curves(self, steps: np.ndarray, curves: np.ndarray) -> np.ndarray | None:
        at = steps == self.step
        return np.asarray(curves[:, at][:, 0]) if at.any() and self.column == RETURN else None

    def describe(self) -> str:
        return f"the evaluation at step {self.step}{_of(self.column)}"


@dataclass(frozen=True)
class AreaUnderCurve(Statistic):
    """The curve's mean height: the trapezoid area under return_mean over the evaluated steps, divided by their
    span (a whole-run summary that weighs early learning as much as the end)."""

    column: str = RETURN

    @classmethod
    def read(cls, reader: Reader, node: Mapping[str, Any], key: str) -> AreaUnderCurve | None:
        return cls(_column(reader, node, key))

    def of_run(self, run: Run) -> float:
        return float(area_under_curve(run.steps, _curve(run, self.column))) if len(run.steps) > 1 else float("nan")

    def of_curves(self, steps: np.ndarray, curves: np.ndarray) -> np.ndarray | None:
        return area_under_curve(steps, curves) if self.column == RETURN else None

    def describe(self) -> str:
        return f"the area under the curve (its mean height){_of(self.column)}"


@dataclass(frozen=True)
class StalledActor(Statistic):
    """1 when the actor's gradient norm at the last row of the run's metrics.jsonl that logs one is below
    ``threshold`` (an actor that stopped learning), else 0; NaN for a run that logs none."""

    threshold: float
    counts: ClassVar[bool] = True
    KEYS: ClassVar[tuple[str, ...]] = ("threshold",)

    @classmethod
    def read(cls, reader: Reader, node: Mapping[str, Any], key: str) -> StalledActor | None:
        threshold = reader.positive(node.get("threshold", MISSING), f"{key}.threshold")
        return None if threshold is None else cls(threshold)

    def of_run(self, run: Run) -> float:
        norm = run.actor_grad_norm
        return float("nan") if norm is None else float(norm < self.threshold)

    def describe(self) -> str:
        return f"1 for an actor stalled (its last actor_grad_norm below {self.threshold:g}), else 0"


STATISTICS: dict[str, Any] = {
    "last_evaluations": LastEvaluations,
    "window_mean": WindowMean,
    "return_at": ReturnAt,
    "area_under_curve": AreaUnderCurve,
    "stalled_actor": StalledActor,
}


def read_statistic(reader: Reader, node: Any, key: str) -> Statistic | None:
    """The statistic a registration defines at ``key`` (``{kind: ..., <its keys>}``), or None after reporting
    its problems."""
    mapping = reader.mapping(node, key)
    if mapping is None:
        return None
    kind = reader.choice(mapping.get("kind", MISSING), f"{key}.kind", list(STATISTICS))
    if kind is None:
        return None
    cls = STATISTICS[kind]
    optional = () if cls.counts else OPTIONAL
    reader.keys(mapping, key, ("kind", *cls.KEYS, *optional), required=cls.KEYS)
    statistic: Statistic | None = cls.read(reader, mapping, key)
    return statistic
