"""The typed configuration of a td3x run: every key's type, default and allowed range lives here.

YAML files in ``conf/`` only choose and override these values. Hydra composes them, and
``OmegaConf.to_object`` turns the result into the dataclasses below; ``TrainConfig.__post_init__``
then checks every range and raises one :class:`ConfigError` listing *all* problems, one line each.
Code below the entrypoint receives these objects, never a ``DictConfig``.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import importlib.util
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

if TYPE_CHECKING:
    import torch


class ConfigError(ValueError):
    """A configuration that td3x refuses; ``problems`` holds one readable line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class NoiseKind(enum.Enum):
    gaussian = "gaussian"
    ornstein_uhlenbeck = "ornstein_uhlenbeck"
    none = "none"


class TargetRule(enum.Enum):
    clipped_double_q = "clipped_double_q"  # TD3 (Eq. 10): min over target critics at the target actor's action
    ddqn = "ddqn"  # DDQN-AC (Eq. 8): the target critic at the *current* actor's action
    dq_ac = "dq_ac"  # DQ-AC (Eq. 9): two actors; each critic bootstraps from the other target critic


class UpdateSchedule(enum.Enum):
    per_step = "per_step"  # updates_per_step updates after every env step (sfujim/TD3 since 2019)
    episode_end = "episode_end"  # as many updates as the episode had steps, at its end (the 2018 code)


class NoiseUnits(enum.Enum):
    normalized = "normalized"  # fractions of the half action range: one meaning on every env (sfujim since 2019)
    absolute = "absolute"  # the env's own action units, as the 2018 code (on ±3 bounds, a third in normalised units)


class Numerics(enum.Enum):
    native = "native"  # torch's fastest fp32 kernels for this CPU: same seed, same bits on one CPU model and build
    portable = "portable"  # MKL's COMPATIBLE branch, ATen's default kernels: meant for the same bits on any x86-64 CPU


class Precision(enum.Enum):
    fp32 = "fp32"  # every tensor and product in float32 (the default; the bits of runs before this key existed)
    bf16 = "bf16"  # the networks' matrix products in bfloat16 under autocast; weights, Adam, targets and losses fp32


class ResumeMode(enum.Enum):
    auto = "auto"  # resume from the run dir's checkpoint when its config matches; a finished run does nothing
    never = "never"  # refuse a run dir that already holds results


class Device(enum.Enum):
    auto = "auto"  # CUDA when torch sees a device, else the CPU
    cpu = "cpu"
    cuda = "cuda"

    def resolve(self) -> torch.device:
        """The torch device this choice means here."""
        import torch  # on first use: a config (and `td3x-sweep list`, `td3x-train --help`) loads without torch

        if self is Device.auto:
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return torch.device(self.value)


WANDB_MODES = ("online", "offline", "disabled")


def _conf_dir() -> Path:
    """The YAML groups: the package ``td3x.conf``, which pyproject.toml maps to the repository's top-level ``conf/``
    (a checkout, an editable install) and a wheel ships as ``td3x/conf``. An absolute path, so Hydra finds it
    whatever module or working directory td3x is started from."""
    spec = importlib.util.find_spec("td3x.conf")
    if spec is None or not spec.submodule_search_locations:  # a checkout on sys.path, not installed
        return Path(__file__).resolve().parent.parent / "conf"
    return Path(next(iter(spec.submodule_search_locations))).resolve()


CONF_DIR = _conf_dir()


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
        problems = [
            *self.env.problems(),
            *self.agent.problems(),
            *self.noise.problems(),
            *self.run.problems(),
            *self.logging.problems(),
            *self.seeds.problems(),
            *self._evaluation_set_problems(),
        ]
        if self.seed < 0:
            problems.append(f"seed={self.seed!r} is not allowed: must be an integer >= 0")
        if self.run.num_seeds > 1 and self.agent.update_schedule is UpdateSchedule.episode_end:
            problems.append(
                f"run.num_seeds={self.run.num_seeds} is not allowed with agent.update_schedule=episode_end: "
                "the seeds' episodes end at different steps; use 1, or update_schedule=per_step"
            )
        if problems:
            raise ConfigError(problems)

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


@dataclass
class ComposedConfig(TrainConfig):
    """A :class:`TrainConfig` composed from ``conf/``'s groups (``td3x.compose``), with the option chosen in each
    group (env, agent, noise, ablation; experiment when given), which training records in ``config.yaml`` beside the
    config. ``choices`` is no config key (the schema registered for Hydra is :class:`TrainConfig`, and
    :func:`to_container` leaves it out); ``dataclasses.replace`` keeps it."""

    choices: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, config: TrainConfig, choices: dict[str, str]) -> ComposedConfig:
        """``config`` with its group ``choices``."""
        return cls(**{name: getattr(config, name) for name in TRAIN_KEYS}, choices=dict(choices))


TRAIN_KEYS = tuple(entry.name for entry in dataclasses.fields(TrainConfig))  # a config's top-level keys


def register_configs() -> None:
    """Store the schemas under the ``schema`` group, so that ``Available options`` lists real choices only."""
    store = ConfigStore.instance()
    store.store(name="train_schema", node=TrainConfig)
    store.store(group="schema", name="env", node=EnvConfig)
    store.store(group="schema", name="agent", node=AgentConfig)
    store.store(group="schema", name="noise", node=NoiseConfig)


