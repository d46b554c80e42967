"""TD3.update as the paper's Algorithm 1: a critic step on every update and, every d-th (d = policy_delay), an
actor step and the Polyak updates of the targets; which updates are actor steps, and the metrics the loop records.
And the math checked by hand on tiny networks with set outputs (helpers: helpers/agents.py): the targets of each rule
(paper Eq. 8-10), target policy smoothing (Appendix D), the K-seed stacking, the optimisers and acting."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers.agents import SPEC, make_agent, make_batch, parameters_of_seed, set_actor_output, set_constant_output

from td3x.algo.envs import EnvSpec, env_spec, make_env
from td3x.algo.replay_buffer import Batch
from td3x.algo.seeding import generators_of
from td3x.algo.td3 import TD3, actor_loss, critic_loss, optimizer_step, polyak_update, smooth, td_target
from td3x.config.enums import NoiseUnits, Precision, TargetRule
from td3x.config.schema import AgentConfig, TrainConfig

MakeConfig = Callable[..., TrainConfig]
CPU = torch.device("cpu")

MODULES = ("actor", "critic", "actor_target", "critic_target")


def snapshot(module: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in module.parameters()]


def changed(before: list[torch.Tensor], module: torch.nn.Module) -> bool:
    return any(not torch.equal(b, p) for b, p in zip(before, module.parameters(), strict=True))


def snapshots(agent: TD3) -> dict[str, list[torch.Tensor]]:
    return {name: snapshot(getattr(agent, name)) for name in MODULES}


def changed_modules(before: dict[str, list[torch.Tensor]], agent: TD3) -> set[str]:
    return {name for name in MODULES if changed(before[name], getattr(agent, name))}


def equal_lists(first: list[torch.Tensor], second: list[torch.Tensor]) -> bool:
    return all(torch.equal(a, b) for a, b in zip(first, second, strict=True))


def actor_steps(agent: TD3, updates: int, make: Callable[[], Batch] = make_batch) -> list[bool]:
    """Run ``updates`` updates; which of them were actor steps (moved the actor)."""
    moved = []
    for _ in range(updates):
        before = snapshot(agent.actor)
        agent.update(make())
        moved.append(changed(before, agent.actor))
    return moved


def target_without_noise(agent: TD3, batch: Batch) -> torch.Tensor:
    """y with ε = 0 (the same y as any ε where σ̃ = 0 or the target critics are constant)."""
    return td_target(agent, batch, torch.zeros(batch.action.shape[0], agent.n_actors, *batch.action.shape[1:]))


# ---------------------------------------------------------------------- the update's order
def test_an_update_is_the_critic_step_then_the_actor_step_then_polyak() -> None:
    """Algorithm 1 by hand, bit for bit: ε, the critic step, the actor step, the two Polyak updates in this order
    give the same weights."""
    whole, by_hand = make_agent(policy_delay=1, tau=0.1), make_agent(policy_delay=1, tau=0.1)
    batch = make_batch()
    whole.update(batch)
    obs = by_hand.obs_normalizer(batch.obs)
    loss, _, _ = critic_loss(by_hand, batch, obs, by_hand.smoothing_noise(batch.action.shape))
    optimizer_step(by_hand.critic_optimizer, loss.sum(), by_hand.critic_params)
    optimizer_step(by_hand.actor_optimizer, actor_loss(by_hand, obs).sum(), by_hand.actor_params)
    polyak_update(by_hand.critic, by_hand.critic_target, 0.1)
    polyak_update(by_hand.actor, by_hand.actor_target, 0.1)
    for name in MODULES:
        assert equal_lists(snapshot(getattr(whole, name)), snapshot(getattr(by_hand, name))), name


def test_recording_changes_nothing_learned_and_draws_no_random_numbers() -> None:
    """Statistics are computed only when asked for; asking changes no weight, no Adam moment, no generator."""
    quiet, recording = make_agent(seeds=2), make_agent(seeds=2)
    for _ in range(4):
        batch = make_batch(seeds=2)
        assert quiet.update(batch) == {}
        assert recording.update(batch, record=True)
    for k in range(2):
        assert equal_lists(parameters_of_seed(quiet, k), parameters_of_seed(recording, k))
    for name in ("actor_optimizer", "critic_optimizer"):
        moments = [getattr(agent, name).state_dict()["state"][0]["exp_avg_sq"] for agent in (quiet, recording)]
        assert torch.equal(*moments)
    for first, second in zip(quiet.smoothing_generators, recording.smoothing_generators, strict=True):
        assert torch.equal(first.get_state(), second.get_state())


def test_the_metrics_of_a_recorded_update_name_their_steps() -> None:
    agent = make_agent(seeds=2, policy_delay=2)
    assert agent.update(make_batch(seeds=2)) == {}  # no statistics unless asked for
    with_actor = agent.update(make_batch(seeds=2), record=True)  # update 2 of d = 2: an actor step
    assert list(with_actor) == [
        "critic_loss",
        "target_mean",
        "critic_grad_norm",
        "q1_mean",
        "q2_mean",
        "q1_q2_abs_diff",
        "actor_loss",
        "actor_grad_norm",
    ]
    assert all(value.shape == (2,) for value in with_actor.values())  # one value per seed
    first = make_agent(policy_delay=2).update(make_batch(), record=True)  # update 1: no actor step yet
    assert list(first) == list(with_actor)[:-2]


@pytest.mark.parametrize("delay", [2, 3])
def test_a_recorded_update_reports_the_last_actor_steps_metrics(delay: int) -> None:
    """Between actor steps, the actor's loss and gradient norm are those of the last one, from every point of the
    count, restarted or not (the loop records one update per log row)."""
    agent = make_agent(policy_delay=delay)
    last: dict[str, float] = {}
    for restart in (False, False, True, False, True, True, False):
        if restart:
            agent.restart_delay()
        before = snapshot(agent.actor)
        metrics = agent.update(make_batch(), record=True)
        if changed(before, agent.actor):  # an actor step: its gradients, by hand
            gradients = torch.cat([p.grad.flatten() for p in agent.actor.parameters() if p.grad is not None])
            last = {"actor_loss": metrics["actor_loss"].item(), "actor_grad_norm": gradients.norm().item()}
        assert {name: metrics[name].item() for name in last} == pytest.approx(last)
        assert ("actor_loss" in metrics) == bool(last)


# ---------------------------------------------------------------------- which updates are actor steps
@pytest.mark.parametrize(
    ("delay", "expected"),
    [
        (1, [True, True, True, True, True, True, True]),
        (2, [False, True, False, True, False, True, False]),
        (3, [False, False, True, False, False, True, False]),
    ],
)
def test_the_actor_and_the_targets_move_on_every_d_th_update_only(delay: int, expected: list[bool]) -> None:
    agent = make_agent(policy_delay=delay)
    for actor_step in expected:
        before = snapshots(agent)
        metrics = agent.update(make_batch(), record=True)
        moved = {"critic", "actor", "actor_target", "critic_target"} if actor_step else {"critic"}
        assert changed_modules(before, agent) == moved  # the targets move by Polyak, on actor steps only
        assert agent.is_actor_step() == actor_step  # of the update just made
        assert ("actor_loss" in metrics) == (True in expected[: agent.num_updates])  # the last actor step's


def test_restart_delay_makes_the_next_update_an_actor_update_then_every_d_th() -> None:
    """The 2018 code's ``it % policy_freq == 0`` with ``it`` from 0 in every ``train`` call (episode_end)."""
    agent = make_agent(policy_delay=3)
    assert actor_steps(agent, 1) == [False]  # update 1 of d = 3
    agent.restart_delay()
    assert actor_steps(agent, 4) == [True, False, False, True]
    agent.restart_delay()  # in the middle of the count
    assert actor_steps(agent, 4) == [True, False, False, True]


