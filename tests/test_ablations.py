"""Every Table 2 row trains through the one agent; td3x-sweep lists a multirun; table2_smoke runs end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml

from td3x.config import CONF_DIR, TrainConfig
from td3x.run_dir import seed_run_dirs
from td3x.sweep import list_jobs
from td3x.training import run

ROW_OPTIONS = sorted(path.stem for path in (CONF_DIR / "ablation").glob("*.yaml"))


@pytest.mark.parametrize("option", ROW_OPTIONS)
def test_every_row_trains_on_hopper(option: str, make_config: Callable[..., TrainConfig], tmp_path: Path) -> None:
    config = make_config(
        "env=hopper",
        f"ablation={option}",
        "agent.hidden_sizes=[32,32]",
        "run.total_steps=500",
        "env.random_steps=200",
        "run.eval_every=500",
        "run.eval_episodes=1",
        "run.log_every=500",
    )
    summary = run(config, tmp_path)
    assert summary["status"] == "complete"
    assert summary["updates"] == 500 - max(200, config.agent.batch_size)
    metrics = json.loads((tmp_path / "metrics.jsonl").read_text().splitlines()[-1])
    assert np.isfinite(metrics["critic_loss"]) and np.isfinite(metrics["actor_loss"])
    assert ("q2_mean" in metrics) == (config.agent.n_critics == 2)


@pytest.mark.slow
def test_table2_smoke_runs_every_row_through_the_entrypoint(tmp_path: Path) -> None:
    """The smoke sweep shrunk to one env and 32-32 networks: every row's job through the real multirun (each
    row's learning is checked by test_every_row_trains_on_hopper; table2's 44 jobs of 440 runs by test_launchers)."""
    shrink = ("env=hopper", "agent.hidden_sizes=[32,32]", f"hydra.sweep.dir={tmp_path}")  # the command line wins
    listed = list_jobs(["+experiment=table2_smoke", *shrink])
    environment = {key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}
    result = subprocess.run(
        [sys.executable, "-m", "td3x.entrypoint", "+experiment=table2_smoke", *shrink],
        capture_output=True,
        text=True,
        timeout=1500,
        env={**environment, "WANDB_MODE": "disabled"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    run_dirs = {path.parent for path in tmp_path.rglob("summary.json")}
    # td3x-sweep list names the dirs Hydra really uses (a job of K stacked seeds: one dir per seed below its own)
    assert run_dirs == {path for job in listed for path in seed_run_dirs(job.run_dir, job.seed, job.num_seeds)}
    rows = set()
    for run_dir in run_dirs:
        assert json.loads((run_dir / "summary.json").read_text())["status"] == "complete"
        config = yaml.safe_load((run_dir / "config.yaml").read_text())
        assert config["agent"]["hidden_sizes"] == [32, 32] and config["env"]["id"] == "Hopper-v5"
        rows.add(config["paper_row"])
    assert len(run_dirs) == 22 and len(rows) == 11  # 11 rows x 2 seeds
