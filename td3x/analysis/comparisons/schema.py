"""A registration file, read and checked: its sides, per-seed statistics and comparisons as typed objects, or one
line per problem naming the key (docs/registration.md is the format's reference).

A side is a group of seeds: td3x runs picked by a selector over what their run dirs record, the authors' published
TD3 curves, or published numbers (a mean, with or without an SD and a number of seeds). A comparison names its
sides, its statistic, its test (``TESTS``), its Holm family and whether it is a claim or descriptive.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from td3x.analysis.comparisons.reader import MISSING, Reader
from td3x.analysis.comparisons.statistics import Statistic, read_statistic
from td3x.analysis.paper import authors_curves, paper_env, paper_tables, table2_score
from td3x.config.messages import schema_keys
from td3x.config.overrides import group_options

FORMAT_VERSION = 1
CLAIM, DESCRIPTIVE = "claim", "descriptive"
GREATER, LESS = "greater", "less"
PAPER_TABLE = "table2"  # published.paper and reference.paper: the paper's table td3x ships with a row per ablation
PAPER_TRIALS = 10  # Table 2: "10 trials of 1 million time steps"
SELECTOR_SHORTCUTS = {"env": "env.id", "row": "paper_row", "steps": "run.total_steps", "precision": "run.precision"}


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
    "fisher": TestRule(2, 2, counts=True, runs_only=True),  # Fisher's exact test of two counts
}


@dataclass(frozen=True)
class Selector:
    """The runs of a side: every run dir below ``folder`` whose config.yaml records each of ``config`` (dotted key:
    value; ``choices.<group>`` for a Hydra group option) and whose seed is one of ``seeds``."""

    config: tuple[tuple[str, Any], ...]
    seeds: tuple[int, ...]
    folder: Path | None = None

    def value(self, key: str) -> Any:
        return dict(self.config).get(key)


@dataclass(frozen=True)
class Assumed:
    """What the design assumes of a side before its runs: its mean, its SD (a number, or computed from the authors'
    curves or pilot runs with a statistic), a stall rate (counts), and where they come from."""

    source: str
    mean: float | None = None
    sd: float | None = None
    sd_from_authors: str | None = None  # an env id: the SD of the statistic over the authors' seeds
    sd_from_runs: Selector | None = None  # pilot runs: the SD of the statistic over their seeds
    sd_statistic: str | None = None
    rate: float | None = None


@dataclass(frozen=True)
class Side:
    """One group of seeds.

    Attributes:
        name: the file's name for it.
        runs: td3x runs (a selector), or None for a reference.
        authors_env: the authors' published TD3 curves of this env (10 seeds).
        published_mean: a published mean; ``published_sd`` and ``published_n`` beside it when published.
        assumed: the design's assumptions about it (runs sides).
        source: where a published number comes from.
    """

    name: str
    runs: Selector | None = None
    authors_env: str | None = None
    published_mean: float | None = None
    published_sd: float | None = None
    published_n: int | None = None
    assumed: Assumed | None = None
    source: str = ""

    @property
    def kind(self) -> str:
        return "runs" if self.runs else "authors" if self.authors_env else "published"


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

    @property
    def claim(self) -> bool:
        return self.role == CLAIM


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
)


def read_registration(path: Path) -> Registration:
    """The registration file at ``path``, checked: every side, statistic and comparison it names exists, every value
    is in range, every config key is td3x's.

    Raises:
        RegistrationError: one line per problem.
    """
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except IsADirectoryError as error:
        raise RegistrationError(path, ["is a directory: name the registration file (YAML)"]) from error
    except UnicodeDecodeError as error:
        raise RegistrationError(path, [f"is not UTF-8 text (byte {error.start}): save it as UTF-8"]) from error
    except OSError as error:
        raise RegistrationError(path, [f"cannot be read: {error.strerror or error}"]) from error
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise RegistrationError(path, [f"is not valid YAML{where}"]) from error
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
    reader.keys(top, "", TOP_KEYS, required=("registration", "title", "statistics", "sides", "comparisons"))
    if "registration" in top and top["registration"] != FORMAT_VERSION:
        reader.problem("registration", f"{top['registration']!r} is not a format td3x reads: write {FORMAT_VERSION}")
    title = reader.text(top.get("title", MISSING), "title")
    alpha = reader.number(top.get("alpha", MISSING), "alpha", 1e-6, 0.5, default=0.05)
    power = reader.number(top.get("power", MISSING), "power", 0.5, 0.999, default=0.8)
    sd_factor = reader.number(top.get("sd_factor", MISSING), "sd_factor", 1.0, 100.0, default=2.0)
    notes = reader.text(top.get("notes", MISSING), "notes", default="")
    statistics = _named(reader, top.get("statistics", MISSING), "statistics", read_statistic)
    sides = _named(reader, top.get("sides", MISSING), "sides", lambda r, node, key: _side(r, node, key, path.parent))
    comparisons = _comparisons(reader, top.get("comparisons", MISSING), statistics, sides)
    sizing = _sizing(reader, top["sizing"]) if "sizing" in top else None
    for side in sides.values():
        named = side.assumed.sd_statistic if side.assumed else None
        if named is not None and named not in statistics:
            reader.problem(f"sides.{side.name}.assumed.sd.statistic", f"{named!r} is not one of the file's statistics")
    if None in (title, alpha, power, sd_factor) or reader.problems:
        return None
    families: dict[str, int] = {}
    for comparison in comparisons:
        if comparison.claim and comparison.family:
            families[comparison.family] = families.get(comparison.family, 0) + 1
    return Registration(
        path, str(title), float(alpha or 0), float(power or 0), float(sd_factor or 0), statistics, sides,
        tuple(comparisons), sizing, str(notes), families,
    )


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


# ------------------------------------------------------------------------------------------------------ sides
SIDE_KINDS = ("runs", "authors_curves", "published")


def _side(reader: Reader, node: Any, key: str, base: Path) -> Side | None:
    mapping = reader.mapping(node, key)
    if mapping is None:
        return None
    reader.keys(mapping, key, (*SIDE_KINDS, "assumed"))
    kinds = [kind for kind in SIDE_KINDS if kind in mapping]
    if len(kinds) != 1:
        reader.problem(key, f"must have exactly one of {', '.join(SIDE_KINDS)} (it has {len(kinds)})")
        return None
    name = key.split(".", 1)[1]
    if kinds == ["authors_curves"]:
        env = _authors_env(reader, mapping["authors_curves"], f"{key}.authors_curves")
        return None if env is None else Side(name, authors_env=env, source="the authors' published TD3 curves")
    if kinds == ["published"]:
        return _published(reader, mapping["published"], f"{key}.published", name)
    runs = selector(reader, mapping["runs"], f"{key}.runs", base)
    assumed = _assumed(reader, mapping["assumed"], f"{key}.assumed", runs, base) if "assumed" in mapping else None
    return None if runs is None else Side(name, runs=runs, assumed=assumed)


def _authors_env(reader: Reader, value: Any, key: str) -> str | None:
    env = reader.text(value, key)
    if env is not None and (paper_env(env) is None or authors_curves(env) is None):
        names = ", ".join(paper_tables()["table1"]["envs"])
        reader.problem(key, f"{env!r}: the authors published curves for {names} (any version of these names)")
        return None
    return env


PUBLISHED_KEYS = ("mean", "sd", "n", "source", "paper", "row", "env")


def _published(reader: Reader, node: Any, key: str, name: str) -> Side | None:
    mapping = reader.mapping(node, key)
    if mapping is None:
        return None
    reader.keys(mapping, key, PUBLISHED_KEYS)
    if "paper" in mapping:
        mean = _paper_number(reader, mapping, key, mapping.get("row", MISSING), mapping.get("env", MISSING))
        if mean is None:
            return None
        return Side(name, published_mean=mean, published_n=PAPER_TRIALS, source=mean_source(mapping))
    mean = reader.number(mapping.get("mean", MISSING), f"{key}.mean")
    sd = reader.positive(mapping.get("sd", MISSING), f"{key}.sd", default=None)
    n = reader.integer(mapping.get("n", MISSING), f"{key}.n", low=2, default=None)
    if sd is not None and n is None:
        reader.problem(f"{key}.n", "is missing: an SD needs the number of seeds it is over")
    source = reader.text(mapping.get("source", MISSING), f"{key}.source", default="published")
    return None if mean is None else Side(name, published_mean=mean, published_sd=sd, published_n=n, source=str(source))


def mean_source(mapping: Mapping[str, Any]) -> str:
    return f"the paper's {mapping['paper'].replace('table', 'Table ')}, {mapping.get('row')}, {mapping.get('env')}"


def _paper_number(reader: Reader, mapping: Mapping[str, Any], key: str, row: Any, env: Any) -> float | None:
    """The paper's Table 2 number of ``row`` on ``env`` (the task named like it)."""
    if reader.choice(mapping.get("paper"), f"{key}.paper", (PAPER_TABLE,)) is None:
        return None
    row_text, env_text = reader.text(row, f"{key}.row"), reader.text(env, f"{key}.env")
    if row_text is None or env_text is None:
        return None
    score = table2_score(row_text, env_text)
    if score is None:
        table = paper_tables()["table2"]
        reader.problem(
            key, f"Table 2 has no number for row {row_text!r} on {env_text!r}: its rows are "
            f"{', '.join(table['rows'])}; its envs {', '.join(table['envs'])} (any version of these names)",
        )
    return score


