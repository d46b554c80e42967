"""A td3x console script run where some packages are not installed: a subprocess whose import system does not find
them (``import`` raises ModuleNotFoundError and ``importlib.util.find_spec`` gives None, as for a package that is
absent), and whose ``hydra_plugins`` namespace lacks the Hydra plugins named (Hydra scans that folder for plugins
itself, past the import system). Nothing of td3x is replaced."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

BOOTSTRAP = """
import os, runpy, sys, tempfile
modules, plugins, module = sys.argv[1].split(","), sys.argv[2].split(","), sys.argv[3]


class NotInstalled:
    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        return None if name.split(".")[0] in modules else self.finder.find_spec(name, path, target)

    def __getattr__(self, attribute):
        return getattr(self.finder, attribute)


sys.meta_path[:] = [NotInstalled(finder) for finder in sys.meta_path]
import hydra_plugins

view = os.path.join(tempfile.mkdtemp(), "hydra_plugins")  # the installed plugins but those named
os.mkdir(view)
for folder in list(hydra_plugins.__path__):
    for name in os.listdir(folder):
        if name not in plugins and not name.startswith("__"):
            os.symlink(os.path.join(folder, name), os.path.join(view, name))
hydra_plugins.__path__ = [view]
sys.argv = [module, *sys.argv[4:]]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def run_without(
    module: str, *arguments: str | Path, cwd: Path, modules: Sequence[str] = (), plugins: Sequence[str] = ()
) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE ARGUMENTS`` (a td3x console script's module) from ``cwd``, with ``modules`` (top-level
    names: ``pygame``) and Hydra ``plugins`` (``hydra_submitit_launcher``) not installed."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}
    command = [sys.executable, "-c", BOOTSTRAP, ",".join(modules), ",".join(plugins), module, *map(str, arguments)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd, env=environment)
