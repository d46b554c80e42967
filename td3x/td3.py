"""TD3: Twin Delayed Deep Deterministic policy gradient (Fujimoto, van Hoof & Meger, ICML 2018).

``TD3.update`` is one iteration of the paper's Algorithm 1, in its order. Each of the three components
is a number, not a code path: ``n_critics`` (clipped double Q, 1 = off), ``policy_delay`` (delayed
policy updates, 1 = off) and ``target_policy_noise`` (target policy smoothing, 0 = off).
Actions are normalised to [-1, 1]; the env wrapper rescales them to the env's bounds.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from td3x.config import AgentConfig, TargetRule
from td3x.envs import EnvSpec
from td3x.networks import Actor, CriticEnsemble
from td3x.normalizer import make_normalizer
from td3x.replay_buffer import Batch


class TD3:
    """The actor π_φ, the critics Q_θ1..Q_θn, their targets π_φ', Q_θ'i and their optimisers.

    Args:
        spec: observation and action sizes of the env.
        config: the agent's hyper-parameters (paper symbols in ``td3x.config.AgentConfig``).
        device: where the networks live.
        generator: the source of the target smoothing noise ε (seeded by the run, saved in checkpoints).
        normalize_obs: whether the networks see running-mean/std normalised observations (``env.normalize_obs``).
    """

    def __init__(
        self,
        spec: EnvSpec,
        config: AgentConfig,
        device: torch.device,
        generator: torch.Generator,
        normalize_obs: bool = False,
    ) -> None:
        self.discount, self.tau, self.policy_delay = config.discount, config.tau, config.policy_delay
        self.target_policy_noise, self.target_noise_clip = config.target_policy_noise, config.target_noise_clip
        self.n_actors, self.target_value = config.n_actors, TARGET_RULES[config.target_rule]
        self.device, self.generator = device, generator
        hidden, init = list(config.hidden_sizes), config.final_layer_init
        self.obs_normalizer = make_normalizer(normalize_obs, spec.obs_dim).to(device)
        self.actor = Actor(spec.obs_dim, spec.action_dim, hidden, config.n_actors, init).to(device)
        self.critic = CriticEnsemble(
            spec.obs_dim, spec.action_dim, hidden, config.n_critics, config.critic_action_layer, init
        ).to(device)
        self.actor_target = copy.deepcopy(self.actor).requires_grad_(False)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=config.actor_lr)
        self.critic_optimizer = torch.optim.Adam(
            critic_param_groups(self.critic, config.critic_weight_decay), lr=config.critic_lr
        )
        self.num_updates = 0  # critic updates so far; the delay d counts these, never env steps

    @torch.no_grad()
    def act(self, obs: np.ndarray) -> np.ndarray:
        """The deterministic action π_φ1(s) in [-1, 1] for one observation (no exploration noise)."""
        obs_tensor = torch.as_tensor(obs, dtype=torch.float32, device=self.device).reshape(1, -1)
        return self.actor(self.obs_normalizer(obs_tensor))[0, 0].cpu().numpy()

    @torch.no_grad()
    def critic_values(self, obs: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Q_θi(s, a) of every critic for a batch of raw observations and actions: (n_critics, N)."""
        obs_tensor = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        action_tensor = torch.as_tensor(actions, dtype=torch.float32, device=self.device)
        return self.critic(self.obs_normalizer(obs_tensor), action_tensor).cpu().numpy()

    def update(self, batch: Batch) -> dict[str, Tensor]:
        """One critic update and, every ``policy_delay`` updates, one actor and target update.

        Returns detached scalar tensors (converted to floats only when the loop logs them).
        """
        self.num_updates += 1
        target = self.td_target(batch)  # y
        obs = self.obs_normalizer(batch.obs)
        q = self.critic(obs, batch.action)  # Q_θi(s, a), shape (n_critics, N)
        critic_loss = ((q - target) ** 2).mean(dim=1).sum()  # Σ_i N⁻¹ Σ (y - Q_θi(s, a))²
        metrics = {
            "critic_loss": critic_loss.detach(),
            "target_mean": target.mean(),
            "critic_grad_norm": optimizer_step(self.critic_optimizer, critic_loss, self.critic),
            **q_statistics(q.detach()),
        }
        if self.num_updates % self.policy_delay == 0:  # delayed policy updates: every d-th critic update
            # -N⁻¹ Σ Q_θ1(s, π_φ(s)); with DQ-AC's two actors, actor i follows critic i
            actor_loss = -self.critic(obs, self.actor(obs), n_members=self.n_actors).mean(dim=1).sum()
            metrics["actor_grad_norm"] = optimizer_step(self.actor_optimizer, actor_loss, self.actor)
            metrics["actor_loss"] = actor_loss.detach()
            polyak_update(self.critic, self.critic_target, self.tau)  # θ'_i ← τθ_i + (1 - τ)θ'_i
            polyak_update(self.actor, self.actor_target, self.tau)  # φ' ← τφ + (1 - τ)φ'
        return metrics

    @torch.no_grad()
    def td_target(self, batch: Batch) -> Tensor:
        """y = r + γ(1 - terminated) · (the target rule's value of s'): only a true terminal state cuts the
        bootstrap, never a time-limit truncation. Shape (N,), or (n_critics, N) when each critic has its own."""
        next_value = self.target_value(self, self.obs_normalizer(batch.next_obs))
        return batch.reward + self.discount * (1.0 - batch.terminated) * next_value

    def smooth(self, action: Tensor) -> Tensor:
        """Target policy smoothing: a + ε, ε ~ clip(N(0, σ̃), -c, c) per sample and action dim, then clipped
        to the action range (paper Appendix D). σ̃ = 0 returns the action unchanged."""
        noise = torch.randn(action.shape, generator=self.generator, device=action.device, dtype=action.dtype)
        noise = (noise * self.target_policy_noise).clamp(-self.target_noise_clip, self.target_noise_clip)
        return (action + noise).clamp(-1.0, 1.0)

    def state_dict(self) -> dict[str, Any]:
        return {**{name: getattr(self, name).state_dict() for name in STATE_PARTS}, "num_updates": self.num_updates}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for name in STATE_PARTS:
            getattr(self, name).load_state_dict(state[name])
        self.num_updates = int(state["num_updates"])


