"""One seed drives everything, through explicit generators wherever td3x draws random numbers itself; each source
can also be seeded on its own (``seeds.*``), its generator then being the one that seed would have."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch


@dataclass
class Generators:
    """A generator per source of randomness, named as the config's ``seeds.*`` names them, so adding draws in one
    place never shifts the numbers of another."""

    warmup: np.random.Generator  # uniform actions of the random warm-up
    exploration: np.random.Generator  # exploration noise
    replay: np.random.Generator  # replay sampling
    smoothing: torch.Generator  # target policy smoothing noise ε (on the agent's device)
    weights: torch.Generator  # the networks' initial weights (on the CPU, so a seed starts alike on every device)

    def state_dict(self) -> dict[str, Any]:
        return {
            CHECKPOINT_NAMES["warmup"]: self.warmup.bit_generator.state,
            CHECKPOINT_NAMES["exploration"]: self.exploration.bit_generator.state,
            CHECKPOINT_NAMES["replay"]: self.replay.bit_generator.state,
            CHECKPOINT_NAMES["smoothing"]: self.smoothing.get_state(),
            CHECKPOINT_NAMES["weights"]: self.weights.get_state(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.warmup.bit_generator.state = state[CHECKPOINT_NAMES["warmup"]]
        self.exploration.bit_generator.state = state[CHECKPOINT_NAMES["exploration"]]
        self.replay.bit_generator.state = state[CHECKPOINT_NAMES["replay"]]
        restore_generator(self.smoothing, state[CHECKPOINT_NAMES["smoothing"]])
        self.weights.set_state(state[CHECKPOINT_NAMES["weights"]])


def restore_generator(generator: torch.Generator, saved: torch.Tensor) -> None:
    """Continue ``generator`` from ``saved``, its state when the checkpoint was written. A state of another device's
    generator (a run trained on a GPU resumed on the CPU, or the reverse) cannot continue there: each device has its
    own generator (the CPU's a Mersenne Twister, 5056 bytes of state; CUDA's Philox, a seed and an offset, 16 bytes).
    The generator then starts from a seed drawn from that state, so that one checkpoint resumes to the same numbers
    every time; they are not those the other device would have drawn."""
    if saved.numel() == generator.get_state().numel():
        generator.set_state(saved)
    else:
        digest = hashlib.sha256(saved.numpy().tobytes()).digest()
        generator.manual_seed(int.from_bytes(digest[:8], "little"))


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


# the sources in the order a seed's SeedSequence spawns their children: child i of SeedSequence(s) is source i's
# generator's seed whenever its source's seed is s (the order fixes every run's numbers: never reorder)
SPAWN_ORDER = ("warmup", "exploration", "replay", "smoothing", "weights")
# the name each generator's state has in a checkpoint (a run-dir file's fields stay as checkpoints wrote them)
CHECKPOINT_NAMES = {
    "warmup": "actions",
    "exploration": "noise",
    "replay": "replay",
    "smoothing": "torch",
    "weights": "init",
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
    warmup, exploration, replay, smoothing, weights = (
        np.random.SeedSequence(chosen.get(source, seed)).spawn(len(SPAWN_ORDER))[i]
        for i, source in enumerate(SPAWN_ORDER)
    )
    return Generators(
        warmup=np.random.default_rng(warmup),
        exploration=np.random.default_rng(exploration),
        replay=np.random.default_rng(replay),
        smoothing=torch.Generator(device).manual_seed(_torch_seed(smoothing)),
        weights=torch.Generator().manual_seed(_torch_seed(weights)),
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
