"""The envs (td3x.algo.envs): each env's own action half range, the noise scale of each unit, what check_env refuses
before training, and MuJoCo's warnings in td3x's log (the commands' own: tests/commands/test_sweep.py)."""

from __future__ import annotations

import logging

import pytest

from td3x.algo.envs import MujocoWarnings, check_env, env_spec, make_env
from td3x.config.enums import NoiseUnits
from td3x.config.schema import EnvConfig


def test_env_spec_knows_the_env_s_own_action_half_range() -> None:
    pendulum, hopper = (env_spec(make_env(EnvConfig(id=i))) for i in ("InvertedPendulum-v5", "Hopper-v5"))
    assert pendulum.action_half_range == (3.0,) and hopper.action_half_range == (1.0, 1.0, 1.0)
    assert pendulum.noise_scale(NoiseUnits.absolute).tolist() == pytest.approx([1 / 3])
    assert pendulum.noise_scale(NoiseUnits.normalized).tolist() == [1.0]
    assert hopper.noise_scale(NoiseUnits.absolute).tolist() == [1.0, 1.0, 1.0]


def test_check_env_takes_a_first_step_so_a_kwarg_of_the_wrong_type_is_refused_before_training() -> None:
    # gymnasium.make accepts ctrl_cost_weight="abc"; Hopper's first step multiplies by it and fails
    assert check_env(EnvConfig(id="Hopper-v5", kwargs={"ctrl_cost_weight": 0.01})) == []
    assert check_env(EnvConfig(id="Hopper-v5", kwargs={"ctrl_cost_weight": "abc"})) == [
        "env.kwargs={'ctrl_cost_weight': 'abc'} is not allowed for Hopper-v5: its first reset and step failed with "
        "TypeError: can't multiply sequence by non-int of type 'numpy.float32'"
    ]


def test_check_env_refuses_an_unknown_id_an_unknown_kwarg_and_a_discrete_action_space() -> None:
    assert check_env(EnvConfig(id="Hoper-v5")) == [
        "env.id='Hoper-v5' is not allowed: not a registered Gymnasium env; did you mean Hopper-v5, Hopper-v4, "
        "Hopper-v3?"
    ]
    (unknown_kwarg,) = check_env(EnvConfig(id="Pendulum-v1", kwargs={"gravity": 9.8}))
    assert unknown_kwarg.startswith("env.kwargs={'gravity': 9.8} is not allowed for Pendulum-v1: TypeError:")
    assert check_env(EnvConfig(id="CartPole-v1")) == [
        "env.id='CartPole-v1' is not allowed: TD3 needs a continuous (Box) action space, this env has Discrete"
    ]


def test_each_mujoco_warning_is_logged_once_a_deprecation_at_info(caplog: pytest.LogCaptureFixture) -> None:
    warnings = MujocoWarnings()
    deprecated = "compiler attribute 'settotalmass' is deprecated and will be\nremoved"
    unstable = "Nan, Inf or huge value in QACC at DOF 0. The simulation is unstable. Time = 0.0100."
    with caplog.at_level(logging.INFO, logger="td3x.algo.envs"):
        for message in (deprecated, unstable, deprecated, unstable):
            warnings(message)
    assert [(record.levelno, record.getMessage()) for record in caplog.records] == [
        (logging.INFO, f"MuJoCo: {' '.join(deprecated.split())} (logged once per process)"),
        (logging.WARNING, f"MuJoCo: {unstable} (logged once per process)"),
    ]


def test_a_mujoco_warning_handler_the_user_set_is_kept() -> None:
    import mujoco  # here, not at collection: importing it picks its GL backend (td3x.training.video)

    before = mujoco.get_mju_user_warning()
    received: list[str] = []
    mujoco.set_mju_user_warning(received.append)
    try:
        make_env(EnvConfig(id="HalfCheetah-v5")).close()
        assert mujoco.get_mju_user_warning() == received.append
    finally:
        mujoco.set_mju_user_warning(before)
    assert any("'settotalmass' is deprecated" in message for message in received)
