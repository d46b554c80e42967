"""A seed per source of randomness (``seeds.*``): unset, each source follows ``seed`` exactly as before the keys
existed; set, it pins that source for every stacked seed while the others move with the seed."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from helpers.runs import train_tiny
from helpers.wandb_records import find_run_files, read_run

from td3x import compose
from td3x.algo.seeding import Generators, generators_of, restore_generator
from td3x.config.hydra import from_saved, to_container
from td3x.config.schema import EVAL_SEED_BASE, EVAL_SEED_STRIDE, SEED_SOURCES, ConfigError, TrainConfig
from td3x.rundir.layout import is_timing_column
from td3x.rundir.resume_decision import config_hash
from td3x.training.loop import Trainer
from td3x.training.per_seed import seed_configs

CPU = torch.device("cpu")


def legacy_generators(seed: int) -> Generators:
    """The generators as td3x derived them before ``seeds.*`` existed, written out: one SeedSequence, five children."""
    actions, noise, replay, smoothing, init = np.random.SeedSequence(seed).spawn(5)
    as_torch = lambda sequence: int(sequence.generate_state(1, dtype=np.uint64)[0]) >> 1  # noqa: E731
    return Generators(
        warmup=np.random.default_rng(actions),
        exploration=np.random.default_rng(noise),
        replay=np.random.default_rng(replay),
        smoothing=torch.Generator(CPU).manual_seed(as_torch(smoothing)),
        weights=torch.Generator().manual_seed(as_torch(init)),
    )


def draws(generators: Generators) -> dict[str, list[float]]:
    """A few numbers from each generator."""
    return {
        "warmup": generators.warmup.uniform(-1, 1, 4).tolist(),
        "exploration": generators.exploration.standard_normal(4).tolist(),
        "replay": generators.replay.integers(0, 1000, 4).tolist(),
        "smoothing": torch.randn(4, generator=generators.smoothing).tolist(),
        "weights": torch.randn(4, generator=generators.weights).tolist(),
    }


@pytest.mark.parametrize("seed", [0, 3, 123])
def test_unset_sources_give_todays_generators_bit_for_bit(seed: int) -> None:
    config = from_saved({"seed": seed})
    assert config.source_seeds == {**dict.fromkeys(SEED_SOURCES, seed), "evaluation": config.eval_seed}
    assert draws(generators_of(seed, CPU, config.seeds.effective(seed))) == draws(legacy_generators(seed))
    assert draws(generators_of(seed, CPU)) == draws(legacy_generators(seed))


def test_a_pinned_source_draws_what_that_seed_would_and_the_others_follow_the_seed() -> None:
    pinned = generators_of(5, CPU, {"replay": 9})
    expected, own = draws(legacy_generators(9)), draws(legacy_generators(5))
    got = draws(pinned)
    assert got["replay"] == expected["replay"]
    assert {name: got[name] for name in got if name != "replay"} == {
        name: own[name] for name in own if name != "replay"
    }


def test_stacked_seeds_keep_a_pinned_source_and_move_the_following_ones() -> None:
    config = from_saved({"seed": 4, "run": {"num_seeds": 3}, "seeds": {"weights": 11}})
    sources = [seed_config.source_seeds for seed_config in seed_configs(config)]
    assert [s["weights"] for s in sources] == [11, 11, 11]
    assert [s["replay"] for s in sources] == [4, 5, 6] and [s["env"] for s in sources] == [4, 5, 6]
    assert [s["evaluation"] for s in sources] == [EVAL_SEED_BASE + EVAL_SEED_STRIDE * k for k in (4, 5, 6)]


def test_bad_source_seeds_are_refused_one_line_each() -> None:
    with pytest.raises(ConfigError) as error:
        from_saved({"seeds": {"replay": -1, "evaluation_sets": 0}})
    assert error.value.problems == [
        "seeds.replay=-1 is not allowed: must be null (follow seed) or an integer >= 0",
        "seeds.evaluation_sets=0 is not allowed: must be an integer >= 1",
    ]
    with pytest.raises(ConfigError, match=r"seeds.evaluation_sets=200 is not allowed with run.eval_episodes=10"):
        from_saved({"seeds": {"evaluation_sets": 200}})
    with pytest.raises(ConfigError, match=r"seeds\.warmp is not a td3x key; did you mean seeds\.warmup"):
        compose(["seeds.warmp=1"])
    with pytest.raises(ConfigError, match=r"seeds\.replay='abc' is not allowed: expected an integer or null"):
        compose(["seeds.replay=abc"])


def test_unset_sources_leave_the_hash_as_it_was_and_a_pinned_one_changes_it() -> None:
    default = from_saved({})
    stored = to_container(default)
    older = {key: value for key, value in stored.items() if key != "seeds"}  # a config.yaml written before the keys
    assert config_hash(stored) == config_hash(older)
    default.seeds.smoothing = 0  # pinned to the seed's own value: the same numbers, but another config
    assert config_hash(to_container(default)) != config_hash(older)


def seed_weights(trainer: Trainer) -> list[torch.Tensor]:
    """Each stacked seed's actor parameters, flattened."""
    return [torch.cat([p[k].flatten() for p in trainer.agent.actor.parameters()]) for k in range(2)]


