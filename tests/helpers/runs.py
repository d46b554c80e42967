"""The tiny training every test that trains composes, defined once; a tiny Pendulum run trained in-process.

td3x's defaults train for hours (256-256 networks, batches of 256, ten evaluation episodes, a budget per env): a
test composes ``TINY_SIZES`` with ``TINY_LENGTH``, or with a length of its own spelled out beside them, and names at
its own site what else it needs and why. A test that evaluates on more episodes composes ``TINY_NETWORKS`` with its
own ``run.eval_episodes``: no key is given twice.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from td3x.config.schema import TrainConfig
from td3x.training.run import run

# what a step costs: tiny networks and batches
TINY_NETWORKS = ("agent.hidden_sizes=[16,16]", "agent.batch_size=32")
# what a step and an evaluation cost: those, and one evaluation episode
TINY_SIZES = (*TINY_NETWORKS, "run.eval_episodes=1")
# how long a run is: 300 env steps of Pendulum, updates from step 100, evaluations at steps 0, 150 and 300
TINY_LENGTH = ("run.total_steps=300", "env.random_steps=100", "run.eval_every=150")
TINY = (*TINY_SIZES, *TINY_LENGTH)
# a td3x command line's smallest real run (make_config turns W&B off itself; a command line has to say so)
TINY_COMMAND_LINE = ("env=pendulum", *TINY, "logging.wandb_mode=disabled")
# a run that a test stops mid-run once it has reached a step (SIGKILL, Ctrl-C, a preemption): twice the tiny networks
# and batches, two evaluation episodes, as these tests' lengths were set for, so that the stop lands before the end
STOPPABLE_SIZES = ("agent.hidden_sizes=[32,32]", "agent.batch_size=64", "run.eval_episodes=2")

# train_tiny's run: 600 steps, updates from step 300, evaluations at steps 0, 300 and 600 on two episodes each (what
# td3x-eval re-scores, one episode at a time too)
TINY_TRAINED = (
    *TINY_NETWORKS,
    "run.eval_episodes=2",
    "run.total_steps=600",
    "env.random_steps=300",
    "run.eval_every=300",
)


def train_tiny(make_config: Callable[..., TrainConfig], run_dir: Path, *overrides: str) -> Path:
    run(make_config(*TINY_TRAINED, *overrides), run_dir)
    return run_dir
