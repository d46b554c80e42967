"""run.precision: bf16 products around each loss with fp32 weights, targets and losses; refused where the hardware
has no bf16 units (the CPU's flags injected, so these run on any CPU) and under run.numerics=portable; fp32 is the
identity of runs trained before the key existed (resume hash, report rows)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import torch
from helpers.agents import SPEC, make_batch

from td3x.algo.precision import problems
from td3x.algo.seeding import generators_of
from td3x.algo.td3 import TD3, actor_loss, critic_loss
from td3x.analysis.reading.cells import result_keys, row_labels
from td3x.analysis.reading.runs import Run
from td3x.config.enums import Precision
from td3x.config.hydra import to_container
from td3x.config.overrides import override_problems
from td3x.config.schema import AgentConfig, ConfigError, TrainConfig
from td3x.rundir.resume_decision import config_hash

CPU = torch.device("cpu")
MakeConfig = Callable[..., TrainConfig]


def agent(precision: Precision, seeds: int = 1) -> TD3:
    config = AgentConfig(hidden_sizes=[16, 16])
    return TD3(SPEC, config, CPU, [generators_of(seed, CPU) for seed in range(seeds)], precision=precision)


# ---------------------------------------------------------------------- where bf16 may run
def test_fp32_runs_anywhere() -> None:
    assert problems(Precision.fp32, CPU, ["avx2"]) == []
    assert problems(Precision.fp32, CPU, None) == []


@pytest.mark.parametrize("flags", [["avx2", "avx512f", "avx512_bf16"], ["avx2", "amx_tile", "amx_bf16"]])
def test_bf16_runs_on_a_cpu_with_bf16_units(flags: list[str]) -> None:
    assert problems(Precision.bf16, CPU, flags) == []


@pytest.mark.parametrize("flags", [["avx2"], ["avx2", "avx512f"], ["avx2", "avx512f", "amx_tile"]])
def test_bf16_is_refused_in_one_line_naming_the_missing_flags(flags: list[str]) -> None:
    """Plain AVX-512 too: torch's oneDNN says bf16 works there, but emulated it runs slower than fp32."""
    (line,) = problems(Precision.bf16, CPU, flags)
    assert line.startswith("run.precision=bf16 is not allowed here: this CPU's flags lack avx512_bf16 and amx_bf16")
    assert "run.precision=fp32" in line


def test_bf16_is_refused_where_the_cpu_flags_cannot_be_read() -> None:
    (line,) = problems(Precision.bf16, CPU, None)
    assert "cannot be read" in line


def test_bf16_is_refused_with_portable_numerics(make_config: MakeConfig) -> None:
    with pytest.raises(ConfigError, match=r"run\.precision='bf16' is not allowed: must be fp32 with run\.numerics="):
        make_config("run.precision=bf16", "run.numerics=portable")


def test_an_unknown_precision_is_refused_with_the_allowed_values() -> None:
    assert override_problems(["run.precision=fp16"]) == [
        "run.precision='fp16' is not allowed: expected one of fp32, bf16"
    ]


# ---------------------------------------------------------------------- what bf16 computes in which dtype
def test_bf16_losses_multiply_in_bf16_and_reduce_in_fp32() -> None:
    bf16, fp32 = agent(Precision.bf16), agent(Precision.fp32)
    batch = make_batch(n=32)
    obs = bf16.obs_normalizer(batch.obs)
    noise = torch.zeros(1, 1, 32, 2)
    with bf16.loss_precision():
        assert bf16.actor.layers[0](obs).dtype == torch.bfloat16  # the products run in bf16
        loss, q, target = critic_loss(bf16, batch, obs, noise)
        actor = actor_loss(bf16, obs)
    assert loss.dtype == q.dtype == target.dtype == actor.dtype == torch.float32
    _, fp32_q, fp32_target = critic_loss(fp32, batch, obs, noise)
    # the same initial weights: bf16's 8-bit mantissa moves Q by about 2^-8 of its size, not more
    assert not torch.equal(q, fp32_q)
    torch.testing.assert_close(q, fp32_q, rtol=0.05, atol=0.02)
    torch.testing.assert_close(target, fp32_target, rtol=0.05, atol=0.02)


