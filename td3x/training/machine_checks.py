"""What this machine can run, checked before anything is created: the env id and action space, CUDA, bf16 and the
replay buffers' memory. Every way into training refuses a config through :func:`refuse_unrunnable`; ``td3x-train``
and ``td3x-sweep`` list a launch's problems through :func:`check_runtime` before its jobs start.

torch loads on first use (as in :meth:`td3x.config.enums.Device.resolve`): ``td3x-sweep status`` and the modules
that import these checks load without it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from td3x.algo import precision
from td3x.algo.envs import check_env, env_spec, make_env
from td3x.config.enums import Precision
from td3x.config.schema import ConfigError, TrainConfig
from td3x.host.provenance import cpu_flags


def check_runtime(config: TrainConfig) -> list[str]:
    """Problems only the installed libraries and the hardware can see: the env id and action space, CUDA, bf16."""
    problems = check_env(config.env)
    if not config.run.device.available():
        problems.append("run.device='cuda' is not allowed: torch sees no CUDA device here; use auto or cpu")
    elif config.run.precision is not Precision.fp32:  # fp32 runs on every device; bf16's check resolves it (torch)
        problems += precision.problems(config.run.precision, config.run.device.resolve(), cpu_flags())
    return problems or buffer_memory_problems(config)


def refuse_unrunnable(config: TrainConfig) -> None:
    """Raise ConfigError, one line a problem, for the config's range checks (again: a field may have been set since
    it was built) and what :func:`check_runtime` finds: every way into training checks this first, and
    ``td3x-tune`` before it creates its study."""
    problems = config.problems() or check_runtime(config)
    if problems:
        raise ConfigError(problems)


def buffer_memory_problems(config: TrainConfig) -> list[str]:
    """Refuse a replay buffer that cannot fit in the memory available now, before anything is allocated."""
    env = make_env(config.env)
    spec = env_spec(env)
    env.close()
    floats_per_transition = 2 * spec.obs_dim + spec.action_dim + 2  # obs, next_obs, action, reward, terminated
    needed = config.run.num_seeds * config.agent.buffer_size * floats_per_transition * np.dtype(np.float32).itemsize
    available = _available_memory_bytes()
    if available is None or needed <= available:
        return []
    return [
        f"agent.buffer_size={config.agent.buffer_size} is not allowed: the replay buffers of "
        f"run.num_seeds={config.run.num_seeds} seed(s) need {needed / 1e9:.1f} GB, more than the "
        f"{available / 1e9:.1f} GB of memory available here"
    ]


def _available_memory_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None  # not Linux: no check
