"""The typed configuration of a td3x run: every key's type, default and allowed range lives here.

YAML files in ``conf/`` only choose and override these values. Hydra composes them, and
``OmegaConf.to_object`` turns the result into the dataclasses below; ``TrainConfig.__post_init__``
then checks every range and raises one :class:`ConfigError` listing *all* problems, one line each.
Code below the entrypoint receives these objects, never a ``DictConfig``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from td3x.config.enums import Device, NoiseKind, NoiseUnits, Numerics, Precision, ResumeMode, TargetRule, UpdateSchedule
from td3x.config.value_types import type_problems


class ConfigError(ValueError):
    """A configuration that td3x refuses; ``problems`` holds one readable line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


WANDB_MODES = ("online", "offline", "disabled")


class _Checks:
    """Collects problems as ``key = value: allowed``; one instance per validation pass."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.problems: list[str] = []

    def require(self, key: str, value: Any, ok: bool, allowed: str) -> None:
        if not ok:
            self.problems.append(f"{self.prefix}{key}={value!r} is not allowed: {allowed}")

    def positive(self, key: str, value: float) -> None:
        self.require(key, value, math.isfinite(value) and value > 0, "must be > 0")

    def non_negative(self, key: str, value: float) -> None:
        self.require(key, value, math.isfinite(value) and value >= 0, "must be >= 0")

    def at_least_one(self, key: str, value: int) -> None:
        self.require(key, value, value >= 1, "must be an integer >= 1")


@dataclass
class EnvConfig:
    """Which Gymnasium environment to train on (paper §6.1: the MuJoCo tasks, here their v5 ids)."""

    id: str = "Pendulum-v1"  # a registered Gymnasium id with a bounded Box action space
    kwargs: dict[str, Any] = field(default_factory=dict)  # passed to gymnasium.make
    random_steps: int = 1000  # paper's start_timesteps: uniform random actions while t < random_steps
    normalize_obs: bool = False  # running mean/std of observations (DDPG's baseline), frozen during evaluation

    def problems(self) -> list[str]:
        checks = _Checks("env.")
        checks.require("id", self.id, bool(self.id), "must name a registered Gymnasium env")
        checks.require("random_steps", self.random_steps, self.random_steps >= 0, "must be an integer >= 0")
        return checks.problems


@dataclass
class AgentConfig:
    """TD3's hyper-parameters. Defaults are the authors' current ones (sfujim/TD3 since 2019)."""

    hidden_sizes: list[int] = field(default_factory=lambda: [256, 256])  # actor and critic hidden layers
    actor_lr: float = 3e-4  # Adam learning rate of the actor (φ)
    critic_lr: float = 3e-4  # Adam learning rate of the critics (θ_i)
    batch_size: int = 256  # N
    discount: float = 0.99  # γ
    tau: float = 0.005  # τ: θ' ← τθ + (1 - τ)θ'
    policy_delay: int = 2  # d: actor and targets update every d critic updates (1 = no delay)
    n_critics: int = 2  # the target takes the min over all critics (1 = no clipped double Q)
    target_policy_noise: float = 0.2  # σ̃ of target policy smoothing (0 = no smoothing)
    target_noise_clip: float = 0.5  # c: ε ~ clip(N(0, σ̃), -c, c)
    buffer_size: int = 1_000_000  # replay buffer capacity in transitions (the paper keeps all 1M)
    updates_per_step: int = 1  # critic updates per env step (per_step schedule)
    update_schedule: UpdateSchedule = UpdateSchedule.per_step
    # env step from which each step earns updates_per_step updates; null: max(env.random_steps, batch_size).
    # 0 with episode_end is the 2018 code, which trained from its first episode's end on, warm-up included
    update_start: int | None = None
    # the delay d counts the critic updates of each burst (the updates run together), from its first, which also
    # updates the actor: the 2018 code's `it % policy_freq == 0` in every train() call. false: d counts every
    # critic update of the run (the authors' current code)
    delay_per_burst: bool = False
    # units of noise.std, target_policy_noise and target_noise_clip; absolute is the 2018 code's (td3_paper)
    noise_units: NoiseUnits = NoiseUnits.normalized
    target_rule: TargetRule = TargetRule.clipped_double_q
    critic_action_layer: int = 0  # the critic layer the action enters: 0 = with the state (TD3), 1 = DDPG's second
    critic_weight_decay: float = 0.0  # λ of (λ/2)‖W‖² on the critic's hidden weights (DDPG: 1e-2)
    final_layer_init: float | None = None  # U(±x) for the last layers (DDPG: 3e-3); null = PyTorch's default

    @property
    def n_actors(self) -> int:
        """DQ-AC trains a pair of actors, one per critic; every other rule one actor."""
        return 2 if self.target_rule is TargetRule.dq_ac else 1

    def problems(self) -> list[str]:
        checks = _Checks("agent.")
        self._network_problems(checks)
        self._update_problems(checks)
        return checks.problems

    def _network_problems(self, checks: _Checks) -> None:
        sizes = list(self.hidden_sizes)
        checks.require(
            "hidden_sizes",
            sizes,
            bool(sizes) and all(s >= 1 for s in sizes),
            "must be a non-empty list of integers >= 1",
        )
        checks.at_least_one("n_critics", self.n_critics)
        checks.require(
            "n_critics",
            self.n_critics,
            self.target_rule is not TargetRule.dq_ac or self.n_critics == 2,
            "must be 2 with agent.target_rule=dq_ac (one critic per actor)",
        )
        checks.require(
            "critic_action_layer",
            self.critic_action_layer,
            0 <= self.critic_action_layer <= len(sizes),
            f"must be in [0, {len(sizes)}] (0 = the input layer; one per hidden layer after it)",
        )
        checks.non_negative("critic_weight_decay", self.critic_weight_decay)
        if self.final_layer_init is not None:
            checks.positive("final_layer_init", self.final_layer_init)

    def _update_problems(self, checks: _Checks) -> None:
        checks.positive("actor_lr", self.actor_lr)
        checks.positive("critic_lr", self.critic_lr)
        checks.at_least_one("batch_size", self.batch_size)
        checks.require("discount", self.discount, 0.0 <= self.discount <= 1.0, "must be in [0, 1]")
        checks.require("tau", self.tau, 0.0 < self.tau <= 1.0, "must be in (0, 1]")
        checks.at_least_one("policy_delay", self.policy_delay)
        checks.non_negative("target_policy_noise", self.target_policy_noise)
        checks.non_negative("target_noise_clip", self.target_noise_clip)
        checks.at_least_one("buffer_size", self.buffer_size)
        checks.require(
            "buffer_size",
            self.buffer_size,
            self.buffer_size >= self.batch_size,
            f"must be >= agent.batch_size ({self.batch_size})",
        )
        checks.at_least_one("updates_per_step", self.updates_per_step)
        if self.update_start is not None:
            checks.require("update_start", self.update_start, self.update_start >= 0, "must be null or an integer >= 0")
        checks.require(
            "delay_per_burst",
            self.delay_per_burst,
            not self.delay_per_burst or self.update_schedule is UpdateSchedule.episode_end,
            "needs agent.update_schedule=episode_end (per_step bursts are single updates: d would never delay)",
        )


@dataclass
class NoiseConfig:
    """Exploration noise added to the actor's action during training (never during evaluation)."""

    kind: NoiseKind = NoiseKind.gaussian  # the exploration noise added to π(s) after the random warm-up
    std: float = 0.1  # σ of N(0, σ) (or of the OU process), in agent.noise_units (normalised [-1, 1] by default)
    theta: float = 0.15  # OU mean reversion θ (Lillicrap et al. 2016)
    dt: float = 1e-2  # OU time step (OpenAI baselines' default)
    final_std: float | None = None  # Gaussian only: std falls linearly to this over decay_steps env steps
    decay_steps: int = 0  # env steps over which std falls to final_std

    def problems(self) -> list[str]:
        checks = _Checks("noise.")
        checks.non_negative("std", self.std)
        checks.non_negative("theta", self.theta)
        checks.positive("dt", self.dt)
        if self.final_std is not None:
            checks.non_negative("final_std", self.final_std)
            checks.at_least_one("decay_steps", self.decay_steps)
        checks.require("decay_steps", self.decay_steps, self.decay_steps >= 0, "must be an integer >= 0")
        return checks.problems