SELECTOR_KEYS = ("folder", "seeds", "choices", "config", *SELECTOR_SHORTCUTS)


def selector(reader: Reader, node: Any, key: str, base: Path) -> Selector | None:
    """A runs selector: ``seeds`` (a list, or ``first-last``), the shortcuts env, row, steps, precision, Hydra group
    ``choices``, any td3x ``config`` key, and a ``folder`` relative to the registration file's."""
    mapping = reader.mapping(node, key)
    if mapping is None:
        return None
    reader.keys(mapping, key, SELECTOR_KEYS, required=("seeds",))
    config = [(dotted, mapping[short]) for short, dotted in SELECTOR_SHORTCUTS.items() if short in mapping]
    known = set(schema_keys())
    for dotted, value in (reader.mapping(mapping.get("config", {}), f"{key}.config") or {}).items():
        if str(dotted) not in known:
            reader.problem(f"{key}.config.{dotted}", "is not a td3x config key (docs: Configuration lists them)")
        config.append((str(dotted), value))
    groups = group_options()
    for group, option in (reader.mapping(mapping.get("choices", {}), f"{key}.choices") or {}).items():
        if str(group) not in groups:
            reader.problem(f"{key}.choices.{group}", f"is not a config group: one of {', '.join(groups)}")
        elif option not in groups[str(group)]:
            options = ", ".join(groups[str(group)])
            reader.problem(f"{key}.choices.{group}", f"{option!r} is not an option: one of {options}")
        config.append((f"choices.{group}", option))
    seeds = _seeds(reader, mapping.get("seeds", MISSING), f"{key}.seeds")
    folder = reader.text(mapping["folder"], f"{key}.folder") if "folder" in mapping else None
    if seeds is None:
        return None
    return Selector(tuple(config), seeds, None if folder is None else (base / folder))


