"""Exploration noise statistics: Gaussian, its linear decay, Ornstein-Uhlenbeck, none; and its std in the env's
own action units (agent=td3_paper) or in the half range's (td3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from td3x.algo.noise import GaussianNoise, NoNoise, OrnsteinUhlenbeckNoise, make_noise
from td3x.config.enums import NoiseKind
from td3x.config.schema import NoiseConfig, TrainConfig
from td3x.training.loop import Trainer

MakeConfig = Callable[..., TrainConfig]


def test_gaussian_has_the_configured_std_per_dimension() -> None:
    noise = make_noise(NoiseConfig(kind=NoiseKind.gaussian, std=0.1), 3, np.random.default_rng(0))
    samples = np.stack([noise.sample(t) for t in range(20000)])
    assert samples.mean(axis=0) == pytest.approx(np.zeros(3), abs=0.005)
    assert samples.std(axis=0) == pytest.approx(np.full(3, 0.1), rel=0.03)
    assert abs(np.corrcoef(samples[:-1, 0], samples[1:, 0])[0, 1]) < 0.03  # uncorrelated in time


def test_gaussian_std_decays_linearly_then_stays() -> None:
    noise = GaussianNoise(1, std=0.1, rng=np.random.default_rng(0), final_std=0.01, decay_steps=1000)
    assert [noise.current_std(t) for t in (0, 500, 1000, 5000)] == pytest.approx([0.1, 0.055, 0.01, 0.01])


def test_ornstein_uhlenbeck_is_correlated_with_the_stationary_variance_and_resets() -> None:
    theta, sigma, dt = 0.15, 0.2, 0.01
    noise = OrnsteinUhlenbeckNoise(1, std=sigma, theta=theta, dt=dt, rng=np.random.default_rng(0))
    samples = np.array([noise.sample(t)[0] for t in range(400_000)])[50_000:]
    decay = 1 - theta * dt  # x' = decay·x + σ√dt·ξ, so Var = σ²dt / (1 - decay²) and lag-1 correlation = decay
    assert samples.var() == pytest.approx(sigma**2 * dt / (1 - decay**2), rel=0.15)
    assert np.corrcoef(samples[:-1], samples[1:])[0, 1] == pytest.approx(decay, abs=0.002)
    noise.reset()
    assert np.array_equal(noise.state, np.zeros(1))


def test_none_adds_nothing() -> None:
    noise = make_noise(NoiseConfig(kind=NoiseKind.none), 2, np.random.default_rng(0))
    assert np.array_equal(noise.sample(5), np.zeros(2))


@pytest.mark.parametrize("kind", list(NoiseKind))
def test_make_noise_builds_each_kind_from_its_config(kind: NoiseKind) -> None:
    gaussian = kind is NoiseKind.gaussian  # the decay is Gaussian only
    config = NoiseConfig(kind, std=0.3, theta=0.2, dt=0.05, final_std=0.1 if gaussian else None, decay_steps=100)
    noise = make_noise(config, 2, np.random.default_rng(0))
    assert noise.sample(0).shape == (2,)
    if isinstance(noise, GaussianNoise):
        assert (noise.std, noise.final_std, noise.decay_steps, noise.action_dim) == (0.3, 0.1, 100, 2)
    elif isinstance(noise, OrnsteinUhlenbeckNoise):
        assert (noise.std, noise.theta, noise.dt) == (0.3, 0.2, 0.05)
    else:
        assert isinstance(noise, NoNoise) and noise.state_dict() == {}


@pytest.mark.parametrize("kind", list(NoiseKind))
def test_state_round_trip_continues_the_same_samples(kind: NoiseKind) -> None:
    """A checkpoint's noise state: the generator and, for OU, the process value x (mid-episode, x is not 0)."""
    config = NoiseConfig(kind=kind)
    noise = make_noise(config, 2, np.random.default_rng(0))
    for t in range(50):
        noise.sample(t)
    restored = make_noise(config, 2, np.random.default_rng(123))
    restored.load_state_dict(noise.state_dict())
    if isinstance(restored, OrnsteinUhlenbeckNoise):
        assert restored.state.dtype == np.float64 and restored.state.any()
    for t in range(50, 60):
        assert np.array_equal(noise.sample(t), restored.sample(t))


def test_ornstein_uhlenbeck_follows_its_recurrence_step_by_step() -> None:
    """x₀ = 0, x_{t+1} = x_t - θ x_t dt + σ √dt ξ_t with ξ_t ~ N(0, I): each dim its own draw."""
    theta, sigma, dt = 0.15, 0.2, 0.01
    noise = OrnsteinUhlenbeckNoise(2, std=sigma, theta=theta, dt=dt, rng=np.random.default_rng(7))
    draws = np.random.default_rng(7).standard_normal((3, 2))
    x = np.zeros(2)
    for t, xi in enumerate(draws):
        x = x - theta * x * dt + sigma * np.sqrt(dt) * xi
        assert np.allclose(noise.sample(t), x, rtol=1e-12, atol=0)


@pytest.mark.parametrize(("agent", "expected_std"), [("td3_paper", 0.1), ("td3", 0.3)])
def test_exploration_std_on_inverted_pendulum(
    make_config: MakeConfig, tmp_path: Path, agent: str, expected_std: float
) -> None:
    """td3_paper: N(0, 0.1) in the env's own units (±3), as the 2018 code; td3: 0.1 of the half range."""
    config = make_config(f"agent={agent}", "env=inverted_pendulum", "agent.buffer_size=1000")
    trainer = Trainer(config, tmp_path)
    seed = trainer.seeds[0]
    actions = np.array([seed.noisy_action(np.zeros(1, dtype=np.float32), step) for step in range(20_000)])
    trainer.close("complete")
    assert (3.0 * actions).std() == pytest.approx(expected_std, rel=0.03)  # normalised -> the env's units
