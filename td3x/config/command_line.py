"""How a command line is typed, before what it asks is checked: an unknown ``-flag`` and the option or override
meant, an override with spaces around its ``=`` (the shell splits ``env = hopper`` into three words), values for a
sweep without ``-m``, and an override where a command's path goes. One line each, naming what was typed. A path
reads as a shell reads it unquoted (a leading ``~`` is the home dir), and a dir override's path as typed."""

from __future__ import annotations

import difflib
import os
import re
import shlex
from collections.abc import Collection, Sequence

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException

from td3x.config.messages import schema_keys, schema_nodes
from td3x.config.overrides import DIR_KEYS, group_options, hydra_quoted, overrides_in
from td3x.config.schema import ConfigError


def spaced_assignment_problem(arguments: Sequence[str]) -> str | None:
    """One line for an override typed with spaces around its ``=``: the shell hands ``env = hopper`` over as three
    words (``env= hopper`` and ``env =hopper`` as two), which Hydra would read as an override without a key and
    stray words. The line names what was typed and the override meant; None when no ``=`` stands apart."""
    for index, argument in enumerate(arguments):
        before = arguments[index - 1] if index > 0 and _is_bare(arguments[index - 1]) else ""
        after = arguments[index + 1] if index + 1 < len(arguments) and _is_bare(arguments[index + 1]) else ""
        if argument == "=" or (argument.startswith("=") and not argument.startswith("==")):
            key, value = before, (after if argument == "=" else argument[1:])
            typed = " ".join(word for word in (before, argument, after if argument == "=" else "") if word)
        elif argument.endswith("=") and argument.count("=") == 1 and after and not argument.startswith("-"):
            key, value, typed = argument[:-1], after, f"{argument} {after}"
        else:
            continue
        if not key:
            return f"'{typed}' names no key: an override is KEY=VALUE, without spaces (e.g. env=hopper)"
        return f"'{typed}' has spaces around '=': write {key}={value}"
    return None


def _is_bare(word: str) -> bool:
    """A word that is neither an override nor a flag (``hopper`` in ``env = hopper``)."""
    return bool(word) and "=" not in word and not word.startswith("-")


def sweep_problem(arguments: Sequence[str]) -> str | None:
    """One line for a command line without ``-m`` whose overrides give a key several values (``seed=0,1``), with the
    multirun command meant: a single run takes one value of each (Hydra refuses it in five lines and exit code 1).
    None without such a value, or when the line does not parse (the composition then names the syntax error)."""
    try:
        parsed = OverridesParser.create().parse_overrides(overrides_in(arguments))
    except HydraException:
        return None
    # Hydra's own settings cannot be swept (a comma there asks for quotes): Hydra's message says so
    sweeps = [str(o.input_line) for o in parsed if o.is_sweep_override() and not o.is_hydra_override()]
    if not sweeps:
        return None
    named = sweeps[0] if len(sweeps) == 1 else f"{', '.join(sweeps[:-1])} and {sweeps[-1]}"
    command = shlex.join(["td3x-train", "-m", *(argument for argument in arguments if argument not in ("-r", "--run"))])
    return (
        f"{named} {'gives' if len(sweeps) == 1 else 'give'} several values, and without -m td3x-train trains one "
        f"run: add -m for a job per value: {command}"
    )


OVERRIDE_FORM = re.compile(r"[+~]*\w+(\.\w+)*=.*")  # key=value, +key=value, ~key, with a dotted key


def looks_like_override(argument: str) -> bool:
    """Whether a command's path argument reads as a ``KEY=VALUE`` override (``run.total_steps=3000``) or a deletion
    (``~seed``): the path was left out. A path with a slash never does."""
    return "/" not in argument and bool(OVERRIDE_FORM.fullmatch(argument) or argument.startswith("~"))