def _seeds(reader: Reader, value: Any, key: str) -> tuple[int, ...] | None:
    """``[5000, 5001]`` or ``"5000-5004"`` (both ends included)."""
    if isinstance(value, str) and value.count("-") == 1 and all(part.strip().isdigit() for part in value.split("-")):
        first, last = (int(part) for part in value.split("-"))
        if first <= last:
            return tuple(range(first, last + 1))
    elif isinstance(value, list) and value and all(isinstance(s, int) and not isinstance(s, bool) for s in value):
        if len(set(value)) == len(value):
            return tuple(value)
        reader.problem(key, "names a seed twice")
        return None
    reader.problem(key, f"{value!r} is no seed list: write [5000, 5001, 5002] or '5000-5002' (first <= last)")
    return None


ASSUMED_KEYS = ("source", "mean", "sd", "rate")


def _assumed(reader: Reader, node: Any, key: str, runs: Selector | None, base: Path) -> Assumed | None:
    mapping = reader.mapping(node, key)
    if mapping is None:
        return None
    reader.keys(mapping, key, ASSUMED_KEYS, required=("source",))
    source = reader.text(mapping.get("source", MISSING), f"{key}.source")
    mean = _assumed_mean(reader, mapping.get("mean", MISSING), f"{key}.mean", runs)
    rate = reader.number(mapping.get("rate", MISSING), f"{key}.rate", 0.0, 1.0, default=None)
    sd_node = mapping.get("sd", MISSING)
    if sd_node is MISSING or not isinstance(sd_node, Mapping):
        sd = reader.positive(sd_node, f"{key}.sd", default=None)
        return None if source is None else Assumed(source, mean, sd, rate=rate)
    reader.keys(sd_node, f"{key}.sd", ("authors_curves", "runs", "statistic"), required=("statistic",))
    statistic = reader.text(sd_node.get("statistic", MISSING), f"{key}.sd.statistic")
    if ("authors_curves" in sd_node) == ("runs" in sd_node):
        reader.problem(f"{key}.sd", "takes a number, or one of authors_curves (an env id) and runs (pilot runs)")
        return None
    if "authors_curves" in sd_node:
        env = _authors_env(reader, sd_node["authors_curves"], f"{key}.sd.authors_curves")
        return Assumed(str(source), mean, sd_from_authors=env, sd_statistic=statistic, rate=rate)
    pilots = selector(reader, sd_node["runs"], f"{key}.sd.runs", base)
    return Assumed(str(source), mean, sd_from_runs=pilots, sd_statistic=statistic, rate=rate)