def schema_keys(schema: type = TrainConfig, prefix: str = "") -> list[str]:
    """Every dotted key of a schema dataclass, nodes (``agent``) and leaves (``agent.tau``) alike."""
    keys = []
    for name, hint in typing.get_type_hints(schema).items():
        keys.append(f"{prefix}{name}")
        if dataclasses.is_dataclass(hint):
            keys += schema_keys(hint, f"{prefix}{name}.")  # type: ignore[arg-type]
    return keys


def unknown_keys(container: dict[str, Any], schema: type = TrainConfig, prefix: str = "") -> list[str]:
    """The dotted keys of a composed config that ``schema`` lacks. A dict-typed field (``env.kwargs``, passed
    to ``gymnasium.make``) is free-form. Hydra lets ``+key=value`` add a key to a typed node and
    ``OmegaConf.to_object`` would then drop it silently: a typo must be refused, never lost."""
    hints = typing.get_type_hints(schema)
    found = []
    for key, value in container.items():
        if key not in hints:
            found.append(f"{prefix}{key}")
        elif dataclasses.is_dataclass(hints[key]) and isinstance(value, dict):
            found += unknown_keys(value, hints[key], f"{prefix}{key}.")
    return found


def unknown_key_problem(key: str) -> str:
    """One line naming an unknown key and the closest key td3x has."""
    same_depth = [known for known in schema_keys() if known.count(".") == key.count(".")]
    close = difflib.get_close_matches(key, same_depth, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else "td3x-train --help lists the keys"
    return f"{key} is not a td3x key; {hint}"


def _expected(hint: Any) -> str:
    """What a schema type accepts, in words: ``a float``, ``an integer or null``, ``one of gaussian, ...``."""
    args = typing.get_args(hint)
    if type(None) in args:
        return f"{_expected(next(arg for arg in args if arg is not type(None)))} or null"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return f"one of {', '.join(member.name for member in hint)}"
    origin = typing.get_origin(hint)
    if origin is list:
        return f"a list of {_expected(args[0]).removeprefix('a ').removeprefix('an ')}s" if args else "a list"
    if origin is dict:
        return "a mapping"
    names = {bool: "a boolean (true or false)", int: "an integer", float: "a float", str: "a string"}
    return names.get(hint, getattr(hint, "__name__", str(hint)))


def value_type_problem(key: str, value: Any, text: str) -> str | None:
    """One line when ``value`` (an override's parsed value, typed as ``text``) cannot be the schema key ``key``'s
    type, as OmegaConf would refuse it in Hydra's composition (``agent.tau=fast``, ``run.total_steps=1e3``);
    None when it can, or when ``key`` is not a leaf of the schema (a node, a free-form dict's entry)."""
    *path, leaf = key.split(".")
    schema: Any = TrainConfig
    for name in path:
        schema = typing.get_type_hints(schema).get(name)
        if schema is None or not dataclasses.is_dataclass(schema):
            return None
    hint = typing.get_type_hints(schema).get(leaf)
    if hint is None or dataclasses.is_dataclass(hint):
        return None
    try:
        OmegaConf.merge(OmegaConf.structured(schema), {leaf: value})
    except OmegaConfBaseException:
        return f"{key}={text!r} is not allowed: expected {_expected(hint)}"
    except ConfigError:  # the merge passed the type check; the ranges are checked later
        return None
    return None


def to_typed(cfg: Any) -> TrainConfig:
    """Turn a composed ``DictConfig`` into a checked ``TrainConfig`` (raises ConfigError, one line a problem,
    for unknown keys and for values out of range)."""
    container = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(container, dict)
    unknown = unknown_keys({str(key): value for key, value in container.items()})
    if unknown:
        raise ConfigError([unknown_key_problem(key) for key in unknown])
    typed = OmegaConf.to_object(cfg)
    assert isinstance(typed, TrainConfig), f"expected a TrainConfig, got {type(typed).__name__}"
    return typed


# blocks a run's config.yaml holds beside the config: the Hydra group choices and each source's effective seed
RECORDED_BESIDE = ("choices", "effective_seeds")


def from_saved(saved: dict[str, Any]) -> TrainConfig:
    """The checked ``TrainConfig`` of a stored config (a run's ``config.yaml`` or a checkpoint's): keys this td3x
    lacks are refused, missing ones take their defaults. Raises ConfigError."""
    stored = {key: value for key, value in saved.items() if key not in RECORDED_BESIDE}
    try:
        return to_typed(OmegaConf.merge(OmegaConf.structured(TrainConfig), stored))
    except OmegaConfBaseException as error:
        raise ConfigError([f"the stored config does not fit this td3x: {' '.join(str(error).split())}"]) from error


def to_container(config: TrainConfig) -> dict[str, Any]:
    """The resolved config as plain Python types (enums as their names), for YAML, JSON and W&B: the config keys
    only (a :class:`ComposedConfig`'s ``choices`` are recorded beside them)."""
    container = OmegaConf.to_container(OmegaConf.structured(config), resolve=True, enum_to_str=True)
    assert isinstance(container, dict)
    return {str(key): value for key, value in container.items() if key in TRAIN_KEYS}


def flatten(container: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested config as dotted keys, ``{"agent.tau": 0.005, ...}``; an empty dict (``env.kwargs``) is one value."""
    flat: dict[str, Any] = {}
    for key, value in container.items():
        if isinstance(value, dict) and value:
            flat |= flatten(value, f"{prefix}{key}.")
        else:
            flat[f"{prefix}{key}"] = value
    return flat
