"""Run dirs of the pre-registered comparisons (td3x's, SB3's, bf16's, the 1M-step horizon's) with hand-chosen
returns, and a copy of the committed pre-registration file with small numbers, for the registered tests' tests."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from helpers.report_runs import write_run

ROOT = Path(__file__).resolve().parents[2]
PREREGISTRATION = ROOT / "docs" / "results" / "preregistration.yaml"
PEER_STEPS = np.array([0, 5000, 10000, 55000, 100000])  # HalfCheetah's random_steps 10000: 55000 and 100000 count
RANDOM_STEPS = 10000
HORIZON_STEPS = np.array([0, 950000, *range(955000, 1000001, 5000)])  # step 0, one before the window, its 10


def write_registered_run(
    root: Path,
    env_id: str,
    seed: int,
    after: float,
    warmup: float = -1.0,
    paper_row: str = "TD3",
    precision: str | None = None,
    steps: np.ndarray = PEER_STEPS,
    extra: dict[str, float] | None = None,
    status: str = "complete",
    at: dict[int, float] | None = None,
) -> Path:
    """A run of ``env_id`` and ``seed`` (agent td3_paper) whose evaluations return ``warmup`` at and before
    env.random_steps (step 0 included) and ``after`` after it, so its registered statistic is ``after``.

    Args:
        root: the folder the run dir goes below.
        env_id: the env.
        seed: the run's seed.
        after: the return of every evaluation after env.random_steps.
        warmup: the return of the evaluations at or before it.
        paper_row: ``TD3`` (td3x) or ``SB3 TD3`` (scripts/sb3_reference.py's row).
        precision: ``run.precision`` (None: the key is left out, as in configs written before it existed).
        steps: the evaluation steps; the last is ``run.total_steps``.
        extra: eval.csv columns of one value throughout (bias_q1, bias_min_q).
        status: summary.json's status.
        at: returns at some steps instead (step → return).
    """
    label = f"{paper_row.replace(' ', '_')}_{precision or 'fp32'}_{steps[-1]}"
    returns = np.where(steps <= RANDOM_STEPS, warmup, after).astype(np.float64)
    for step, value in (at or {}).items():
        returns[steps == step] = value
    path = write_run(root / env_id / label / f"seed={seed}", env_id, paper_row, seed, returns, status=status)
    config: dict[str, Any] = yaml.safe_load((path / "config.yaml").read_text())
    config["env"]["random_steps"] = RANDOM_STEPS
    config["run"]["total_steps"] = int(steps[-1])
    config["run"]["eval_every"] = 5000
    if precision is not None:
        config["run"]["precision"] = precision
    config["choices"]["agent"] = "td3_paper"
    (path / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    columns = {name: value for name, value in (extra or {}).items()}
    pd.DataFrame({"step": steps, "return_mean": returns, "return_std": 0.0, **columns}).to_csv(
        path / "eval.csv", index=False
    )
    provenance = {"git_commit": hashlib.sha1(label.encode()).hexdigest(), "cpu_capability": "AVX512"}
    (path / "provenance.json").write_text(json.dumps(provenance))
    return path


def small_registration(tmp_path: Path, **changes: Any) -> Path:
    """A copy of the committed pre-registration file with 3 seeds a side everywhere and the bounds given (the
    dotted key → value ``changes``, e.g. ``{"peer.computed.HalfCheetah-v5.bound": 2}``), written in ``tmp_path``."""
    data = copy.deepcopy(yaml.safe_load(PREREGISTRATION.read_text()))
    for env_id in ("HalfCheetah-v5", "Walker2d-v5"):
        data["peer"]["computed"][env_id].update(n_td3x=3, n_sb3=3, mdd_holm_first_step=5.0)
        data["bf16"]["computed"][env_id].update(n_per_side=3)
    data["bf16_fp32_tanh"]["computed"]["Walker2d-v5"].update(n_fp32=3, n_bf16=3)
    data["paper_horizon"]["seeds"] = 3
    for dotted, value in changes.items():
        *keys, last = dotted.split(".")
        node = data
        for key in keys:
            node = node[key]
        node[last] = value
    path = tmp_path / "preregistration.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return path