def test_a_loaded_agent_continues_exactly_with_its_update_count_and_delay_origin() -> None:
    """num_updates and the delay's origin travel with the weights: the actor then steps on the same updates."""
    original = make_agent(policy_delay=2, target_policy_noise=0.0)  # σ̃ = 0: no generator state to carry
    batch = make_batch()
    original.update(batch)
    original.update(batch)
    original.restart_delay()  # an odd origin: the actor's updates fall on other counts than num_updates % d
    original.update(batch)
    loaded = make_agent(policy_delay=2, target_policy_noise=0.0)
    loaded.load_state_dict(copy.deepcopy(original.state_dict()))  # as a checkpoint file: Adam's moments not shared
    assert (loaded.num_updates, loaded.delay_origin) == (3, 3)
    assert loaded.actor_metrics() == {}  # no actor step since it was loaded
    assert actor_steps(original, 3) == actor_steps(loaded, 3) == [False, True, False]  # t - t₀ = 1, 2, 3
    assert equal_lists(parameters_of_seed(original, 0), parameters_of_seed(loaded, 0))
    older = {key: value for key, value in original.state_dict().items() if key != "delay_origin"}
    loaded.load_state_dict(older)  # a checkpoint written before the origin existed never restarted the delay
    assert loaded.delay_origin == 0


