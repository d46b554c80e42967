"""td3x: TD3 (Fujimoto, van Hoof & Meger, ICML 2018) and its ablations, behind a typed Hydra config.

From Python: ``td3x.compose(overrides)`` gives a checked config, ``td3x.train(config, run_dir)`` trains it,
``td3x.load(path)`` returns the trained :class:`td3x.Policy`, whose ``predict(obs)`` acts in the env's units.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers; at run time each name is imported on first use (below)
    from td3x.algo.replay_buffer import ReplayBuffer
    from td3x.algo.td3 import TD3
    from td3x.api import Policy, compose, load, train
    from td3x.config.schema import TrainConfig
    from td3x.training.run import run

__version__ = "0.1.0"
__all__ = ["TD3", "Policy", "ReplayBuffer", "TrainConfig", "__version__", "compose", "load", "run", "train"]

# every public name is imported on first use: `import td3x` (and `td3x.__version__`) loads neither torch nor Hydra
_LAZY = {
    "TD3": "td3x.algo.td3",
    "ReplayBuffer": "td3x.algo.replay_buffer",
    "TrainConfig": "td3x.config.schema",
    "run": "td3x.training.run",
    "load": "td3x.api",
    "Policy": "td3x.api",
    "compose": "td3x.api",
    "train": "td3x.api",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'td3x' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
