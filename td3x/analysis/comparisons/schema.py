"""A registration file, read and checked: its sides, per-seed statistics and comparisons as typed objects, or one
line per problem naming the key (docs/registration.md is the format's reference).

A side is a group of seeds: td3x runs picked by a selector over what their run dirs record, the authors' published
TD3 curves, or published numbers (a mean, with or without an SD and a number of seeds). A comparison names its
sides, its statistic, its test (``TESTS``), its Holm family and whether it is a claim or descriptive.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from td3x.analysis.comparisons.reader import MISSING, Reader
from td3x.analysis.comparisons.side_entries import Side, mean_source, paper_number, read_side
from td3x.analysis.comparisons.statistics import Statistic, read_statistic
from td3x.analysis.reading.input_files import InputFileError, load_yaml, read_text, yaml_problem

FORMAT_VERSION = 1
CLAIM, DESCRIPTIVE = "claim", "descriptive"
GREATER, LESS = "greater", "less"


@dataclass(frozen=True)
class TestRule:
    """What a test asks of its comparison: how many sides, of which kind, a bound, a direction, a reference."""

    min_sides: int
    max_sides: int
    counts: bool = False  # the statistic is a count (stalled_actor) rather than a return
    bound: bool = False
    alternative: bool = False
    reference: bool = False
    runs_only: bool = False  # every side is runs (else the first is, and the second may be a reference)


TESTS = {
    "equivalence": TestRule(2, 2, bound=True),  # TOST at ±bound
    "difference": TestRule(2, 2),  # Welch, two-sided
    "directional": TestRule(2, 2, alternative=True),  # Welch, one-sided: the first side above (or below) the second
    "rank_correlation": TestRule(3, 1000, alternative=True, reference=True, runs_only=True),  # Kendall's τ
    "fisher": TestRule(2, 2, counts=True),  # Fisher's exact test of two counts (the second may be a published one)
    # Brown-Forsythe TOST of the SD ratio within [1/bound, bound]
    "spread": TestRule(2, 2, bound=True, runs_only=True),
}


@dataclass(frozen=True)
class Comparison:
    """One registered comparison (a row of the verdict table)."""

    name: str
    test: str
    sides: tuple[str, ...]
    statistic: str
    role: str = CLAIM
    family: str | None = None
    bound: float | None = None
    alternative: str = GREATER
    reference: tuple[tuple[str, float], ...] = ()  # rank_correlation: each side's reference value
    reference_source: str = ""
    question: str = ""
    verdict: tuple[str, str] | None = None  # the file's own words for the verdict, when shown and when not

    @property
    def claim(self) -> bool:
        return self.role == CLAIM


@dataclass(frozen=True)
class Simulation:
    """The draws of a power that is simulated (rank_correlation, spread): how many, from which seed."""

    replicates: int = 20_000
    seed: int = 0


@dataclass(frozen=True)
class Sizing:
    """The registered sizing rule: the fewest seeds per runs side, from ``min_seeds`` up to ``max_seeds`` (the
    compute cap), at which every claim reaches the file's power at the assumed SDs times ``sd_factor`` (or 1)."""

    min_seeds: int
    max_seeds: int
    at_sd_factor: bool


@dataclass(frozen=True)
class Registration:
    path: Path
    title: str
    alpha: float
    power: float
    sd_factor: float
    statistics: Mapping[str, Statistic]
    sides: Mapping[str, Side]
    comparisons: tuple[Comparison, ...]
    sizing: Sizing | None = None
    notes: str = ""
    family_sizes: Mapping[str, int] = field(default_factory=dict)
    simulation: Simulation = field(default_factory=Simulation)

    def family_size(self, comparison: Comparison) -> int:
        """How many claims share the comparison's Holm family (1 without one; 0 for a descriptive comparison)."""
        if not comparison.claim:
            return 0
        return self.family_sizes.get(comparison.family or "", 1) if comparison.family else 1