@pytest.mark.parametrize(("pinned", "same_replay", "same_weights"), [("replay", True, False), ("weights", False, True)])
def test_pinning_one_source_across_two_stacked_seeds(
    make_config: Callable[..., TrainConfig], tmp_path: Path, pinned: str, same_replay: bool, same_weights: bool
) -> None:
    config = make_config("run.num_seeds=2", "run.eval_episodes=1", "agent.hidden_sizes=[8]", f"seeds.{pinned}=7")
    trainer = Trainer(config, tmp_path)
    try:
        first, second = seed_weights(trainer)
        assert torch.equal(first, second) is same_weights
        for step in range(100):  # the same distinct transitions for both seeds: equal batches = equal indices
            obs = np.full((2, trainer.buffer.obs.shape[-1]), step, dtype=np.float32)
            trainer.buffer.add(obs, np.zeros((2, 1)), np.zeros(2), obs, np.zeros(2))
        batch = trainer.buffer.sample(64)
        assert torch.equal(batch.obs[0], batch.obs[1]) is same_replay
        assert trainer.seeds[0].generators.warmup.random() != trainer.seeds[1].generators.warmup.random()
    finally:
        trainer.close("complete")


@pytest.mark.slow
def test_runs_record_effective_seeds_and_extra_evaluation_sets_leave_training_alone(
    make_config: Callable[..., TrainConfig], tmp_path: Path
) -> None:
    pinned = ("run.num_seeds=2", "seeds.weights=3", "logging.wandb_mode=offline")
    train_tiny(make_config, tmp_path / "sets", *pinned, "seeds.evaluation_sets=2")
    train_tiny(make_config, tmp_path / "one", *pinned)
    for k in (0, 1):
        seed_dir = tmp_path / "sets" / f"seed_{k}"
        recorded = yaml.safe_load((seed_dir / "config.yaml").read_text())
        expected = {**dict.fromkeys(SEED_SOURCES, k), "weights": 3, "evaluation": EVAL_SEED_BASE + EVAL_SEED_STRIDE * k}
        assert recorded["effective_seeds"] == expected and recorded["seeds"]["weights"] == 3
        assert recorded["seeds"]["replay"] is None  # the config as given: the source followed the seed
        (wandb_file,) = find_run_files(seed_dir)
        assert read_run(wandb_file).config["effective_seeds"] == expected
        with_sets, alone = (read_eval(tmp_path / name / f"seed_{k}") for name in ("sets", "one"))
        assert [row.pop("return_mean_set_1") for row in with_sets] != [row["return_mean"] for row in with_sets]
        assert with_sets == alone  # set 0 is the usual evaluation, and the training is the same
    assert from_saved(yaml.safe_load((tmp_path / "sets" / "seed_1" / "config.yaml").read_text())).seed == 1


def read_eval(run_dir: Path) -> list[dict[str, str]]:
    """eval.csv's rows without the timing columns."""
    with (run_dir / "eval.csv").open() as file:
        return [{k: v for k, v in row.items() if not is_timing_column(k)} for row in csv.DictReader(file)]


def cuda_state(seed: int, offset: int) -> torch.Tensor:
    """A CUDA generator's state as torch.Generator('cuda').get_state() gives it: its Philox seed and offset."""
    return torch.tensor([seed, offset], dtype=torch.int64).view(torch.uint8)


def test_a_generator_state_of_another_device_seeds_the_generator_from_it_the_same_way_every_time() -> None:
    """A CPU generator continues exactly from a CPU state; a CUDA state (a run trained on a GPU, resumed on the CPU)
    cannot continue on the CPU, so it seeds the generator, alike each time and differently for another state."""
    saved = torch.Generator().manual_seed(7)
    torch.randn(5, generator=saved)
    state = saved.get_state()
    continued = torch.Generator()
    restore_generator(continued, state)
    assert torch.equal(torch.randn(5, generator=continued), torch.randn(5, generator=saved))

    draws = []
    for seed, offset in ((1234, 4000), (1234, 4000), (1234, 4004)):
        generator = torch.Generator()
        restore_generator(generator, cuda_state(seed, offset))
        draws.append(torch.randn(5, generator=generator))
    assert torch.equal(draws[0], draws[1]) and not torch.equal(draws[0], draws[2])
