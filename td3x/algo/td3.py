"""TD3: Twin Delayed Deep Deterministic policy gradient (Fujimoto, van Hoof & Meger, ICML 2018).

``TD3.update`` is one iteration of the paper's Algorithm 1, in its order, and the file reads in that order: the
target rules (the smoothed target action ã and its bootstrap value), the TD target y, the two losses (the regions
``run.compile`` compiles), then the agent. Each of the three components is a number, not a code path:
``n_critics`` (clipped double Q, 1 = off), ``policy_delay`` (delayed policy updates, 1 = off) and
``target_policy_noise`` (target policy smoothing, 0 = off). Actions are normalised to [-1, 1]; the env wrapper
rescales them to the env's bounds.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from td3x.algo.envs import EnvSpec
from td3x.algo.function_types import Policy
from td3x.algo.networks import Actor, CriticEnsemble
from td3x.algo.normalizer import make_normalizer
from td3x.algo.precision import loss_autocast
from td3x.algo.replay_buffer import Batch
from td3x.algo.seeding import Generators
from td3x.config.enums import Precision, TargetRule
from td3x.config.schema import AgentConfig


# ---------------------------------------------------------------------- target rules (agent.target_rule)
# Each returns the bootstrap value of s' (already normalised) given the smoothing noise ε (K, n_actors, N, A):
# shape (K, 1, N), or (K, n_critics, N) with one row per critic.
def smooth(action: Tensor, noise: Tensor) -> Tensor:
    """Target policy smoothing: a + ε, then clipped to the action range (σ̃ = 0: ε = 0, a unchanged)."""
    return (action + noise).clamp(-1.0, 1.0)


def clipped_double_q(agent: TD3, next_obs: Tensor, noise: Tensor) -> Tensor:
    """TD3, Eq. 10: min_i Q_θ'i(s', ã) with ã = π_φ'(s') + ε (one critic: plain Q_θ'(s', ã))."""
    next_action = smooth(agent.actor_target(next_obs)[:, 0], noise[:, 0])
    return agent.critic_target(next_obs, next_action).min(dim=1, keepdim=True).values


def double_dqn(agent: TD3, next_obs: Tensor, noise: Tensor) -> Tensor:
    """DDQN-AC, Eq. 8: Q_θ'(s', π_φ(s') + ε): the *current* actor chooses the target action."""
    next_action = smooth(agent.actor(next_obs)[:, 0], noise[:, 0])
    return agent.critic_target(next_obs, next_action).min(dim=1, keepdim=True).values


def double_q(agent: TD3, next_obs: Tensor, noise: Tensor) -> Tensor:
    """DQ-AC, Eq. 9: y_1 = r + γ Q_θ'2(s', π_φ1(s') + ε) and y_2 = r + γ Q_θ'1(s', π_φ2(s') + ε)."""
    next_actions = smooth(agent.actor(next_obs), noise)  # (K, 2, N, A): each current actor's smoothed action
    crossed = agent.critic_target(next_obs, next_actions.flip(1))  # row j: Q_θ'j at the *other* actor's action
    return crossed.flip(1)  # row i: Q_θ'(other i)(s', π_φi(s')), the target of critic i


TARGET_RULES = {
    TargetRule.clipped_double_q: clipped_double_q,
    TargetRule.ddqn: double_dqn,
    TargetRule.dq_ac: double_q,
}


@torch.no_grad()
def td_target(agent: TD3, batch: Batch, noise: Tensor) -> Tensor:
    """y = r + γ(1 - terminated) · (the target rule's value of s' given the smoothing noise ε): only a true terminal
    state cuts the bootstrap, never a time-limit truncation. Shape (K, 1, N), or (K, n_critics, N) when each critic
    has its own. A function of its arguments: it draws nothing."""
    next_value = agent.target_value(agent, agent.obs_normalizer(batch.next_obs), noise).float()  # y in fp32
    not_terminal = 1.0 - batch.terminated.unsqueeze(1)
    return batch.reward.unsqueeze(1) + agent.discount * not_terminal * next_value


# ---------------------------------------------------------------------- the two losses (run.compile compiles these)
def critic_loss(agent: TD3, batch: Batch, obs: Tensor, noise: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Σ_i N⁻¹ Σ (y - Q_θi(s, a))² of each seed (K,), with Q (K, n_critics, N) and y; ``obs`` is ``batch.obs`` as
    the networks see it (normalised)."""
    y = td_target(agent, batch, noise)  # y ← r + γ min_i Q_θ'i(s', ã)
    q = agent.critic(obs, batch.action).float()  # Q_θi(s, a); under bf16 the loss is still reduced in fp32
    return ((q - y) ** 2).mean(dim=-1).sum(dim=-1), q, y


def actor_loss(agent: TD3, obs: Tensor) -> Tensor:
    """-N⁻¹ Σ Q_θ1(s, π_φ(s)) of each seed (K,); with DQ-AC's two actors, actor i follows critic i."""
    return -agent.critic(obs, agent.actor(obs), n_members=agent.n_actors).float().mean(dim=-1).sum(dim=-1)


class TD3:
    """The actors π_φ, the critics Q_θ1..Q_θn, their targets π_φ', Q_θ'i and their optimisers, for K seeds.

    Every tensor has the seed dim first: K independent agents (``run.num_seeds``; K = 1 for a plain run) whose
    weights are stacked, updated by one call on one batch per seed. Their losses are summed, and each seed's
    parameters get the gradient of its own loss only (Adam is element-wise), so seed k learns exactly as it
    would alone, up to floating-point rounding.

    Args:
        spec: observation and action sizes of the env.
        config: the agent's hyper-parameters (paper symbols in ``td3x.config.schema.AgentConfig``).
        device: where the networks live.
        generators: one set per seed: ``weights`` draws its initial weights, ``smoothing`` its target smoothing noise ε.
        normalize_obs: whether the networks see running-mean/std normalised observations (``env.normalize_obs``).
        compile: run the two losses through ``torch.compile`` (``run.compile``): the same math, fused kernels.
        precision: the dtype of the networks' matrix products in the losses (``run.precision``,
            :mod:`td3x.algo.precision`).
    """

    def __init__(
        self,
        spec: EnvSpec,
        config: AgentConfig,
        device: torch.device,
        generators: Sequence[Generators],
        normalize_obs: bool = False,
        compile: bool = False,
        precision: Precision = Precision.fp32,
    ) -> None:
        self.discount, self.tau, self.policy_delay = config.discount, config.tau, config.policy_delay
        self.target_policy_noise, self.target_noise_clip = config.target_policy_noise, config.target_noise_clip
        self.n_actors, self.target_value = config.n_actors, TARGET_RULES[config.target_rule]
        self.device, self.n_seeds = device, len(generators)
        # σ̃ and c are in agent.noise_units: ε is drawn in those, then scaled to normalised units per action dim
        self.noise_scale = torch.as_tensor(spec.noise_scale(config.noise_units), dtype=torch.float32, device=device)
        self.smoothing_generators = [g.smoothing for g in generators]
        hidden, init, init_generators = (
            list(config.hidden_sizes),
            config.final_layer_init,
            [g.weights for g in generators],
        )
        self.obs_normalizer = make_normalizer(normalize_obs, self.n_seeds, spec.obs_dim).to(device)
        self.actor = Actor(spec.obs_dim, spec.action_dim, hidden, init_generators, config.n_actors, init).to(device)
        self.critic = CriticEnsemble(
            spec.obs_dim, spec.action_dim, hidden, config.n_critics, init_generators, config.critic_action_layer, init
        ).to(device)
        self.actor_target = copy.deepcopy(self.actor).requires_grad_(False)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        # fused: one kernel per parameter instead of a dozen element-wise passes (4x faster on 2 CPU cores)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=config.actor_lr, fused=True)
        self.critic_optimizer = torch.optim.Adam(
            critic_param_groups(self.critic, config.critic_weight_decay), lr=config.critic_lr, fused=True
        )
        self.actor_params, self.critic_params = list(self.actor.parameters()), list(self.critic.parameters())
        # run.compile: the two losses, from the target y to the reductions, are the compiled regions; the noise draw,
        # the optimiser steps and the Polyak updates run eagerly
        self.critic_loss = torch.compile(critic_loss) if compile else critic_loss
        self.actor_loss = torch.compile(actor_loss) if compile else actor_loss
        self.loss_precision = loss_autocast(precision, device)  # around each loss, never an optimiser step
        self.num_updates = 0  # critic updates so far; the delay d counts these, never env steps
        self.delay_origin = 0  # d counts the critic updates since this one (moved by restart_delay)
        self.last_actor_loss: Tensor | None = None  # the last actor step's, detached (for actor_metrics)

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Deterministic actions π_φ1(s) in [-1, 1] (no exploration noise): (K, B, obs_dim) -> (K, B, action_dim),
        B observations for each seed's actor."""
        if self.device.type == "cpu":
            return self.actor.act_numpy(self.obs_normalizer.normalize_numpy(np.asarray(obs, dtype=np.float32)))
        with torch.no_grad():
            obs_tensor = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
            return self.actor(self.obs_normalizer(obs_tensor))[:, 0].cpu().numpy()

    def seed_policy(self, seed_index: int = 0) -> Policy:
        """Seed k's policy alone: observation (obs_dim,) -> action (action_dim,) (for videos and single envs)."""
        return lambda obs: self.act(np.repeat(np.asarray(obs)[None, None], self.n_seeds, axis=0))[seed_index, 0]

    @torch.no_grad()
    def critic_values(self, obs: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Q_θi(s, a) of every critic for each seed's raw observations and actions: (K, n_critics, N)."""
        obs_tensor = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        action_tensor = torch.as_tensor(actions, dtype=torch.float32, device=self.device)
        return self.critic(self.obs_normalizer(obs_tensor), action_tensor).cpu().numpy()

    def update(self, batch: Batch, record: bool = False) -> dict[str, Tensor]:
        """One iteration of Algorithm 1 on a sampled mini-batch, in its order: a critic step and, every d-th update
        (d = ``policy_delay``), an actor step and the Polyak updates of the targets.

        With ``record``, returns each seed's metrics as detached (K,) tensors (converted to floats only when the
        loop logs them): this update's critic statistics and the last actor step's (none before the first);
        otherwise nothing, so that updates between log rows pay for no statistics. Recording draws no random
        numbers: it changes no result.
        """
        self.num_updates += 1  # t: the delay counts critic updates, never env steps
        obs = self.obs_normalizer(batch.obs)  # s, as the networks see it
        noise = self.smoothing_noise(batch.action.shape)  # ε ~ clip(N(0, σ̃), -c, c)
        with self.loss_precision():
            critic_loss, q, y = self.critic_loss(self, batch, obs, noise)  # y and Σ_i N⁻¹ Σ (y - Q_θi(s, a))²
        optimizer_step(self.critic_optimizer, critic_loss.sum(), self.critic_params)  # θ_i ← argmin_θi
        if self.is_actor_step():  # if t mod d then
            with self.loss_precision():
                actor_loss = self.actor_loss(self, obs)  # -N⁻¹ Σ Q_θ1(s, π_φ(s))
            optimizer_step(self.actor_optimizer, actor_loss.sum(), self.actor_params)  # φ along ∇_φ J(φ)
            self.last_actor_loss = actor_loss.detach()
            polyak_update(self.critic, self.critic_target, self.tau)  # θ'_i ← τθ_i + (1 - τ)θ'_i
            polyak_update(self.actor, self.actor_target, self.tau)  # φ' ← τφ + (1 - τ)φ'
        if not record:
            return {}
        return {
            "critic_loss": critic_loss.detach(),
            "target_mean": y.flatten(1).mean(1),
            "critic_grad_norm": grad_norm(self.critic_params),
            **q_statistics(q.detach()),
            **self.actor_metrics(),
        }

    def is_actor_step(self) -> bool:
        """Whether update t = ``num_updates`` (the one under way, else the last one made) steps the actor:
        t - t₀ ≡ 0 (mod d), t₀ the delay's origin (0 unless :meth:`restart_delay` moved it)."""
        return (self.num_updates - self.delay_origin) % self.policy_delay == 0

    def restart_delay(self) -> None:
        """Restart the delay's count: the next critic update is number 0 and also updates the actor (the 2018
        code's ``it % policy_freq == 0``, ``it`` counted from 0 in every ``train`` call)."""
        self.delay_origin = self.num_updates + 1

    def actor_metrics(self) -> dict[str, Tensor]:
        """The last actor step's loss and gradient norm, each seed's (K,); none before the first since the agent was
        made or loaded. The actor's gradients stay until its next step, so the norm is taken only when asked for."""
        if self.last_actor_loss is None:
            return {}
        return {"actor_loss": self.last_actor_loss, "actor_grad_norm": grad_norm(self.actor_params)}

    def smoothing_noise(self, action_shape: torch.Size) -> Tensor:
        """ε ~ clip(N(0, σ̃), -c, c) per seed, actor, sample and action dim: (K, n_actors, N, A), seed k's
        from its own generator (paper Appendix D); σ̃ and c in ``agent.noise_units``, ε in normalised units."""
        shape = (self.n_actors, *action_shape[1:])
        noise = torch.stack([torch.randn(shape, generator=g, device=self.device) for g in self.smoothing_generators])
        clipped = (noise * self.target_policy_noise).clamp(-self.target_noise_clip, self.target_noise_clip)
        return clipped * self.noise_scale

    def state_dict(self, seed_index: int | None = None) -> dict[str, Any]:
        """Every part's state; with ``seed_index``, seed k's alone, shaped as a one-seed agent's."""
        state = {name: getattr(self, name).state_dict() for name in STATE_PARTS}
        if seed_index is not None:
            state = select_seed(state, seed_index)
        return {**state, "num_updates": self.num_updates, "delay_origin": self.delay_origin}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for name in STATE_PARTS:
            getattr(self, name).load_state_dict(state[name])
        self.num_updates = int(state["num_updates"])
        self.delay_origin = int(state.get("delay_origin", 0))  # checkpoints before it never restarted the delay
        self.last_actor_loss = None  # no actor step since


def select_seed(state: Any, seed_index: int) -> Any:
    """Seed k's part of a nested state dict: every tensor with a leading seed dim sliced to [k : k + 1]
    (scalars such as Adam's step count are shared by the seeds and kept)."""
    if isinstance(state, dict):
        return {key: select_seed(value, seed_index) for key, value in state.items()}
    if isinstance(state, list):
        return [select_seed(value, seed_index) for value in state]
    if isinstance(state, Tensor) and state.dim() > 0:
        return state[seed_index : seed_index + 1].clone()
    return state


STATE_PARTS = (
    "actor",
    "critic",
    "actor_target",
    "critic_target",
    "actor_optimizer",
    "critic_optimizer",
    "obs_normalizer",
)


def critic_param_groups(critic: CriticEnsemble, weight_decay: float) -> list[dict[str, Any]]:
    """DDPG's critic regulariser (λ/2)‖W‖² on the hidden weights, not biases or the output layer (as OpenAI
    baselines); Adam's ``weight_decay=λ`` adds exactly its gradient λW."""
    decayed = critic.hidden_weights()
    decayed_ids = {id(p) for p in decayed}
    others = [p for p in critic.parameters() if id(p) not in decayed_ids]
    return [{"params": decayed, "weight_decay": weight_decay}, {"params": others, "weight_decay": 0.0}]


def optimizer_step(optimizer: torch.optim.Optimizer, loss: Tensor, params: Sequence[Tensor]) -> None:
    """Minimise ``loss`` over ``params`` only (the optimiser's); their gradients stay until the next step.

    ``backward(inputs=...)`` keeps the actor loss from filling the critic's gradients it never uses.
    """
    optimizer.zero_grad(set_to_none=True)
    loss.backward(inputs=params)
    optimizer.step()


def grad_norm(params: Sequence[Tensor]) -> Tensor:
    """‖∇‖₂ of the last step's gradients, separately for each seed (the leading dim): (K,)."""
    grads = [p.grad for p in params if p.grad is not None]
    return torch.stack([g.flatten(1).pow(2).sum(1) for g in grads]).sum(0).sqrt()


@torch.no_grad()
def polyak_update(online: nn.Module, target: nn.Module, tau: float) -> None:
    """θ' ← τθ + (1 - τ)θ' for every parameter (lerp is exact at τ = 1: the target becomes a copy)."""
    torch._foreach_lerp_(list(target.parameters()), list(online.parameters()), tau)


def q_statistics(q: Tensor) -> dict[str, Tensor]:
    """Each seed's mean Q_θ1 and Q_θ2 and the twins' mean disagreement |Q_θ1 - Q_θ2| (with two or more critics),
    from Q of shape (K, n_critics, N)."""
    stats = {"q1_mean": q[:, 0].mean(-1)}
    if q.shape[1] > 1:
        stats["q2_mean"] = q[:, 1].mean(-1)
        stats["q1_q2_abs_diff"] = (q[:, 0] - q[:, 1]).abs().mean(-1)
    return stats