class RegistrationError(ValueError):
    """A registration file td3x cannot use: ``problems`` holds one line each, naming the file and the key."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        self.problems = [f"{path}: {problem}" for problem in problems]
        super().__init__("\n".join(self.problems))


TOP_KEYS = (
    "registration", "title", "alpha", "power", "sd_factor", "sizing", "statistics", "sides", "comparisons", "notes",
    "simulation",
)


def read_registration(path: Path) -> Registration:
    """The registration file at ``path``, checked: every side, statistic and comparison it names exists, every value
    is in range, every config key is td3x's.

    Raises:
        RegistrationError: one line per problem.
    """
    try:
        data = load_yaml(read_text(path, "the registration file (YAML)"))
    except InputFileError as error:
        raise RegistrationError(path, [error.problem]) from error
    except yaml.YAMLError as error:
        raise RegistrationError(path, [yaml_problem(error)]) from error
    reader = Reader()
    registration = _registration(reader, data, path)
    if reader.problems or registration is None:
        raise RegistrationError(path, reader.problems or ["is empty"])
    return registration


def _registration(reader: Reader, data: Any, path: Path) -> Registration | None:
    if data is None:
        reader.problem("", "is empty: a registration needs registration, title, statistics, sides and comparisons")
        return None
    top = reader.mapping(data, "the file")
    if top is None:
        return None
    if not set(map(str, top)) & set(TOP_KEYS):  # another file (a run's config.yaml): one line, not one per key
        keys = ", ".join(map(str, list(top)[:5]))
        reader.problem("", f"is not a registration: it has none of its keys (registration: 1, title, ...), but {keys}")
        return None
    reader.keys(top, "", TOP_KEYS, required=("registration", "title", "statistics", "sides", "comparisons"))
    if "registration" in top and top["registration"] != FORMAT_VERSION:
        reader.problem("registration", f"{top['registration']!r} is not a format td3x reads: write {FORMAT_VERSION}")
    title = reader.text(top.get("title", MISSING), "title")
    alpha = reader.number(top.get("alpha", MISSING), "alpha", 1e-6, 0.5, default=0.05)
    power = reader.number(top.get("power", MISSING), "power", 0.5, 0.999, default=0.8)
    sd_factor = reader.number(top.get("sd_factor", MISSING), "sd_factor", 1.0, 100.0, default=2.0)
    notes = reader.text(top.get("notes", MISSING), "notes", default="")
    statistics = _named(reader, top.get("statistics", MISSING), "statistics", read_statistic)
    folder = path.parent  # a selector's folder is relative to the file's
    sides = _named(reader, top.get("sides", MISSING), "sides", lambda r, node, key: read_side(r, node, key, folder))
    broken = _declared(top.get("statistics")) - set(statistics), _declared(top.get("sides")) - set(sides)
    comparisons = _comparisons(reader, top.get("comparisons", MISSING), statistics, sides, broken)
    sizing = _sizing(reader, top["sizing"]) if "sizing" in top else None
    simulation = _simulation(reader, top["simulation"]) if "simulation" in top else Simulation()
    for side in sides.values():
        named = side.assumed.sd_statistic if side.assumed else None
        if named is not None and named not in statistics:
            reader.problem(f"sides.{side.name}.assumed.sd.statistic", f"{named!r} is not one of the file's statistics")
    if None in (title, alpha, power, sd_factor) or reader.problems:
        return None
    families = Counter(comparison.family for comparison in comparisons if comparison.claim and comparison.family)
    return Registration(
        path, str(title), float(alpha or 0), float(power or 0), float(sd_factor or 0), statistics, sides,
        tuple(comparisons), sizing, str(notes), families, simulation or Simulation(),
    )


def _declared(node: Any) -> set[str]:
    """The names a mapping declares, whether or not their entries read cleanly."""
    return set(map(str, node)) if isinstance(node, Mapping) else set()


def _named(reader: Reader, node: Any, key: str, read: Any) -> dict[str, Any]:
    """A mapping of names to entries read by ``read(reader, node, key)``; the entries that read cleanly."""
    if node is MISSING:
        return {}
    mapping = reader.mapping(node, key)
    if not mapping:
        if mapping is not None:
            reader.problem(key, "is empty")
        return {}
    found = {str(name): read(reader, value, f"{key}.{name}") for name, value in mapping.items()}
    return {name: value for name, value in found.items() if value is not None}


def _simulation(reader: Reader, node: Any) -> Simulation | None:
    mapping = reader.mapping(node, "simulation")
    if mapping is None:
        return None
    reader.keys(mapping, "simulation", ("replicates", "seed"))
    replicates = reader.integer(mapping.get("replicates", MISSING), "simulation.replicates", low=1000, default=20_000)
    seed = reader.integer(mapping.get("seed", MISSING), "simulation.seed", default=0)
    return None if replicates is None or seed is None else Simulation(replicates, seed)


def _sizing(reader: Reader, node: Any) -> Sizing | None:
    mapping = reader.mapping(node, "sizing")
    if mapping is None:
        return None
    reader.keys(mapping, "sizing", ("min_seeds", "max_seeds", "power_at"), required=("min_seeds", "max_seeds"))
    low = reader.integer(mapping.get("min_seeds", MISSING), "sizing.min_seeds", low=2)
    high = reader.integer(mapping.get("max_seeds", MISSING), "sizing.max_seeds", low=2)
    at = reader.choice(mapping.get("power_at", MISSING), "sizing.power_at", ("assumed_sd", "sd_factor"), "sd_factor")
    if low is not None and high is not None and low > high:
        reader.problem("sizing.min_seeds", f"{low} is above max_seeds ({high})")
        return None
    return None if low is None or high is None or at is None else Sizing(low, high, at == "sd_factor")


# ------------------------------------------------------------------------------------------------ comparisons
Broken = tuple[set[str], set[str]]  # the statistics' and the sides' names whose own entries have a problem
COMPARISON_KEYS = ("name", "test", "sides", "statistic", "role", "family", "bound", "alternative", "reference",
                   "question", "verdict")


def _comparisons(
    reader: Reader, node: Any, statistics: Mapping[str, Statistic], sides: Mapping[str, Side], broken: Broken
) -> list[Comparison]:
    """The comparisons; one that names a statistic or side whose own entry has a problem is left out silently (that
    problem is already reported)."""
    if node is MISSING:
        return []
    if not isinstance(node, list) or not node:
        reader.problem("comparisons", "must be a non-empty list of comparisons")
        return []
    found = [
        _comparison(reader, item, f"comparisons[{index}]", statistics, sides, broken) for index, item in enumerate(node)
    ]
    names = [comparison.name for comparison in found if comparison is not None]
    for name in sorted({name for name in names if names.count(name) > 1}):
        reader.problem("comparisons", f"the name {name!r} is given twice: each comparison needs its own")
    return [comparison for comparison in found if comparison is not None]


def _comparison(
    reader: Reader, node: Any, key: str, statistics: Mapping[str, Statistic], sides: Mapping[str, Side], broken: Broken
) -> Comparison | None:
    mapping = reader.mapping(node, key)
    if mapping is None:
        return None
    names = mapping.get("sides")
    if mapping.get("statistic") in broken[0] or (isinstance(names, list) and set(map(str, names)) & broken[1]):
        return None
    reader.keys(mapping, key, COMPARISON_KEYS, required=("name", "test", "sides", "statistic"))
    name = reader.text(mapping.get("name", MISSING), f"{key}.name")
    key = f"{key} ({name})" if name else key
    test = reader.choice(mapping.get("test", MISSING), f"{key}.test", list(TESTS))
    statistic = reader.choice(mapping.get("statistic", MISSING), f"{key}.statistic", list(statistics) or ["(none)"])
    role = reader.choice(mapping.get("role", MISSING), f"{key}.role", (CLAIM, DESCRIPTIVE), default=CLAIM)
    family = reader.text(mapping.get("family", MISSING), f"{key}.family", default=None)
    names = mapping.get("sides", MISSING)
    if not isinstance(names, list) or not all(isinstance(side, str) for side in names):
        reader.problem(f"{key}.sides", "must be a list of side names")
        return None
    for side in names:
        if side not in sides:
            reader.problem(f"{key}.sides", f"{side!r} is not a side of the file's sides: {', '.join(sides)}")
    if None in (name, test, statistic, role) or any(side not in sides for side in names):
        return None
    rule = TESTS[str(test)]
    if not _fits_rule(reader, key, mapping, rule, [sides[side] for side in names], statistics[str(statistic)]):
        return None
    bound = reader.positive(mapping.get("bound", MISSING), f"{key}.bound") if rule.bound else None
    if test == "spread" and bound is not None and bound <= 1:
        reader.problem(f"{key}.bound", f"{bound:g} must be above 1: spread claims an SD ratio within [1/bound, bound]")
    alternative = reader.choice(mapping.get("alternative", MISSING), f"{key}.alternative", (GREATER, LESS), GREATER)
    reference, reference_source = (
        _reference(reader, mapping.get("reference", MISSING), f"{key}.reference", [sides[s] for s in names])
        if rule.reference
        else ((), "")
    )
    question = reader.text(mapping.get("question", MISSING), f"{key}.question", default="")
    verdict = _verdict_words(reader, mapping["verdict"], f"{key}.verdict") if "verdict" in mapping else None
    return Comparison(
        str(name), str(test), tuple(names), str(statistic), str(role), family, bound, str(alternative),
        reference, reference_source, str(question), verdict,
    )


def _verdict_words(reader: Reader, node: Any, key: str) -> tuple[str, str] | None:
    """``{shown: ..., not_shown: ...}``: the words of a claim's verdict, instead of its test's."""
    mapping = reader.mapping(node, key)
    if mapping is None:
        return None
    reader.keys(mapping, key, ("shown", "not_shown"), required=("shown", "not_shown"))
    shown = reader.text(mapping.get("shown", MISSING), f"{key}.shown")
    not_shown = reader.text(mapping.get("not_shown", MISSING), f"{key}.not_shown")
    return None if shown is None or not_shown is None else (shown, not_shown)


def _fits_rule(
    reader: Reader, key: str, mapping: Mapping[str, Any], rule: TestRule, sides: list[Side], statistic: Statistic
) -> bool:
    """Whether the comparison's sides, statistic and keys are what its test takes (each misfit a problem)."""
    before = len(reader.problems)
    test = mapping["test"]
    if not rule.min_sides <= len(sides) <= rule.max_sides or len({side.name for side in sides}) != len(sides):
        many = str(rule.min_sides) if rule.min_sides == rule.max_sides else f"{rule.min_sides} or more"
        reader.problem(f"{key}.sides", f"{test} compares {many} different sides, not {len(sides)}")
    references = [side.name for side in (sides if rule.runs_only else sides[:1]) if side.runs is None]
    if references:
        which = "every side" if rule.runs_only else "the first side"
        reader.problem(f"{key}.sides", f"{test} needs td3x runs as {which}: {', '.join(references)} is a reference")
    published = [side.name for side in sides if side.runs is None and (side.published_count is not None) != rule.counts]
    if published:
        wanted = "a published count ({count, n})" if rule.counts else "runs or a published mean"
        reader.problem(f"{key}.sides", f"{test} takes {wanted} as a reference: {', '.join(published)} is not one")
    if statistic.counts != rule.counts:
        wanted = "a count statistic (stalled_actor)" if rule.counts else "a return statistic, not a count"
        reader.problem(f"{key}.statistic", f"{test} takes {wanted}")
    for name, needed in (("bound", rule.bound), ("alternative", rule.alternative), ("reference", rule.reference)):
        if needed and name not in mapping and name != "alternative":
            reader.problem(f"{key}.{name}", f"is missing: {test} needs it")
        if not needed and name in mapping:
            reader.problem(f"{key}.{name}", f"is not a key of a {test} comparison")
    return len(reader.problems) == before


