"""TD3.update as the paper's Algorithm 1: a critic step on every update and, every d-th (d = policy_delay), an
actor step and the Polyak updates of the targets; which updates are actor steps, as the agent tells the loop.
Tiny networks with set outputs where a value is checked by hand (helpers: test_td3_math.py)."""

from __future__ import annotations

import copy

import pytest
import torch
from test_td3_math import make_agent, make_batch, parameters_of_seed, set_constant_output

from td3x.td3 import TD3, polyak_update, smooth

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


def actor_steps(agent: TD3, updates: int) -> list[bool]:
    """Run ``updates`` updates; which of them were actor steps (the actor's metrics come with those only)."""
    return ["actor_loss" in agent.update(make_batch(), record=True) for _ in range(updates)]


# ---------------------------------------------------------------------- the two steps
def test_the_critic_step_moves_the_critics_only() -> None:
    agent = make_agent()
    batch = make_batch()
    before = snapshots(agent)
    assert agent.critic_step(batch, agent.obs_normalizer(batch.obs)) == {}  # no statistics unless asked for
    assert changed_modules(before, agent) == {"critic"}
    assert agent.num_updates == 0  # the update counts, not its steps
    metrics = agent.critic_step(batch, agent.obs_normalizer(batch.obs), record=True)
    assert list(metrics) == ["critic_loss", "target_mean", "critic_grad_norm", "q1_mean", "q2_mean", "q1_q2_abs_diff"]
    assert all(value.shape == (1,) for value in metrics.values())


def test_the_actor_step_moves_the_actor_only_and_not_the_targets() -> None:
    agent = make_agent(seeds=2)
    obs = agent.obs_normalizer(make_batch(seeds=2).obs)
    before = snapshots(agent)
    assert agent.actor_step(obs) == {}
    assert changed_modules(before, agent) == {"actor"}
    metrics = agent.actor_step(obs, record=True)
    assert list(metrics) == ["actor_loss", "actor_grad_norm"]
    assert all(value.shape == (2,) for value in metrics.values())  # one value per seed


def test_an_update_is_the_critic_step_then_the_actor_step_then_polyak() -> None:
    """Algorithm 1 by hand, bit for bit: the same three operations in this order give the same weights."""
    whole, by_hand = make_agent(policy_delay=1, tau=0.1), make_agent(policy_delay=1, tau=0.1)
    batch = make_batch()
    whole.update(batch)
    obs = by_hand.obs_normalizer(batch.obs)
    by_hand.critic_step(batch, obs)
    by_hand.actor_step(obs)
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
    agent = make_agent(policy_delay=2)
    critic_only = agent.update(make_batch(), record=True)  # update 1 of d = 2
    with_actor = agent.update(make_batch(), record=True)  # update 2: the actor's step too
    assert list(with_actor) == [*critic_only, "actor_loss", "actor_grad_norm"]


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
        assert ("actor_loss" in metrics) == actor_step


@pytest.mark.parametrize(("delay", "expected"), [(1, [0, 0, 0, 0]), (2, [1, 0, 1, 0]), (3, [2, 1, 0, 2])])
def test_updates_until_actor_step_counts_down_to_each_actor_step(delay: int, expected: list[int]) -> None:
    agent = make_agent(policy_delay=delay)
    seen = []
    for _ in expected:
        seen.append(agent.updates_until_actor_step())
        agent.update(make_batch())
    assert seen == expected


def test_restart_delay_makes_the_next_update_an_actor_update_then_every_d_th() -> None:
    """The 2018 code's ``it % policy_freq == 0`` with ``it`` from 0 in every ``train`` call (episode_end)."""
    agent = make_agent(policy_delay=3)
    assert actor_steps(agent, 1) == [False]  # update 1 of d = 3
    agent.restart_delay()
    assert agent.updates_until_actor_step() == 0
    assert actor_steps(agent, 4) == [True, False, False, True]
    agent.restart_delay()  # in the middle of the count
    assert actor_steps(agent, 4) == [True, False, False, True]


def test_last_actor_step_by_hand() -> None:
    """The loop records the last update before a log row and the last actor step among them: this one."""
    agent = make_agent(policy_delay=3)  # actor steps are updates 3, 6, 9...: indices 2, 5, 8 from now
    assert [agent.last_actor_step(n) for n in (1, 2, 3, 5, 6, 7, 9)] == [None, None, 2, 2, 5, 5, 8]
    agent.update(make_batch())
    assert [agent.last_actor_step(n) for n in (1, 2, 4, 5)] == [None, 1, 1, 4]
    agent.restart_delay()  # the next update is an actor step
    assert [agent.last_actor_step(n) for n in (1, 3, 4, 7)] == [0, 0, 3, 6]
    assert [make_agent(policy_delay=1).last_actor_step(n) for n in (1, 2, 5)] == [0, 1, 4]
    assert make_agent().last_actor_step(0) is None


@pytest.mark.parametrize("delay", [1, 2, 3])
def test_last_actor_step_names_the_update_that_steps_the_actor_last(delay: int) -> None:
    """What the agent announces is what its updates then do, from every point of the count, restarted or not."""
    agent = make_agent(policy_delay=delay)
    for restart in (False, False, True, False, True, True):
        if restart:
            agent.restart_delay()
        probe = make_agent(policy_delay=delay)
        probe.load_state_dict(copy.deepcopy(agent.state_dict()))  # the same count and origin
        steps = actor_steps(probe, 7)
        for n in range(1, 8):
            assert agent.last_actor_step(n) == max((i for i, step in enumerate(steps[:n]) if step), default=None)
        assert agent.updates_until_actor_step() == steps.index(True)
        agent.update(make_batch())


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
    assert loaded.updates_until_actor_step() == original.updates_until_actor_step() == 1
    for _ in range(3):
        steps = [("actor_loss" in agent.update(batch, record=True)) for agent in (original, loaded)]
        assert steps[0] == steps[1]
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