@dataclass
class RunConfig:
    """Length of the run and the paper's evaluation protocol (§6.1), checkpointing and threads."""

    total_steps: int = 1_000_000  # env steps of the run (each env option sets its own budget)
    eval_every: int = 5000  # env steps between evaluations (paper: 5000)
    eval_episodes: int = 10  # noise-free episodes per evaluation (paper: 10)
    # episode i of every evaluation starts from reset(seed=eval_seed + i), for every seed of the process;
    # null: each training seed its own start states (TrainConfig.eval_seed)
    eval_seed: int | None = None
    checkpoint_every: int = 50_000  # env steps between checkpoints (one is also written at the end)
    resume: ResumeMode = ResumeMode.auto
    keep_buffer: bool = False  # keep the replay buffer in the final checkpoint (needed to extend a finished run)
    log_every: int = 1000  # env steps between training-metric rows
    device: Device = Device.auto  # where the networks and their updates run
    num_threads: int = 1  # torch intra-op threads; part of the config because it changes float results
    num_seeds: int = 1  # K: train seeds seed .. seed + K - 1 in this process, stacked (run dirs seed_<seed>)
    compile: bool = False  # torch.compile the critic and actor losses (same math; pays a compile at start)
    # fp32 kernels: native (fastest here; same bits on the same CPU model and library builds) or portable (meant for
    # the same bits on any x86-64 CPU; about 0.4x the speed); see the docs' "Same bits on other CPUs"
    numerics: Numerics = Numerics.native
    # the dtype of the networks' matrix products in the updates: fp32, or bf16 where the hardware has bf16 units (a
    # CUDA GPU, or a CPU with avx512_bf16 or AMX); see the docs' "Precision"
    precision: Precision = Precision.fp32

    def problems(self) -> list[str]:
        checks = _Checks("run.")
        keys = ("total_steps", "eval_every", "eval_episodes", "checkpoint_every", "log_every", "num_threads")
        for key in (*keys, "num_seeds"):
            checks.at_least_one(key, getattr(self, key))
        if self.eval_seed is not None:  # Gymnasium refuses a negative reset seed, at the first evaluation
            checks.require("eval_seed", self.eval_seed, self.eval_seed >= 0, "must be null or an integer >= 0")
        if self.numerics is Numerics.portable:  # portable pins fp32 kernels; bf16 products have no portable bits
            allowed = "must be fp32 with run.numerics=portable (its same-bits promise covers fp32 kernels only)"
            checks.require("precision", self.precision.name, self.precision is Precision.fp32, allowed)
        return checks.problems