def _reference(reader: Reader, node: Any, key: str, sides: list[Side]) -> tuple[tuple[tuple[str, float], ...], str]:
    """Each side's reference value: ``{paper: table2, env: ...}`` (by each side's ``row``) or ``{means: {side:
    value}}``."""
    mapping = reader.mapping(node, key)
    if mapping is None:
        return (), ""
    reader.keys(mapping, key, ("paper", "env", "means", "source"))
    if "paper" in mapping:
        values: list[tuple[str, float]] = []
        for side in sides:
            row = side.runs.value("paper_row") if side.runs else None
            if row is None:
                reader.problem(f"{key}.paper", f"side {side.name!r} selects no row: the paper's numbers are by row")
                continue
            score = paper_number(reader, mapping, key, row, mapping.get("env", MISSING))
            values.append((side.name, float("nan") if score is None else score))
        return tuple(values), mean_source({**mapping, "row": "by row"})
    means = reader.mapping(mapping.get("means", MISSING), f"{key}.means (or paper)") or {}
    missing = [side.name for side in sides if side.name not in means]
    if missing:
        reader.problem(f"{key}.means", f"has no value for {', '.join(missing)}")
    given = [side.name for side in sides if side.name in means]
    read = {name: reader.number(means[name], f"{key}.means.{name}") for name in given}
    source = reader.text(mapping.get("source", MISSING), f"{key}.source", default="published")
    return tuple((name, float("nan") if v is None else v) for name, v in read.items()), str(source)
