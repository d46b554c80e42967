"""The Python API (td3x.api): load + predict act in env units and score what td3x-eval reports."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import gymnasium as gym
import pytest
import torch
from helpers.runs import TINY_COMMAND_LINE, TINY_TRAINED
from helpers.scripts import BIN, k_seed_run

import td3x
from td3x.analysis.reading.cells import row_labels
from td3x.analysis.reading.runs import find_runs
from td3x.commands import eval as evaluate
from td3x.config.hydra import to_container
from td3x.config.messages import schema_keys
from td3x.config.schema import ConfigError
from td3x.rundir.trained_run import RunError

__all__ = ["k_seed_run"]  # a fixture, imported so that this module's tests can use it


def test_load_and_predict_act_in_env_units_and_score_what_td3x_eval_reports(
    k_seed_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = td3x.load(str(k_seed_run / "seed_1"))  # a str, and one seed of a K-seeds run
    assert (policy.env_id, policy.step, policy.config.seed) == ("Pendulum-v1", 600, 1)
    assert policy.predict([0.0, 1.0, 0.0]).shape == (1,)
    batch = policy.predict(gym.make("Pendulum-v1").observation_space.sample()[None].repeat(4, axis=0))
    assert batch.shape == (4, 1) and abs(batch).max() <= 2.0  # Pendulum's torque is in [-2, 2]
    with pytest.raises(ValueError, match="obs_dim=3"):
        policy.predict([0.0, 1.0])

    env, episode_return, done = gym.make(policy.env_id), 0.0, False
    obs, _ = env.reset(seed=777)
    while not done:
        obs, reward, terminated, truncated, _ = env.step(policy.predict(obs))
        episode_return, done = episode_return + float(reward), terminated or truncated
    assert evaluate.main([str(k_seed_run / "seed_1"), "--episodes", "1", "--seed", "777"]) == 0
    capsys.readouterr()
    record = json.loads((k_seed_run / "seed_1" / "eval_step600_seed777_n1.json").read_text())
    assert episode_return == pytest.approx(record["returns"][0], abs=1e-9)


def test_a_composed_config_carries_its_group_choices_as_a_field_no_key() -> None:
    """The choices ride in a typed field that dataclasses.replace keeps (it used to drop a hidden attribute), and
    they are neither a config key nor part of the config that is hashed and recorded."""
    config = td3x.compose(["ablation=no_twin"])
    expected = {"env": "pendulum", "agent": "td3", "noise": "gaussian", "ablation": "no_twin"}
    assert config.choices == expected
    assert dataclasses.replace(config, seed=4).choices == expected
    assert "choices" not in to_container(config) and not any(key.startswith("choices") for key in schema_keys())
    plain = td3x.TrainConfig(**{key: getattr(config, key) for key in to_container(config)})
    assert to_container(config) == to_container(plain)


@pytest.mark.slow
def test_a_config_trained_through_the_api_and_the_command_line_shares_one_report_row(tmp_path: Path) -> None:
    overrides = [*TINY_COMMAND_LINE, "ablation=no_twin"]
    config = td3x.compose(overrides)
    td3x.train(config, tmp_path / "api")
    command = [BIN / "td3x-train", *overrides, "seed=1", f"hydra.run.dir={tmp_path / 'cli'}"]
    assert subprocess.run(command, capture_output=True, timeout=300).returncode == 0
    runs = find_runs([tmp_path])
    assert len(runs) == 2 and runs[0].config["choices"] == runs[1].config["choices"]
    assert runs[0].config["choices"] == {"env": "pendulum", "agent": "td3", "noise": "gaussian", "ablation": "no_twin"}
    assert row_labels(runs) == ["TD3 - CDQ", "TD3 - CDQ"]


def test_a_field_set_after_compose_is_range_checked_again_before_anything_is_made(tmp_path: Path) -> None:
    config = td3x.compose(["env=pendulum"])
    config.run.total_steps = 0  # a plain attribute: the dataclass's check ran when compose built it
    with pytest.raises(ConfigError) as refused:
        td3x.train(config, tmp_path / "run")
    assert refused.value.problems == ["run.total_steps=0 is not allowed: must be an integer >= 1"]
    assert not (tmp_path / "run").exists()


def test_a_field_set_to_the_wrong_type_after_compose_is_named_not_a_traceback(tmp_path: Path) -> None:
    config = td3x.compose(["env=pendulum"])
    config.agent.tau = "fast"  # type: ignore[assignment]  # what a user can do; before: TypeError in a range check
    config.run.device = "cpu"  # type: ignore[assignment]  # a string is not the enum: `is Device.cpu` would be False
    config.agent.hidden_sizes = [64.5, 64]  # type: ignore[list-item]
    config.seed = True
    with pytest.raises(ConfigError) as refused:
        td3x.train(config, tmp_path / "run")
    assert refused.value.problems == [
        "agent.hidden_sizes=[64.5, 64] is not allowed: expected a list of integers",
        "agent.tau='fast' is not allowed: expected a float",
        "run.device='cpu' is not allowed: expected one of auto, cpu, cuda",
        "seed=True is not allowed: expected an integer",
    ]
    assert not (tmp_path / "run").exists()


def test_train_refuses_what_is_no_config_and_an_empty_run_dir_before_anything_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError, match=r"^td3x\.train takes a TrainConfig \(from td3x\.compose\), not dict$"):
        td3x.train({"env": "pendulum"}, "run")  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as refused:  # before: it trained in the working dir
        td3x.train(td3x.compose(["env=pendulum"]), "")
    assert refused.value.problems == ["run_dir= is empty: name a dir (it is created if missing)"]
    assert list(tmp_path.iterdir()) == []


def test_overrides_given_as_one_string_are_refused_not_read_letter_by_letter() -> None:
    with pytest.raises(ConfigError) as refused:
        td3x.compose("env=hopper")
    assert refused.value.problems == [
        "overrides must be a list of strings such as ['env=hopper', 'seed=3'], not 'env=hopper'"
    ]


@pytest.mark.skipif(torch.cuda.is_available(), reason="torch sees a CUDA device here: cuda is allowed")
@pytest.mark.parametrize("device", ["GPU", "cuda"])
def test_load_on_a_device_this_machine_lacks_is_refused_naming_those_it_has(k_seed_run: Path, device: str) -> None:
    with pytest.raises(RunError) as refused:
        td3x.load(k_seed_run / "seed_0", device=device)
    assert (
        str(refused.value)
        == f"device={device!r} is not allowed: use auto or cpu (cuda: torch sees no CUDA device here)"
    )


def test_a_leading_tilde_is_the_home_dir_for_train_and_load_as_for_the_commands(
    k_seed_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: td3x.train(config, "~/run") checked the home dir's path, then trained in a folder named ~ here."""
    monkeypatch.setenv("HOME", str(k_seed_run.parent))
    monkeypatch.chdir(tmp_path)
    config = td3x.compose([*TINY_TRAINED, "run.num_seeds=2", "logging.wandb_mode=disabled"])  # k_seed_run's
    assert td3x.train(config, "~/run")["steps"] == 600  # found finished there: nothing trained
    assert td3x.load("~/run/seed_1").checkpoint_path == k_seed_run / "seed_1" / "checkpoint.pt"
    with pytest.raises(ConfigError) as refused:
        td3x.train(config, "~td3x-no-such-user/run")
    assert refused.value.problems == [
        "run_dir=~td3x-no-such-user/run: ~td3x-no-such-user is no user's home dir on this machine: write the dir's "
        "full path"
    ]
    with pytest.raises(RunError, match=r"^~td3x-no-such-user/run: ~td3x-no-such-user is no user's home dir"):
        td3x.load("~td3x-no-such-user/run")
    assert list(tmp_path.iterdir()) == []  # no folder named ~