def test_bf16_updates_keep_fp32_weights_targets_and_optimiser_state() -> None:
    learner = agent(Precision.bf16, seeds=2)
    before = [p.detach().clone() for p in learner.critic.parameters()]
    for _ in range(4):  # policy_delay 2: two actor steps and two Polyak updates
        metrics = learner.update(make_batch(n=32, seeds=2), record=True)
    modules = (learner.actor, learner.critic, learner.actor_target, learner.critic_target)
    assert all(p.dtype == torch.float32 for module in modules for p in module.parameters())
    states = [*learner.actor_optimizer.state.values(), *learner.critic_optimizer.state.values()]
    assert all(state["exp_avg"].dtype == torch.float32 for state in states)
    assert all(value.dtype == torch.float32 and bool(torch.isfinite(value).all()) for value in metrics.values())
    assert any(not torch.equal(b, p) for b, p in zip(before, learner.critic.parameters(), strict=True))


def test_bf16_keeps_the_gradient_of_a_saturated_actor() -> None:
    """bf16 rounds tanh(4) = 0.99933 to 1, and so its gradient 1 - tanh² to 0: a bf16 actor whose pre-activations
    all passed 3.47 would never move again (11 of 15 Walker2d-v5 seeds did). The tanh runs in fp32."""
    learner = agent(Precision.bf16)
    last = learner.actor.layers[-1]
    with torch.no_grad():  # every action's pre-activation is 4, exactly representable in bf16
        last.weight.zero_()
        last.bias.fill_(4.0)
    with learner.loss_precision():
        actions = learner.actor(make_batch(n=8).obs)
    actions.sum().backward()
    expected = 8 * (1 - math.tanh(4.0) ** 2)  # d Σ tanh(b) / db over 8 observations: 8 · 1.3409e-3
    # (the gradient is carried back through the bf16 product in bf16: within its 2^-8 relative step)
    torch.testing.assert_close(last.bias.grad, torch.full_like(last.bias, expected), rtol=2**-7, atol=0)
    torch.testing.assert_close(actions, torch.full_like(actions, math.tanh(4.0)))  # fp32 actions


def test_fp32_autocast_context_is_no_context() -> None:
    """fp32 adds no autocast: its updates are the operations, and so the bits, of runs before the key existed."""
    assert not isinstance(agent(Precision.fp32).loss_precision(), torch.autocast)
    assert isinstance(agent(Precision.bf16).loss_precision(), torch.autocast)


# ---------------------------------------------------------------------- identity: resume hash and report rows
def test_fp32_hashes_as_a_config_written_before_the_key(make_config: MakeConfig) -> None:
    fp32 = to_container(make_config())
    older = to_container(make_config())
    del older["run"]["precision"]
    assert config_hash(fp32) == config_hash(older)
    assert config_hash(to_container(make_config("run.precision=bf16"))) != config_hash(fp32)


def test_report_rows_split_by_bf16_but_not_by_an_absent_fp32(make_config: MakeConfig) -> None:
    def run(seed: int, *overrides: str, drop_precision: bool = False) -> Run:
        config = to_container(make_config(f"seed={seed}", *overrides))
        if drop_precision:
            del config["run"]["precision"]
        return Run(Path(f"run{seed}"), config, pd.DataFrame(), summary=None, problem=None)

    older, fp32, bf16 = run(0, drop_precision=True), run(1), run(2, "run.precision=bf16")
    assert result_keys(older) == result_keys(fp32)
    assert row_labels([older, fp32]) == ["TD3", "TD3"]
    fp32_row = "TD3 [run.precision=fp32]"
    assert row_labels([older, fp32, bf16]) == [fp32_row, fp32_row, "TD3 [run.precision=bf16]"]
