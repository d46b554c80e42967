"""The plan of a registration, before any of its runs: each comparison's power and smallest detectable effect at
the assumed SDs and at ``sd_factor`` times them, at its level (α over its Holm family), and the n the registered
sizing rule gives.
"""

from __future__ import annotations

from dataclasses import dataclass

from td3x.analysis.comparisons.kinds import KINDS, Power
from td3x.analysis.comparisons.schema import Comparison, Registration
from td3x.analysis.comparisons.sides import Assumption, assumption


@dataclass(frozen=True)
class Planned:
    """One comparison's design.

    Attributes:
        comparison: the comparison.
        alpha: its level: the file's α over its Holm family's size (descriptive: the file's α, for reference).
        sides: what the design assumes of each side.
        power: at the assumed SDs.
        scaled: at the assumed SDs times the file's sd_factor.
    """

    comparison: Comparison
    alpha: float
    sides: tuple[Assumption, ...]
    power: Power
    scaled: Power


@dataclass(frozen=True)
class Sizing:
    """What the sizing rule gives.

    Attributes:
        n: the seeds per runs side: the fewest from min_seeds at which every claim reaches the file's power, or
            max_seeds (the cap) when none does.
        reached: whether every claim reaches it at ``n``.
        short: the claims below the file's power at ``n``.
        registered: the seeds each runs side registers (a side that registers another n than the rule's is shown).
    """

    n: int
    reached: bool
    short: tuple[str, ...]
    registered: dict[str, int]


@dataclass(frozen=True)
class Plan:
    registration: Registration
    rows: tuple[Planned, ...]
    sizing: Sizing | None


def level(registration: Registration, comparison: Comparison) -> float:
    """The comparison's α at Holm's first step: the file's α over its family's claims."""
    return registration.alpha / max(registration.family_size(comparison), 1)


def planned(registration: Registration, comparison: Comparison, n: int | None = None) -> Planned:
    """A comparison's design, its runs sides at their registered seeds (or ``n`` each)."""
    statistic = registration.statistics[comparison.statistic]
    sides = tuple(assumption(registration, registration.sides[name], statistic, n) for name in comparison.sides)
    kind, alpha = KINDS[comparison.test], level(registration, comparison)
    scaled = [side.scaled(registration.sd_factor) for side in sides]
    return Planned(comparison, alpha, sides, kind.power(comparison, list(sides), alpha, registration),
                   kind.power(comparison, scaled, alpha, registration))


def make_plan(registration: Registration) -> Plan:
    """The registration's plan at its registered seeds, and its sizing rule's n."""
    rows = tuple(planned(registration, comparison) for comparison in registration.comparisons)
    return Plan(registration, rows, _sizing(registration))


def _short(registration: Registration, n: int, at_factor: bool) -> tuple[str, ...]:
    """The claims whose power at ``n`` seeds a runs side falls below the file's power."""
    rows = [planned(registration, comparison, n) for comparison in registration.comparisons if comparison.claim]
    return tuple(
        row.comparison.name for row in rows if not (row.scaled if at_factor else row.power).power >= registration.power
    )


def _sizing(registration: Registration) -> Sizing | None:
    rule = registration.sizing
    if rule is None:
        return None
    registered = {name: len(side.runs.seeds) for name, side in registration.sides.items() if side.runs is not None}
    for n in range(rule.min_seeds, rule.max_seeds + 1):
        short = _short(registration, n, rule.at_sd_factor)
        if not short:
            return Sizing(n, True, (), registered)
    return Sizing(rule.max_seeds, False, short, registered)