# ---------------------------------------------------------------------- what the steps compute
def set_linear_critic(critic: torch.nn.Module, slope: tuple[float, float]) -> None:
    """Make every critic Q(s, a) = slope · (a + 2) whatever s: the action passes through both ReLU layers
    (a + 2 > 0 for a in [-1, 1]) and the output layer weighs it by ``slope``."""
    first, second, last = critic.layers  # type: ignore[attr-defined]
    with torch.no_grad():
        for layer in (first, second, last):
            layer.weight.zero_()
            layer.bias.zero_()
        for j in range(2):
            first.weight[..., 3 + j, j] = 1.0  # the inputs are (s ‖ a), obs_dim = 3
            first.bias[..., j] = 2.0
            second.weight[..., j, j] = 1.0
            last.weight[..., j, 0] = slope[j]


def test_an_actor_step_climbs_q1() -> None:
    """The actor maximises Q_θ1(s, π_φ(s)) (gradient ascent, Algorithm 1): with ∂Q/∂a = (1, -2), one step
    raises Q_θ1(s, π_φ(s)), moving action 0 up and action 1 down."""
    agent = make_agent(policy_delay=1, actor_lr=1e-2)
    set_linear_critic(agent.critic, (1.0, -2.0))
    agent.critic_optimizer.param_groups[0]["lr"] = agent.critic_optimizer.param_groups[1]["lr"] = 0.0
    batch = make_batch(n=32)
    before_action = agent.actor(batch.obs)[:, 0]
    before_q = agent.critic(batch.obs, before_action, n_members=1).mean().item()
    agent.update(batch)
    after_action = agent.actor(batch.obs)[:, 0]
    assert agent.critic(batch.obs, after_action, n_members=1).mean().item() > before_q + 1e-3
    shift = (after_action - before_action).mean(dim=(0, 1))
    assert shift[0] > 0 > shift[1]


def test_critic_loss_sums_each_critics_mse() -> None:
    agent = make_agent(discount=0.5)
    set_constant_output(agent.critic_target, [3.0, 5.0])
    set_constant_output(agent.critic, [2.0, 4.0])
    assert agent.update(make_batch(reward=1.0)) == {}  # no statistics unless asked for
    set_constant_output(agent.critic, [2.0, 4.0])
    metrics = agent.update(make_batch(reward=1.0), record=True)
    assert metrics["critic_loss"].item() == pytest.approx((2.5 - 2.0) ** 2 + (2.5 - 4.0) ** 2)
    assert metrics["q1_mean"].item() == pytest.approx(2.0) and metrics["q2_mean"].item() == pytest.approx(4.0)
    assert metrics["target_mean"].item() == pytest.approx(2.5)
    assert metrics["actor_loss"].item() == pytest.approx(-2.0, rel=1e-2)  # -N⁻¹ Σ Q_θ1(s, π(s)) after one critic step
    assert metrics["q1_q2_abs_diff"].item() == pytest.approx(2.0)
    assert "actor_grad_norm" in metrics  # update 2 of d = 2: the actor
    gradients = torch.cat([p.grad.flatten() for p in agent.critic.parameters() if p.grad is not None])
    assert metrics["critic_grad_norm"].item() == pytest.approx(gradients.norm().item())  # ‖∇θ‖₂ of every critic
    actor_gradients = torch.cat([p.grad.flatten() for p in agent.actor.parameters() if p.grad is not None])
    assert metrics["actor_grad_norm"].item() == pytest.approx(actor_gradients.norm().item())


