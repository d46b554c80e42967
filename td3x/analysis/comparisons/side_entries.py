"""The sides of a registration file, read: a runs selector (what run dirs must record, and their seeds), the
authors' curves, or a published mean; and what the design assumes of a runs side (docs/registration.md, "Sides")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from td3x.analysis.comparisons.reader import MISSING, Reader
from td3x.analysis.reading.paper import authors_curves, paper_env, paper_tables, table2_score
from td3x.config.messages import schema_keys
from td3x.config.overrides import group_options

PAPER_TABLE = "table2"  # published.paper and reference.paper: the paper's table td3x ships with a row per ablation
PAPER_TRIALS = 10  # Table 2: "10 trials of 1 million time steps"
SELECTOR_SHORTCUTS = {"env": "env.id", "row": "paper_row", "steps": "run.total_steps", "precision": "run.precision"}

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
        reruns: the seeds the file declares rerun from scratch after a lost run, with ``rerun_note`` saying why.
    """

    name: str
    runs: Selector | None = None
    authors_env: str | None = None
    published_mean: float | None = None
    published_sd: float | None = None
    published_n: int | None = None
    published_count: int | None = None  # k of published_n runs counted (a count statistic's reference)
    assumed: Assumed | None = None
    reruns: tuple[int, ...] = ()  # seeds the file declares rerun from scratch (the lost runs' files are gone)
    rerun_note: str = ""
    source: str = ""

    @property
    def kind(self) -> str:
        return "runs" if self.runs else "authors" if self.authors_env else "published"


SIDE_KINDS = ("runs", "authors_curves", "published")


def read_side(reader: Reader, node: Any, key: str, base: Path) -> Side | None:
    mapping = reader.mapping(node, key)
    if mapping is None:
        return None
    reader.keys(mapping, key, (*SIDE_KINDS, "assumed", "reruns"))
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
    reruns = _reruns(reader, mapping["reruns"], f"{key}.reruns", runs) if "reruns" in mapping else ((), "")
    return None if runs is None else Side(name, runs=runs, assumed=assumed, reruns=reruns[0], rerun_note=reruns[1])


def _reruns(reader: Reader, node: Any, key: str, runs: Selector | None) -> tuple[tuple[int, ...], str]:
    """``{seeds, why}``: seeds rerun from scratch after a lost run (whose files are gone), as the report must say."""
    mapping = reader.mapping(node, key)
    if mapping is None:
        return (), ""
    reader.keys(mapping, key, ("seeds", "why"), required=("seeds", "why"))
    seeds = _seeds(reader, mapping.get("seeds", MISSING), f"{key}.seeds") or ()
    why = reader.text(mapping.get("why", MISSING), f"{key}.why") or ""
    outside = sorted(set(seeds) - set(runs.seeds if runs else seeds))
    if outside:
        reader.problem(f"{key}.seeds", f"{outside} are not seeds of the side's runs")
    return seeds, why


def _authors_env(reader: Reader, value: Any, key: str) -> str | None:
    env = reader.text(value, key)
    if env is not None and (paper_env(env) is None or authors_curves(env) is None):
        names = ", ".join(paper_tables()["table1"]["envs"])
        reader.problem(key, f"{env!r}: the authors published curves for {names} (any version of these names)")
        return None
    return env


PUBLISHED_KEYS = ("mean", "sd", "n", "count", "source", "paper", "row", "env")


def _published(reader: Reader, node: Any, key: str, name: str) -> Side | None:
    """The paper's number (``{paper, row, env}``), a published mean (with its SD and n where published), or
    ``{count: k, n: m}``: k of m runs counted (a count statistic's reference, for ``fisher``)."""
    mapping = reader.mapping(node, key)
    if mapping is None:
        return None
    reader.keys(mapping, key, PUBLISHED_KEYS)
    if "paper" in mapping:
        mean = paper_number(reader, mapping, key, mapping.get("row", MISSING), mapping.get("env", MISSING))
        if mean is None:
            return None
        return Side(name, published_mean=mean, published_n=PAPER_TRIALS, source=mean_source(mapping))
    count, sd = None, None
    if "count" in mapping:
        reader.keys(mapping, key, ("count", "n", "source"), required=("count", "n"))
        n = reader.integer(mapping.get("n", MISSING), f"{key}.n", low=1)
        count = reader.integer(mapping.get("count", MISSING), f"{key}.count")
        if count is not None and n is not None and count > n:
            reader.problem(f"{key}.count", f"{count} is more than n ({n})")
            return None
        mean = None if count is None or n is None else count / n
    else:
        mean = reader.number(mapping.get("mean", MISSING), f"{key}.mean")
        sd = reader.positive(mapping.get("sd", MISSING), f"{key}.sd", default=None)
        n = reader.integer(mapping.get("n", MISSING), f"{key}.n", low=2, default=None)
        if sd is not None and n is None:
            reader.problem(f"{key}.n", "is missing: an SD needs the number of seeds it is over")
    source = str(reader.text(mapping.get("source", MISSING), f"{key}.source", default="published"))
    if mean is None:
        return None
    return Side(name, published_mean=mean, published_sd=sd, published_n=n, published_count=count, source=source)


def mean_source(mapping: Mapping[str, Any]) -> str:
    return f"the paper's {mapping['paper'].replace('table', 'Table ')}, {mapping.get('row')}, {mapping.get('env')}"


def paper_number(reader: Reader, mapping: Mapping[str, Any], key: str, row: Any, env: Any) -> float | None:
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
    return paper_number(reader, value, key, MISSING if row is None else row, MISSING if env is None else env)
