"""Training a run dir (td3x.training.run): every Table 2 row trains through the one agent. Resuming in-process, through
``td3x.training.run.run``: every piece of state beyond default TD3 survives a stop
(Ornstein-Uhlenbeck noise, the observation normaliser, DQ-AC's second actor, the DDPG row's two Adam groups,
``episode_end``'s pending updates); a stop before the first checkpoint, SIGINT twice, a replay mismatch, a blow-up
to NaN; and the refusals (another config, ``run.resume=never``, an extension without the buffer). The exact
resumes train three short runs each (marked slow); the rest is the fast tier's share of resuming.

Stops are real signals, sent by the process to itself at a chosen env step, so that the handler td3x installs
(``td3x.training.run.stop_after_checkpoint``) does the stopping. SIGINT only: were the handler ever missing, Python's
own turns it into a KeyboardInterrupt, never a dead test process.
"""

from __future__ import annotations

import json
import os
import re
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from subprocess import CalledProcessError

import numpy as np
import pytest
import torch
from helpers.run_files import assert_same_run, signal_at, without_timing
from helpers.runs import TINY_SIZES
from submitit.slurm.slurm import SlurmJobEnvironment

from td3x.config.hydra import CONF_DIR
from td3x.config.schema import TrainConfig
from td3x.rundir import checkpoint
from td3x.rundir.env_replay import ReplayMismatch
from td3x.rundir.layout import CHECKPOINT_FILE
from td3x.rundir.resume_decision import ResumeError
from td3x.training.loop import RunInterrupted, Trainer, TrainingError
from td3x.training.run import run, stop_after_checkpoint

MakeConfig = Callable[..., TrainConfig]
SHORT = (
    *TINY_SIZES,
    "run.total_steps=500",
    "run.eval_every=250",
    "run.log_every=125",
    "run.checkpoint_every=200",
    "env.random_steps=100",
)
STOP_STEP = 330  # mid-episode (Pendulum's episodes last 200 steps), after the checkpoint at step 200


def summary(run_dir: Path) -> dict[str, object]:
    return json.loads((run_dir / "summary.json").read_text())


