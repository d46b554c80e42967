"""A tiny Pendulum run trained in-process."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from td3x.config.schema import TrainConfig
from td3x.training.run import run

TINY = (
    "run.total_steps=600",
    "run.eval_every=300",
    "run.eval_episodes=2",
    "env.random_steps=300",
    "agent.hidden_sizes=[16,16]",
    "agent.batch_size=32",
)

# a td3x command line's smallest real run: Pendulum, 300 env steps, two evaluations, W&B off
TINY_COMMAND_LINE = (
    "env=pendulum",
    "run.total_steps=300",
    "env.random_steps=100",
    "run.eval_every=150",
    "run.eval_episodes=1",
    "logging.wandb_mode=disabled",
)


def train_tiny(make_config: Callable[..., TrainConfig], run_dir: Path, *overrides: str) -> Path:
    run(make_config(*TINY, *overrides), run_dir)
    return run_dir
