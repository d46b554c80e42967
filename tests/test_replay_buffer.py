"""The ring buffer: wrap-around, seeded sampling, and an exact state round trip."""

from __future__ import annotations

import numpy as np
import torch

from td3x.replay_buffer import ReplayBuffer


def filled(capacity: int, n: int, seed: int = 0, seeds: int = 1) -> ReplayBuffer:
    """Transition i of seed k has reward i + 1000 k."""
    rngs = [np.random.default_rng(seed + k) for k in range(seeds)]
    buffer = ReplayBuffer(obs_dim=2, action_dim=1, capacity=capacity, rngs=rngs)
    offset = 1000.0 * np.arange(seeds)
    for i in range(n):
        value = i + offset
        buffer.add(
            np.repeat(value[:, None], 2, 1),
            -value[:, None],
            value,
            np.repeat(value[:, None] + 1, 2, 1),
            np.full(seeds, i % 3 == 0),
        )
    return buffer


def test_wraps_around_overwriting_the_oldest() -> None:
    buffer = filled(capacity=5, n=7)
    assert len(buffer) == 5 and buffer.pointer == 2
    assert sorted(buffer.reward[0].tolist()) == [2, 3, 4, 5, 6]  # transitions 0 and 1 were overwritten
    assert buffer.reward[0, 0] == 5 and buffer.reward[0, 1] == 6


def test_sample_is_consistent_and_draws_only_stored_transitions() -> None:
    batch = filled(capacity=10, n=4).sample(64)
    assert batch.obs.shape == (1, 64, 2) and batch.action.shape == (1, 64, 1) and batch.reward.shape == (1, 64)
    assert set(batch.reward.flatten().tolist()) <= {0.0, 1.0, 2.0, 3.0}
    assert torch.equal(batch.next_obs[..., 0], batch.obs[..., 0] + 1)  # each row is one transition
    assert torch.equal(batch.terminated, (batch.reward % 3 == 0).float())


def test_each_seed_samples_its_own_transitions_with_its_own_generator() -> None:
    batch = filled(capacity=10, n=6, seeds=3).sample(32)
    assert batch.reward.shape == (3, 32)
    for k in range(3):
        assert set(batch.reward[k].tolist()) <= {1000.0 * k + i for i in range(6)}
        assert torch.equal(batch.next_obs[k, :, 0], batch.obs[k, :, 0] + 1)
    alone = filled(capacity=10, n=6, seed=1).sample(32)  # seed 1's generator alone draws the same indices
    assert torch.equal(batch.reward[1] - 1000.0, alone.reward[0])
    state = filled(capacity=10, n=6, seeds=3).state_dict(seed_index=2)
    assert state["reward"].shape == (1, 6) and state["reward"][0, 0] == 2000.0 and len(state["rngs"]) == 1


def test_sampling_is_reproducible_from_the_seed() -> None:
    first, second, other = (
        filled(10, 10, seed=1).sample(32),
        filled(10, 10, seed=1).sample(32),
        filled(10, 10, 2).sample(32),
    )
    assert torch.equal(first.reward, second.reward)
    assert not torch.equal(first.reward, other.reward)


def test_state_dict_round_trip_after_wrap_continues_identically() -> None:
    original = filled(capacity=5, n=8)
    restored = ReplayBuffer(obs_dim=2, action_dim=1, capacity=5, rngs=[np.random.default_rng(99)])
    restored.load_state_dict(original.state_dict())
    assert (restored.pointer, len(restored)) == (original.pointer, len(original))
    for buffer in (original, restored):
        buffer.add(np.zeros((1, 2)), np.zeros((1, 1)), np.full(1, 100.0), np.zeros((1, 2)), np.zeros(1))
    assert np.array_equal(original.reward, restored.reward)
    assert torch.equal(original.sample(16).reward, restored.sample(16).reward)
