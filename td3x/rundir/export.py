"""The trained actor as one ONNX file that runs with onnxruntime and numpy alone, no torch, no td3x.

The graph is the whole deployed policy, raw observation in, action in the env's own units out:
observation normalisation with the frozen training statistics (``env.normalize_obs``), the acting
actor π_φ (member 0), and the rescaling from [-1, 1] to the env's action bounds that ``make_env``'s
wrapper does in training. Input ``obs`` (batch, obs_dim) float32, output ``action`` (batch, action_dim)
float32; the batch size is free.

Written with ``torch.onnx.export(..., dynamo=True)`` (``torch.jit`` is deprecated); that needs the
``export`` extra (onnx, onnxscript; onnxruntime checks the file).
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import json
import logging
import os
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from torch import Tensor, nn

from td3x.algo.envs import env_spec
from td3x.algo.td3 import TD3
from td3x.config.extras import install_command

ONNX_FILE = "policy.onnx"
INPUT_NAME, OUTPUT_NAME = "obs", "action"
EXPORT_MODULES = ("onnx", "onnxscript", "onnxruntime")
# torch's exporter logs one warning per torchvision operator it cannot register when torchvision is absent
EXPORTER_LOGGER = "torch.onnx._internal.exporter._registration"


class ExportError(RuntimeError):
    """The actor could not be exported, or the ONNX file does not compute what the actor does."""


class DeployedPolicy(nn.Module):
    """π(s) in the env's units: normalise s, run the acting actor, rescale [-1, 1] to [low, high].

    Args:
        agent: the trained agent (its modules are copied to the CPU; the agent is not changed).
        obs_dim: the length of a (flattened) observation.
        action_low: the env's lower action bounds (before td3x's rescaling wrapper).
        action_high: the env's upper action bounds.
    """

    low: Tensor
    high: Tensor

    def __init__(self, agent: TD3, obs_dim: int, action_low: np.ndarray, action_high: np.ndarray) -> None:
        super().__init__()
        self.obs_dim = obs_dim
        self.obs_normalizer = copy.deepcopy(agent.obs_normalizer).cpu()
        self.actor = copy.deepcopy(agent.actor).cpu()
        self.register_buffer("low", torch.as_tensor(action_low, dtype=torch.float32))
        self.register_buffer("high", torch.as_tensor(action_high, dtype=torch.float32))
        self.eval().requires_grad_(False)

    def forward(self, obs: Tensor) -> Tensor:
        # one seed; its actor 0 acts (DQ-AC trains two actors)
        action = self.actor(self.obs_normalizer(obs.unsqueeze(0)))[0, 0]
        return self.low + (action + 1.0) * 0.5 * (self.high - self.low)  # RescaleAction's affine map


def check_export_support() -> None:
    """Raise :class:`ExportError` naming what to install when ONNX export cannot run here."""
    missing = [name for name in EXPORT_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise ExportError(f"ONNX export needs {', '.join(missing)}: {install_command('export')}")


def deployed_policy(agent: TD3, env: gym.Env) -> DeployedPolicy:
    """The agent's policy with ``env``'s real action bounds (``env.unwrapped``: before the rescaling wrapper)."""
    space = env.unwrapped.action_space
    assert isinstance(space, gym.spaces.Box), "td3x envs have Box action spaces (check_env)"
    return DeployedPolicy(agent, env_spec(env).obs_dim, space.low, space.high)


@contextlib.contextmanager
def _quiet_exporter() -> Iterator[None]:
    """Silence the exporter's notices that do not concern this graph (torchvision ops, torch's own deprecations)."""
    logger = logging.getLogger(EXPORTER_LOGGER)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        logger.setLevel(level)


def export_onnx(policy: DeployedPolicy, path: Path, metadata: Mapping[str, object]) -> None:
    """Write ``policy`` to ``path`` as ONNX with a free batch dimension.

    Args:
        policy: from :func:`deployed_policy`.
        path: the ``.onnx`` file to write.
        metadata: stored in the model's metadata (values as JSON), e.g. the env id and the checkpoint step.
    """
    check_export_support()
    example = torch.zeros(2, policy.obs_dim)  # a batch of 2: torch.export specialises a batch of 1 to a constant
    try:
        with _quiet_exporter():
            program = torch.onnx.export(
                policy,
                (example,),
                dynamo=True,
                input_names=[INPUT_NAME],
                output_names=[OUTPUT_NAME],
                dynamic_shapes={"obs": {0: torch.export.Dim("batch")}},
                verbose=False,
            )
    except Exception as error:
        raise ExportError(f"torch.onnx.export failed ({type(error).__name__}: {error})") from error
    assert program is not None, "dynamo=True always returns an ONNXProgram"
    program.model.metadata_props.update({key: json.dumps(value) for key, value in metadata.items()})
    program.save(str(path))


def check_onnx(path: Path, policy: DeployedPolicy, observations: np.ndarray, atol: float = 1e-5) -> float:
    """Run ``path`` with onnxruntime on ``observations`` and compare with ``policy``; returns the max abs error.

    Raises:
        ExportError: when an action differs by more than ``atol`` (scaled by the action range).
    """
    import onnxruntime

    obs = observations.astype(np.float32)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    onnx_actions = session.run([OUTPUT_NAME], {INPUT_NAME: obs})[0]
    with torch.no_grad():
        torch_actions = policy(torch.from_numpy(obs)).numpy()
    error = float(np.max(np.abs(onnx_actions - torch_actions)))
    scale = float(torch.max(policy.high - policy.low))
    if not error <= atol * max(scale, 1.0):
        raise ExportError(f"the ONNX graph differs from the torch policy by {error:.3g} (more than {atol:g})")
    return error


def export_checked(
    policy: DeployedPolicy, path: Path, metadata: Mapping[str, object], observations: np.ndarray
) -> float:
    """:func:`export_onnx` then :func:`check_onnx` on ``observations``; returns the max abs error.

    The file is written beside ``path`` under a temporary name and renamed to ``path`` only once it checks: a failed
    or interrupted export leaves no file behind, and a previous ``path`` stays as it was.

    Raises:
        ExportError: the export failed, or its graph does not compute what ``policy`` does (``path`` not written).
    """
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        export_onnx(policy, tmp, metadata)
        error = check_onnx(tmp, policy, observations)
        os.replace(tmp, path)
    except ExportError as failure:
        raise ExportError(f"{failure}; {path} not written") from failure
    finally:
        tmp.unlink(missing_ok=True)
    return error


def sample_observations(env: gym.Env, n: int, seed: int) -> np.ndarray:
    """``n`` observations drawn from the env's observation space (seeded), shape (n, obs_dim), float32."""
    space = env.observation_space
    space.seed(seed)
    return np.stack([np.asarray(space.sample(), dtype=np.float32).reshape(-1) for _ in range(n)])
