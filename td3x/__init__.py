"""td3x: TD3 (Fujimoto, van Hoof & Meger, ICML 2018) and its ablations, behind a typed Hydra config."""

from typing import Any

from td3x.config import TrainConfig
from td3x.replay_buffer import ReplayBuffer
from td3x.td3 import TD3

__version__ = "0.1.0"
__all__ = ["TD3", "ReplayBuffer", "TrainConfig", "__version__", "run"]


def __getattr__(name: str) -> Any:
    # td3x.run is imported on first use, so `python -m td3x.train` does not find td3x.train already imported
    if name == "run":
        from td3x.train import run

        return run
    raise AttributeError(f"module 'td3x' has no attribute {name!r}")
