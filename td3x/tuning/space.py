"""A search space: td3x keys, each with a distribution and its range, read from ``conf/search/<name>.yaml`` (or any
YAML file) and checked against td3x's schema before anything trains.

A file maps dotted keys to entries::

    agent.actor_lr: {distribution: log_float, low: 1.0e-4, high: 3.0e-3}
    agent.policy_delay: {distribution: int, low: 1, high: 4}
    agent.hidden_sizes: {distribution: categorical, choices: [[64, 64], [256, 256]]}

Each entry's values are checked as the key's own overrides would be (type, then td3x's range checks), so a range
that reaches outside what ``td3x-train`` accepts is refused with the same words.
"""

from __future__ import annotations

import enum
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from td3x.config.hydra import CONF_DIR
from td3x.config.inert import REPORT_INERT, is_inert
from td3x.config.messages import schema_keys, unknown_key_problem, value_type_problem
from td3x.config.overrides import FREE_FORM, SEARCH_GROUP, compose_checked
from td3x.config.schema import ConfigError
from td3x.rundir.layout import RunFileError, read_yaml_mapping

# how every trial is trained and scored: one value for the whole study, or the scores would not compare
SCORING_KEYS = ("run.total_steps", "run.eval_every", "run.eval_episodes", "run.eval_seed", "run.num_seeds")


class Distribution(enum.Enum):
    float = "float"  # uniform in [low, high]
    log_float = "log_float"  # log-uniform in [low, high], low > 0 (learning rates)
    int = "int"  # an integer in [low, high], both included
    categorical = "categorical"  # one of choices (numbers, strings, booleans or lists such as hidden sizes)


@dataclass
class SearchEntry:
    """One searched key: its distribution and range (``low``/``high``) or its ``choices``."""

    distribution: Distribution = Distribution.float  # float | log_float | int | categorical
    low: float | None = None  # the range's lower end (float, log_float, int)
    high: float | None = None  # the range's upper end, included (float, log_float, int)
    choices: list[Any] | None = None  # the values a categorical entry picks from

    def values_to_check(self) -> list[Any]:
        """The values whose type and range must fit the key: the range's ends, or every choice."""
        if self.distribution is Distribution.categorical:
            return list(self.choices or [])
        cast = int if self.distribution is Distribution.int else float
        return [cast(value) for value in (self.low, self.high) if value is not None]

    def optuna_distribution(self) -> optuna.distributions.BaseDistribution:
        if self.distribution is Distribution.categorical:
            return optuna.distributions.CategoricalDistribution([choice_label(c) for c in self.choices or []])
        assert self.low is not None and self.high is not None
        if self.distribution is Distribution.int:
            return optuna.distributions.IntDistribution(int(self.low), int(self.high))
        return optuna.distributions.FloatDistribution(
            self.low, self.high, log=self.distribution is Distribution.log_float
        )


SearchSpace = dict[str, SearchEntry]


def choice_label(value: Any) -> Any:
    """A categorical choice as Optuna stores it: scalars as they are, lists as their override text (``[64,64]``)."""
    return value if value is None or isinstance(value, (bool, int, float, str)) else override_value(value)


