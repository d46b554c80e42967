"""Hand-written run dirs as td3x.train writes them, with learning curves the report tests compute by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

REPS = 50  # bootstrap replications: enough to exercise the code, fast


EVAL_EVERY = 100


N_EVALS = 12  # more than 10, so the last-10 mean differs from the mean of the whole curve


# ---------------------------------------------------------------------------------------------------- run dirs
def curve(base: float, seed: int, n: int = N_EVALS) -> np.ndarray:
    """A learning curve that peaks inside the run (k = 6), offset by seed."""
    k = np.arange(n)
    return base + 10.0 * seed + 50.0 * k - 4.0 * k**2


def write_run(
    path: Path,
    env_id: str,
    paper_row: str,
    seed: int,
    returns: np.ndarray,
    status: str = "complete",
    total_steps: int | None = None,
    eval_every: int = EVAL_EVERY,
    extra: dict[str, np.ndarray] | None = None,
    agent: dict[str, Any] | None = None,
) -> Path:
    """A run dir as td3x.train writes it: config.yaml, eval.csv, summary.json."""
    path.mkdir(parents=True)
    steps = eval_every * np.arange(len(returns))
    config = {
        "env": {"id": env_id, "kwargs": {}, "random_steps": 1000 if env_id != "Pendulum-v1" else 500},
        "agent": {"tau": 0.005, "hidden_sizes": [16, 16], **(agent or {})},
        "run": {"total_steps": int(steps[-1]) if total_steps is None else total_steps, "eval_every": eval_every},
        "logging": {"wandb_mode": "disabled", "project": "td3x", "group": str(path.parent)},
        "seed": seed,
        "paper_row": paper_row,
        "choices": {"env": env_id.lower(), "ablation": paper_row},
    }
    (path / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    pd.DataFrame({"step": steps, "return_mean": returns, "return_std": 0.0, **(extra or {})}).to_csv(
        path / "eval.csv", index=False
    )
    summary = {
        "status": status,
        "failure": "TrainingError: non-finite critic_loss" if status == "failed" else None,
        "steps": int(steps[-1]),
        "final_return": float(returns[-1]),
        "last10_return": float(np.mean(returns[-10:])),
        "wall_time_s": 1.0,
    }
    (path / "summary.json").write_text(json.dumps(summary))
    return path