def test_each_update_uses_its_own_next_draw_of_smoothing_noise() -> None:
    """ε of update n is the n-th draw of the seed's generator (drawn once per update): runs repeat exactly."""
    agent = make_agent(discount=0.5, n_critics=1, target_policy_noise=0.2)
    generator = torch.Generator().set_state(agent.smoothing_generators[0].get_state())
    batch = make_batch()
    for _ in range(2):
        noise = (0.2 * torch.randn((1, 4, 2), generator=generator)).clamp(-0.5, 0.5)[None]
        next_action = smooth(agent.actor_target(batch.next_obs)[:, 0], noise[:, 0])
        expected = 1.0 + 0.5 * agent.critic_target(batch.next_obs, next_action)
        assert agent.update(batch, record=True)["target_mean"].item() == pytest.approx(expected.mean().item())


def test_tau_one_copies_and_tau_half_averages() -> None:
    agent = make_agent(tau=1.0, policy_delay=1)
    agent.update(make_batch())
    for online, target in ((agent.actor, agent.actor_target), (agent.critic, agent.critic_target)):
        assert all(torch.equal(p, t) for p, t in zip(online.parameters(), target.parameters(), strict=True))
    online, target = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    expected = [
        0.5 * p.detach() + 0.5 * t.detach() for p, t in zip(online.parameters(), target.parameters(), strict=True)
    ]
    polyak_update(online, target, 0.5)
    assert all(torch.allclose(t, e) for t, e in zip(target.parameters(), expected, strict=True))


def test_actor_follows_q1_only() -> None:
    """The actor's gradient comes from Q_θ1: changing Q_θ2 leaves the actor's update unchanged."""
    results = []
    for q2_scale in (1.0, -50.0):
        agent = make_agent(policy_delay=1)
        with torch.no_grad():  # a very different Q_θ2 (a min or a mean over critics would follow it)
            for layer in agent.critic.layers:
                layer.weight[:, 1].mul_(q2_scale)
        agent.critic_optimizer.param_groups[0]["lr"] = 0.0  # keep the critics fixed
        agent.update(make_batch())
        results.append(snapshot(agent.actor))
    assert all(torch.equal(a, b) for a, b in zip(*results, strict=True))


def test_target_takes_min_of_twin_target_critics() -> None:
    agent = make_agent(discount=0.5, n_critics=2)
    set_constant_output(agent.critic_target, [3.0, 5.0])
    y = target_without_noise(agent, make_batch(reward=1.0))
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
    assert torch.allclose(target_without_noise(agent, batch), 1.0 + 0.5 * with_target)


def test_target_smooths_the_target_action_with_the_given_noise() -> None:
    """y = r + γ min_i Q_θ'i(s', clip(π_φ'(s') + ε, -1, 1)) for the ε passed in: with Q_θ'i(s', a) = (a_0 + 2) +
    (a_1 + 2) and π_φ'(s') = 0, ε = (0.3, -0.2) gives 1 + 0.5 · 4.1 and ε = (0.3, 1.5) is clipped to (0.3, 1)."""
    agent = make_agent(discount=0.5)
    set_linear_critic(agent.critic_target, (1.0, 1.0))
    set_actor_output(agent.actor_target, 0.0)  # tanh(0) = 0
    batch = make_batch(reward=1.0)
    for epsilon, expected in (((0.3, -0.2), 1.0 + 0.5 * 4.1), ((0.3, 1.5), 1.0 + 0.5 * 5.3)):
        noise = torch.tensor(epsilon).expand(1, 1, 4, 2)
        assert torch.allclose(td_target(agent, batch, noise), torch.full((1, 1, 4), expected))


