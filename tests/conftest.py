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


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under ``-n`` (``--dist loadgroup``) each worker builds the module-scoped fixtures of the tests it runs: the
    tests of a module that need one (a trained sweep, a study) share a worker, so that it is built once. A test
    already in a group keeps it."""
    for item in items:
        fixtures = getattr(item, "_fixtureinfo", None)
        if fixtures is None or item.get_closest_marker("xdist_group"):
            continue
        if any(defs[-1].scope == "module" for defs in fixtures.name2fixturedefs.values()):
            item.add_marker(pytest.mark.xdist_group(f"{item.module.__name__}.module_fixtures"))


@pytest.fixture
def compose_cfg() -> Iterator[Callable[..., DictConfig]]:
    """compose_cfg("env=hopper", ...) -> the DictConfig Hydra composes from conf/train.yaml."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        yield lambda *overrides: compose(config_name="train", overrides=list(overrides))


@pytest.fixture
def make_config(compose_cfg: Callable[..., DictConfig]) -> Callable[..., TrainConfig]:
    """make_config("run.total_steps=300", ...) -> a checked TrainConfig, W&B off unless overridden."""
    return lambda *overrides: to_typed(compose_cfg("logging.wandb_mode=disabled", *overrides))
