"""td3x's extras (pyproject.toml's optional dependencies) as a refusal names them: the command that adds one to an
install, and the Hydra options that a plugin of an extra brings, so that a command needing one says which."""

from __future__ import annotations

# Hydra config options that a plugin brings, with the plugin and the td3x extra that installs it (None: a dependency
# of td3x itself); tests/config/test_extras.py checks them against pyproject.toml and Hydra's own option lists
PLUGIN_OPTIONS: dict[str, tuple[str, str | None]] = {
    "hydra/launcher/joblib": ("hydra-joblib-launcher", None),
    "hydra/launcher/submitit_slurm": ("hydra-submitit-launcher", "launchers"),
    "hydra/launcher/submitit_local": ("hydra-submitit-launcher", "launchers"),
    "hydra/launcher/ray": ("hydra-ray-launcher", "ray"),
    "hydra/launcher/ray_aws": ("hydra-ray-launcher", "ray"),
}


def install_command(extra: str | None) -> str:
    """How to add ``extra`` to td3x's install from its checkout, as the README installs td3x (None: td3x itself)."""
    return f'pip install -e ".[{extra}]"' if extra else "pip install -e ."


def missing_plugin_problem(config_path: str, installed: list[str]) -> str | None:
    """One line for a Hydra option (``hydra/launcher/submitit_slurm``) that its plugin, not installed here, would
    bring: the option, the plugin, the command that installs it, and the options installed; None for any other
    missing option (a typo: Hydra's own message lists the options)."""
    if config_path not in PLUGIN_OPTIONS:
        return None
    plugin, extra = PLUGIN_OPTIONS[config_path]
    group, _, option = config_path.rpartition("/")
    where = f"td3x's {extra} extra" if extra else "a dependency of td3x"
    return (
        f"{group}={option} comes with Hydra's {plugin} plugin, not installed here ({where}): {install_command(extra)}; "
        f"installed options of {group}: {', '.join(installed)}"
    )
