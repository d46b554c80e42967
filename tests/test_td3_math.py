"""The TD3 math checked by hand on tiny networks with set outputs: the targets of each rule (paper Eq. 8-10), target
policy smoothing (Appendix D), the K-seed stacking, the networks, acting and the overestimation bias. The update's
steps and their schedule (Algorithm 1): test_td3.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from td3x.config import AgentConfig, NoiseUnits, TargetRule
from td3x.envs import EnvSpec
from td3x.normalizer import IdentityNormalizer
from td3x.replay_buffer import Batch
from td3x.seeding import generators_of
from td3x.td3 import TD3, smooth

SPEC = EnvSpec(obs_dim=3, action_dim=2)


def make_agent(seeds: int = 1, **overrides: object) -> TD3:
    config = AgentConfig(hidden_sizes=[8, 8], **overrides)  # type: ignore[arg-type]
    return TD3(SPEC, config, torch.device("cpu"), [generators_of(seed, torch.device("cpu")) for seed in range(seeds)])


def make_batch(n: int = 4, reward: float = 1.0, terminated: float = 0.0, seeds: int = 1) -> Batch:
    generator = torch.Generator().manual_seed(1)
    return Batch(
        obs=torch.randn(seeds, n, 3, generator=generator),
        action=torch.rand(seeds, n, 2, generator=generator) * 2 - 1,
        reward=torch.full((seeds, n), reward),
        next_obs=torch.randn(seeds, n, 3, generator=generator),
        terminated=torch.full((seeds, n), terminated),
    )


def set_constant_output(layers: torch.nn.Module, values: list[float]) -> None:
    """Make critic member i output values[i] whatever its input: a zero last layer with that bias."""
    last = layers.layers[-1]  # type: ignore[index]
    with torch.no_grad():
        last.weight.zero_()
        last.bias.copy_(torch.tensor(values).reshape(1, -1, 1, 1))


def set_actor_output(actor: torch.nn.Module, pre_tanh: float) -> None:
    last = actor.layers[-1]  # type: ignore[index]
    with torch.no_grad():
        last.weight.zero_()
        last.bias.fill_(pre_tanh)


def test_target_takes_min_of_twin_target_critics() -> None:
    agent = make_agent(discount=0.5, n_critics=2)
    set_constant_output(agent.critic_target, [3.0, 5.0])
    y = agent.td_target(make_batch(reward=1.0))
    assert y.shape == (1, 1, 4)  # one target for both critics
    assert torch.allclose(y, torch.full_like(y, 2.5))  # 1 + 0.5 * min(3, 5)


def test_target_bootstraps_from_the_target_actor_not_the_current_one() -> None:
    """TD3 (Eq. 10): y = r + γ min_i Q_θ'i(s', π_φ'(s')); the current actor π_φ picks a different action."""
    agent = make_agent(discount=0.5, n_critics=2, target_policy_noise=0.0)
    set_actor_output(agent.actor, 1.0)
    set_actor_output(agent.actor_target, -1.0)
    batch = make_batch()
    target_action, current_action = agent.actor_target(batch.next_obs)[:, 0], agent.actor(batch.next_obs)[:, 0]
    with_target = agent.critic_target(batch.next_obs, target_action).min(dim=1, keepdim=True).values
    with_current = agent.critic_target(batch.next_obs, current_action).min(dim=1, keepdim=True).values
    assert not torch.allclose(with_target, with_current, atol=1e-3)
    assert torch.allclose(agent.td_target(batch), 1.0 + 0.5 * with_target)


def test_single_critic_target_has_no_min() -> None:
    agent = make_agent(discount=0.5, n_critics=1)
    set_constant_output(agent.critic_target, [5.0])
    y = agent.td_target(make_batch(reward=1.0))
    assert torch.allclose(y, torch.full_like(y, 3.5))  # 1 + 0.5 * 5


def test_terminated_cuts_the_bootstrap() -> None:
    agent = make_agent(discount=0.5)
    set_constant_output(agent.critic_target, [3.0, 5.0])
    y = agent.td_target(make_batch(reward=1.0, terminated=1.0))
    assert torch.allclose(y, torch.ones_like(y))


def test_smoothing_noise_is_clipped_then_action_clipped_to_range() -> None:
    agent = make_agent(target_policy_noise=100.0, target_noise_clip=0.5)
    set_actor_output(agent.actor_target, 0.0)  # π'(s') = 0
    noise = agent.smoothing_noise(torch.Size((1, 1000, 2)))
    assert noise.shape == (1, 1, 1000, 2)
    action = smooth(agent.actor_target(torch.randn(1, 1000, 3)), noise)[0, 0]
    assert action.abs().max().item() == pytest.approx(0.5)  # |ε| <= c
    assert (action.abs() == 0.5).float().mean() > 0.9  # σ̃ = 100: nearly every sample hits the clip
    assert action.std(dim=0).min() > 0.4  # independent noise per sample and per action dim
    set_actor_output(agent.actor_target, 10.0)  # π'(s') = tanh(10) ≈ 1
    assert smooth(agent.actor_target(torch.randn(1, 1000, 3)), noise).max().item() <= 1.0


def test_smooth_adds_the_noise_then_clips_to_the_action_range() -> None:
    action, noise = torch.tensor([0.2, 0.9, -0.9, -0.2]), torch.tensor([0.3, 0.3, -0.3, 0.1])
    assert torch.allclose(smooth(action, noise), torch.tensor([0.5, 1.0, -1.0, -0.1]))


@pytest.mark.parametrize(("units", "bound"), [(NoiseUnits.normalized, [0.5, 0.5]), (NoiseUnits.absolute, [0.25, 1.0])])
def test_smoothing_noise_in_absolute_units_scales_by_each_action_dims_half_range(
    units: NoiseUnits, bound: list[float]
) -> None:
    """c = 0.5 in the env's units on bounds of ±2 and ±0.5 is 0.25 and 1.0 normalised units (the 2018 code's)."""
    spec = EnvSpec(obs_dim=3, action_dim=2, action_half_range=(2.0, 0.5))
    config = AgentConfig(hidden_sizes=[8], target_policy_noise=100.0, target_noise_clip=0.5, noise_units=units)
    agent = TD3(spec, config, torch.device("cpu"), [generators_of(0, torch.device("cpu"))])
    noise = agent.smoothing_noise(torch.Size((1, 1000, 2)))[0, 0]
    assert noise.abs().amax(dim=0).tolist() == pytest.approx(bound)  # σ̃ = 100: the clip is reached


def test_networks_see_raw_observations_unless_asked() -> None:
    assert isinstance(make_agent().obs_normalizer, IdentityNormalizer)


def test_optimisers_take_the_configured_learning_rates_and_targets_no_gradient() -> None:
    agent = make_agent(actor_lr=1e-4, critic_lr=2e-3)  # the DDPG row's are not Adam's default 1e-3
    assert [group["lr"] for group in agent.actor_optimizer.param_groups] == [1e-4]
    assert [group["lr"] for group in agent.critic_optimizer.param_groups] == [2e-3, 2e-3]
    targets = [*agent.actor_target.parameters(), *agent.critic_target.parameters()]
    assert not any(p.requires_grad for p in targets)  # θ', φ' move by Polyak averaging only


def test_zero_smoothing_noise_gives_the_target_actor_action() -> None:
    agent = make_agent(target_policy_noise=0.0)
    next_obs = torch.randn(1, 16, 3)
    noise = agent.smoothing_noise(torch.Size((1, 16, 2)))
    assert torch.equal(smooth(agent.actor_target(next_obs), noise), agent.actor_target(next_obs))


def test_critic_ensemble_members_are_independent_networks() -> None:
    agent = make_agent(n_critics=2)
    obs, action = torch.randn(1, 5, 3), torch.randn(1, 5, 2)
    q = agent.critic(obs, action)
    assert q.shape == (1, 2, 5)
    assert torch.equal(agent.critic(obs, action, n_members=1)[:, 0], q[:, 0])
    assert not torch.allclose(q[:, 0], q[:, 1])


# ---------------------------------------------------------------------- K seeds in one agent (run.num_seeds)
def parameters_of_seed(agent: TD3, seed_index: int) -> list[torch.Tensor]:
    modules = (agent.actor, agent.critic, agent.actor_target, agent.critic_target)
    return [p.detach()[seed_index].clone() for module in modules for p in module.parameters()]


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"target_rule": TargetRule.dq_ac},
        {"target_rule": TargetRule.ddqn, "n_critics": 1},  # a target of shape (K, 1, N) for K > 1 too
        {"critic_action_layer": 1},
    ],
)
def test_each_seed_of_a_stacked_agent_learns_as_the_agent_of_that_seed_alone(overrides: dict[str, object]) -> None:
    """K seeds share one update call, and seed k's parameters follow exactly the one-seed update of its batch."""
    stacked = make_agent(seeds=3, policy_delay=2, **overrides)
    alone = [
        TD3(SPEC, stacked_config(**overrides), torch.device("cpu"), [generators_of(k, torch.device("cpu"))])
        for k in range(3)
    ]
    batches = [make_batch(n=16, seeds=3) for _ in range(4)]
    for k in range(3):  # a seed's initial weights depend on its seed only, not on how many seeds share the agent
        assert all(
            torch.equal(a, b)
            for a, b in zip(parameters_of_seed(stacked, k), parameters_of_seed(alone[k], 0), strict=False)
        )
    for batch in batches:
        batch = Batch(
            *(field * (1 + torch.arange(3.0)).reshape(3, *[1] * (field.dim() - 1)) for field in vars(batch).values())
        )
        recorded = stacked.update(batch, record=True)
        for k in range(3):
            seed_batch = Batch(*(field[k : k + 1] for field in vars(batch).values()))
            alone_metrics = alone[k].update(seed_batch, record=True)
            assert recorded.keys() == alone_metrics.keys()
            for name, values in recorded.items():  # each seed's own losses, gradient norms and Q statistics
                assert values.shape == (3,) and alone_metrics[name].shape == (1,), name
                assert torch.allclose(values[k], alone_metrics[name][0], rtol=1e-4, atol=1e-6), name
    for k in range(3):
        for a, b in zip(parameters_of_seed(stacked, k), parameters_of_seed(alone[k], 0), strict=True):
            assert torch.allclose(a, b, rtol=1e-5, atol=1e-6)
    assert not torch.allclose(stacked.actor.layers[0].weight[0], stacked.actor.layers[0].weight[1])  # seeds differ


