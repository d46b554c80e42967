"""The ring buffer: wrap-around, seeded sampling, and an exact state round trip."""

from __future__ import annotations

import numpy as np
import torch

from td3x.replay_buffer import ReplayBuffer


def filled(capacity: int, n: int, seed: int = 0) -> ReplayBuffer:
    buffer = ReplayBuffer(obs_dim=2, action_dim=1, capacity=capacity, rng=np.random.default_rng(seed))
    for i in range(n):
        buffer.add(np.full(2, i), np.full(1, -i), float(i), np.full(2, i + 1), terminated=i % 3 == 0)
    return buffer


def test_wraps_around_overwriting_the_oldest() -> None:
    buffer = filled(capacity=5, n=7)
    assert len(buffer) == 5 and buffer.pointer == 2
    assert sorted(buffer.reward.tolist()) == [2, 3, 4, 5, 6]  # transitions 0 and 1 were overwritten
    assert buffer.reward[0] == 5 and buffer.reward[1] == 6


def test_sample_is_consistent_and_draws_only_stored_transitions() -> None:
    batch = filled(capacity=10, n=4).sample(64)
    assert batch.obs.shape == (64, 2) and batch.action.shape == (64, 1) and batch.reward.shape == (64,)
    assert set(batch.reward.tolist()) <= {0.0, 1.0, 2.0, 3.0}
    assert torch.equal(batch.next_obs[:, 0], batch.obs[:, 0] + 1)  # each row is one transition
    assert torch.equal(batch.terminated, (batch.reward % 3 == 0).float())


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
    restored = ReplayBuffer(obs_dim=2, action_dim=1, capacity=5, rng=np.random.default_rng(99))
    restored.load_state_dict(original.state_dict())
    assert (restored.pointer, len(restored)) == (original.pointer, len(original))
    for buffer in (original, restored):
        buffer.add(np.zeros(2), np.zeros(1), 100.0, np.zeros(2), terminated=False)
    assert np.array_equal(original.reward, restored.reward)
    assert torch.equal(original.sample(16).reward, restored.sample(16).reward)
