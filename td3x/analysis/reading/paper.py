"""The paper's published numbers and the authors' TD3 learning curves (packaged in ``td3x/data``), with the band
the report draws around them (their mean ± 2 std).

Gymnasium ids are matched to the paper's gym ``-v1`` columns by name (``Hopper-v5`` → ``Hopper-v1``): the
tasks share names, though not dynamics, so the paper's number is shown beside ours, never mixed into it.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from td3x.analysis.stats.metrics import Band

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
CURVES_DIR = DATA_DIR / "sfujim_learning_curves"
PAPER_STEPS = 1_000_000  # each run of Tables 1 and 2: "10 trials of 1 million time steps"
AUTHORS_EVAL_EVERY = 5000  # entry k of an authors' curve was taken after about 5000·k env steps
TD3_ROW = "TD3"
AUTHORS_SPREAD = 2.0  # the authors' band: their mean ± this many population stds across their seeds

# Table 1 has no ablation rows, but two of its columns are rows of Table 2 (PAPER.md §4.2: "Our DDPG" is AHE)
TABLE1_COLUMN_OF_ROW = {"TD3": "TD3", "DDPG": "DDPG", "AHE": "Our DDPG"}


@functools.cache
def paper_tables() -> dict[str, Any]:
    """Tables 1 and 2 of the paper, as typed in ``td3x/data/paper_tables.json``."""
    tables: dict[str, Any] = json.loads((DATA_DIR / "paper_tables.json").read_text())
    return tables


def env_name(env_id: str) -> str:
    """The id without its version suffix: ``Walker2d-v5`` → ``Walker2d``."""
    return re.sub(r"-v\d+$", "", env_id)


def paper_env(env_id: str) -> str | None:
    """The paper's id for the task named like ``env_id`` (``Hopper-v5`` → ``Hopper-v1``), or None."""
    matches = [paper_id for paper_id in paper_tables()["table1"]["envs"] if env_name(paper_id) == env_name(env_id)]
    return matches[0] if matches else None


def table2_rows() -> list[str]:
    """Table 2's row names, in the paper's order."""
    return list(paper_tables()["table2"]["rows"])


def table2_score(paper_row: str, env_id: str) -> float | None:
    """Table 2's number for a row and env (mean over seeds of the last-10 mean), or None where it has none.

    Args:
        paper_row: a Table 2 row name, e.g. ``TD3 - CDQ``.
        env_id: a Gymnasium id; matched to the paper's column by name.
    """
    table = paper_tables()["table2"]
    column = paper_env(env_id)
    if paper_row not in table["rows"] or column not in table["envs"]:
        return None
    return float(table["rows"][paper_row][table["envs"].index(column)])


def table1_score(paper_row: str, env_id: str) -> tuple[float, float | None] | None:
    """Table 1's max average return (and its std, published for TD3 only) for a row and env, or None.

    Args:
        paper_row: a Table 2 row name; TD3, DDPG and AHE (= "Our DDPG") have Table 1 columns.
        env_id: a Gymnasium id; matched to the paper's column by name.
    """
    column = paper_env(env_id)
    entry = paper_tables()["table1"].get(TABLE1_COLUMN_OF_ROW.get(paper_row, ""), {}).get(column or "")
    if entry is None:
        return None
    if isinstance(entry, list):
        return float(entry[0]), float(entry[1])
    return float(entry), None


def authors_curves(env_id: str) -> np.ndarray | None:
    """The authors' published TD3 curves for the task named like ``env_id``: shape (10 seeds, 201), or None."""
    column = paper_env(env_id)
    files = sorted(CURVES_DIR.glob(f"*/TD3_{column}_*.npy"), key=lambda path: int(path.stem.rsplit("_", 1)[1]))
    return None if column is None or not files else np.stack([np.load(path) for path in files])


def authors_steps(n_evaluations: int) -> np.ndarray:
    """The env steps of the authors' evaluations 0..n-1 (0, 5000, ..., 1M for their 201 entries)."""
    return AUTHORS_EVAL_EVERY * np.arange(n_evaluations)


def authors_band(env_id: str) -> Band | None:
    """The authors' TD3 curves of the task named like ``env_id`` as their 10-seed mean ± 2 std, or None."""
    curves = authors_curves(env_id)
    return None if curves is None else spread_band(curves)


def spread_band(curves: np.ndarray) -> Band:
    """Curves of shape (seeds, evaluations) at the authors' steps as their mean ± ``AUTHORS_SPREAD`` population
    stds."""
    mean, std = curves.mean(axis=0), curves.std(axis=0)
    return Band(authors_steps(curves.shape[1]), mean, mean - AUTHORS_SPREAD * std, mean + AUTHORS_SPREAD * std)
