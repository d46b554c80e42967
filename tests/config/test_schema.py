"""Real Hydra composition of conf/: every option composes, the ablation rows are values only, bad input is
refused with one line per problem naming the key, the value and what is allowed, a key added past the command
line's check is refused too; the bare demo's budget and each env option's."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
import yaml
from omegaconf import DictConfig

import td3x
from td3x.config.hydra import CONF_DIR, from_saved, to_typed
from td3x.config.schema import ConfigError, TrainConfig
from td3x.training.machine_checks import check_runtime

MakeConfig = Callable[..., TrainConfig]

PAPER_TABLES = json.loads((Path(__file__).parents[2] / "td3x" / "data" / "paper_tables.json").read_text())
SHARED_TABLES = Path(__file__).parents[3] / "shared" / "reference" / "paper_tables.json"


def options(group: str) -> list[str]:
    return sorted(path.stem for path in (CONF_DIR / group).glob("*.yaml"))


@pytest.mark.parametrize("group", ["env", "agent", "noise", "ablation"])
def test_every_option_composes_to_a_checked_config(group: str, compose_cfg: Callable[..., DictConfig]) -> None:
    for option in options(group):
        config = to_typed(compose_cfg(f"{group}={option}"))
        assert isinstance(config, TrainConfig)


def test_defaults_are_pendulum_td3_gaussian_and_the_td3_row(compose_cfg: Callable[..., DictConfig]) -> None:
    config = to_typed(compose_cfg())
    assert (config.env.id, config.agent.hidden_sizes, config.noise.std, config.paper_row) == (
        "Pendulum-v1",
        [256, 256],
        0.1,
        "TD3",
    )
    assert config.eval_seed == 1_000_000 + 1000 * config.seed  # each seed its own evaluation start states


ENV_IDS = {
    "pendulum": ("Pendulum-v1", 1000),
    "hopper": ("Hopper-v5", 1000),
    "halfcheetah": ("HalfCheetah-v5", 10000),
    "walker2d": ("Walker2d-v5", 1000),
    "ant": ("Ant-v5", 10000),
    "reacher": ("Reacher-v5", 1000),
    "inverted_pendulum": ("InvertedPendulum-v5", 1000),
    "inverted_double_pendulum": ("InvertedDoublePendulum-v5", 1000),
}


@pytest.mark.parametrize("option", sorted(ENV_IDS))
def test_env_options_set_the_v5_id_and_the_papers_random_steps(
    option: str, compose_cfg: Callable[..., DictConfig]
) -> None:
    config = to_typed(compose_cfg(f"env={option}"))
    assert (config.env.id, config.env.random_steps) == ENV_IDS[option]
    assert check_runtime(config) == []


def test_dq_ac_needs_two_critics(compose_cfg: Callable[..., DictConfig]) -> None:
    message = "agent.n_critics=3 is not allowed: must be 2 with agent.target_rule=dq_ac"
    with pytest.raises(ConfigError, match=re.escape(message)):
        to_typed(compose_cfg("ablation=dq_ac", "agent.n_critics=3"))


def test_agent_presets(compose_cfg: Callable[..., DictConfig]) -> None:
    paper = to_typed(compose_cfg("agent=td3_paper")).agent
    assert (paper.hidden_sizes, paper.actor_lr, paper.critic_lr, paper.batch_size) == ([400, 300], 1e-3, 1e-3, 100)
    current = to_typed(compose_cfg("agent=td3")).agent
    assert (current.hidden_sizes, current.actor_lr, current.batch_size) == ([256, 256], 3e-4, 256)


ROWS = {  # option: (paper_row, n_critics, policy_delay, target_policy_noise, target_rule)
    "none": ("TD3", 2, 2, 0.2, "clipped_double_q"),
    "no_delay": ("TD3 - DP", 2, 1, 0.2, "clipped_double_q"),
    "no_smoothing": ("TD3 - TPS", 2, 2, 0.0, "clipped_double_q"),
    "no_twin": ("TD3 - CDQ", 1, 2, 0.2, "clipped_double_q"),
    "ahe": ("AHE", 1, 1, 0.0, "clipped_double_q"),
    "ahe_delay": ("AHE + DP", 1, 2, 0.0, "clipped_double_q"),
    "ahe_smoothing": ("AHE + TPS", 1, 1, 0.2, "clipped_double_q"),
    "ahe_twin": ("AHE + CDQ", 2, 1, 0.0, "clipped_double_q"),
    "dq_ac": ("DQ-AC", 2, 2, 0.2, "dq_ac"),
    "ddqn_ac": ("DDQN-AC", 1, 2, 0.2, "ddqn"),
    "ddpg": ("DDPG", 1, 1, 0.0, "clipped_double_q"),
}
DDPG = {
    "hidden_sizes": [400, 300],
    "critic_action_layer": 1,
    "actor_lr": 1e-4,
    "critic_lr": 1e-3,
    "critic_weight_decay": 1e-2,
    "tau": 1e-3,
    "batch_size": 64,
    "final_layer_init": 3e-3,
}


def row_values(config: TrainConfig) -> tuple[object, ...]:
    a = config.agent
    return config.paper_row, a.n_critics, a.policy_delay, a.target_policy_noise, a.target_rule.value


def test_every_table2_row_has_an_option() -> None:
    assert sorted(row for row, *_ in ROWS.values()) == sorted(PAPER_TABLES["table2"]["rows"])
    assert sorted(ROWS) == options("ablation")


@pytest.mark.parametrize("option", sorted(ROWS))
@pytest.mark.parametrize("context", [("agent=td3",), ("agent=td3_paper",), ("+experiment=table2",)])
def test_ablation_rows_resolve_to_their_numbers(
    option: str, context: tuple[str, ...], compose_cfg: Callable[..., DictConfig]
) -> None:
    config = to_typed(compose_cfg(*context, f"ablation={option}"))
    assert row_values(config) == ROWS[option]
    if option == "ddpg":  # the row's values win over the agent preset (and over table2's override /agent)
        assert {key: getattr(config.agent, key) for key in DDPG} == DDPG
        assert (config.noise.kind.value, config.noise.std, config.noise.theta) == ("ornstein_uhlenbeck", 0.2, 0.15)
        assert config.env.normalize_obs
    else:
        assert config.agent.critic_action_layer == 0 and not config.env.normalize_obs


def test_experiments_set_no_agent_or_noise_values() -> None:
    for path in (CONF_DIR / "experiment").glob("*.yaml"):
        content = yaml.safe_load(path.read_text())
        assert path.read_text().splitlines()[0] == "# @package _global_"
        assert "agent" not in content and "noise" not in content, path.name


def test_command_line_values_win_over_the_row(compose_cfg: Callable[..., DictConfig]) -> None:
    config = to_typed(compose_cfg("ablation=no_delay", "agent.policy_delay=3"))
    assert config.agent.policy_delay == 3


@pytest.mark.parametrize("option", options("ablation"))
def test_ablation_files_are_global_and_set_only_values(option: str) -> None:
    text = (CONF_DIR / "ablation" / f"{option}.yaml").read_text()
    assert text.splitlines()[0] == "# @package _global_"  # Hydra ignores the header anywhere else
    content = yaml.safe_load(text)
    assert all(not isinstance(entry, dict) for entry in content.get("defaults", [])), "no group overrides"
    assert set(content) - {"defaults"} <= {"paper_row", "agent", "noise", "env"}
    assert set(content.get("env", {})) <= {"normalize_obs"}


def test_packaged_paper_tables_match_shared_reference() -> None:
    if not SHARED_TABLES.exists():
        pytest.skip(f"{SHARED_TABLES} is not beside this checkout")
    assert json.loads(SHARED_TABLES.read_text()) == PAPER_TABLES


BAD = [  # override, text every message must contain
    ("run.total_steps=0", "run.total_steps=0"),
    ("run.total_steps=-5", "run.total_steps=-5"),
    ("env.random_steps=-1", "env.random_steps=-1"),
    ("agent.policy_delay=0", "agent.policy_delay=0"),
    ("agent.n_critics=0", "agent.n_critics=0"),
    ("agent.tau=0", "agent.tau=0.0"),
    ("agent.tau=1.5", "agent.tau=1.5"),
    ("agent.discount=1.01", "agent.discount=1.01"),
    ("agent.actor_lr=0", "agent.actor_lr=0.0"),
    ("agent.critic_lr=-1e-3", "agent.critic_lr=-0.001"),
    ("agent.batch_size=0", "agent.batch_size=0"),
    ("agent.buffer_size=100", "agent.buffer_size=100"),
    ("noise.std=-0.1", "noise.std=-0.1"),
    ("agent.target_policy_noise=-0.2", "agent.target_policy_noise=-0.2"),
    ("agent.target_noise_clip=-0.5", "agent.target_noise_clip=-0.5"),
    ("agent.hidden_sizes=[]", "agent.hidden_sizes=[]"),
    ("agent.hidden_sizes=[64,0]", "agent.hidden_sizes=[64, 0]"),
    ("run.num_threads=0", "run.num_threads=0"),
    ("run.eval_episodes=0", "run.eval_episodes=0"),
    ("logging.wandb_mode=sometimes", "logging.wandb_mode='sometimes'"),
    # every other check of td3x.config.schema, one each (space-separated overrides go together)
    ("env.id=''", "env.id=''"),
    ("agent.discount=-0.1", "agent.discount=-0.1"),
    ("agent.critic_lr=inf", "agent.critic_lr=inf"),
    ("agent.critic_action_layer=3", "agent.critic_action_layer=3"),
    ("agent.critic_action_layer=-1", "agent.critic_action_layer=-1"),
    ("agent.critic_weight_decay=-0.01", "agent.critic_weight_decay=-0.01"),
    ("agent.final_layer_init=0", "agent.final_layer_init=0.0"),
    ("agent.updates_per_step=0", "agent.updates_per_step=0"),
    ("noise.theta=-0.15", "noise.theta=-0.15"),
    ("noise.dt=0", "noise.dt=0.0"),
    ("noise.final_std=-0.01 noise.decay_steps=10", "noise.final_std=-0.01"),
    ("noise.final_std=0.01", "noise.decay_steps=0"),
    ("noise.decay_steps=-1", "noise.decay_steps=-1"),
    ("run.eval_every=0", "run.eval_every=0"),
    ("run.checkpoint_every=0", "run.checkpoint_every=0"),
    ("run.log_every=0", "run.log_every=0"),
    ("run.num_seeds=0", "run.num_seeds=0"),
    ("run.eval_seed=-1", "run.eval_seed=-1"),
    ("logging.video_every=0", "logging.video_every=0"),
    ("seed=-1", "seed=-1"),
    ("seed=4294967296", "seed=4294967296"),  # numpy's global seed takes up to 2**32 - 1
    ("seed=4294967295 run.num_seeds=2", "seed=4294967295"),  # seeds seed .. seed + K - 1
]


@pytest.mark.parametrize(("override", "expected"), BAD)
def test_bad_values_are_refused_naming_key_value_and_range(
    override: str, expected: str, compose_cfg: Callable[..., DictConfig]
) -> None:
    with pytest.raises(ConfigError) as error:
        to_typed(compose_cfg(*override.split()))
    assert len(error.value.problems) == 1
    assert error.value.problems[0].startswith(expected + " is not allowed: ")


def test_a_buffer_of_zero_breaks_two_rules(compose_cfg: Callable[..., DictConfig]) -> None:
    with pytest.raises(ConfigError) as error:
        to_typed(compose_cfg("agent.buffer_size=0"))
    assert error.value.problems == [
        "agent.buffer_size=0 is not allowed: must be an integer >= 1",
        "agent.buffer_size=0 is not allowed: must be >= agent.batch_size (256)",
    ]


def test_null_eval_seed_and_zero_are_accepted(compose_cfg: Callable[..., DictConfig]) -> None:
    assert to_typed(compose_cfg("run.eval_seed=null", "seed=3")).eval_seed == 1_003_000  # 1,000,000 + 1000 * seed
    assert to_typed(compose_cfg("run.eval_seed=0")).eval_seed == 0


def test_every_problem_gets_its_own_line(compose_cfg: Callable[..., DictConfig]) -> None:
    with pytest.raises(ConfigError) as error:
        to_typed(compose_cfg("agent.tau=2", "agent.policy_delay=0", "run.total_steps=-1"))
    assert len(error.value.problems) == 3


@pytest.mark.parametrize(
    ("env_id", "expected"),
    [
        ("Hoper-v5", "did you mean Hopper-v5"),
        ("CartPole-v1", "continuous (Box) action space"),
    ],
)
def test_env_ids_are_checked_against_the_registry(
    env_id: str, expected: str, compose_cfg: Callable[..., DictConfig]
) -> None:
    problems = check_runtime(to_typed(compose_cfg(f"env.id={env_id}")))
    assert len(problems) == 1 and problems[0].startswith(f"env.id={env_id!r} is not allowed: ")
    assert expected in problems[0]


def test_a_buffer_larger_than_memory_is_refused_with_the_numbers(compose_cfg: Callable[..., DictConfig]) -> None:
    (problem,) = check_runtime(to_typed(compose_cfg("env=hopper", "agent.buffer_size=100000000000")))
    assert problem.startswith(
        "agent.buffer_size=100000000000 is not allowed: the replay buffers of run.num_seeds=1 seed(s) need 10800.0 GB, "
    )
    assert "of memory available here" in problem


@pytest.mark.skipif(torch.cuda.is_available(), reason="the machine has CUDA")
def test_cuda_without_cuda_is_refused(compose_cfg: Callable[..., DictConfig]) -> None:
    problems = check_runtime(to_typed(compose_cfg("run.device=cuda")))
    assert problems == ["run.device='cuda' is not allowed: torch sees no CUDA device here; use auto or cpu"]


def test_wandb_mode_follows_the_environment_variable(
    compose_cfg: Callable[..., DictConfig], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert to_typed(compose_cfg()).logging.wandb_mode == "offline"
    monkeypatch.setenv("WANDB_MODE", "disabled")
    assert to_typed(compose_cfg()).logging.wandb_mode == "disabled"


# ---------------------------------------------------------------------- the bare demo's budget
def test_bare_default_is_the_pendulum_demo_and_env_options_carry_their_budget() -> None:
    bare = td3x.compose()
    assert (bare.env.id, bare.run.total_steps, bare.run.eval_every, bare.paper_row) == (
        "Pendulum-v1",
        15000,
        1000,
        "TD3",
    )
    hopper = td3x.compose(["env=hopper"])
    assert (hopper.run.total_steps, hopper.run.eval_every) == (1_000_000, 5000)  # the paper's budget
    assert td3x.compose(["env=hopper", "run.total_steps=5000"]).run.total_steps == 5000  # the command line wins
    smoke = td3x.compose(["env=hopper", "+experiment=table2_smoke"])  # an experiment keeps its numbers
    assert (smoke.run.total_steps, smoke.run.eval_every) == (1000, 500)


def test_a_key_added_past_the_command_line_check_is_refused_too(compose_cfg) -> None:  # type: ignore[no-untyped-def]
    """``to_typed`` refuses any key the schema lacks, at any depth (Hydra lets ``+`` add it to a typed node and
    ``OmegaConf.to_object`` would drop it silently), while ``env.kwargs`` stays free-form for gymnasium.make."""
    with pytest.raises(ConfigError) as refused:
        to_typed(compose_cfg("+agent.polcy_delay=3", "+run.totl_steps=9", "+agent.bogus=1", "+agnt.tau=1"))
    assert refused.value.problems == [
        "agent.polcy_delay is not a td3x key; did you mean agent.policy_delay?",
        "agent.bogus is not a td3x key; td3x-train --help lists the keys",  # not agent.tau: a node's keys by name
        "run.totl_steps is not a td3x key; did you mean run.total_steps?",
        "agnt is not a td3x key; did you mean agent?",  # an unknown node is named, as the closest node
    ]
    config = to_typed(compose_cfg("+env.kwargs.max_episode_steps=50", "+env.kwargs.g=9.81"))
    assert config.env.kwargs == {"max_episode_steps": 50, "g": 9.81}


def test_update_start_must_be_null_or_non_negative(make_config: MakeConfig) -> None:
    with pytest.raises(ConfigError, match=r"agent\.update_start=-1 is not allowed"):
        make_config("agent.update_start=-1")


def test_delay_per_burst_needs_the_episode_end_schedule(make_config: MakeConfig) -> None:
    """Per-step bursts are single updates: restarting the count at each would update the actor every time."""
    with pytest.raises(ConfigError, match=r"agent\.delay_per_burst=True is not allowed: needs agent\.update_schedule"):
        make_config("agent.delay_per_burst=true")
    assert make_config("agent=td3_2018").agent.delay_per_burst


def test_td3_2018_is_td3_paper_with_the_2018_schedule(make_config: MakeConfig) -> None:
    paper, code_2018 = (make_config(f"agent={name}").agent for name in ("td3_paper", "td3_2018"))
    assert paper.update_schedule.value == "per_step" and (paper.update_start, paper.delay_per_burst) == (None, False)
    schedule_2018 = (code_2018.update_schedule.value, code_2018.update_start, code_2018.delay_per_burst)
    assert schedule_2018 == ("episode_end", 0, True)
    schedule_keys = ("update_schedule", "update_start", "delay_per_burst")
    assert {k: v for k, v in vars(code_2018).items() if k not in schedule_keys} == {
        k: v for k, v in vars(paper).items() if k not in schedule_keys
    }


def test_a_stored_config_s_problems_are_named_each_in_td3x_train_s_words() -> None:
    """A run's config.yaml (td3x-resume, td3x-report, td3x-sweep status): every unknown key and every value of the
    wrong type, one line each (before: OmegaConf's first error only, ``Key 'bogus' not in 'TrainConfig' full_key:
    bogus object_type=TrainConfig``, or ``Value 'abc' of type 'str' could not be converted to Float``)."""
    with pytest.raises(ConfigError) as refused:
        from_saved({"bogus": 1, "agent": {"tau": "abc"}, "run": {"total_steps": "fast", "device": "tpu"}})
    fit = "the stored config does not fit this td3x: "
    assert refused.value.problems == [
        f"{fit}bogus is not a td3x key; td3x-train --help lists the keys",
        f"{fit}agent.tau='abc' is not allowed: expected a float",
        f"{fit}run.total_steps='fast' is not allowed: expected an integer",
        f"{fit}run.device='tpu' is not allowed: expected one of auto, cpu, cuda",
    ]
    assert from_saved({"env": {"kwargs": {"ctrl_cost_weight": "any"}}}).env.kwargs == {"ctrl_cost_weight": "any"}
