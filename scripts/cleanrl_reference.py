"""CleanRL's TD3 (``cleanrl/td3_continuous_action.py``) timed beside td3x, for ``bench_sps.py --cleanrl``.

CleanRL is a set of single-file scripts, not a library: its TD3 runs from a checkout of its repository
(``git clone https://github.com/vwxyzjn/cleanrl``), unmodified, in a subprocess of its own, with the td3x preset's
hyper-parameters as its command-line arguments. Its networks are fixed at 256-256 with one learning rate for both, so
only a preset with those (``td3``, the authors' current one) has a CleanRL partner. Its script prints ``SPS:``
every 100 learning steps; the rate is the steps between the first and the last of those lines over the seconds
between their arrival, so neither the start-up nor the random warm-up is timed. The script imports ``tyro`` and
TensorBoard's writer (the ``bench`` extra installs both) and writes TensorBoard files, kept in a temporary folder.

CleanRL's script is written for Gymnasium 0.29; under Gymnasium 1.x its vector env resets one step after an
episode ends (the step that resets stores a transition of its own), and an episode cut by the time limit stops it.
Neither changes the cost of a step much over these short windows, and no episode of an untrained Hopper lasts
1000 steps, but its learning in them is not TD3's as td3x's and SB3's is: read only its speed.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from td3x.config.schema import TrainConfig

SCRIPT = Path("cleanrl") / "td3_continuous_action.py"
HIDDEN_SIZES = [256, 256]  # CleanRL's Actor and QNetwork, hard-coded
PRINT_EVERY = 100  # the script prints SPS every 100 learning steps
IMPORTS = ("tyro", "tensorboard")  # the script's imports beyond td3x's own dependencies


def checkout_problems(checkout: Path) -> list[str]:
    """Why ``checkout`` cannot run CleanRL's TD3 here, one line each (none: it can)."""
    problems = []
    if not (checkout / SCRIPT).is_file():
        problems.append(f"--cleanrl: {checkout} has no {SCRIPT}; pass a checkout of https://github.com/vwxyzjn/cleanrl")
    missing = [name for name in IMPORTS if importlib.util.find_spec(name) is None]
    if missing:
        problems.append(f"--cleanrl: CleanRL's TD3 imports {' and '.join(missing)}: pip install -e '.[bench]'")
    return problems


def mismatch(config: TrainConfig) -> str | None:
    """Why CleanRL's TD3 cannot run ``config``'s preset (None: it can)."""
    agent = config.agent
    if list(agent.hidden_sizes) != HIDDEN_SIZES:
        return f"its networks are {HIDDEN_SIZES[0]}-{HIDDEN_SIZES[1]}, the preset's {agent.hidden_sizes}"
    if agent.actor_lr != agent.critic_lr:
        return "it has one learning rate, the preset two"
    if agent.n_critics != 2:
        return "it has two critics"
    return None


def arguments(config: TrainConfig, learning_starts: int, steps: int) -> list[str]:
    """The script's command line: the preset's hyper-parameters in [-1, 1] action units (CleanRL scales its noises
    by the action range, 1 on Hopper), its seed, no GPU, and just enough steps for ``steps`` timed ones."""
    agent = config.agent
    values = {
        "env-id": config.env.id,
        "seed": config.seed,
        # the first SPS line comes PRINT_EVERY steps into the learning phase; the last after `steps` more
        "total-timesteps": learning_starts + PRINT_EVERY + steps + 1,
        "learning-starts": learning_starts,
        "learning-rate": agent.actor_lr,
        "buffer-size": agent.buffer_size,
        "batch-size": agent.batch_size,
        "gamma": agent.discount,
        "tau": agent.tau,
        "policy-frequency": agent.policy_delay,
        "policy-noise": agent.target_policy_noise,
        "noise-clip": agent.target_noise_clip,
        "exploration-noise": config.noise.std,
    }
    return [*(item for key, value in values.items() for item in (f"--{key}", str(value))), "--no-cuda"]


def time_cleanrl(config: TrainConfig, steps: int, checkout: Path, learning_starts: int) -> float:
    """Learning-phase env steps per core-second of CleanRL's TD3 on one thread (``steps``: a multiple of 100)."""
    threads = {name: "1" for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}  # torch's intra-op pool, at start-up
    environment = {
        **os.environ,
        **threads,
        "PYTHONPATH": os.pathsep.join([str(checkout), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-u", str(checkout / SCRIPT), *arguments(config, learning_starts, steps)]
    arrivals: list[float] = []
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryFile("w+") as errors:
        with subprocess.Popen(
            command, cwd=folder, env=environment, stdout=subprocess.PIPE, stderr=errors, text=True
        ) as process:
            assert process.stdout is not None
            for line in process.stdout:
                if line.startswith("SPS:"):
                    arrivals.append(time.perf_counter())
        if process.returncode != 0 or len(arrivals) < 2:
            errors.seek(0)
            last = ([line.strip() for line in errors if line.strip()] or ["no error output"])[-1]
            raise SystemExit(f"bench_sps.py: CleanRL's TD3 exited {process.returncode}: {last}")
    return PRINT_EVERY * (len(arrivals) - 1) / (arrivals[-1] - arrivals[0])
