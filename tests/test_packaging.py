"""The wheel holds every package of td3x: pyproject.toml lists them by hand (conf/ ships as td3x.conf), so a new
folder left off the list would be missing from a non-editable install."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_folder_of_td3x_is_listed_for_the_wheel() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {
        ".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "td3x").rglob("__init__.py")
    }
    assert folders <= listed, f"not in pyproject.toml's packages: {sorted(folders - listed)}"
