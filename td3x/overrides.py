"""Command-line overrides checked before Hydra sees them, and the groups of ``conf/`` they choose from.

Hydra refuses ``agent.polcy_delay=3`` in several lines (and suggests ``+``, which would add the typo), and an
unknown option such as ``env=hoper`` with a traceback-like block. td3x checks every override first and prints
one line per problem with the closest valid key or option, so that a typo costs one glance and exit code 2.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import yaml
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException

from td3x.config import CONF_DIR, schema_keys, unknown_key_problem

FREE_FORM = ("env.kwargs.",)  # passed to gymnasium.make as they are


def group_options(conf_dir: Path = CONF_DIR) -> dict[str, list[str]]:
    """Each config group of ``conf/`` (env, agent, noise, ablation, experiment) and its options, sorted."""
    return {
        group.name: sorted(path.stem for path in group.glob("*.yaml"))
        for group in sorted(conf_dir.iterdir())
        if group.is_dir()
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
    """One line per override that names an unknown key or group option; [] when all are known (or when the
    line does not parse: Hydra then reports its own syntax error)."""
    try:
        parsed = OverridesParser.create().parse_overrides(arguments)
    except HydraException:
        return []
    groups, keys, chosen = group_options(), set(schema_keys()), default_choices()
    problems = []
    for override in parsed:
        key = override.key_or_group
        if override.is_hydra_override() or "/" in key or override.is_delete():
            continue  # Hydra's own settings and launcher choices: Hydra checks them
        if key in groups and key not in chosen and not override.is_add():
            problems.append(f"{override.input_line} needs a +: +{override.input_line} ({key} has no default to change)")
        elif key in groups:
            options = groups[key]
            problems += [_option_problem(key, value, options) for value in _values(override) if value not in options]
        elif key not in keys and not key.startswith(FREE_FORM):
            problems.append(unknown_key_problem(key))
    return problems
