"""A checkpoint (a run dir's ``checkpoint.pt``): the full training state by named parts, written atomically,
loaded with checks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

FORMAT_VERSION = 2  # 2: a leading seed dim on every tensor, per-seed parts under "seeds", episode tapes


class CheckpointError(RuntimeError):
    """A checkpoint that is missing, truncated, corrupt or from another format."""


def save(path: Path, parts: dict[str, Any]) -> None:
    """Write ``parts`` to ``path`` via a temporary file and ``os.replace``: a kill or a full disk
    mid-write leaves the previous checkpoint intact, never a half-written one."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tmp.open("wb") as file:
            torch.save({"format_version": FORMAT_VERSION, **parts}, file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def load(path: Path) -> dict[str, Any]:
    """Load a checkpoint written by :func:`save`, or raise one clear :class:`CheckpointError`."""
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}")
    try:
        parts = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as error:
        reason = str(error).strip().splitlines()[0].split(". ")[0] if str(error).strip() else type(error).__name__
        raise CheckpointError(f"checkpoint {path} is truncated or corrupt: {reason}") from error
    if not isinstance(parts, dict) or parts.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"checkpoint {path} is not a td3x checkpoint of format {FORMAT_VERSION}")
    return parts