def test_single_critic_target_has_no_min() -> None:
    agent = make_agent(discount=0.5, n_critics=1)
    set_constant_output(agent.critic_target, [5.0])
    y = target_without_noise(agent, make_batch(reward=1.0))
    assert torch.allclose(y, torch.full_like(y, 3.5))  # 1 + 0.5 * 5


def test_terminated_cuts_the_bootstrap() -> None:
    agent = make_agent(discount=0.5)
    set_constant_output(agent.critic_target, [3.0, 5.0])
    y = target_without_noise(agent, make_batch(reward=1.0, terminated=1.0))
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


# ---------------------------------------------------------------------- K seeds in one agent (run.num_seeds)
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
    assert torch.allclose(target_without_noise(agent, batch), 1.0 + 0.5 * current)
    assert not torch.allclose(current, stale)


def test_dq_ac_each_critic_bootstraps_from_the_other() -> None:
    """DQ-AC (Eq. 9): y_1 = r + γ Q_θ'2(s', π_φ1(s')), y_2 = r + γ Q_θ'1(s', π_φ2(s'))."""
    agent = make_agent(target_rule=TargetRule.dq_ac, n_critics=2, discount=0.5)
    set_constant_output(agent.critic_target, [3.0, 5.0])
    y = target_without_noise(agent, make_batch(reward=1.0))[0]
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
    y = target_without_noise(agent, batch)[0]
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


def test_critic_weight_decay_acts_on_hidden_weights_only() -> None:
    agent = make_agent(critic_weight_decay=0.01)
    decayed, others = agent.critic_optimizer.param_groups
    assert decayed["weight_decay"] == 0.01 and others["weight_decay"] == 0.0
    assert [p.shape for p in decayed["params"]] == [(1, 2, 5, 8), (1, 2, 8, 8)]
    assert len(others["params"]) == 4  # the three biases and the output layer's weight


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


# ---------------------------------------------------------------------- noise units (agent=td3_paper)
def tiny_agent(**values: object) -> TD3:
    config = AgentConfig(hidden_sizes=[8], **values)  # type: ignore[arg-type]
    return TD3(EnvSpec(obs_dim=3, action_dim=2), config, CPU, [generators_of(0, CPU)])


def test_td3_paper_target_smoothing_on_inverted_pendulum(make_config: MakeConfig, tmp_path: Path) -> None:
    """ε ~ clip(N(0, 0.2), -0.5, 0.5) in the env's own units: a third of td3's ε from the same draws."""
    paper = make_config("agent=td3_paper", "env=inverted_pendulum", "agent.buffer_size=1000")
    assert paper.agent.noise_units is NoiseUnits.absolute
    spec = env_spec(make_env(paper.env))
    absolute = TD3(spec, paper.agent, CPU, [generators_of(0, CPU)])
    normalized = TD3(spec, AgentConfig(hidden_sizes=[400, 300]), CPU, [generators_of(0, CPU)])
    shape = torch.Size((1, 20_000, 1))
    epsilon, epsilon_normalized = absolute.smoothing_noise(shape), normalized.smoothing_noise(shape)
    assert torch.allclose(epsilon, epsilon_normalized / 3.0)
    in_env_units = 3.0 * epsilon
    assert in_env_units.abs().max().item() == pytest.approx(0.5)  # the clip c, in the env's units
    assert (in_env_units.abs() > 0.4999).float().mean().item() == pytest.approx(0.0124, abs=0.003)  # P(|N| > 2.5)
    assert in_env_units.std().item() == pytest.approx(0.2, rel=0.03)


