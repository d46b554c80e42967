"""One seed drives everything, through explicit generators wherever td3x draws random numbers itself; each source
can also be seeded on its own (``seeds.*``), its generator then being the one that seed would have."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

TorchGenerator = torch.Generator  # the field named ``torch`` below hides the module inside the class


@dataclass
class Generators:
    """A generator per consumer, so adding draws in one place never shifts the numbers of another."""

    actions: np.random.Generator  # uniform actions of the random warm-up
    noise: np.random.Generator  # exploration noise
    replay: np.random.Generator  # replay sampling
    torch: torch.Generator  # target policy smoothing noise (on the agent's device)
    init: TorchGenerator  # the networks' initial weights (on the CPU, so a seed starts alike on every device)

    def state_dict(self) -> dict[str, Any]:
        return {
            "actions": self.actions.bit_generator.state,
            "noise": self.noise.bit_generator.state,
            "replay": self.replay.bit_generator.state,
            "torch": self.torch.get_state(),
            "init": self.init.get_state(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.actions.bit_generator.state = state["actions"]
        self.noise.bit_generator.state = state["noise"]
        self.replay.bit_generator.state = state["replay"]
        self.torch.set_state(state["torch"])
        self.init.set_state(state["init"])


def seed_everything(seed: int, device: torch.device, sources: Mapping[str, int] | None = None) -> Generators:
    """Seed the global RNGs (libraries) with ``seed`` and derive the seed's independent generators (``sources``:
    see :func:`generators_of`).

    Env resets are seeded separately: the training env once with ``reset(seed=...)`` (its source's seed),
    evaluation episodes with ``reset(seed=eval_seed + i)``.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return generators_of(seed, device, sources)


# each generator, the source of randomness it serves (td3x.config.schema.SEED_SOURCES), in the order seed's SeedSequence
# spawns their children: child i of SeedSequence(s) is generator i's seed whenever its source's seed is s
GENERATOR_SOURCES = {
    "actions": "warmup",
    "noise": "exploration",
    "replay": "replay",
    "torch": "smoothing",
    "init": "weights",
}


def generators_of(seed: int, device: torch.device, sources: Mapping[str, int] | None = None) -> Generators:
    """The generators of one seed; a process training several seeds holds one set per seed.

    Args:
        seed: the training seed; every source not in ``sources`` follows it.
        device: where the smoothing generator draws.
        sources: a seed per source name (``warmup``, ``exploration``, ``replay``, ``smoothing``, ``weights``):
            that source's generator is the one ``seed=sources[name]`` would have.
    """
    chosen = sources or {}
    actions, noise, replay, torch_seed, init_seed = (
        np.random.SeedSequence(chosen.get(source, seed)).spawn(len(GENERATOR_SOURCES))[i]
        for i, source in enumerate(GENERATOR_SOURCES.values())
    )
    return Generators(
        actions=np.random.default_rng(actions),
        noise=np.random.default_rng(noise),
        replay=np.random.default_rng(replay),
        torch=torch.Generator(device).manual_seed(_torch_seed(torch_seed)),
        init=torch.Generator().manual_seed(_torch_seed(init_seed)),
    )


def _torch_seed(sequence: np.random.SeedSequence) -> int:
    return int(sequence.generate_state(1, dtype=np.uint64)[0]) >> 1


def global_rng_state() -> dict[str, Any]:
    """The global python/numpy/torch RNG states, for checkpoints."""
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def restore_global_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