STATE_PARTS = (
    "actor",
    "critic",
    "actor_target",
    "critic_target",
    "actor_optimizer",
    "critic_optimizer",
    "obs_normalizer",
)


# ---------------------------------------------------------------------- target rules (agent.target_rule)
# Each returns the bootstrap value of s' (already normalised): shape (N,), or one row per critic.
def clipped_double_q(agent: TD3, next_obs: Tensor) -> Tensor:
    """TD3, Eq. 10: min_i Q_θ'i(s', ã) with ã = π_φ'(s') + ε (one critic: plain Q_θ'(s', ã))."""
    next_action = agent.smooth(agent.actor_target(next_obs)[0])
    return agent.critic_target(next_obs, next_action).min(dim=0).values


def double_dqn(agent: TD3, next_obs: Tensor) -> Tensor:
    """DDQN-AC, Eq. 8: Q_θ'(s', π_φ(s') + ε): the *current* actor chooses the target action."""
    next_action = agent.smooth(agent.actor(next_obs)[0])
    return agent.critic_target(next_obs, next_action).min(dim=0).values


def double_q(agent: TD3, next_obs: Tensor) -> Tensor:
    """DQ-AC, Eq. 9: y_1 = r + γ Q_θ'2(s', π_φ1(s') + ε) and y_2 = r + γ Q_θ'1(s', π_φ2(s') + ε)."""
    next_actions = agent.smooth(agent.actor(next_obs))  # (2, N, A): each current actor's smoothed action
    crossed = agent.critic_target(next_obs, next_actions.flip(0))  # row j: Q_θ'j at the *other* actor's action
    return crossed.flip(0)  # row i: Q_θ'(other i)(s', π_φi(s')), the target of critic i


TARGET_RULES = {
    TargetRule.clipped_double_q: clipped_double_q,
    TargetRule.ddqn: double_dqn,
    TargetRule.dq_ac: double_q,
}


def critic_param_groups(critic: CriticEnsemble, weight_decay: float) -> list[dict[str, Any]]:
    """DDPG's critic regulariser (λ/2)‖W‖² on the hidden weights, not biases or the output layer (as OpenAI
    baselines); Adam's ``weight_decay=λ`` adds exactly its gradient λW."""
    decayed = critic.hidden_weights()
    decayed_ids = {id(p) for p in decayed}
    others = [p for p in critic.parameters() if id(p) not in decayed_ids]
    return [{"params": decayed, "weight_decay": weight_decay}, {"params": others, "weight_decay": 0.0}]


def optimizer_step(optimizer: torch.optim.Optimizer, loss: Tensor, module: nn.Module) -> Tensor:
    """Minimise ``loss`` over ``module``'s parameters only; returns their gradient norm (detached).

    ``backward(inputs=...)`` keeps the actor loss from filling the critic's gradients it never uses.
    """
    params = [p for p in module.parameters() if p.requires_grad]
    optimizer.zero_grad(set_to_none=True)
    loss.backward(inputs=params)
    grad_norm = torch.nn.utils.get_total_norm([p.grad for p in params if p.grad is not None])
    optimizer.step()
    return grad_norm


@torch.no_grad()
def polyak_update(online: nn.Module, target: nn.Module, tau: float) -> None:
    """θ' ← τθ + (1 - τ)θ' for every parameter (lerp is exact at τ = 1: the target becomes a copy)."""
    torch._foreach_lerp_(list(target.parameters()), list(online.parameters()), tau)


def q_statistics(q: Tensor) -> dict[str, Tensor]:
    """Mean Q_θ1 and Q_θ2 and the twins' mean disagreement |Q_θ1 - Q_θ2| (when there are two or more)."""
    stats = {"q1_mean": q[0].mean()}
    if q.shape[0] > 1:
        stats["q2_mean"] = q[1].mean()
        stats["q1_q2_abs_diff"] = (q[0] - q[1]).abs().mean()
    return stats
