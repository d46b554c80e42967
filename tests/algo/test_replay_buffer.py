"""The ring buffer: wrap-around, seeded sampling, and an exact state round trip."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from td3x.algo.replay_buffer import ReplayBuffer


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
    assert set(batch.reward.flatten().tolist()) == {0.0, 1.0, 2.0, 3.0}  # every stored one, the first included
    assert torch.equal(batch.next_obs[..., 0], batch.obs[..., 0] + 1)  # each row is one transition
    assert torch.equal(batch.obs[..., 1], batch.obs[..., 0]) and torch.equal(batch.action[..., 0], -batch.reward)
    assert torch.equal(batch.terminated, (batch.reward % 3 == 0).float())
    assert all(field.dtype == torch.float32 for field in vars(batch).values())  # what the networks take


def test_batches_go_to_the_buffers_device() -> None:
    """The "meta" device (shapes without data) stands in for a GPU: the batch must land where the buffer says."""
    buffer = ReplayBuffer(obs_dim=2, action_dim=1, capacity=4, rngs=[np.random.default_rng(0)], device="meta")
    buffer.add(np.zeros((1, 2)), np.zeros((1, 1)), np.zeros(1), np.zeros((1, 2)), np.zeros(1))
    assert buffer.sample(8).obs.device.type == "meta"


def test_each_seed_samples_its_own_transitions_with_its_own_generator() -> None:
    batch = filled(capacity=10, n=6, seeds=3).sample(32)
    assert batch.reward.shape == (3, 32)
    for k in range(3):
        assert set(batch.reward[k].tolist()) <= {1000.0 * k + i for i in range(6)}
        assert torch.equal(batch.next_obs[k, :, 0], batch.obs[k, :, 0] + 1)
    alone = filled(capacity=10, n=6, seed=1).sample(32)  # seed 1's generator alone draws the same indices
    assert torch.equal(batch.reward[1] - 1000.0, alone.reward[0])
    for k in range(3):  # a middle seed too: its slice must stop before the next seed's
        state = filled(capacity=10, n=6, seeds=3).state_dict(seed_index=k)
        assert state["reward"].shape == (1, 6) and state["reward"][0, 0] == 1000.0 * k and len(state["rngs"]) == 1


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


def test_a_saved_buffer_that_does_not_fit_is_refused() -> None:
    state = filled(capacity=8, n=8).state_dict()
    smaller = ReplayBuffer(obs_dim=2, action_dim=1, capacity=5, rngs=[np.random.default_rng(0)])
    with pytest.raises(ValueError, match=r"the saved buffer holds 8 transitions, more than agent\.buffer_size=5"):
        smaller.load_state_dict(state)
    two_seeds = ReplayBuffer(obs_dim=2, action_dim=1, capacity=8, rngs=[np.random.default_rng(k) for k in range(2)])
    with pytest.raises(ValueError, match="the saved buffer holds 1 seeds, this run 2"):
        two_seeds.load_state_dict(state)
