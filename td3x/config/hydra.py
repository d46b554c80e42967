"""td3x's schema as Hydra sees it: where ``conf/`` lies, the schemas registered in the ConfigStore, a composed
config turned into a checked :class:`~td3x.config.schema.TrainConfig` and back into plain containers, and a stored
config read back."""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from td3x.config.messages import composition_problem, unknown_key_problem, unknown_keys, value_type_problem
from td3x.config.schema import AgentConfig, ConfigError, EnvConfig, NoiseConfig, TrainConfig


def _conf_dir() -> Path:
    """The YAML groups: the package ``td3x.conf``, which pyproject.toml maps to the repository's top-level ``conf/``
    (a checkout, an editable install) and a wheel ships as ``td3x/conf``. An absolute path, so Hydra finds it
    whatever module or working directory td3x is started from."""
    spec = importlib.util.find_spec("td3x.conf")
    if spec is None or not spec.submodule_search_locations:  # a checkout on sys.path, not installed
        return Path(__file__).resolve().parents[2] / "conf"
    return Path(next(iter(spec.submodule_search_locations))).resolve()


CONF_DIR = _conf_dir()


@dataclass
class ComposedConfig(TrainConfig):
    """A :class:`TrainConfig` composed from ``conf/``'s groups (``td3x.compose``), with the option chosen in each
    group (env, agent, noise, ablation; experiment when given), which training records in ``config.yaml`` beside the
    config. ``choices`` is no config key (the schema registered for Hydra is :class:`TrainConfig`, and
    :func:`to_container` leaves it out); ``dataclasses.replace`` keeps it."""

    choices: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, config: TrainConfig, choices: dict[str, str]) -> ComposedConfig:
        """``config`` with its group ``choices``."""
        return cls(**{name: getattr(config, name) for name in TRAIN_KEYS}, choices=dict(choices))


TRAIN_KEYS = tuple(entry.name for entry in dataclasses.fields(TrainConfig))  # a config's top-level keys


def register_configs() -> None:
    """Store the schemas under the ``schema`` group, so that ``Available options`` lists real choices only."""
    store = ConfigStore.instance()
    store.store(name="train_schema", node=TrainConfig)
    store.store(group="schema", name="env", node=EnvConfig)
    store.store(group="schema", name="agent", node=AgentConfig)
    store.store(group="schema", name="noise", node=NoiseConfig)


def to_typed(cfg: Any) -> TrainConfig:
    """Turn a composed ``DictConfig`` into a checked ``TrainConfig`` (raises ConfigError, one line a problem,
    for unknown keys and for values out of range)."""
    container = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(container, dict)
    unknown = unknown_keys({str(key): value for key, value in container.items()})
    if unknown:
        raise ConfigError([unknown_key_problem(key) for key in unknown])
    typed = OmegaConf.to_object(cfg)
    assert isinstance(typed, TrainConfig), f"expected a TrainConfig, got {type(typed).__name__}"
    return typed


def typed_task(task: Any) -> TrainConfig:
    """A job's task config (without ``hydra``) as a checked ``TrainConfig``: td3x's range checks.

    Raises:
        ConfigError: one line a problem; an interpolation naming nothing, an unset ``oc.env`` variable, one line.
    """
    try:
        return to_typed(task)
    except OmegaConfBaseException as error:
        raise ConfigError([composition_problem(error)]) from error


# blocks a run's config.yaml holds beside the config: the Hydra group choices and each source's effective seed
RECORDED_BESIDE = ("choices", "effective_seeds")


def from_saved(saved: dict[str, Any]) -> TrainConfig:
    """The checked ``TrainConfig`` of a stored config (a run's ``config.yaml`` or a checkpoint's): keys this td3x
    lacks are refused, missing ones take their defaults. Raises ConfigError, one line a problem."""
    stored = {key: value for key, value in saved.items() if key not in RECORDED_BESIDE}
    problems = [unknown_key_problem(key) for key in unknown_keys(stored)]
    if problems:
        problems += value_problems(stored)
    else:
        try:  # one merge for a config that fits (a report reads hundreds of runs); its problems named only if not
            return to_typed(OmegaConf.merge(OmegaConf.structured(TrainConfig), stored))
        except OmegaConfBaseException as error:
            problems = value_problems(stored) or [composition_problem(error)]
    raise ConfigError([f"the stored config does not fit this td3x: {problem}" for problem in problems])


def value_problems(stored: dict[str, Any]) -> list[str]:
    """A stored config's values that cannot be their keys' types, named one by one in td3x-train's words
    (OmegaConf's merge stops at the first, in its own)."""
    found = (value_type_problem(key, value, str(value)) for key, value in flatten(stored).items())
    return [problem for problem in found if problem]


def without_unknown_keys(saved: dict[str, Any]) -> dict[str, Any]:
    """A stored config less the keys this td3x lacks (what is recorded beside the config kept): how a run whose
    file names a key td3x does not know is grouped with the runs of its launch, never in a row of that key."""
    kept = copy.deepcopy(saved)
    for key in unknown_keys({name: value for name, value in saved.items() if name not in RECORDED_BESIDE}):
        *parents, leaf = key.split(".")
        node = kept
        for parent in parents:
            node = node[parent]
        del node[leaf]
    return kept


def to_container(config: TrainConfig) -> dict[str, Any]:
    """The resolved config as plain Python types (enums as their names), for YAML, JSON and W&B: the config keys
    only (a :class:`ComposedConfig`'s ``choices`` are recorded beside them)."""
    container = OmegaConf.to_container(OmegaConf.structured(config), resolve=True, enum_to_str=True)
    assert isinstance(container, dict)
    return {str(key): value for key, value in container.items() if key in TRAIN_KEYS}


def flatten(container: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested config as dotted keys, ``{"agent.tau": 0.005, ...}``; an empty dict (``env.kwargs``) is one value."""
    flat: dict[str, Any] = {}
    for key, value in container.items():
        if isinstance(value, dict) and value:
            flat |= flatten(value, f"{prefix}{key}.")
        else:
            flat[f"{prefix}{key}"] = value
    return flat
