"""The function types that modules hand each other: a policy, the K seeds' batched policy, a step hook, a stop
check, an evaluation callback.

Typing only (numpy and the standard library): the agent, the rollouts and the video recorder share them without
importing one another. (Not ``types.py``: run as a script, ``python td3x/commands/train.py`` puts ``td3x/`` first on
``sys.path``, where a ``types.py`` would stand in for the standard library's.)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Policy = Callable[[np.ndarray], np.ndarray]  # observation (obs_dim,) -> action (action_dim,)
BatchPolicy = Callable[[np.ndarray], np.ndarray]  # (K, B, obs_dim) -> (K, B, action_dim): B per seed
StepHook = Callable[[], None]  # called after each step of an evaluation (a video recorder renders its frame)
StopCheck = Callable[[], bool]  # asked before each step of an evaluation: True cuts it short (a stop signal came)
# called after each evaluation with the env step and each seed's mean evaluation return, its eval.csv row written;
# what it raises stops the run as any error does (``td3x-tune`` prunes a trial this way)
EvaluationCallback = Callable[[int, list[float]], None]