def stacked_config(**overrides: object) -> AgentConfig:
    return AgentConfig(hidden_sizes=[8, 8], policy_delay=2, **overrides)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed_index", [1, 2])  # a middle seed and the last
def test_one_seeds_state_dict_loads_into_a_one_seed_agent(seed_index: int) -> None:
    stacked = make_agent(seeds=3)
    stacked.update(make_batch(seeds=3))
    stacked.update(make_batch(seeds=3))
    alone = make_agent(seeds=1)
    alone.load_state_dict(stacked.state_dict(seed_index=seed_index))
    assert all(
        torch.equal(a, b)
        for a, b in zip(parameters_of_seed(stacked, seed_index), parameters_of_seed(alone, 0), strict=True)
    )
    moments = alone.critic_optimizer.state_dict()["state"][0]["exp_avg"]
    assert torch.equal(moments[0], stacked.critic_optimizer.state_dict()["state"][0]["exp_avg"][seed_index])


@pytest.mark.slow
def test_compiled_losses_match_eager() -> None:
    """``run.compile`` changes how the losses run, not what they compute."""
    eager, compiled = (
        make_agent(seeds=2),
        TD3(
            SPEC,
            AgentConfig(hidden_sizes=[8, 8]),
            torch.device("cpu"),
            [generators_of(seed, torch.device("cpu")) for seed in range(2)],
            compile=True,
        ),
    )
    for _ in range(4):
        batch = make_batch(n=16, seeds=2)
        eager_metrics, compiled_metrics = eager.update(batch, record=True), compiled.update(batch, record=True)
        assert torch.allclose(eager_metrics["critic_loss"], compiled_metrics["critic_loss"], rtol=1e-5)
    for k in range(2):
        for a, b in zip(parameters_of_seed(eager, k), parameters_of_seed(compiled, k), strict=True):
            assert torch.allclose(a, b, rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------------- the other target rules of Table 2
def test_ddqn_target_uses_the_current_actor() -> None:
    """DDQN-AC (Eq. 8): y = r + γ Q_θ'(s', π_φ(s')), the current actor, not π_φ'."""
    agent = make_agent(target_rule=TargetRule.ddqn, n_critics=1, target_policy_noise=0.0, discount=0.5)
    set_actor_output(agent.actor, 1.0)
    set_actor_output(agent.actor_target, -1.0)
    batch = make_batch()
    current = agent.critic_target(batch.next_obs, agent.actor(batch.next_obs)[:, 0])
    stale = agent.critic_target(batch.next_obs, agent.actor_target(batch.next_obs)[:, 0])
    assert torch.allclose(agent.td_target(batch), 1.0 + 0.5 * current)
    assert not torch.allclose(current, stale)


def test_dq_ac_each_critic_bootstraps_from_the_other() -> None:
    """DQ-AC (Eq. 9): y_1 = r + γ Q_θ'2(s', π_φ1(s')), y_2 = r + γ Q_θ'1(s', π_φ2(s'))."""
    agent = make_agent(target_rule=TargetRule.dq_ac, n_critics=2, discount=0.5)
    set_constant_output(agent.critic_target, [3.0, 5.0])
    y = agent.td_target(make_batch(reward=1.0))[0]
    assert y.shape == (2, 4)
    assert torch.allclose(y[0], torch.full((4,), 3.5)) and torch.allclose(y[1], torch.full((4,), 2.5))

    agent = make_agent(target_rule=TargetRule.dq_ac, n_critics=2, discount=0.5, target_policy_noise=0.0)
    batch = make_batch()
    actions = agent.actor(batch.next_obs)[0]  # (2, N, A): π_φ1(s'), π_φ2(s')
    assert not torch.allclose(actions[0], actions[1])  # two independently initialised actors
    q_at_first, q_at_second = (
        agent.critic_target(batch.next_obs, actions[None, 0])[0],
        agent.critic_target(batch.next_obs, actions[None, 1])[0],
    )
    y = agent.td_target(batch)[0]
    assert torch.allclose(y[0], 1.0 + 0.5 * q_at_first[1]) and torch.allclose(y[1], 1.0 + 0.5 * q_at_second[0])


def test_dq_ac_actor_i_follows_critic_i() -> None:
    results = []
    for q2_scale in (1.0, -50.0):
        agent = make_agent(target_rule=TargetRule.dq_ac, n_critics=2, policy_delay=1)
        with torch.no_grad():
            for layer in agent.critic.layers:
                layer.weight[:, 1].mul_(q2_scale)
        agent.critic_optimizer.param_groups[0]["lr"] = agent.critic_optimizer.param_groups[1]["lr"] = 0.0
        agent.update(make_batch())
        results.append([layer.weight.detach().clone() for layer in agent.actor.layers])
    assert all(torch.equal(a[:, 0], b[:, 0]) for a, b in zip(*results, strict=True))  # actor 1 ignores critic 2
    assert not all(torch.equal(a[:, 1], b[:, 1]) for a, b in zip(*results, strict=True))  # actor 2 follows it


def test_ddpg_critic_takes_the_action_at_its_second_layer() -> None:
    agent = make_agent(critic_action_layer=1, n_critics=1)
    first, second = agent.critic.layers[0], agent.critic.layers[1]
    assert first.weight.shape == (1, 1, 3, 8)  # the state alone
    assert second.weight.shape == (1, 1, 8 + 2, 8)  # hidden features and the action
    action = torch.zeros(1, 5, 2, requires_grad=True)
    agent.critic(torch.randn(1, 5, 3), action).sum().backward()
    assert action.grad is not None and action.grad.abs().sum() > 0


def test_critic_weight_decay_acts_on_hidden_weights_only() -> None:
    agent = make_agent(critic_weight_decay=0.01)
    decayed, others = agent.critic_optimizer.param_groups
    assert decayed["weight_decay"] == 0.01 and others["weight_decay"] == 0.0
    assert [p.shape for p in decayed["params"]] == [(1, 2, 5, 8), (1, 2, 8, 8)]
    assert len(others["params"]) == 4  # the three biases and the output layer's weight


def test_final_layer_init_bounds_the_last_layers() -> None:
    agent = make_agent(final_layer_init=3e-3)
    for last in (agent.actor.layers[-1], agent.critic.layers[-1]):
        assert last.weight.abs().max() <= 3e-3 and last.bias.abs().max() <= 3e-3
    assert agent.critic.layers[0].weight.abs().max() > 3e-3


def test_observation_normaliser_statistics_clip_and_state() -> None:
    generators = [generators_of(seed, torch.device("cpu")) for seed in range(2)]
    agent = TD3(SPEC, AgentConfig(hidden_sizes=[8]), torch.device("cpu"), generators, normalize_obs=True)
    data = np.random.default_rng(0).normal(3.0, 2.0, size=(500, 2, 3))
    data[:, 1] *= 10  # seed 1 sees other states: statistics of its own
    for obs in data:
        agent.obs_normalizer.update(obs)
    assert np.allclose(agent.obs_normalizer.mean.numpy(), data.mean(axis=0))
    assert np.allclose(agent.obs_normalizer.var.numpy(), data.var(axis=0))
    normalised = agent.obs_normalizer(torch.tensor([[[3.0, 3.0, 1e6]], [[30.0, 30.0, 0.0]]], dtype=torch.float32))
    assert normalised[0, 0, 2] == 5.0 and abs(normalised[0, 0, 0]) < 0.2 and abs(normalised[1, 0, 0]) < 0.2
    before = agent.obs_normalizer.mean.clone()
    agent.act(data[:1].transpose(1, 0, 2))  # acting (and so evaluating) never moves the statistics
    assert torch.equal(before, agent.obs_normalizer.mean)
    assert {"mean", "var", "count"} <= set(agent.state_dict()["obs_normalizer"])


# ---------------------------------------------------------------------- overestimation bias (paper Figures 1-2)
def test_returns_to_go_and_counted_states() -> None:
    from td3x.overestimation import counted, returns_to_go

    assert returns_to_go(np.array([1.0, 1.0, 1.0]), 0.5).tolist() == [1.75, 1.5, 1.0]
    assert counted(3, terminated=True, discount=0.99).all()
    mask = counted(1000, terminated=False, discount=0.99)  # cut by the time limit: γ^remaining < 0.01 only
    assert mask[:542].all() and not mask[542:].any()


def test_overestimation_bias_is_q_minus_the_return_that_followed() -> None:
    from td3x.overestimation import overestimation_biases
    from td3x.rollout import Episode

    agent = make_agent(seeds=2, n_critics=2)
    with torch.no_grad():  # seed 0's critics output 5 and 3, seed 1's 7 and 9
        agent.critic.layers[-1].weight.zero_()
        agent.critic.layers[-1].bias.copy_(torch.tensor([[5.0, 3.0], [7.0, 9.0]]).reshape(2, 2, 1, 1))
    episode = Episode(obs=np.zeros((2, 3)), actions=np.zeros((2, 2)), rewards=np.array([1.0, 1.0]), terminated=True)
    longer = Episode(obs=np.zeros((3, 3)), actions=np.zeros((3, 2)), rewards=np.zeros(3), terminated=True)
    first, second = overestimation_biases(agent, [[episode], [longer]], discount=0.5)  # G = (1.5, 1.0) and 0
    assert first == {"bias_q1": pytest.approx(5.0 - 1.25), "bias_min_q": pytest.approx(3.0 - 1.25), "bias_states": 2}
    assert second == {"bias_q1": pytest.approx(7.0), "bias_min_q": pytest.approx(7.0), "bias_states": 3}
    truncated = Episode(obs=np.zeros((2, 3)), actions=np.zeros((2, 2)), rewards=np.ones(2), terminated=False)
    assert overestimation_biases(agent, [[truncated], [truncated]], discount=0.99)[0]["bias_states"] == 0


@pytest.mark.parametrize("normalize_obs", [False, True])
def test_acting_in_numpy_computes_the_actor_forward(normalize_obs: bool) -> None:
    """On the CPU, ``act`` runs the actor in NumPy (batch-1 speed); it must be the torch forward's function."""
    generators = [generators_of(seed, torch.device("cpu")) for seed in range(2)]
    agent = TD3(SPEC, AgentConfig(hidden_sizes=[8, 8]), torch.device("cpu"), generators, normalize_obs=normalize_obs)
    observations = np.random.default_rng(0).normal(2.0, 3.0, size=(50, 2, 3))
    for obs in observations:
        agent.obs_normalizer.update(obs)
    batch = observations[:7].transpose(1, 0, 2).astype(np.float32)  # (K=2, B=7, obs_dim)
    with torch.no_grad():
        expected = agent.actor(agent.obs_normalizer(torch.as_tensor(batch)))[:, 0].numpy()
    actions = agent.act(batch)
    assert actions.shape == (2, 7, 2) and actions.dtype == np.float32
    np.testing.assert_allclose(actions, expected, rtol=0, atol=1e-6)
    assert agent.act(batch.astype(np.float64)).dtype == np.float32  # Gymnasium's MuJoCo observations are float64


def test_seed_policy_is_that_seeds_actor_on_one_observation() -> None:
    generators = [generators_of(seed, torch.device("cpu")) for seed in range(3)]
    agent = TD3(SPEC, AgentConfig(hidden_sizes=[8, 8]), torch.device("cpu"), generators)
    obs = np.array([0.3, -1.2, 0.5])
    expected = agent.act(np.repeat(obs[None, None], 3, axis=0).astype(np.float32))[:, 0]
    for k in range(3):
        action = agent.seed_policy(k)(obs)
        assert action.shape == (2,) and np.array_equal(action, expected[k])
    assert np.array_equal(agent.seed_policy()(obs), expected[0])  # a one-seed agent's policy by default
    assert not np.allclose(expected[0], expected[1])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here: acting on a GPU runs torch, not NumPy")
def test_acting_on_a_gpu_computes_what_the_cpu_computes() -> None:
    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    on_gpu = TD3(SPEC, AgentConfig(hidden_sizes=[8, 8]), cuda, [generators_of(seed, cuda) for seed in range(2)])
    on_cpu = TD3(SPEC, AgentConfig(hidden_sizes=[8, 8]), cpu, [generators_of(seed, cpu) for seed in range(2)])
    on_cpu.load_state_dict(on_gpu.state_dict())  # the same seeds give the same weights anyway: this makes sure
    obs = np.random.default_rng(0).normal(size=(2, 5, 3))  # float64, as MuJoCo gives them
    actions = on_gpu.act(obs)
    assert actions.shape == (2, 5, 2) and actions.dtype == np.float32
    np.testing.assert_allclose(actions, on_cpu.act(obs), rtol=0, atol=1e-5)
    batch = make_batch(seeds=2)
    metrics = on_gpu.update(Batch(*(field.to(cuda) for field in vars(batch).values())), record=True)
    assert metrics["critic_loss"].device.type == "cuda" and torch.isfinite(metrics["critic_loss"]).all()
