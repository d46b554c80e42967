"""Reading a hand-written YAML mapping key by key: each problem is one line naming the dotted key and what is
allowed, collected rather than raised, so a file with three mistakes is refused once with three lines."""

from __future__ import annotations

import difflib
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

MISSING = object()  # a key the file does not have (None is YAML's null, which some keys allow)


@dataclass
class Reader:
    """Collects the problems found while reading one file.

    Attributes:
        problems: one line each, ``key: what is wrong and what is allowed``.
    """

    problems: list[str] = field(default_factory=list)
    reported: set[str] = field(default_factory=set)  # keys with a problem already: their values say nothing more

    def problem(self, key: str, text: str) -> None:
        self.reported.add(key)
        self.problems.append(f"{key}: {text}" if key else text)

    def absent(self, value: Any, key: str, default: Any) -> bool:
        """Whether the key is absent; without a default it is reported as missing once, whoever asks first."""
        if value is MISSING and default is MISSING and key not in self.reported:
            self.problem(key, "is missing")
        return value is MISSING

    def keys(self, node: Mapping[str, Any], key: str, allowed: Collection[str], required: Collection[str] = ()) -> None:
        """Refuse the keys of ``node`` that are not ``allowed`` (with the closest allowed name) and report the
        ``required`` ones it lacks."""
        for name in node:
            if str(name) not in allowed:
                close = difflib.get_close_matches(str(name), list(allowed), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; allowed: {', '.join(sorted(allowed))}"
                self.problem(_join(key, str(name)), f"is not a key here{hint}")
        for name in required:
            if name not in node and _join(key, name) not in self.reported:
                self.problem(_join(key, name), "is missing")

    def mapping(self, value: Any, key: str) -> Mapping[str, Any] | None:
        if isinstance(value, Mapping):
            return value
        self.problem(key, f"must be a mapping of keys, not {_kind(value)}")
        return None

    def text(self, value: Any, key: str, default: Any = MISSING) -> str | None:
        if self.absent(value, key, default):
            return None if default is MISSING else default  # type: ignore[no-any-return]
        if isinstance(value, str) and value.strip():
            return value
        self.problem(key, f"must be a non-empty text, not {_kind(value)}")
        return None

    def number(
        self, value: Any, key: str, low: float = -math.inf, high: float = math.inf, default: Any = MISSING
    ) -> float | None:
        """A finite number in [low, high] (``default`` when the key is missing)."""
        if self.absent(value, key, default):
            return None if default is MISSING else default  # type: ignore[no-any-return]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.problem(key, f"must be a number, not {_kind(value)}")
            return None
        if not low <= value <= high:
            self.problem(key, f"{value!r} is out of range: allowed {_range(low, high)}")
            return None
        return float(value)

    def positive(self, value: Any, key: str, default: Any = MISSING) -> float | None:
        """A finite number above 0."""
        number = self.number(value, key, default=default)
        if number is not None and number <= 0:
            self.problem(key, f"{number!r} must be above 0")
            return None
        return number

    def integer(self, value: Any, key: str, low: int = 0, default: Any = MISSING) -> int | None:
        if self.absent(value, key, default):
            return None if default is MISSING else default  # type: ignore[no-any-return]
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(key, f"must be a whole number, not {_kind(value)}")
            return None
        if value < low:
            self.problem(key, f"{value} is out of range: allowed {low} or more")
            return None
        return value

    def choice(self, value: Any, key: str, options: Collection[str], default: Any = MISSING) -> str | None:
        if self.absent(value, key, default):
            return None if default is MISSING else default  # type: ignore[no-any-return]
        if isinstance(value, str) and value in options:
            return value
        self.problem(key, f"{value!r} is not allowed: choose one of {', '.join(options)}")
        return None


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name


def _kind(value: Any) -> str:
    """How a problem names a value of the wrong kind."""
    if value is MISSING:
        return "nothing"
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"the text {value!r}" if value.strip() else "an empty text"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _range(low: float, high: float) -> str:
    if math.isinf(low):
        return f"at most {high:g}"
    if math.isinf(high):
        return f"{low:g} or more"
    return f"{low:g} to {high:g}"