def flag_problem(arguments: Sequence[str], options: Collection[str], takes_overrides: bool) -> str | None:
    """One line for the first ``-flag`` of ``arguments`` that is none of ``options`` (the command's own), naming
    what was meant: for a command that takes KEY=VALUE overrides, the override (``--total_steps 3000`` ->
    ``run.total_steps=3000``); else the closest option; else the options. None when every flag is an option.

    Args:
        arguments: the command line, without the program's name.
        options: the command's option strings (``--help``, ``-m``, ...).
        takes_overrides: whether the command takes td3x-train's overrides.
    """
    for index, argument in enumerate(arguments):
        flag, given, value = argument.partition("=")
        if not flag.startswith("-") or flag in options or _is_number(flag):
            continue
        if not given:
            following = arguments[index + 1] if index + 1 < len(arguments) else "-"
            value = following if not following.startswith("-") and "=" not in following else "VALUE"
        unknown = f"{flag} is not an option"
        key = _key_named(flag) if takes_overrides else None
        if key is not None:
            return f"{unknown}: keys are set as KEY=VALUE, without dashes; write {key}={value}"
        bare = {option.lstrip("-"): option for option in options}  # dashes alike in all: compared without them
        close = difflib.get_close_matches(flag.lstrip("-"), sorted(bare), n=1, cutoff=0.6)
        if close:
            return f"{unknown}; did you mean {bare[close[0]]}?"
        return f"{unknown}: the options are {', '.join(options)}"
    return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _key_named(flag: str) -> str | None:
    """The config key or group a flag names (``--total-steps``, ``--run.total_steps``, ``--env``, ``--seeds``)."""
    name = flag.lstrip("-").replace("-", "_")
    nodes = schema_nodes()
    names = {key.rsplit(".", 1)[-1]: key for key in schema_keys() if key not in nodes}
    names |= {group: group for group in group_options()} | {key: key for key in names.values()}
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.8)
    return names[close[0]] if close else None


def home_expanded(path: str) -> str:
    """``path`` with a leading ``~`` (or ``~user``) made the home dir, as a shell does for an unquoted one: a quoted
    ``~`` (``--out=~/r``, ``"~/runs"``) reaches td3x as it is, where Hydra would make a folder named ``~`` and pandas
    would write in the home dir.

    Raises:
        ValueError: ``~user`` names no user on this machine (one line).
    """
    if not path.startswith("~"):
        return path
    expanded = os.path.expanduser(path)
    if expanded.startswith("~"):
        user = path.partition("/")[0]
        raise ValueError(f"{path}: {user} is no user's home dir on this machine: write the dir's full path")
    return expanded


def dir_override_as_typed(argument: str) -> str:
    """A ``hydra.run.dir`` or ``hydra.sweep.dir`` override (``+`` or ``++`` too) made one that Hydra reads as the path
    typed, any other argument as it is: a leading ``~`` expanded (:func:`home_expanded`), and a path that Hydra's
    grammar refuses bare (``=``, quotes, brackets, non-ASCII letters) or reads as a sweep (a comma) quoted for it.
    A path is what a dir's value means, so neither reading has another use.

    Raises:
        ConfigError: ``~user`` names no user on this machine (one line, naming the key).
    """
    key, assigned, value = argument.partition("=")
    if not assigned or key.lstrip("+") not in DIR_KEYS:
        return argument
    path, bare = _dir_path(argument, value)
    if path is None:  # a list, a number, null: no path; td3x's checks or Hydra's name it
        return argument
    try:
        expanded = home_expanded(path)
    except ValueError as error:
        raise ConfigError([f"{key}={error}"]) from error
    return argument if bare and expanded == path else f"{key}={hydra_quoted(expanded)}"


def _dir_path(argument: str, value: str) -> tuple[str | None, bool]:
    """The path a dir override names, and whether Hydra reads its value bare as that path: Hydra's reading where it
    is one string, else the value as typed (Hydra cannot parse it, or reads a sweep); None for another kind of
    value (a list, a number)."""
    try:
        override = OverridesParser.create().parse_override(argument)
    except HydraException:
        return value, False
    if override.is_sweep_override():
        return value, False
    parsed = override.value()
    return (parsed, parsed == value) if isinstance(parsed, str) else (None, False)