@dataclass
class LoggingConfig:
    """Where metrics go besides the run dir's own files (which are always written)."""

    wandb_mode: str = "${oc.env:WANDB_MODE,offline}"  # online | offline | disabled
    project: str = "td3x"  # the W&B project
    group: str | None = None  # the sweep's name: runs of one sweep share a W&B group
    tags: list[str] = field(default_factory=list)  # extra W&B tags (env, agent, row and seed are always added)
    video_every: int | None = None  # env steps between videos of evaluation episode 0 (null: none; ~0.1 s a frame)

    def problems(self) -> list[str]:
        checks = _Checks("logging.")
        checks.require(
            "wandb_mode", self.wandb_mode, self.wandb_mode in WANDB_MODES, f"must be one of {', '.join(WANDB_MODES)}"
        )
        if self.video_every is not None:
            checks.at_least_one("video_every", self.video_every)
        return checks.problems


# The training sources of randomness, each seeded on its own (SeedsConfig); the evaluation start states are the
# seventh source, seeded by run.eval_seed (null: they follow the seed, by the rule below)
SEED_SOURCES = ("weights", "env", "warmup", "exploration", "replay", "smoothing")


@dataclass
class SeedsConfig:
    """The seed of each source of randomness. Null: the source follows ``seed`` (seed + k for the k-th of
    run.num_seeds), bit for bit as before these keys existed. Set: the source is pinned, the same for every seed of
    the process; pinned to s, it draws exactly what ``seed=s`` would draw. Evaluation start states: run.eval_seed."""

    weights: int | None = None  # the actors' and critics' initial weights (their targets start as copies)
    env: int | None = None  # the training env: its first reset is reset(seed=this), later resets continue its RNG
    warmup: int | None = None  # the uniform random actions of the env.random_steps warm-up
    exploration: int | None = None  # the exploration noise added to the actor's actions after the warm-up
    replay: int | None = None  # which transitions each mini-batch samples from the replay buffer
    smoothing: int | None = None  # target policy smoothing's noise ε (TPS, paper §5.3)
    # sets of evaluation start states per evaluation, from one trained policy: set j's episode i starts from
    # reset(seed=eval_seed + j * run.eval_episodes + i); set 0 is eval.csv's return_mean, set j its return_mean_set_<j>
    evaluation_sets: int = 1

    def problems(self) -> list[str]:
        checks = _Checks("seeds.")
        for name in SEED_SOURCES:
            value = getattr(self, name)
            if value is not None:  # numpy's SeedSequence and Gymnasium's reset refuse a negative seed
                checks.require(name, value, value >= 0, "must be null (follow seed) or an integer >= 0")
        checks.at_least_one("evaluation_sets", self.evaluation_sets)
        return checks.problems

    def effective(self, seed: int) -> dict[str, int]:
        """Each training source's seed for training seed ``seed``: its pinned value, else ``seed``."""
        return {name: seed if getattr(self, name) is None else getattr(self, name) for name in SEED_SOURCES}


# Evaluation start states when run.eval_seed is null: episode i of training seed s starts from
# reset(seed=EVAL_SEED_BASE + EVAL_SEED_STRIDE * s + i). Two seeds share none for up to EVAL_SEED_STRIDE episodes
# (td3x's earlier seed + 100 + i gave seeds 0 and 1 nine of ten start states in common, correlating their
# evaluations), and none equals a training reset seed (the training env is reset once, with seed s) below BASE.
EVAL_SEED_BASE = 1_000_000


