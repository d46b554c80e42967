"""What the pre-registration file fixes for each registered two-group comparison (``peer``, ``bf16``,
``bf16_fp32_tanh``, ``paper_horizon``) and env: the two sides and their seeds, the runs' length and precision, the
statistic's steps, the bound, the level, the Holm family and the design's MDD, all read from the file through
:mod:`td3x.analysis.registration` (the report's ``registered`` module judges the runs by it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from td3x.analysis.peer import PEER_ROW
from td3x.analysis.registration import (
    REGISTERED_HORIZON_FIRST_SEED,
    REGISTERED_PEER_FIRST_SEED,
    REGISTERED_PEER_STEPS,
    Registration,
)
from td3x.analysis.tables import number

SECTIONS = ("peer", "bf16", "bf16_fp32_tanh", "paper_horizon")
HOLM_FIRST_STEP_MDD = "mdd_holm_first_step"  # peer and bf16: the difference test at α / 2 in a family of two


@dataclass(frozen=True)
class Design:
    """One registered comparison on one env.

    Attributes:
        section: the file's section (``peer``, ``bf16``, ``bf16_fp32_tanh``, ``paper_horizon``).
        env_id: the env.
        labels: our side's label and the other's.
        seeds: the registered seeds of our side and of the other (none for the authors).
        precision: our side's ``run.precision`` (the other's, where it has runs, is fp32).
        last_step: T, the runs' ``run.total_steps`` and the statistic's last step.
        first_step: the statistic's first step (paper_horizon), None where it starts after env.random_steps.
        bound: the registered equivalence bound (return units).
        mdd: the file's MDD of the difference test (NaN where the file has none yet).
        mdd_design: the seeds, SDs and level that MDD assumes, in words.
        family: the section's Holm family (envs).
        alpha: ``common.alpha``.
        pending: why no test is run ('' when one is): the file does not fix this design yet, or it registers the
            env as not run.
        not_run: the file registers the env as not run (peer.computed.<env>.decision): no test will come, and its
            family does not wait for it.
        table1_at_5: paper_horizon: the file's table1_mean_at_5_of_their_seeds.
        assumed_sd: the SD of the statistic over seeds the design assumed for our side and the other (the file's
            pilots'; the authors' for both at the paper's horizon), from which its MDD and power follow.
        arm: an amendment's section, whose runs of our side share their config with another section's runs but
            not their code (bf16_fp32_tanh: bf16 after the change to the actor's tanh): the report's general tables
            give them a row of their own, named by it; None elsewhere.
    """

    section: str
    env_id: str
    labels: tuple[str, str]
    seeds: tuple[tuple[int, ...], tuple[int, ...]]
    precision: str
    last_step: int
    first_step: int | None
    bound: float
    mdd: float
    mdd_design: str
    family: tuple[str, ...]
    alpha: float
    pending: str = ""
    not_run: bool = False
    table1_at_5: float | None = None
    assumed_sd: tuple[float, float] = (float("nan"), float("nan"))
    arm: str | None = None

    @property
    def bound_origin(self) -> str:
        """Where the bound comes from: ``registered (<section>.computed.<env>.bound)``."""
        key = "computed.bound" if self.section == "paper_horizon" else f"computed.{self.env_id}.bound"
        return f"registered ({self.section}.{key})"


def designs(registration: Registration) -> list[Design]:
    """Every registered two-group comparison of the file, per section and env, in the file's order."""
    alpha = float(registration.value("common.alpha"))
    found = [_peer(registration, env, alpha) for env in registration.value("peer.envs")]
    found += [_bf16(registration, env, alpha) for env in registration.value("bf16.envs")]
    found += [_bf16_fp32_tanh(registration, env, alpha) for env in registration.value("bf16_fp32_tanh.envs")]
    return [*found, _horizon(registration, alpha)]


def _seeds(first: int, n: Any) -> tuple[int, ...]:
    return tuple(range(first, first + int(n))) if isinstance(n, int) else ()


def _number(numbers: Any, key: str) -> float:
    """``numbers[key]`` as a float, NaN where the file has no number there (yet)."""
    value = numbers.get(key) if isinstance(numbers, dict) else None
    return float(value) if isinstance(value, int | float) else float("nan")


def _family(registration: Registration, section: str) -> tuple[str, ...]:
    return tuple(map(str, registration.value(f"{section}.family")))


def _peer(registration: Registration, env_id: str, alpha: float) -> Design:
    computed = registration.mapping(f"peer.computed.{env_id}")
    n_td3x, n_sb3 = computed.get("n_td3x"), computed.get("n_sb3")
    pilots = (computed.get("td3x_pilot") or {}, computed.get("sb3_pilot") or {})
    pending = "" if isinstance(n_sb3, int) else f"not sized yet: the file's peer.computed.{env_id}.n_sb3 is null"
    not_run = str(computed.get("decision")).startswith("not run")  # the sizing rule's "not run: ..."
    pending = f"{computed['decision']} (the file's peer.computed.{env_id}.decision)" if not_run else pending
    design_text = (
        f"{n_td3x} td3x seeds at the td3x pilot's SD {number(_number(pilots[0], 'sd'))} against "
        f"{n_sb3} SB3 seeds at the SB3 pilot's SD {number(_number(pilots[1], 'sd'))}, two-sided at α/2 "
        "(Holm's first step in a family of two)"
    )
    return Design(
        "peer",
        env_id,
        ("td3x", PEER_ROW),
        (_seeds(REGISTERED_PEER_FIRST_SEED, n_td3x), _seeds(REGISTERED_PEER_FIRST_SEED, n_sb3)),
        "fp32",
        REGISTERED_PEER_STEPS,
        None,
        float(registration.value(f"peer.computed.{env_id}.bound")),
        _number(dict(computed), HOLM_FIRST_STEP_MDD),
        design_text,
        _family(registration, "peer"),
        alpha,
        pending,
        not_run,
        assumed_sd=(_number(pilots[0], "sd"), _number(pilots[1], "sd")),
    )


def _bf16(registration: Registration, env_id: str, alpha: float) -> Design:
    n = int(registration.value(f"bf16.computed.{env_id}.n_per_side"))
    sd = float(registration.value(f"bf16.computed.{env_id}.fp32_pilot.sd"))
    seeds = _seeds(REGISTERED_PEER_FIRST_SEED, n)
    return Design(
        "bf16",
        env_id,
        ("bf16", "fp32"),
        (seeds, seeds),
        "bf16",
        REGISTERED_PEER_STEPS,
        None,
        float(registration.value(f"bf16.computed.{env_id}.bound")),
        float(registration.value(f"bf16.computed.{env_id}.{HOLM_FIRST_STEP_MDD}")),
        f"{n} seeds a side, both at the fp32 pilot's SD {number(sd)}, two-sided at α/2 (Holm's first step in a "
        "family of two)",
        _family(registration, "bf16"),
        alpha,
        assumed_sd=(sd, sd),
    )


def _bf16_fp32_tanh(registration: Registration, env_id: str, alpha: float) -> Design:
    """The amendment: new bf16 seeds (the actor's tanh in fp32) against the bf16 comparison's fp32 runs."""
    computed = registration.mapping(f"bf16_fp32_tanh.computed.{env_id}")
    n_bf16, n_fp32 = int(computed["n_bf16"]), int(computed["n_fp32"])
    sd = float(registration.value(f"bf16.computed.{env_id}.fp32_pilot.sd"))
    return Design(
        "bf16_fp32_tanh",
        env_id,
        ("bf16", "fp32"),
        (
            _seeds(int(registration.value("bf16_fp32_tanh.first_seed")), n_bf16),
            _seeds(REGISTERED_PEER_FIRST_SEED, n_fp32),
        ),
        "bf16",
        REGISTERED_PEER_STEPS,
        None,
        float(computed["bound"]),
        float(computed["mdd_alpha"]),
        f"{n_bf16} bf16 seeds against {n_fp32} fp32 seeds, both at the fp32 pilot's SD {number(sd)}, two-sided at α "
        "(a family of one)",
        _family(registration, "bf16_fp32_tanh"),
        alpha,
        assumed_sd=(sd, sd),
        arm="bf16_fp32_tanh",
    )


def _horizon(registration: Registration, alpha: float) -> Design:
    n = int(registration.value("paper_horizon.seeds"))
    sd = float(registration.value("paper_horizon.computed.authors_sd"))
    return Design(
        "paper_horizon",
        str(registration.value("paper_horizon.env")),
        ("td3x", "the authors"),
        (_seeds(REGISTERED_HORIZON_FIRST_SEED, n), ()),
        "fp32",
        int(registration.value("paper_horizon.last_step")),
        int(registration.value("paper_horizon.first_step")),
        float(registration.value("paper_horizon.computed.bound")),
        float(registration.value("paper_horizon.computed.mdd")),
        f"{n} td3x seeds against the authors' seeds, both at the authors' SD {number(sd)}, two-sided at α",
        _family(registration, "paper_horizon"),
        alpha,
        table1_at_5=float(registration.value("paper_horizon.computed.table1_mean_at_5_of_their_seeds")),
        assumed_sd=(sd, sd),
    )
