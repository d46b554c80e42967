"""Command-line overrides checked before Hydra sees them, the groups of ``conf/`` they choose from, and Hydra
1.3's rules for a multirun's overrides.

Hydra refuses ``agent.polcy_delay=3`` in several lines (and suggests ``+``, which would add the typo), and an
unknown option such as ``env=hoper`` with a traceback-like block. td3x checks every override first and prints
one line per problem with the closest valid key or option, so that a typo costs one glance and exit code 2.

``td3x-sweep list`` needs three rules of Hydra 1.3 that Hydra keeps in private modules: the jobs its basic
sweeper makes of the overrides (:func:`sweep_jobs`), how a job's ``key=value``, ``+``, ``++`` and ``~``
overrides change the composed config (:func:`apply_overrides`), and the job's ``override_dirname``
(:func:`override_dirname`). They are written here on Hydra's public override parser, and tests compare each
with Hydra's own.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import ConfigCompositionException, HydraException
from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

from td3x.config.hydra import CONF_DIR, ComposedConfig, register_configs, to_typed
from td3x.config.messages import (
    composition_problem,
    schema_keys,
    schema_nodes,
    unknown_key_problem,
    value_type_problem,
)
from td3x.config.schema import ConfigError

FREE_FORM = ("env.kwargs.",)  # passed to gymnasium.make as they are


SEARCH_GROUP = "search"  # conf/search/: td3x-tune's search spaces, not options of a run's config


def group_options(conf_dir: Path = CONF_DIR) -> dict[str, list[str]]:
    """Each config group of ``conf/`` (env, agent, noise, ablation, experiment) and its options, sorted."""
    return {
        group.name: sorted(path.stem for path in group.glob("*.yaml"))
        for group in sorted(conf_dir.iterdir())
        if group.is_dir() and group.name != SEARCH_GROUP
    }


def default_choices(conf_dir: Path = CONF_DIR) -> dict[str, str]:
    """The option ``train.yaml``'s defaults list chooses in each group (env: pendulum, ...); groups it does not
    choose from (experiment) are added with ``+``."""
    entries = yaml.safe_load((conf_dir / "train.yaml").read_text())["defaults"]
    return {group: option for entry in entries if isinstance(entry, dict) for group, option in entry.items()}


def _values(override: Override) -> list[str]:
    """The option names an override chooses: one, or each of a choice sweep (``env=hopper,walker2d``)."""
    if not override.is_sweep_override():
        return [override.get_value_element_as_str()]
    try:
        return list(override.sweep_string_iterator())
    except HydraException:  # range() or glob() sweeps: Hydra checks those itself
        return []


def _option_problem(group: str, option: str, options: list[str]) -> str:
    close = difflib.get_close_matches(option, options, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]}?" if close else ""
    return f"{group}={option} is not an option of {group}: choose one of {', '.join(options)}{hint}"


def override_problems(arguments: list[str]) -> list[str]:
    """One line per override that names an unknown key or group option, or gives a key a value of the wrong type
    (each value of a sweep checked); [] when all are fine (or when the line does not parse: Hydra then reports
    its own syntax error)."""
    try:
        parsed = OverridesParser.create().parse_overrides(arguments)
    except HydraException:
        return []
    groups, keys, chosen = group_options(), set(schema_keys()), default_choices()
    problems = []
    for override in parsed:
        key = override.key_or_group
        if key in DIR_KEYS and not override.is_sweep_override():
            problems += dir_problems(key, _dir_text(override))
        if override.is_hydra_override() or "/" in key or (override.is_delete() and key.startswith(FREE_FORM)):
            continue  # Hydra's own settings and launcher choices: Hydra checks them; env kwargs are free-form
        if override.is_delete():  # every key has a default and every group an option: ~seed would leave a hole
            problems.append(
                f"{override.input_line} is not allowed: td3x's keys and groups cannot be deleted; set a "
                f"value instead ({key}=...), or leave out the override for the default"
            )
            continue
        if key in groups and key not in chosen and not override.is_add():
            problems.append(f"{override.input_line} needs a +: +{override.input_line} ({key} has no default to change)")
        elif key in groups:
            options = groups[key]
            problems += [_option_problem(key, value, options) for value in _values(override) if value not in options]
        elif key not in keys and not key.startswith(FREE_FORM):
            problems.append(unknown_key_problem(key))
        elif key in keys:
            problems += _type_problems(override)
    return problems


def hydra_quoted(text: str) -> str:
    """``text`` as a quoted value of a Hydra override, which Hydra reads back as ``text`` whatever it holds (spaces,
    ``=``, a comma, quotes, brackets, non-ASCII letters: bare, Hydra's grammar refuses them or reads a sweep). Hydra
    1.3 escapes a quote, and only the backslashes right before a quote or at the end."""
    escaped = re.sub(r"(\\*)(?='|$)", lambda run: run.group(1) * 2, text).replace("'", "\\'")
    return f"'{escaped}'"


def hydra_text(text: str) -> str:
    """``text`` as the value of an override that Hydra reads as this text: bare where Hydra's grammar takes it bare
    (as td3x always wrote it: a relaunch compares its overrides with the ones recorded), :func:`hydra_quoted` where
    Hydra would refuse it or read a sweep, a list or a mapping."""
    try:
        value = OverridesParser.create().parse_override(f"key={text}")
    except HydraException:
        return hydra_quoted(text)
    read = None if value.is_sweep_override() else value.value()
    bare = isinstance(read, int | float | bool) or read is None or read == text  # a number stays one, as before
    return text if bare and not value.is_sweep_override() else hydra_quoted(text)


def overrides_in(arguments: Sequence[str]) -> list[str]:
    """The overrides of a command line: ``key=value`` (with ``+`` or ``++``) and ``~key`` deletions, not the
    ``-flags`` or the values they take (``--cfg job``)."""
    return [argument for argument in arguments if ("=" in argument or argument[:1] == "~") and argument[0] != "-"]


def compose_checked(overrides: Sequence[str]) -> ComposedConfig:
    """The checked config ``td3x-train OVERRIDES`` would train (``td3x.compose``, ``td3x-tune``'s trials), with
    the group choices ``td3x-train`` records (``.choices``).

    Raises:
        ConfigError: unknown keys or options, values of the wrong type or out of range, a line Hydra cannot parse
            or compose, an interpolation naming nothing (one line each).
    """
    if isinstance(overrides, str) or not all(isinstance(line, str) for line in overrides):
        raise ConfigError([f"overrides must be a list of strings such as ['env=hopper', 'seed=3'], not {overrides!r}"])
    overrides = list(overrides)
    problems = override_problems(overrides)
    if problems:
        raise ConfigError(problems)
    return composed_config(overrides)


def composed_config(overrides: list[str]) -> ComposedConfig:
    """:func:`compose_checked` for overrides whose text the caller has checked (:func:`override_problems`).

    Raises:
        ConfigError: values out of range, a line Hydra cannot compose, an interpolation naming nothing.
    """
    register_configs()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = compose(config_name="train", overrides=overrides, return_hydra_config=True)
        choices = run_choices(cfg.hydra.runtime.choices)
        with open_dict(cfg):
            del cfg["hydra"]
        return ComposedConfig.of(to_typed(cfg), choices)
    except (HydraException, OmegaConfBaseException) as error:  # a syntax error, a sweep (a=1,2), ${oops}
        raise ConfigError([composition_problem(error)]) from error


def run_choices(runtime_choices: Any) -> dict[str, str]:
    """The group choices a run records in ``config.yaml`` (env, agent, noise, ablation; experiment when given):
    Hydra's runtime choices without Hydra's own groups (``hydra/launcher``, ...) and the schema's."""
    return {
        str(group): str(option)
        for group, option in runtime_choices.items()
        if "/" not in group and option is not None and group != "schema"
    }


DIR_KEYS = ("hydra.run.dir", "hydra.sweep.dir")  # dirs Hydra creates before td3x runs: a file there is a traceback


def dir_problems(key: str, value: str) -> list[str]:
    """One line when a dir td3x would create (``hydra.run.dir``, ``td3x.train``'s) is empty, is an existing file or
    lies below one; [] for interpolations."""
    if "${" in value:
        return []
    if not value.strip():  # an unset shell variable: Hydra would train in the working dir itself
        return [f"{key}= is empty: name a dir (it is created if missing)"]
    path = Path(value).expanduser()
    blocking = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
    if blocking is None:
        return []
    where = "is" if blocking == path else f"lies below {blocking}, which is"
    return [f"{key}={value} {where} a file, not a directory: name a dir (it is created if missing)"]


def home_dir_problem(key: str, path: Path) -> str | None:
    """One line when a dir Hydra would create starts with ``~`` once composed (a config file's value: the command
    line's is expanded first): Hydra does not expand it, and would make a folder named ``~`` in the working dir."""
    if not str(path).startswith("~"):
        return None
    return (
        f"{key}={path} starts with ~, which Hydra does not expand (it would make a folder named ~ here): write the "
        "home dir's path, or ${oc.env:HOME} in a config file"
    )


def _dir_text(override: Override) -> str:
    """A dir override's path as Hydra reads it (a quoted one without its quotes), else its value as typed."""
    value = override.value()
    return value if isinstance(value, str) else str(override.input_line).partition("=")[2]


def _type_problems(override: Override) -> list[str]:
    """One line per value of ``override`` (each of a sweep's) that its schema key's type cannot take, with the
    spelling it takes where one is clear; [] for an ``interval()`` or ``glob()`` sweep, whose values Hydra checks
    itself."""
    key, typed = override.key_or_group, str(override.input_line).partition("=")[2]  # the value as typed
    if not override.is_sweep_override():
        pairs = [(override.value(), typed)]
    else:
        try:
            pairs = list(zip(override.sweep_iterator(), override.sweep_string_iterator(), strict=True))
        except HydraException:
            return []
    if key in schema_nodes():
        return [] if all(isinstance(value, dict) for value, _ in pairs) else [_node_problem(key, typed)]
    found = [value_type_problem(key, value, text) for value, text in pairs]
    if not any(found):
        return []
    as_list = [value for value, _ in pairs]
    if not any(isinstance(value, list | dict) for value in as_list) and not value_type_problem(key, as_list, typed):
        # agent.hidden_sizes=400,300: a list written without its brackets (Hydra reads a sweep of two numbers)
        return [f"{key}={typed} is not allowed: a list is written in brackets: {key}=[{typed}]"]
    return [f"{problem}{_integer_hint(key, text)}" for problem, (_, text) in zip(found, pairs, strict=True) if problem]


def _node_problem(key: str, typed: str) -> str:
    """``seeds=3``: a value given to a key that holds keys, with the leaf key it likely meant (``seed=3``)."""
    leaves = [k for k in schema_keys() if k.count(".") == key.count(".") and k not in schema_nodes()]
    close = difflib.get_close_matches(key, leaves, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}={typed}?" if close else f" (set one of them: {key}.<key>=VALUE)"
    return f"{key}={typed} is not allowed: {key} holds keys, not a value{hint}"


def _integer_hint(key: str, text: str) -> str:
    """``run.total_steps=5e4``: a whole number written as a float, and how to write it (a sweep dir is named by the
    text, so 5e4 and 50000 would be two dirs)."""
    try:
        number = float(text)
    except ValueError:
        return ""
    if not number.is_integer() or value_type_problem(key, int(number), str(int(number))):
        return ""
    return f"; write {key}={int(number)}"


# ---------------------------------------------------------------------- Hydra 1.3's multirun rules
def sweep_jobs(overrides: list[Override]) -> list[list[str]]:
    """Each job's override lines, as Hydra 1.3's basic sweeper makes them: the cartesian product of the overrides'
    values, the first override varying slowest. A sweep (``a=1,2``, ``choice()``, ``range()``, ``glob()``) gives
    its values in its own order, any other override one value. An override of the same key (with the same
    ``+``/``++``/``~``) as an earlier one keeps the earlier one's place and replaces its values.

    Args:
        overrides: parsed by ``OverridesParser``; one made with a config loader, for ``glob()`` to list options.

    Raises:
        HydraException: an ``interval()`` sweep, which has no list of values.
    """
    values: dict[str, list[str]] = {}  # a key keeps the place of its first override
    for override in overrides:
        key = override.get_key_element()
        if not override.is_sweep_override():
            values[key] = [f"{key}={override.get_value_element_as_str()}"]
        elif override.is_discrete_sweep():
            values[key] = [f"{key}={value}" for value in override.sweep_string_iterator()]
        else:
            assert override.value_type is not None
            raise HydraException(f"BasicSweeper does not support sweep type : {override.value_type.name}")
    return [list(job) for job in itertools.product(*values.values())]


def apply_overrides(cfg: DictConfig, overrides: list[Override]) -> None:
    """Apply a job's value overrides (not group choices) to its composed config, in order, as Hydra 1.3 does:
    ``key=v`` changes an existing key; ``+key=v`` adds a key that is absent or null (a dict or list value also
    merges into one that is there); ``++key=v`` adds or changes; ``~key`` deletes a key, ``~key=v`` only if its
    value is ``v``.

    Raises:
        ConfigCompositionException: with Hydra's message, for the first override Hydra would refuse.
    """
    for override in overrides:
        line, key = override.input_line, override.key_or_group
        if override.package is not None:
            raise ConfigCompositionException(
                f"Override {line} looks like a config group override, but config group '{key}' does not exist."
            )
        try:
            if override.is_delete():
                _delete(cfg, key, override.value(), line)
            elif override.is_add() or override.is_force_add():
                value = override.value()
                if override.is_add() and _select(cfg, key) is not None and not isinstance(value, (dict, list)):
                    assert line is not None
                    raise ConfigCompositionException(
                        f"Could not append to config. An item is already at '{key}'.\n"
                        f"Either remove + prefix: '{line[1:]}'\n"
                        f"Or add a second + to add or override '{key}': '+{line}'\n"
                    )
                OmegaConf.update(cfg, key, value, merge=True, force_add=True)
            else:
                try:
                    OmegaConf.update(cfg, key, override.value(), merge=True)
                except (ConfigAttributeError, ConfigKeyError) as error:
                    raise ConfigCompositionException(
                        f"Could not override '{key}'.\nTo append to your config use +{line}"
                    ) from error
        except OmegaConfBaseException as error:
            raise ConfigCompositionException(f"Error merging override {line}") from error


def _select(cfg: DictConfig, key: str) -> Any:
    return OmegaConf.select(cfg, key, throw_on_missing=False)


def _delete(cfg: DictConfig, key: str, expected: Any, line: str | None) -> None:
    """``~key`` (any value) or ``~key=expected``: remove ``key`` from its parent node, which must hold it."""
    present = _select(cfg, key)
    if present is None:
        raise ConfigCompositionException(f"Could not delete from config. '{key}' does not exist.")
    if expected is not None and expected != present:
        raise ConfigCompositionException(
            f"Could not delete from config. The value of '{key}' is {present} and not {expected}."
        )
    parent, _, leaf = key.rpartition(".")
    node = _select(cfg, parent) if parent else cfg
    with open_dict(cfg):
        del node[leaf]


def override_dirname(overrides: list[Override], exclude_keys: list[str], item_sep: str, kv_sep: str) -> str:
    """Hydra 1.3's ``hydra.job.override_dirname``: the job's override lines as typed, those whose bare key (no
    ``+``, ``++``, ``~``) is in ``exclude_keys`` left out, sorted as text, joined by ``item_sep``, and every ``=``
    of the result (one in a value too) replaced by ``kv_sep``."""
    kept = sorted(str(o.input_line) for o in overrides if o.key_or_group not in exclude_keys)
    return item_sep.join(kept).replace("=", kv_sep)
