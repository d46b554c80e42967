"""Shared fixtures: real Hydra composition of conf/, and small real training runs."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from td3x.config.hydra import CONF_DIR, register_configs, to_typed
from td3x.config.schema import TrainConfig

register_configs()

# Tests send SIGINT (Ctrl-C) to td3x, in this process and in the commands it starts. A shell without job control
# starts a background job with SIGINT ignored, and Python then installs no KeyboardInterrupt handler, nor do the
# commands it starts inherit one: give the suite Python's own handling wherever it was started from.
signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def compose_cfg() -> Iterator[Callable[..., DictConfig]]:
    """compose_cfg("env=hopper", ...) -> the DictConfig Hydra composes from conf/train.yaml."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        yield lambda *overrides: compose(config_name="train", overrides=list(overrides))


@pytest.fixture
def make_config(compose_cfg: Callable[..., DictConfig]) -> Callable[..., TrainConfig]:
    """make_config("run.total_steps=300", ...) -> a checked TrainConfig, W&B off unless overridden."""
    return lambda *overrides: to_typed(compose_cfg("logging.wandb_mode=disabled", *overrides))