# ---------------------------------------------------------------------- state beyond default TD3
@pytest.mark.parametrize(
    "overrides",
    [
        ("noise=ornstein_uhlenbeck",),  # the OU process's value x carries over from step to step
        ("env.normalize_obs=true",),  # the running mean and variance
        ("ablation=dq_ac",),  # the second actor, its target and its Adam moments
        ("ablation=ddpg",),  # two Adam parameter groups (weight decay on the hidden weights only), OU, normaliser
        ("agent.update_schedule=episode_end",),  # 130 updates earned in the stopped episode, not yet run
    ],
    ids=["ou_noise", "normalizer", "dq_ac", "ddpg", "episode_end"],
)
@pytest.mark.slow  # three short runs each: ~4 s
def test_a_stopped_run_resumes_exactly(
    overrides: tuple[str, ...], make_config: MakeConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = make_config(*SHORT, *overrides)
    run(config, tmp_path / "straight")
    signal_at(monkeypatch, STOP_STEP)
    with pytest.raises(RunInterrupted, match=f"stopped by SIGINT at env step {STOP_STEP}, after a checkpoint"):
        run(config, tmp_path / "stopped")
    monkeypatch.undo()
    parts = checkpoint.load(tmp_path / "stopped" / CHECKPOINT_FILE)
    assert parts["counters"]["step"] == STOP_STEP and len(parts["seeds"][0]["tape"]["actions"]) == STOP_STEP - 200
    if config.agent.update_schedule.value == "episode_end":
        assert parts["counters"]["pending_updates"] == STOP_STEP - 200
    assert run(config, tmp_path / "stopped")["status"] == "complete"
    assert_same_run(tmp_path / "stopped", tmp_path / "straight")


@pytest.mark.slow
def test_sigint_twice_stops_at_once_and_resumes_from_the_last_checkpoint(
    make_config: MakeConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = make_config(*SHORT)
    run(config, tmp_path / "straight")
    signal_at(monkeypatch, STOP_STEP, times=2)
    with pytest.raises(KeyboardInterrupt):
        run(config, tmp_path / "stopped")
    monkeypatch.undo()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handlers are given back
    assert checkpoint.load(tmp_path / "stopped" / CHECKPOINT_FILE)["counters"]["step"] == 200
    stopped = summary(tmp_path / "stopped")
    assert stopped["status"] == "running" and str(stopped["interrupted"]).startswith("KeyboardInterrupt")
    metrics, evaluations = tmp_path / "stopped" / "metrics.jsonl", tmp_path / "stopped" / "eval.csv"
    rows, eval_rows = metrics.read_text(), evaluations.read_text()
    metrics.write_text(rows.replace('{"step": 250,', '{"step" 250,', 1))  # a damaged row before the checkpoint
    with pytest.raises(ResumeError, match=r"metrics.jsonl line 2 is not a row td3x writes: '\{\"step\" 250, "):
        run(config, tmp_path / "stopped")
    assert evaluations.read_text() == eval_rows  # refused before any file changed
    metrics.write_text(rows + '{"step": 375, "critic_lo')  # a row a crash cut mid-write: dropped on resume
    run(config, tmp_path / "stopped")
    assert_same_run(tmp_path / "stopped", tmp_path / "straight")


@pytest.mark.parametrize(
    ("scontrol_body", "stopped_as"),
    [
        ("kill -TERM $$", SystemExit),
        ("echo 'scontrol: error: Invalid job id' >&2; exit 1", CalledProcessError),
    ],
    ids=["stopped_by_its_own_requeue", "refused"],
)
@pytest.mark.slow
def test_a_requeue_whose_scontrol_slurm_stops_leaves_the_run_resumable_not_failed(
    scontrol_body: str,
    stopped_as: type[BaseException],
    make_config: MakeConfig,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """submitit's own requeue code at step 330, with an ``scontrol`` that dies of SIGTERM as SLURM's scontrol does
    when the kill of the job it just requeued reaches it before it exits: the run stops as after submitit's own exit
    (SystemExit, so the job reports no failure), resumable, and resumes to the uninterrupted run's end. An scontrol
    that refuses (exit 1) is a failure, as before."""
    config = make_config(*SHORT)
    run(config, tmp_path / "straight")
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "scontrol").write_text(f"#!/bin/sh\n{scontrol_body}\n")
    (fake_bin / "scontrol").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_JOB_ID", "31")
    collect = Trainer._collect

    def collect_then_requeue(trainer: Trainer) -> bool:
        episode_over = collect(trainer)
        if trainer.step == STOP_STEP:
            SlurmJobEnvironment()._requeue(countdown=3)  # what submitit's preemption handler runs
        return episode_over

    monkeypatch.setattr(Trainer, "_collect", collect_then_requeue)
    with pytest.raises(stopped_as) as stopped:
        run(config, tmp_path / "stopped")
    monkeypatch.undo()
    if stopped_as is CalledProcessError:
        assert summary(tmp_path / "stopped")["status"] == "failed"
        return
    assert stopped.value.code == -1  # submitit's exit status after a requeue
    assert summary(tmp_path / "stopped")["status"] == "running"
    assert str(summary(tmp_path / "stopped")["interrupted"]).startswith("requeued by SLURM")
    run(config, tmp_path / "stopped")
    assert_same_run(tmp_path / "stopped", tmp_path / "straight")


@pytest.mark.slow
def test_a_run_stopped_before_its_first_checkpoint_starts_again_cleanly(
    make_config: MakeConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = make_config(*SHORT)
    run(config, tmp_path / "straight")
    signal_at(monkeypatch, 150, times=2)
    with pytest.raises(KeyboardInterrupt):
        run(config, tmp_path / "stopped")
    monkeypatch.undo()
    assert not (tmp_path / "stopped" / CHECKPOINT_FILE).exists()
    assert without_timing(tmp_path / "stopped" / "eval.csv")  # the attempt's rows, which a new start drops
    run(config, tmp_path / "stopped")
    assert_same_run(tmp_path / "stopped", tmp_path / "straight")


def test_a_resume_keeps_the_earlier_sitting_s_provenance_and_warns_once_when_the_kernels_changed(
    make_config: MakeConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Three seeds in one process stopped at step 330, two seeds' provenance.json edited as if that sitting had run on
    other kernels, then resumed here: each file names its sittings, oldest first, and the resume says once, for the
    two seeds, that their numbers now differ from an uninterrupted run's."""
    run_dir = tmp_path / "run"
    config = make_config(*SHORT, "run.num_seeds=3")
    signal_at(monkeypatch, STOP_STEP)
    with pytest.raises(RunInterrupted):
        run(config, run_dir)
    monkeypatch.undo()
    paths = [run_dir / f"seed_{seed}" / "provenance.json" for seed in (0, 1, 2)]
    elsewhere = [{**json.loads(path.read_text()), "cpu_capability": "SOMEWHERE_ELSE"} for path in paths[:2]]
    for path, record in zip(paths, elsewhere, strict=False):
        path.write_text(json.dumps(record))
    untouched = json.loads(paths[2].read_text())
    with caplog.at_level("WARNING", logger="td3x.training.run"):
        run(config, run_dir)
    here = torch.backends.cpu.get_cpu_capability()
    provenances = [json.loads(path.read_text()) for path in paths]
    assert [p["earlier_sittings"] for p in provenances] == [[elsewhere[0]], [elsewhere[1]], [untouched]]
    assert all(p["cpu_capability"] == here for p in provenances)
    assert caplog.text.count("resumed on") == 1
    assert (
        f"(2 of its 3 seeds): resumed on cpu (fp32 kernels {here}) after cpu (fp32 kernels SOMEWHERE_ELSE): from here "
        "its numbers are this machine's, not an uninterrupted run's"
    ) in caplog.text


@pytest.fixture
def trainer(make_config: MakeConfig, tmp_path: Path) -> Iterator[Trainer]:
    built = Trainer(make_config(*SHORT), tmp_path)
    yield built
    built.close("running")


def test_sigint_once_then_twice_under_the_handler(trainer: Trainer) -> None:
    """The handler alone: the first SIGINT asks for a stop after the step, the second stops at once."""
    previous = signal.getsignal(signal.SIGINT)
    with stop_after_checkpoint(trainer):
        os.kill(os.getpid(), signal.SIGINT)
        assert trainer.stop_requested == "SIGINT"
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is previous


def test_the_handler_stands_down_under_submitit(trainer: Trainer, monkeypatch: pytest.MonkeyPatch) -> None:
    """submitit's own SIGTERM handler requeues a preempted job: td3x must leave it in place (submitit sets
    SUBMITIT_EXECUTOR in its jobs: tests/sweeps/test_hydra_launchers.py)."""
    monkeypatch.setenv("SUBMITIT_EXECUTOR", "slurm")
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    with stop_after_checkpoint(trainer):
        assert {sig: signal.getsignal(sig) for sig in before} == before


def test_the_handler_stands_down_off_the_main_thread(trainer: Trainer) -> None:
    """Signal handlers can only be set from the main thread (a launcher's worker thread runs jobs too)."""
    seen: list[object] = []

    def enter() -> None:
        with stop_after_checkpoint(trainer):
            seen.append(signal.getsignal(signal.SIGINT))

    worker = threading.Thread(target=enter)
    worker.start()
    worker.join()
    assert seen == [signal.default_int_handler]


def test_a_replay_that_does_not_reach_the_saved_observation_is_an_error(
    make_config: MakeConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = make_config(*SHORT)
    signal_at(monkeypatch, STOP_STEP)
    with pytest.raises(RunInterrupted):
        run(config, tmp_path)
    monkeypatch.undo()
    path = tmp_path / CHECKPOINT_FILE
    parts = checkpoint.load(path)
    parts["seeds"][0]["obs"] = parts["seeds"][0]["obs"] + 1e-3  # as if the env had not been deterministic
    checkpoint.save(path, {key: value for key, value in parts.items() if key != "format_version"})
    with pytest.raises(ReplayMismatch, match=f"replaying the saved episode \\({STOP_STEP - 200} steps\\) did not"):
        run(config, tmp_path)


# ---------------------------------------------------------------------- a blow-up to NaN
BLOW_UP = (  # Adam's first step moves every critic weight by ~lr = 1e30; the second update overflows
    *TINY_SIZES,
    "agent.critic_lr=1e30",
    "env.random_steps=300",
    "run.total_steps=700",
    "run.checkpoint_every=301",  # after update 1 (finite weights), before the blow-up at update 2
    "run.eval_every=10000",
)


def assert_last_good_checkpoint(run_dir: Path) -> None:
    """The checkpoint is the one of step 301, after the first update, and its networks are finite."""
    parts = checkpoint.load(run_dir / CHECKPOINT_FILE)
    assert parts["counters"]["step"] == 301 and parts["agent"]["num_updates"] == 1
    for name in ("actor", "critic", "actor_target", "critic_target"):
        assert all(torch.isfinite(t).all() for t in parts["agent"][name].values())


def test_a_non_finite_loss_stops_the_run_at_the_next_log_row_naming_it(make_config: MakeConfig, tmp_path: Path) -> None:
    with pytest.raises(TrainingError) as error:
        run(make_config(*BLOW_UP, "run.log_every=1"), tmp_path)
    message = r"non-finite critic_loss=(inf|nan) for seed 0 at env step 302 \(update 2\); the last good checkpoint"
    assert re.match(message, str(error.value))
    failure = summary(tmp_path)
    assert failure["status"] == "failed" and re.search(message, str(failure["failure"]))
    assert_last_good_checkpoint(tmp_path)


def test_non_finite_weights_are_never_checkpointed(make_config: MakeConfig, tmp_path: Path) -> None:
    """With no log row to see the loss, the checkpoint at step 602 finds the weights non-finite and keeps 301's."""
    with pytest.raises(TrainingError, match="non-finite network parameters at env step 602; the last good checkpoint"):
        run(make_config(*BLOW_UP, "run.log_every=10000"), tmp_path)
    assert summary(tmp_path)["status"] == "failed"
    assert_last_good_checkpoint(tmp_path)


# ---------------------------------------------------------------------- refusals and finished runs
@pytest.fixture
def finished(make_config: MakeConfig, tmp_path: Path) -> Path:
    run_dir = tmp_path / "finished"
    run(make_config(*SHORT, "run.total_steps=300"), run_dir)
    return run_dir


def test_a_finished_run_relaunched_does_nothing(make_config: MakeConfig, finished: Path) -> None:
    before = {path.name: path.stat().st_mtime_ns for path in finished.iterdir()}
    result = run(make_config(*SHORT, "run.total_steps=300", "run.log_every=7"), finished)  # a log key may differ
    assert result["status"] == "complete" and result["steps"] == 300
    assert result["final_return"] == pytest.approx(float(without_timing(finished / "eval.csv")[-1]["return_mean"]))
    assert {path.name: path.stat().st_mtime_ns for path in finished.iterdir()} == before


def test_another_config_is_refused_naming_the_differing_keys(make_config: MakeConfig, finished: Path) -> None:
    changed = make_config(*SHORT, "run.total_steps=300", "agent.tau=0.01", "logging.project=other")
    with pytest.raises(ResumeError) as error:
        run(changed, finished)
    assert "agent.tau=0.005 (checkpoint) vs 0.01 (now)" in str(error.value) and "logging" not in str(error.value)


def test_resume_never_refuses_a_dir_with_results(make_config: MakeConfig, finished: Path) -> None:
    with pytest.raises(ResumeError, match=r"run\.resume=never: .* already holds results \(eval\.csv, metrics"):
        run(make_config(*SHORT, "run.total_steps=300", "run.resume=never"), finished)


def test_extending_a_run_that_dropped_its_buffer_is_refused(make_config: MakeConfig, finished: Path) -> None:
    with pytest.raises(ResumeError, match="dropped the replay buffer"):
        run(make_config(*SHORT, "run.total_steps=400"), finished)
    assert without_timing(finished / "eval.csv")[-1]["step"] == "300"  # nothing was written


ROW_OPTIONS = sorted(path.stem for path in (CONF_DIR / "ablation").glob("*.yaml"))


@pytest.mark.parametrize("option", ROW_OPTIONS)
def test_every_row_trains_on_hopper(option: str, make_config: Callable[..., TrainConfig], tmp_path: Path) -> None:
    config = make_config(
        "env=hopper",
        f"ablation={option}",
        *TINY_SIZES,  # the command line wins over the row's own networks and batches (DDPG's 400-300, 64)
        "run.total_steps=500",
        "env.random_steps=200",
        "run.eval_every=500",
        "run.log_every=500",
    )
    summary = run(config, tmp_path)
    assert summary["status"] == "complete"
    assert summary["updates"] == 500 - max(200, config.agent.batch_size)
    metrics = json.loads((tmp_path / "metrics.jsonl").read_text().splitlines()[-1])
    assert np.isfinite(metrics["critic_loss"]) and np.isfinite(metrics["actor_loss"])
    assert ("q2_mean" in metrics) == (config.agent.n_critics == 2)
