"""Helpers of the run tests: a run dir read back for comparisons (its rows without wall-clock columns, its
checkpoint's state), and a stop at a chosen env step by a real signal."""

from __future__ import annotations

import csv
import json
import os
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from td3x.rundir import checkpoint
from td3x.rundir.layout import CHECKPOINT_FILE, is_timing_column
from td3x.training.loop import Trainer


def without_timing(path: Path) -> list[dict[str, Any]]:
    """The rows of ``eval.csv`` or ``metrics.jsonl``, minus the columns that measure time (which never repeat)."""
    if path.suffix == ".csv":
        with path.open() as file:
            rows: list[dict[str, Any]] = list(csv.DictReader(file))
    else:
        rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [{k: v for k, v in row.items() if not is_timing_column(k)} for row in rows]


def same_state(first: Any, second: Any) -> bool:
    """Whether two nested states (dicts, lists, tensors, arrays, numbers) are equal bit for bit."""
    if isinstance(first, dict):
        return (
            isinstance(second, dict)
            and first.keys() == second.keys()
            and all(same_state(first[key], second[key]) for key in first)
        )
    if isinstance(first, list | tuple):
        return len(first) == len(second) and all(same_state(a, b) for a, b in zip(first, second, strict=True))
    if isinstance(first, torch.Tensor):
        return isinstance(second, torch.Tensor) and torch.equal(first, second)
    if isinstance(first, np.ndarray):
        return np.array_equal(first, second)
    return bool(first == second)


def assert_same_run(first: Path, second: Path) -> None:
    """Two run dirs hold the same run: the same evaluations and training rows, and final checkpoints with the
    same agent (networks, targets, both optimisers, the normaliser) and exploration noise, bit for bit."""
    assert without_timing(first / "eval.csv") == without_timing(second / "eval.csv")
    assert without_timing(first / "metrics.jsonl") == without_timing(second / "metrics.jsonl")
    parts = [checkpoint.load(run_dir / CHECKPOINT_FILE) for run_dir in (first, second)]
    assert same_state(parts[0]["agent"], parts[1]["agent"])
    assert same_state([seed["noise"] for seed in parts[0]["seeds"]], [seed["noise"] for seed in parts[1]["seeds"]])


def signal_at(monkeypatch: pytest.MonkeyPatch, step: int, times: int = 1) -> None:
    """Send SIGINT ``times`` times to this process right after env step ``step`` is collected: td3x's handler
    then stops the run after a checkpoint (once) or at once (twice). ``monkeypatch.undo()`` ends it."""
    collect = Trainer._collect

    def collect_then_signal(trainer: Trainer) -> bool:
        episode_over = collect(trainer)
        if trainer.step == step:
            for _ in range(times):
                os.kill(os.getpid(), signal.SIGINT)
        return episode_over

    monkeypatch.setattr(Trainer, "_collect", collect_then_signal)
