"""One readable line per problem with a key: an unknown key and the closest one td3x has, a value of the wrong
type in words (``expected a float``)."""

from __future__ import annotations

import dataclasses
import difflib
import typing
from typing import Any

from hydra.errors import MissingConfigException
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from td3x.config.extras import missing_plugin_problem
from td3x.config.schema import ConfigError, TrainConfig
from td3x.config.value_types import expected_type


def schema_keys(schema: type = TrainConfig, prefix: str = "") -> list[str]:
    """Every dotted key of a schema dataclass, nodes (``agent``) and leaves (``agent.tau``) alike."""
    keys = []
    for name, hint in typing.get_type_hints(schema).items():
        keys.append(f"{prefix}{name}")
        if dataclasses.is_dataclass(hint):
            keys += schema_keys(hint, f"{prefix}{name}.")  # type: ignore[arg-type]
    return keys


def schema_nodes() -> set[str]:
    """The keys that hold keys (``agent``, ``seeds``, ...), not values."""
    keys = schema_keys()
    return {key for key in keys if any(other.startswith(f"{key}.") for other in keys)}


def unknown_keys(container: dict[str, Any], schema: type = TrainConfig, prefix: str = "") -> list[str]:
    """The dotted keys of a composed config that ``schema`` lacks. A dict-typed field (``env.kwargs``, passed
    to ``gymnasium.make``) is free-form. Hydra lets ``+key=value`` add a key to a typed node and
    ``OmegaConf.to_object`` would then drop it silently: a typo must be refused, never lost."""
    hints = typing.get_type_hints(schema)
    found = []
    for key, value in container.items():
        if key not in hints:
            found.append(f"{prefix}{key}")
        elif dataclasses.is_dataclass(hints[key]) and isinstance(value, dict):
            found += unknown_keys(value, hints[key], f"{prefix}{key}.")
    return found


def unknown_key_problem(key: str) -> str:
    """One line naming an unknown key and the closest key td3x has."""
    parent, _, leaf = key.rpartition(".")
    # the keys of the same node, by their last name (``agent.bogus`` is no typo of ``agent.tau``: their shared
    # ``agent.`` made it look close); the keys of the same depth where the node itself is unknown (``agnt.tau``)
    siblings = {known.rpartition(".")[2]: known for known in schema_keys() if known.rpartition(".")[0] == parent}
    if siblings:
        close = [siblings[name] for name in difflib.get_close_matches(leaf, list(siblings), n=1, cutoff=0.6)]
    else:
        same_depth = [known for known in schema_keys() if known.count(".") == key.count(".")]
        close = difflib.get_close_matches(key, same_depth, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else "td3x-train --help lists the keys"
    return f"{key} is not a td3x key; {hint}"


def value_type_problem(key: str, value: Any, text: str) -> str | None:
    """One line when ``value`` (an override's parsed value, typed as ``text``) cannot be the schema key ``key``'s
    type, as OmegaConf would refuse it in Hydra's composition (``agent.tau=fast``, ``run.total_steps=1e3``);
    None when it can, or when ``key`` is not a leaf of the schema (a node, a free-form dict's entry)."""
    *path, leaf = key.split(".")
    schema: Any = TrainConfig
    for name in path:
        schema = typing.get_type_hints(schema).get(name)
        if schema is None or not dataclasses.is_dataclass(schema):
            return None
    hint = typing.get_type_hints(schema).get(leaf)
    if hint is None or dataclasses.is_dataclass(hint):
        return None
    try:
        OmegaConf.merge(OmegaConf.structured(schema), {leaf: value})
    except OmegaConfBaseException:
        return f"{key}={text!r} is not allowed: expected {expected_type(hint)}"
    except ConfigError:  # the merge passed the type check; the ranges are checked later
        return None
    return None


def composition_problem(error: BaseException) -> str:
    """One line for a config Hydra or OmegaConf could not compose or resolve (a syntax error in an override, an
    interpolation naming nothing, an unset ``oc.env`` variable): its message's lines joined, with the key it names;
    an option whose Hydra plugin is not installed (a SLURM or Ray launcher), with the command that installs it."""
    if isinstance(error, MissingConfigException) and error.missing_cfg_file:
        plugin = missing_plugin_problem(error.missing_cfg_file, list(error.options or []))
        if plugin:
            return plugin
    lines = [line.strip() for line in str(error).partition("Config search path")[0].splitlines() if line.strip()]
    skipped = ("full_key:", "reference_type", "object_type", "See https")  # OmegaConf's and Hydra's trailers
    message = " ".join(line for line in lines if not line.startswith(skipped))
    if error.__cause__ is not None:  # "Error merging override x=y": why, in the exception it was raised from
        message += f": {composition_problem(error.__cause__)}"
    key = getattr(error, "full_key", None) or getattr(error, "override", None)  # OmegaConf's key, Hydra's line
    return f"{key}: {message}" if key and key not in message else message
