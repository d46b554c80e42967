"""The envs (td3x.algo.envs): each env's own action half range and the noise scale of each unit."""

from __future__ import annotations

import pytest

from td3x.algo.envs import env_spec, make_env
from td3x.config.enums import NoiseUnits
from td3x.config.schema import EnvConfig


def test_env_spec_knows_the_env_s_own_action_half_range() -> None:
    pendulum, hopper = (env_spec(make_env(EnvConfig(id=i))) for i in ("InvertedPendulum-v5", "Hopper-v5"))
    assert pendulum.action_half_range == (3.0,) and hopper.action_half_range == (1.0, 1.0, 1.0)
    assert pendulum.noise_scale(NoiseUnits.absolute).tolist() == pytest.approx([1 / 3])
    assert pendulum.noise_scale(NoiseUnits.normalized).tolist() == [1.0]
    assert hopper.noise_scale(NoiseUnits.absolute).tolist() == [1.0, 1.0, 1.0]
