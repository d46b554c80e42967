"""Schema types in words and values checked against them: Hydra's composition checks a value's type, but a field of a
built config set afterwards in Python (``config.agent.tau = "fast"``) is not checked by anyone else."""

from __future__ import annotations

import dataclasses
import enum
import numbers
import typing
from typing import Any


def expected_type(hint: Any) -> str:
    """What a schema type accepts, in words: ``a float``, ``an integer or null``, ``one of gaussian, ...``."""
    args = typing.get_args(hint)
    if type(None) in args:
        return f"{expected_type(next(arg for arg in args if arg is not type(None)))} or null"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return f"one of {', '.join(member.name for member in hint)}"
    origin = typing.get_origin(hint)
    if origin is list:
        return f"a list of {expected_type(args[0]).removeprefix('a ').removeprefix('an ')}s" if args else "a list"
    if origin is dict:
        return "a mapping"
    names = {bool: "a boolean (true or false)", int: "an integer", float: "a float", str: "a string"}
    return names.get(hint, getattr(hint, "__name__", str(hint)))


def _fits(value: Any, hint: Any) -> bool:
    """Whether ``value`` is of the schema type ``hint`` as OmegaConf would have made it (an int for a float too)."""
    args, origin = typing.get_args(hint), typing.get_origin(hint)
    if type(None) in args:
        return value is None or _fits(value, next(arg for arg in args if arg is not type(None)))
    if origin is list:
        return isinstance(value, list) and all(_fits(item, args[0]) for item in value)
    if origin is dict:
        return isinstance(value, dict)
    if hint is float:  # numbers: numpy's too, as a user's sweep script may hold them
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    return hint is Any or isinstance(value, hint)


def type_problems(node: Any, prefix: str = "") -> list[str]:
    """One line per field of a config dataclass (and those below it) whose value is not of its type: Hydra's
    composition checks types, but a field set in Python afterwards (``config.agent.tau = "fast"``) is not, and the
    range checks would compare it."""
    problems = []
    for name, hint in typing.get_type_hints(type(node)).items():
        value = getattr(node, name)
        if not _fits(value, hint):  # a node's type in words is its dataclass's name: td3x.config.schema.EnvConfig
            problems.append(f"{prefix}{name}={value!r} is not allowed: expected {expected_type(hint)}")
        elif dataclasses.is_dataclass(hint):
            problems += type_problems(value, f"{prefix}{name}.")
    return problems