def override_value(value: Any) -> str:
    """``value`` as the right-hand side of a Hydra override (``3e-4``, ``[64,64]``, ``null``)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def space_path(search: str) -> Path:
    """``search``: an option of ``conf/search/`` (``td3_core``) or a path to a YAML file."""
    if search.endswith((".yaml", ".yml")) or "/" in search:
        return Path(os.path.expanduser(search))  # ~ as every td3x path reads it: the home dir
    return CONF_DIR / SEARCH_GROUP / f"{search}.yaml"


def search_options() -> list[str]:
    return sorted(path.stem for path in (CONF_DIR / SEARCH_GROUP).glob("*.yaml"))


def load_space(search: str) -> SearchSpace:
    """The entries of a search space, each typed (raises ConfigError, one line a problem, naming the file)."""
    path = space_path(search)
    if not path.is_file():
        options = ", ".join(search_options())
        raise ConfigError([f"--search {search}: no such file or option of conf/search/ (options: {options})"])
    try:
        raw = read_yaml_mapping(path)
    except RunFileError as error:
        raise ConfigError([str(error)]) from error
    if not raw:
        raise ConfigError([f"{path} holds no entry: a search space needs at least one key"])
    space, problems = {}, []
    for key, entry in raw.items():
        try:
            typed = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(SearchEntry), entry))
        except (OmegaConfBaseException, ValueError) as error:
            allowed = "distribution (float | log_float | int | categorical), low, high, choices"
            problems.append(f"{path}: {key}: {' '.join(str(error).split()[:12])} (an entry takes {allowed})")
            continue
        assert isinstance(typed, SearchEntry)
        space[str(key)] = typed
    if problems:
        raise ConfigError(problems)
    return space


def _leaf_keys() -> set[str]:
    keys = schema_keys()
    return {key for key in keys if not any(other.startswith(f"{key}.") for other in keys)}


def _key_problem(key: str) -> str | None:
    if key.startswith(FREE_FORM):
        return None  # passed to gymnasium.make: the env refuses what it does not take (checked below)
    if key not in _leaf_keys():
        return unknown_key_problem(key)
    if is_inert(key, REPORT_INERT) or key in SCORING_KEYS:
        return (
            f"{key} cannot be searched: it does not change what is learned, or it sets how every trial is trained "
            "and scored (give it on the command line)"
        )
    return None


def _shape_problem(key: str, entry: SearchEntry) -> str | None:
    """An entry whose fields do not make a distribution: a missing, empty or reversed range, no choices."""
    if entry.distribution is Distribution.categorical:
        if entry.low is not None or entry.high is not None or not entry.choices:
            return f"{key}: a categorical entry takes a non-empty list of choices, and no low or high"
        labels = [json.dumps(choice_label(c)) for c in entry.choices]
        return f"{key}: the choices {entry.choices} repeat a value" if len(set(labels)) < len(labels) else None
    name = entry.distribution.value
    if entry.choices is not None or entry.low is None or entry.high is None:
        return f"{key}: a {name} entry takes low and high, and no choices"
    if not entry.low < entry.high:
        return f"{key}: the range [{entry.low}, {entry.high}] is empty or reversed: low must be < high"
    if entry.distribution is Distribution.log_float and entry.low <= 0:
        return f"{key}: a log_float range needs low > 0, got {entry.low}"
    if entry.distribution is Distribution.int and not (
        float(entry.low).is_integer() and float(entry.high).is_integer()
    ):
        return f"{key}: an int range needs integer ends, got [{entry.low}, {entry.high}]"
    return None


def _type_problems(key: str, entry: SearchEntry) -> list[str]:
    """Values the key's type cannot take; a float range on an integer (or other non-float) key is refused whole."""
    if entry.distribution in (Distribution.float, Distribution.log_float):
        refused = value_type_problem(key, 0.5, "0.5")  # a float range draws fractional values
        if refused is not None:
            expected = refused.partition("expected ")[2]
            return [f"{key}: a {entry.distribution.value} range draws fractional values, but {key} takes {expected}"]
    found = [value_type_problem(key, value, override_value(value)) for value in entry.values_to_check()]
    return [problem for problem in found if problem is not None]


def space_problems(space: SearchSpace, base_overrides: list[str], source: str) -> list[str]:
    """Every problem of a search space, one line each, prefixed with ``source`` (the file): unknown or unsearchable
    keys, keys also set on the command line, malformed ranges, values of the wrong type, values td3x refuses."""
    given = {line.lstrip("+").partition("=")[0] for line in base_overrides}
    problems = []
    for key, entry in space.items():
        found = _key_problem(key)
        if found is None and key in given:
            found = f"{key} is both set on the command line and searched: drop one"
        found = found or _shape_problem(key, entry)
        problems += [found] if found else _type_problems(key, entry)
    if not problems:
        problems = _range_problems(space, base_overrides)
    return [f"{source}: {problem}" for problem in problems]


def _range_problems(space: SearchSpace, base_overrides: list[str]) -> list[str]:
    """td3x's own range checks on the ends of every range (and every choice), with the study's other overrides:
    one composition with each entry's first value, one with each entry's second, and so on (a value's problem
    names its key)."""
    values = {key: entry.values_to_check() for key, entry in space.items()}
    problems: list[str] = []
    for position in range(max(len(found) for found in values.values())):
        drawn = [
            f"{'+' if key.startswith(FREE_FORM) else ''}{key}={override_value(found[position % len(found)])}"
            for key, found in values.items()
        ]
        try:
            compose_checked([*base_overrides, *drawn])
        except ConfigError as error:
            lines = [f"{problem} (a value of the search space)" for problem in error.problems]
            problems += [line for line in lines if line not in problems]  # a choice repeated by the cycling
    return problems


def space_record(space: SearchSpace) -> dict[str, Any]:
    """The entries as plain data (for ``study.yaml``: a relaunch must search the same space)."""
    records = {}
    for key, entry in space.items():
        container = OmegaConf.to_container(OmegaConf.structured(entry), enum_to_str=True)
        assert isinstance(container, dict)
        records[key] = {name: value for name, value in container.items() if value is not None}
    return records