def test_absolute_units_change_nothing_on_unit_bounds() -> None:
    spec = EnvSpec(obs_dim=3, action_dim=2, action_half_range=(1.0, 1.0))
    agents = [TD3(spec, AgentConfig(hidden_sizes=[8], noise_units=u), CPU, [generators_of(0, CPU)]) for u in NoiseUnits]
    first, second = (agent.smoothing_noise(torch.Size((1, 100, 2))) for agent in agents)
    assert torch.equal(first, second)


# ---------------------------------------------------------------------- the 2018 schedule: the delay per burst
def batch(n: int = 4) -> Batch:
    generator = torch.Generator().manual_seed(1)
    return Batch(
        obs=torch.randn(1, n, 3, generator=generator),
        action=torch.rand(1, n, 2, generator=generator) * 2 - 1,
        reward=torch.ones(1, n),
        next_obs=torch.randn(1, n, 3, generator=generator),
        terminated=torch.zeros(1, n),
    )


def actor_updates(agent: TD3, bursts: list[int], restart: bool) -> list[bool]:
    updated = []
    for length in bursts:
        if restart:
            agent.restart_delay()
        updated += actor_steps(agent, length, batch)
    return updated


@pytest.mark.parametrize("delay", [2, 3])
def test_delay_per_burst_is_the_2018_code_s_it_modulo_d(delay: int) -> None:
    bursts = [3, 2, 5, 1]
    assert actor_updates(tiny_agent(policy_delay=delay), bursts, restart=True) == [
        it % delay == 0 for n in bursts for it in range(n)
    ]
    assert actor_updates(tiny_agent(policy_delay=delay), bursts, restart=False) == [
        (i + 1) % delay == 0
        for i in range(sum(bursts))  # the authors' current code: d counts every update
    ]


def test_delay_origin_survives_a_checkpoint() -> None:
    agent = tiny_agent()
    actor_updates(agent, [3], restart=True)
    agent.restart_delay()
    restored = tiny_agent()
    restored.load_state_dict(copy.deepcopy(agent.state_dict()))
    assert (restored.num_updates, restored.delay_origin) == (3, 4)
    expected = [True, False, True]
    assert actor_updates(restored, [3], restart=False) == actor_updates(agent, [3], restart=False) == expected


# ---------------------------------------------------------------------- what the update leaves behind
def test_the_losses_are_the_plain_functions_unless_compile_is_asked_for() -> None:
    """`run.compile` is off by default: the agent computes its losses with the module's functions, not compiled
    copies (compiling only changes speed, and costs a compile before the first update)."""
    agent = make_agent()
    assert agent.critic_loss is critic_loss and agent.actor_loss is actor_loss


def test_the_actor_step_leaves_the_critic_s_gradients_as_the_critic_loss_made_them() -> None:
    """The logged `critic_grad_norm` is the critic loss's: the actor's backward fills the actor's gradients only.
    At update 1 a delay of 1 steps the actor and a delay of 2 does not; their critic steps are the same."""
    with_actor, without_actor = make_agent(policy_delay=1), make_agent(policy_delay=2)
    batch = make_batch()
    stepped, not_stepped = (agent.update(batch, record=True) for agent in (with_actor, without_actor))
    assert "actor_loss" in stepped and "actor_loss" not in not_stepped
    torch.testing.assert_close(stepped["critic_loss"], not_stepped["critic_loss"], rtol=0, atol=0)
    torch.testing.assert_close(stepped["critic_grad_norm"], not_stepped["critic_grad_norm"], rtol=0, atol=0)


def test_a_bf16_agent_computes_its_losses_under_autocast_on_its_own_device() -> None:
    """run.precision=bf16: each loss runs under bfloat16 autocast on the agent's device (here the CPU; td3x's
    front door refuses bf16 on a CPU without bf16 units, the agent itself does not)."""
    agent = TD3(SPEC, AgentConfig(hidden_sizes=[8, 8]), CPU, [generators_of(0, CPU)], precision=Precision.bf16)
    with agent.loss_precision():
        assert torch.is_autocast_enabled("cpu") and torch.get_autocast_dtype("cpu") == torch.bfloat16
    metrics = agent.update(make_batch(), record=True)
    assert torch.isfinite(metrics["critic_loss"]).all()