EVAL_SEED_STRIDE = 1000
MAX_SEED = 2**32 - 1  # numpy's global seed (np.random.seed) takes no larger


@dataclass
class TrainConfig:
    """One training run: the composed result of the env, agent, noise and ablation groups."""

    env: EnvConfig = field(default_factory=EnvConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    noise: NoiseConfig = field(default_factory=NoiseConfig)
    run: RunConfig = field(default_factory=RunConfig)
    logging: LoggingConfig = field(default_factory=LoggingConfig)
    seeds: SeedsConfig = field(default_factory=SeedsConfig)
    seed: int = 0  # seeds torch, numpy, the envs and the noise: same seed, same machine, same numbers
    paper_row: str = "TD3"  # the Table 2 row this config reproduces; set by the ablation option

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise ConfigError(problems)

    def problems(self) -> list[str]:
        """Every type, then range, problem, one line each: checked when the config is built, and again before
        training (a field set afterwards, ``config.run.total_steps = 0``, skips the first check)."""
        wrong_types = type_problems(self)
        if wrong_types:  # the range checks would compare them
            return wrong_types
        problems = [
            *self.env.problems(),
            *self.agent.problems(),
            *self.noise.problems(),
            *self.run.problems(),
            *self.logging.problems(),
            *self.seeds.problems(),
            *self._evaluation_set_problems(),
        ]
        last_seed = MAX_SEED - (self.run.num_seeds - 1)  # a K-seeds process trains seed .. seed + K - 1
        if not 0 <= self.seed <= last_seed:
            stacked = f" with run.num_seeds={self.run.num_seeds}" if self.run.num_seeds > 1 else ""
            problems.append(f"seed={self.seed!r} is not allowed: must be an integer in [0, {last_seed}]{stacked}")
        if self.run.num_seeds > 1 and self.agent.update_schedule is UpdateSchedule.episode_end:
            problems.append(
                f"run.num_seeds={self.run.num_seeds} is not allowed with agent.update_schedule=episode_end: "
                "the seeds' episodes end at different steps; use 1, or update_schedule=per_step"
            )
        return problems

    def _evaluation_set_problems(self) -> list[str]:
        """Each seed's own evaluation start states hold EVAL_SEED_STRIDE episodes: the sets must fit in them."""
        episodes = self.seeds.evaluation_sets * self.run.eval_episodes
        if self.run.eval_seed is not None or episodes <= EVAL_SEED_STRIDE:
            return []
        return [
            f"seeds.evaluation_sets={self.seeds.evaluation_sets} is not allowed with run.eval_episodes="
            f"{self.run.eval_episodes}: sets x episodes must be <= {EVAL_SEED_STRIDE} (a seed's own start states)"
        ]

    @property
    def source_seeds(self) -> dict[str, int]:
        """The effective seed of every source: the training sources' (:meth:`SeedsConfig.effective`) and
        ``evaluation``, the first evaluation episode's reset seed (:attr:`eval_seed`)."""
        return {**self.seeds.effective(self.seed), "evaluation": self.eval_seed}

    @property
    def eval_seed(self) -> int:
        """The first evaluation episode's reset seed: ``run.eval_seed``, else this seed's own (EVAL_SEED_BASE)."""
        return EVAL_SEED_BASE + EVAL_SEED_STRIDE * self.seed if self.run.eval_seed is None else self.run.eval_seed

    @property
    def update_start(self) -> int:
        """The env step from which each step earns updates: ``agent.update_start``, else max(random_steps, N)."""
        start = self.agent.update_start
        return max(self.env.random_steps, self.agent.batch_size) if start is None else start

    @property
    def makes_no_update(self) -> bool:
        """Whether the run ends before its first update: step t earns updates from t = :attr:`update_start` on, and
        the last step is ``run.total_steps`` - 1. Each of its evaluations is then the untrained policy's, whatever
        the agent or the ablation."""
        return self.run.total_steps <= self.update_start

    def no_update_warning(self) -> str | None:
        """One line saying why the run :attr:`makes_no_update` and what to change; None when it updates."""
        if not self.makes_no_update:
            return None
        start = self.agent.update_start
        source = (
            f"agent.update_start={start}"
            if start is not None
            else f"max(env.random_steps={self.env.random_steps}, agent.batch_size={self.agent.batch_size})"
        )
        return (
            f"run.total_steps={self.run.total_steps} makes no update: updates start at env step {self.update_start} "
            f"({source}), so every evaluation is of the untrained policy, whatever the agent or ablation; train more "
            f"than {self.update_start} steps for the agent to learn"
        )
