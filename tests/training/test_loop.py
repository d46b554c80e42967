"""The training loop on real envs without Hydra: protocol (update start, evaluation steps and start states),
terminal handling, determinism, and the run-dir files."""

from __future__ import annotations

import copy
import csv
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from helpers.runs import TINY, TINY_NETWORKS, TINY_SIZES

import td3x
from td3x.algo.evaluation_episodes import evaluate
from td3x.algo.seed_statistics import STALLED_ACTOR_NORM
from td3x.config.schema import TrainConfig
from td3x.host.provenance import cpu_flags
from td3x.rundir import checkpoint
from td3x.rundir.layout import CHECKPOINT_FILE, is_timing_column
from td3x.training.loop import TRAINING_ONLY_PARTS, Trainer
from td3x.training.run import run

TINY_5K = (*TINY_SIZES, "agent.buffer_size=5000")  # the 2018 schedule's tests: a buffer of 5000 transitions
MakeConfig = Callable[..., TrainConfig]


def read_eval(run_dir: Path) -> list[dict[str, str]]:
    with (run_dir / "eval.csv").open() as file:
        return list(csv.DictReader(file))


def without_timing(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    return [{k: v for k, v in row.items() if not is_timing_column(k)} for row in rows]


def test_updates_start_at_max_of_random_steps_and_batch_size(make_config: MakeConfig, tmp_path: Path) -> None:
    for random_steps, expected in ((10, 600 - 32), (400, 600 - 400)):
        config = make_config(*TINY_SIZES, "run.total_steps=600", f"env.random_steps={random_steps}")
        assert run(config, tmp_path / str(random_steps))["updates"] == expected


def test_episode_end_schedule_runs_as_many_updates_in_bursts(make_config: MakeConfig, tmp_path: Path) -> None:
    per_step = run(make_config(*TINY_SIZES, "run.total_steps=600", "env.random_steps=100"), tmp_path / "a")
    bursts = make_config(
        *TINY_SIZES, "run.total_steps=600", "env.random_steps=100", "agent.update_schedule=episode_end"
    )
    assert run(bursts, tmp_path / "b")["updates"] == per_step["updates"] == 500  # the final step flushes the rest
    trainer = Trainer(bursts, tmp_path / "c")
    trainer.obs = np.stack([seed.reset(first=True) for seed in trainer.seeds])
    updates_seen = []
    for _ in range(450):  # Pendulum episodes last 200 steps: updates arrive at steps 200 and 400 only
        trainer._run_pending_updates(episode_over=trainer._collect())
        updates_seen.append(trainer.agent.num_updates)
    trainer.close("complete")
    assert updates_seen[198] == 0 and updates_seen[199] == 200 - 100 and updates_seen[399] == 300
    assert updates_seen[449] == 300  # the current episode's updates wait for its end


def test_evaluates_at_zero_every_e_steps_and_after_the_last(make_config: MakeConfig, tmp_path: Path) -> None:
    two_episodes = "run.eval_episodes=2"  # return_0 and return_1, which return_mean averages
    config = make_config(
        *TINY_NETWORKS, two_episodes, "run.total_steps=1050", "run.eval_every=500", "env.random_steps=2000"
    )
    run(config, tmp_path)
    rows = read_eval(tmp_path)
    assert [int(row["step"]) for row in rows] == [0, 500, 1000, 1050]
    assert {
        "return_mean",
        "return_std",
        "return_0",
        "return_1",
        "eval_time_s",
        "sps",
        "bias_q1",
        "bias_min_q",
        "bias_states",
    } <= set(rows[0])
    assert all(
        float(row["return_mean"]) == pytest.approx(np.mean([float(row["return_0"]), float(row["return_1"])]))
        for row in rows
    )
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["status"] == "complete" and summary["steps"] == 1050 and summary["failure"] is None
    assert summary["final_return"] == pytest.approx(float(rows[-1]["return_mean"]))
    assert summary["last10_return"] == pytest.approx(np.mean([float(row["return_mean"]) for row in rows]))


def test_evaluation_episode_i_starts_from_reset_seed_eval_seed_plus_i() -> None:
    seen: list[np.ndarray] = []

    def zero_policy(obs: np.ndarray) -> np.ndarray:
        seen.append(obs)
        return np.zeros(1, dtype=np.float32)

    first = evaluate(zero_policy, [gym.make("Pendulum-v1") for _ in range(3)], first_seed=100)
    second = evaluate(zero_policy, [gym.make("Pendulum-v1") for _ in range(3)], first_seed=100)
    assert np.array_equal(first.returns, second.returns)  # the same policy re-evaluates exactly
    assert len(set(first.returns.tolist())) == 3  # each episode has its own start state
    assert first.lengths.tolist() == [200, 200, 200]
    for i in range(3):  # the episodes run side by side: the policy's first three calls see their starts
        expected_start, _ = gym.make("Pendulum-v1").reset(seed=100 + i)
        assert np.array_equal(seen[i], expected_start)


def test_truncation_is_stored_as_not_terminal(make_config: MakeConfig, tmp_path: Path) -> None:
    trainer = Trainer(make_config(*TINY_SIZES, "run.total_steps=1000", "env.random_steps=1000"), tmp_path)
    trainer.train()
    assert trainer.seeds[0].counts["truncated"] == 5 and trainer.seeds[0].counts["terminated"] == 0
    assert trainer.buffer.terminated[0, :1000].sum() == 0  # Pendulum only ends by its 200-step time limit
    trainer.close("complete")


def test_termination_is_stored_as_terminal(make_config: MakeConfig, tmp_path: Path) -> None:
    trainer = Trainer(make_config(*TINY_SIZES, "env=hopper", "run.total_steps=1000", "env.random_steps=1000"), tmp_path)
    trainer.train()
    assert trainer.seeds[0].counts["terminated"] > 10  # random actions make the hopper fall
    assert trainer.buffer.terminated[0, :1000].sum() == trainer.seeds[0].counts["terminated"]
    trainer.close("complete")


def final_weights(run_dir: Path) -> dict[str, torch.Tensor]:
    return checkpoint.load(run_dir / CHECKPOINT_FILE)["agent"]["actor"]


def test_same_seed_same_numbers_other_seed_differs(make_config: MakeConfig, tmp_path: Path) -> None:
    overrides = (*TINY_SIZES, "run.total_steps=700", "run.eval_every=350", "env.random_steps=300")
    for name, seed in (("a", 0), ("b", 0), ("c", 1)):
        run(make_config(*overrides, f"seed={seed}"), tmp_path / name)
    a, b, c = (without_timing(read_eval(tmp_path / name)) for name in "abc")
    assert a == b
    assert a != c
    weights_a, weights_b, weights_c = (final_weights(tmp_path / name) for name in "abc")
    assert all(torch.equal(weights_a[key], weights_b[key]) for key in weights_a)
    assert not all(torch.equal(weights_a[key], weights_c[key]) for key in weights_a)
    metrics_a = [json.loads(line) for line in (tmp_path / "a" / "metrics.jsonl").read_text().splitlines()]
    metrics_b = [json.loads(line) for line in (tmp_path / "b" / "metrics.jsonl").read_text().splitlines()]
    assert [m["critic_loss"] for m in metrics_a if "critic_loss" in m] == [
        m["critic_loss"] for m in metrics_b if "critic_loss" in m
    ]


def git_head() -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=Path(td3x.__file__).parent, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_run_dir_files(make_config: MakeConfig, tmp_path: Path) -> None:
    head_before = git_head()
    run(make_config(*TINY_SIZES, "run.total_steps=500", "env.random_steps=100", "run.log_every=250"), tmp_path)
    heads = {head_before, git_head()}  # a commit landing meanwhile in a shared checkout moves HEAD
    assert {"config.yaml", "eval.csv", "metrics.jsonl", "summary.json", "provenance.json", "checkpoint.pt"} <= {
        path.name for path in tmp_path.iterdir()
    }
    metrics = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [250, 500]
    assert {
        "critic_loss",
        "actor_loss",
        "q1_mean",
        "q2_mean",
        "q1_q2_abs_diff",
        "target_mean",
        "critic_grad_norm",
        "actor_grad_norm",
        "at_bounds_mean",
        "episode_return_mean",
        "truncated_count",
        "sps",
        "cpu_time_s",
    } <= set(metrics[-1])
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert 0 < metrics[-1]["cpu_time_s"] <= summary["cpu_time_s"]
    provenance = json.loads((tmp_path / "provenance.json").read_text())
    assert provenance["versions"]["torch"] == torch.__version__  # the installed torch, local tag (+cpu) included
    assert provenance["versions"]["td3x"] == td3x.__version__
    assert provenance["git_commit"] in heads and isinstance(provenance["git_dirty"], bool)
    assert {"git_commit", "git_dirty", "cpu", "command", "slurm_job_id", "python"} <= set(provenance)
    assert provenance["cpu_capability"] == torch.backends.cpu.get_cpu_capability()  # what decides fp32 numerics
    assert provenance["cpu_flags"] == cpu_flags()  # this CPU's instruction-set flags that td3x names, all of them
    assert not {"hostname", "cwd", "pid", "platform"} & set(provenance)  # fit to publish: no machine's names
    assert not any(part.startswith("/") for part in provenance["command"])  # the command as typed, no paths
    parts = checkpoint.load(tmp_path / "checkpoint.pt")
    assert {"agent", "buffer", "seeds", "global_rng", "counters", "config"} <= set(parts)
    assert "config_hash" not in parts  # nothing read it: resuming hashes the stored config
    assert {"noise", "generators", "tape", "obs", "eval_returns", "wandb_run_id"} <= set(parts["seeds"][0])
    assert parts["counters"]["step"] == 500 and parts["agent"]["num_updates"] == 400


def test_a_corrupt_or_missing_checkpoint_is_reported(tmp_path: Path) -> None:
    with pytest.raises(checkpoint.CheckpointError, match="no checkpoint at"):
        checkpoint.load(tmp_path / "checkpoint.pt")
    (tmp_path / "checkpoint.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(checkpoint.CheckpointError, match="truncated or corrupt"):
        checkpoint.load(tmp_path / "checkpoint.pt")


# ---------------------------------------------------------------------- K seeds in one process (run.num_seeds)
def test_k_seeds_write_one_ordinary_run_dir_each(make_config: MakeConfig, tmp_path: Path) -> None:
    import yaml

    from td3x.analysis.reading.runs import find_runs
    from td3x.rundir.trained_run import RunError, evaluate_run, load_run

    overrides = (
        *TINY_NETWORKS,
        "run.eval_episodes=2",  # td3x-eval re-scores both episodes of the last evaluation
        "run.total_steps=600",
        "run.eval_every=300",
        "run.log_every=300",
        "env.random_steps=300",
        "seed=5",
    )
    summary = run(make_config(*overrides, "run.num_seeds=3"), tmp_path / "k")
    assert [s["status"] for s in summary["seeds"]] == ["complete"] * 3 and summary["updates"] == 300
    seed_dirs = [tmp_path / "k" / f"seed_{seed}" for seed in (5, 6, 7)]
    for seed, seed_dir in zip((5, 6, 7), seed_dirs, strict=True):
        assert {"config.yaml", "eval.csv", "metrics.jsonl", "summary.json", "provenance.json", "checkpoint.pt"} <= {
            path.name for path in seed_dir.iterdir()
        }
        config = yaml.safe_load((seed_dir / "config.yaml").read_text())
        assert config["seed"] == seed and config["run"]["num_seeds"] == 3  # the mode is recorded
        assert [int(row["step"]) for row in read_eval(seed_dir)] == [0, 300, 600]
    assert sorted(r.path for r in find_runs([tmp_path / "k"])) == seed_dirs  # reports see three ordinary runs
    rows = [without_timing(read_eval(seed_dir)) for seed_dir in seed_dirs]
    assert rows[0] != rows[1] != rows[2]  # independent seeds: own init, envs, noise and samples
    metrics = [json.loads(line) for line in (seed_dirs[1] / "metrics.jsonl").read_text().splitlines()]
    assert {"critic_loss", "actor_loss", "q1_mean", "episode_return_mean"} <= set(metrics[-1])

    run(make_config(*overrides, "run.num_seeds=3"), tmp_path / "again")  # each seed is deterministic in this mode
    assert [without_timing(read_eval(tmp_path / "again" / d.name)) for d in seed_dirs] == rows

    for path in (tmp_path / "k" / CHECKPOINT_FILE, *(seed_dir / CHECKPOINT_FILE for seed_dir in seed_dirs)):
        agent = checkpoint.load(path)["agent"]  # finished, no buffer: the networks alone, which evaluation reads
        assert {"actor", "critic", "obs_normalizer"} <= set(agent) and not set(TRAINING_ONLY_PARTS) & set(agent)
    with pytest.raises(RunError, match="holds the 3 seeds of one process"):
        load_run(tmp_path / "k")  # the process's checkpoint: td3x-eval names the seed dirs instead
    trained = load_run(seed_dirs[2])  # a seed's own checkpoint: td3x-eval re-scores its last evaluation
    result = evaluate_run(trained, 2, first_seed=trained.config.eval_seed)
    expected = [float(rows[2][-1][f"return_{i}"]) for i in range(2)]
    assert result.returns.tolist() == pytest.approx(expected, rel=1e-6)


def test_a_k_seed_run_is_refused_with_episode_end_updates(make_config: MakeConfig) -> None:
    from td3x.config.schema import ConfigError

    with pytest.raises(ConfigError, match=r"run\.num_seeds=2 is not allowed with agent\.update_schedule=episode_end"):
        make_config("run.num_seeds=2", "agent.update_schedule=episode_end")


def test_extending_a_run_from_its_mid_episode_checkpoint_equals_a_straight_run(
    make_config: MakeConfig, tmp_path: Path
) -> None:
    """650 steps end mid-episode (Pendulum's last 200): the extension replays that episode's 50 actions."""
    overrides = (*TINY_SIZES, "run.eval_every=325", "env.random_steps=100", "run.keep_buffer=true", "run.num_seeds=2")
    run(make_config(*overrides, "run.total_steps=975"), tmp_path / "straight")
    run(make_config(*overrides, "run.total_steps=650"), tmp_path / "extended")
    parts = checkpoint.load(tmp_path / "extended" / "checkpoint.pt")
    assert [len(seed["tape"]["actions"]) for seed in parts["seeds"]] == [50, 50]
    assert set(TRAINING_ONLY_PARTS) <= set(parts["agent"])  # run.keep_buffer: a finished run that can be extended
    run(make_config(*overrides, "run.total_steps=975"), tmp_path / "extended")
    for seed_dir in ("seed_0", "seed_1"):
        straight, extended = (without_timing(read_eval(tmp_path / d / seed_dir)) for d in ("straight", "extended"))
        assert straight == extended


def test_seed_k_of_a_k_seed_run_collects_what_seed_k_alone_collects(make_config: MakeConfig, tmp_path: Path) -> None:
    """The random phase depends on seed k's own env and generators only: its buffer rows in a K-seed process equal
    those of seed k trained alone, bit for bit (Hopper: each seed's episodes end at their own steps)."""
    overrides = (*TINY_SIZES, "env=hopper", "run.total_steps=300", "env.random_steps=300", "run.keep_buffer=true")
    run(make_config(*overrides, "seed=4", "run.num_seeds=2"), tmp_path / "k")
    stacked = checkpoint.load(tmp_path / "k" / CHECKPOINT_FILE)["buffer"]
    assert not np.array_equal(stacked["action"][0], stacked["action"][1])
    for k, seed in enumerate((4, 5)):
        run(make_config(*overrides, f"seed={seed}"), tmp_path / str(seed))
        alone = checkpoint.load(tmp_path / str(seed) / CHECKPOINT_FILE)["buffer"]
        for name in ("obs", "action", "reward", "next_obs", "terminated"):
            assert np.array_equal(stacked[name][k], alone[name][0]), name
        assert stacked["terminated"][k].sum() > 1  # episodes ended and restarted within the phase
        assert stacked["rngs"][k] == alone["rngs"][0]


@pytest.mark.slow  # two offline W&B runs
def test_k_seed_wandb_runs_read_back_one_per_seed(make_config: MakeConfig, tmp_path: Path) -> None:
    from helpers.wandb_records import find_run_files, read_run

    overrides = (*TINY, "run.log_every=150")
    run(make_config(*overrides, "seed=2", "run.num_seeds=2", "logging.wandb_mode=offline"), tmp_path)
    run_ids = set()
    for seed in (2, 3):
        seed_dir = tmp_path / f"seed_{seed}"
        (wandb_file,) = find_run_files(seed_dir)
        wandb_run = read_run(wandb_file)
        run_ids.add(wandb_run.run_id)
        assert wandb_run.exit_code == 0 and wandb_run.name.endswith(f"-s{seed}") and f"seed{seed}" in wandb_run.tags
        assert wandb_run.config["seed"] == seed and wandb_run.config["run"]["num_seeds"] == 2
        eval_rows = [row for row in wandb_run.history if "eval/return_mean" in row]
        assert [row["env_step"] for row in eval_rows] == [0, 150, 300]
        returns = [float(row["return_mean"]) for row in read_eval(seed_dir)]
        assert [row["eval/return_mean"] for row in eval_rows] == pytest.approx(returns, rel=1e-12)
        assert any("train/critic_loss" in row for row in wandb_run.history)
    assert len(run_ids) == 2


# ---------------------------------------------------------------------- the 2018 schedule
SCHEDULE_2018 = ("agent.update_schedule=episode_end", "agent.update_start=0", "agent.delay_per_burst=true")


def steps(trainer: Trainer, count: int) -> list[int]:
    """Advance ``count`` env steps with their updates (no evaluation); the update count after each."""
    seen = []
    for _ in range(count):
        trainer._run_pending_updates(episode_over=trainer._collect())
        seen.append(trainer.agent.num_updates)
    return seen


def test_2018_schedule_trains_at_every_episode_end_from_the_first_on(make_config: MakeConfig, tmp_path: Path) -> None:
    """Pendulum's episodes last 200 steps; the warm-up's 1000 random steps get their updates too, 200 at each end."""
    for name, overrides, expected in (
        ("2018", SCHEDULE_2018, [0, 200, 200, 400, 1000]),
        ("default", ("agent.update_schedule=episode_end",), [0, 0, 0, 0, 0]),
    ):
        trainer = Trainer(make_config(*TINY_5K, "env.random_steps=1000", *overrides), tmp_path / name)
        trainer.obs = np.stack([seed.reset(first=True) for seed in trainer.seeds])
        seen = steps(trainer, 1000)
        assert [seen[i] for i in (198, 199, 398, 399, 999)] == expected
        if name == "2018":  # the last burst restarted the delay: its first update (number 801) updated the actor
            assert trainer.agent.delay_origin == 801
        trainer.close("complete")


def test_2018_schedule_bursts_are_the_2018_loop_s_on_episodes_of_any_length(
    make_config: MakeConfig, tmp_path: Path
) -> None:
    """Hopper falls at random steps under random actions: each episode's end brings exactly its length in updates
    (the 2018 loop: ``if done: policy.train(replay_buffer, episode_timesteps)``), from the first episode on."""
    trainer = Trainer(make_config(*TINY_5K, "env=hopper", "env.random_steps=1000", *SCHEDULE_2018), tmp_path)
    trainer.obs = np.stack([seed.reset(first=True) for seed in trainer.seeds])
    seen = steps(trainer, 1000)
    trainer.close("complete")
    lengths = trainer.seeds[0].window["episode_length"]
    assert len(lengths) > 10  # many episodes, most of them cut short by a fall
    ends = np.cumsum(lengths).astype(int)  # the env step at which each episode ended
    # after env step t, the updates so far are the steps of the episodes ended so far: the last end at or before t
    expected = [int(ends[ends <= step].max(initial=0)) for step in range(1, 1001)]
    assert seen == expected


def test_2018_schedule_resumes_mid_episode_exactly(make_config: MakeConfig, tmp_path: Path) -> None:
    config = make_config(*TINY_5K, "env.random_steps=100", *SCHEDULE_2018)
    straight = Trainer(config, tmp_path / "straight")
    straight.obs = np.stack([seed.reset(first=True) for seed in straight.seeds])
    steps(straight, 300)  # mid-episode: 100 steps' updates pending
    assert straight.pending_updates == 100
    parts = copy.deepcopy(straight.checkpoint_parts(straight.seeds, keep_buffer=True))
    resumed = Trainer(config, tmp_path / "resumed")
    resumed.restore(parts)
    assert steps(resumed, 250) == steps(straight, 250)
    assert resumed.agent.delay_origin == straight.agent.delay_origin == 201  # the burst at step 400
    for name, weights in straight.agent.actor.state_dict().items():
        assert torch.equal(weights, resumed.agent.actor.state_dict()[name])
    for trainer in (straight, resumed):
        trainer.close("complete")


def test_a_checkpoint_between_log_rows_keeps_the_last_actor_steps_metrics(
    make_config: MakeConfig, tmp_path: Path
) -> None:
    """Update n runs at env step 101 + n (update_start = 101); d = 2: update 148 at step 249 steps the actor, update
    149 at step 250, a log row, does not. A run stopped at step 249 and resumed shows at 250 the straight run's row:
    update 149's critic metrics and update 148's actor metrics, in the same order."""
    config = make_config(*TINY_SIZES, "run.total_steps=1000", "env.random_steps=101", "run.log_every=250")
    straight = Trainer(config, tmp_path / "straight")
    straight.obs = np.stack([seed.reset(first=True) for seed in straight.seeds])
    steps(straight, 249)
    assert straight.last_update == {}  # no log row since the updates began
    parts = copy.deepcopy(straight.checkpoint_parts(straight.seeds, keep_buffer=True))
    resumed = Trainer(config, tmp_path / "resumed")
    resumed.restore(parts)
    assert steps(resumed, 1) == steps(straight, 1) == [149]
    assert not resumed.agent.is_actor_step() and resumed.agent.actor_metrics() == {}
    assert {"critic_loss", "actor_loss", "actor_grad_norm"} <= set(straight.last_update)
    assert list(resumed.last_update.items()) == list(straight.last_update.items())
    for trainer in (straight, resumed):
        trainer.close("complete")


def test_an_actor_with_a_gradient_of_exactly_0_is_warned_of_once(
    make_config: MakeConfig, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Seed 1's output layer set to x = 20 everywhere: tanh(20) is 1 in fp32, its gradient 1 - 1² exactly 0, so
    that actor never moves; seed 0 learns. One warning, naming seed 1, though every log row after shows the 0."""
    config = make_config(
        *TINY_SIZES, "run.num_seeds=2", "run.total_steps=600", "env.random_steps=100", "run.log_every=100"
    )
    trainer = Trainer(config, tmp_path)
    last = trainer.agent.actor.layers[-1]
    with torch.no_grad():
        last.weight[1].zero_()
        last.bias[1].fill_(20.0)
    with caplog.at_level("WARNING", logger="td3x.training.loop"):
        trainer.train()
    trainer.close("complete")
    warnings = [record.getMessage() for record in caplog.records if "gradient is exactly 0" in record.getMessage()]
    assert len(warnings) == 1 and warnings[0].startswith(f"seed {config.seed + 1}: ")
    rows = [json.loads(line) for line in (tmp_path / f"seed_{config.seed + 1}" / "metrics.jsonl").open()]
    assert [row["actor_grad_norm"] for row in rows if "actor_grad_norm" in row] == [0.0] * 5
    assert torch.equal(last.bias[1], torch.full_like(last.bias[1], 20.0))  # it never moved


def test_a_run_that_ends_with_a_stalled_actor_is_warned_of_at_its_end(
    make_config: MakeConfig, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Seed 1's output layer set to x = 20 (tanh's gradient exactly 0 in fp32): the run's end warns of seed 1 alone
    (seed 0 learns), with the norm its last log row holds. Set to x = 8 instead (gradient about 4.5e-7, not 0), the
    actor starts as stalled but Adam, which rescales small gradients, brings it out within the run: no warning."""
    config = make_config(
        *TINY_SIZES, "run.num_seeds=2", "run.total_steps=600", "env.random_steps=100", "run.log_every=100"
    )
    for x, warned in ((20.0, True), (8.0, False)):
        run_dir = tmp_path / f"x={x:g}"
        trainer = Trainer(config, run_dir)
        last = trainer.agent.actor.layers[-1]
        with torch.no_grad():
            last.weight[1].zero_()
            last.bias[1].fill_(x)
        caplog.clear()
        with caplog.at_level("WARNING", logger="td3x.training.loop"):
            trainer.train()
        trainer.close("complete")
        ends = [
            r.getMessage() for r in caplog.records if "the run ends with the actor's gradient norm" in r.getMessage()
        ]
        rows = [json.loads(line) for line in (run_dir / f"seed_{config.seed + 1}" / "metrics.jsonl").open()]
        norm = [row["actor_grad_norm"] for row in rows if "actor_grad_norm" in row][-1]
        assert (norm < STALLED_ACTOR_NORM) is warned, (x, norm)
        prefix = f"seed {config.seed + 1}: the run ends with the actor's gradient norm at {norm:.3g}, below 0.001: "
        assert [message.startswith(prefix) for message in ends] == [True] * warned
