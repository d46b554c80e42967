"""Evaluation start states (td3x.rundir.trained_run, the eval_seed rule): each training seed has its own, run.eval_seed
overrides the rule for every seed of a process, and each seed of a K-seeds run is evaluated, and re-scored by
td3x-eval, from its own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from helpers.runs import TINY_NETWORKS

from td3x.config.schema import EVAL_SEED_BASE, EVAL_SEED_STRIDE, LoggingConfig, RunConfig, TrainConfig
from td3x.rundir import checkpoint
from td3x.rundir.layout import CHECKPOINT_FILE
from td3x.rundir.trained_run import evaluate_run, load_run
from td3x.training.per_seed import seed_configs
from td3x.training.run import run

MakeConfig = Callable[..., TrainConfig]

# two evaluation episodes, both re-scored by td3x-eval; a buffer of 5000 transitions (the run stores 150), not a million
RUN = (*TINY_NETWORKS, "run.eval_episodes=2", "agent.buffer_size=5000")


def plain_config(seed: int, **run_values: int) -> TrainConfig:
    return TrainConfig(seed=seed, run=RunConfig(**run_values), logging=LoggingConfig(wandb_mode="disabled"))


# ---------------------------------------------------------------------- evaluation start states
def test_each_training_seed_has_its_own_evaluation_start_states() -> None:
    """Seeds 0..9999 with up to 1000 episodes each: episode i of seed s starts from reset(seed=first_s + i). The
    sets are intervals [first_s, first_s + 999], so they are disjoint when the firsts lie 1000 or more apart; and
    all lie above 9999, so none is a training reset seed (the training env is reset once, with seed s)."""
    firsts = np.array([plain_config(seed).eval_seed for seed in range(10_000)])
    assert (firsts == EVAL_SEED_BASE + EVAL_SEED_STRIDE * np.arange(10_000)).all()  # the documented rule
    assert EVAL_SEED_STRIDE >= 1000 and (np.diff(firsts) >= 1000).all()
    assert firsts.min() > 9_999


def test_run_eval_seed_overrides_the_rule_for_every_seed_of_a_process() -> None:
    assert [c.eval_seed for c in seed_configs(plain_config(3, eval_seed=7, num_seeds=3))] == [7, 7, 7]
    assert [c.eval_seed for c in seed_configs(plain_config(3, num_seeds=2))] == [1_003_000, 1_004_000]


def test_k_seeds_evaluate_from_their_own_start_states(make_config: MakeConfig, tmp_path: Path) -> None:
    """Each seed of a K-seeds run is evaluated from its own start states, re-scored the same by td3x-eval's default,
    and its training env was reset with its own seed, outside every evaluation set."""
    run(make_config(*RUN, "run.total_steps=150", "run.num_seeds=2", "env.random_steps=150", "seed=4"), tmp_path)
    process = checkpoint.load(tmp_path / CHECKPOINT_FILE)
    assert [seed["tape"]["reset_seed"] for seed in process["seeds"]] == [4, 5]  # still in their first episode
    for seed in (4, 5):
        trained = load_run(tmp_path / f"seed_{seed}")
        assert trained.config.eval_seed == 1_000_000 + 1000 * seed
        rows = (tmp_path / f"seed_{seed}" / "eval.csv").read_text().splitlines()
        header, last = rows[0].split(","), rows[-1].split(",")
        logged = [float(last[header.index(f"return_{i}")]) for i in range(2)]
        assert evaluate_run(trained, 2, trained.config.eval_seed).returns.tolist() == pytest.approx(logged, rel=1e-6)
