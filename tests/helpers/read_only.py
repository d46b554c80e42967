"""A dir this process cannot write, for the tests of what td3x refuses before writing."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def read_only_dir(path: Path, contents: Path | None = None) -> Iterator[Path]:
    """``path`` made a dir this process cannot write, holding a copy of ``contents`` when given: without write
    permission, or (root writes in any dir of a writable disk) a tmpfs remounted read-only. Skips the test where
    neither can be had."""
    if contents is None:
        path.mkdir()
    else:
        shutil.copytree(contents, path)
    path.chmod(0o555)
    mounted = os.access(path, os.W_OK)
    if mounted:
        mount = ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(path)]
        if subprocess.run(mount, capture_output=True).returncode != 0:
            pytest.skip("root here, and no tmpfs can be mounted: no dir it cannot write")
        if contents is not None:
            shutil.copytree(contents, path, dirs_exist_ok=True)
        subprocess.run(["mount", "-o", "remount,ro", str(path)], check=True)
    try:
        yield path
    finally:
        if mounted:
            subprocess.run(["umount", str(path)], check=True)
        else:
            path.chmod(0o755)  # for pytest to remove it