def _assumed_mean(reader: Reader, value: Any, key: str, runs: Selector | None) -> float | None:
    """A number, or ``{paper: table2}`` with the row and env of the side's selector unless given."""
    if value is MISSING:
        return None
    if not isinstance(value, Mapping):
        return reader.number(value, key)
    reader.keys(value, key, ("paper", "row", "env"), required=("paper",))
    row = value.get("row", runs.value("paper_row") if runs else None)
    env = value.get("env", runs.value("env.id") if runs else None)
    return _paper_number(reader, value, key, MISSING if row is None else row, MISSING if env is None else env)


# ------------------------------------------------------------------------------------------------ comparisons
COMPARISON_KEYS = ("name", "test", "sides", "statistic", "role", "family", "bound", "alternative", "reference",
                   "question")


def _comparisons(
    reader: Reader, node: Any, statistics: Mapping[str, Statistic], sides: Mapping[str, Side]
) -> list[Comparison]:
    if node is MISSING:
        return []
    if not isinstance(node, list) or not node:
        reader.problem("comparisons", "must be a non-empty list of comparisons")
        return []
    found = [_comparison(reader, item, f"comparisons[{index}]", statistics, sides) for index, item in enumerate(node)]
    names = [comparison.name for comparison in found if comparison is not None]
    for name in sorted({name for name in names if names.count(name) > 1}):
        reader.problem("comparisons", f"the name {name!r} is given twice: each comparison needs its own")
    return [comparison for comparison in found if comparison is not None]


def _comparison(
    reader: Reader, node: Any, key: str, statistics: Mapping[str, Statistic], sides: Mapping[str, Side]
) -> Comparison | None:
    mapping = reader.mapping(node, key)
    if mapping is None:
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
    alternative = reader.choice(mapping.get("alternative", MISSING), f"{key}.alternative", (GREATER, LESS), GREATER)
    reference, reference_source = (
        _reference(reader, mapping.get("reference", MISSING), f"{key}.reference", [sides[s] for s in names])
        if rule.reference
        else ((), "")
    )
    question = reader.text(mapping.get("question", MISSING), f"{key}.question", default="")
    return Comparison(
        str(name), str(test), tuple(names), str(statistic), str(role), family, bound, str(alternative),
        reference, reference_source, str(question),
    )


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
            score = _paper_number(reader, mapping, key, row, mapping.get("env", MISSING))
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
