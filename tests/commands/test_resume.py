"""Nothing lost: a run killed at any moment resumes exactly (one seed or several per process); SIGTERM
checkpoints after the current step, mid-episode, and resumes exactly; a changed config, a finished run,
run.resume=never, a corrupt checkpoint and a NaN are each handled clearly. All through the real entrypoint in
subprocesses (marked slow). td3x-resume (td3x.commands.resume): a K-seeds process found from its dir or a seed dir, a
run started with run.resume=never continued, a SIGKILLed sweep job resumed like the job uninterrupted. The resume
decision's config hash (td3x.rundir.resume_decision): the keys it leaves out are td3x.config.inert's RESUME_INERT, and
the hash of every committed run's config is what it was when the run was trained."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
import yaml
from helpers.run_files import assert_same_run, signal_at, without_timing
from helpers.runs import STOPPABLE_SIZES, TINY_COMMAND_LINE, TINY_SIZES
from helpers.scripts import BIN, k_seed_run
from helpers.wandb_records import find_run_files, read_run

import td3x
from td3x.commands import resume
from td3x.commands.resume import RESUME_KEYS
from td3x.config.hydra import flatten, from_saved, to_container
from td3x.config.inert import RESUME_INERT, RESUME_MOVABLE
from td3x.config.schema import ConfigError, TrainConfig
from td3x.rundir import checkpoint
from td3x.rundir.layout import CONFIG_FILE, is_timing_column
from td3x.rundir.resume_decision import config_hash, learning_keys
from td3x.training.loop import RunInterrupted

__all__ = ["k_seed_run"]  # a fixture, imported so that this module's tests can use it

RUN = (
    "run.total_steps=2400",
    "run.eval_every=400",
    "run.checkpoint_every=300",
    "run.log_every=200",
    "env.random_steps=300",
    *STOPPABLE_SIZES,
)


def command(run_dir: Path, *overrides: str) -> list[str]:
    return [sys.executable, "-m", "td3x.commands.train", *RUN, *overrides, f"hydra.run.dir={run_dir}"]


def environment() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}, "WANDB_MODE": "offline"}


def train(run_dir: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(run_dir, *overrides), capture_output=True, text=True, timeout=600, env=environment())


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("straight") / "run"
    result = train(run_dir)
    assert result.returncode == 0, result.stderr
    return run_dir


def wait_for_checkpoint(process: subprocess.Popen[bytes], run_dir: Path, extra_seconds: float) -> None:
    deadline = time.monotonic() + 300
    while not (run_dir / "checkpoint.pt").exists():
        assert process.poll() is None and time.monotonic() < deadline, "no checkpoint before the run ended"
        time.sleep(0.05)
    time.sleep(extra_seconds)


def logged_step(run_dir: Path) -> int:
    """The last env step in the run's metrics.jsonl (one line every 200 steps; a line being written is skipped)."""
    path = run_dir / "metrics.jsonl"
    steps = [0]
    for line in path.read_text().splitlines() if path.exists() else []:
        with contextlib.suppress(ValueError, KeyError):
            steps.append(int(json.loads(line)["step"]))
    return max(steps)


def wait_for_a_random_moment(process: subprocess.Popen[bytes], run_dir: Path, attempt: int) -> None:
    """Return at a random moment after the first checkpoint (step 300 of 2400) and well before the end: once the run
    has logged a random share, up to 70%, of the remaining steps, plus up to half a second. Read from the run's own
    progress, so that the moment falls inside the run however fast the machine is and whatever else it runs."""
    draw = random.Random(attempt)
    target_step = 300 + draw.uniform(0.0, 0.7) * (2400 - 300)
    wait_for_checkpoint(process, run_dir, 0.0)
    deadline = time.monotonic() + 300
    while logged_step(run_dir) < target_step:
        assert process.poll() is None and time.monotonic() < deadline, "the run ended before its moment"
        time.sleep(0.02)
    time.sleep(draw.uniform(0.0, 0.5))


@pytest.mark.slow
@pytest.mark.parametrize("attempt", range(int(os.environ.get("TD3X_KILL_ATTEMPTS", "3"))))
def test_sigkill_at_a_random_moment_then_resume_equals_an_uninterrupted_run(
    attempt: int, uninterrupted: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    process = subprocess.Popen(
        command(run_dir), env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_for_a_random_moment(process, run_dir, attempt)
    process.kill()
    process.wait()
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "running"  # killed, not finished
    result = train(run_dir)
    assert result.returncode == 0, result.stderr
    assert "resuming" in result.stdout + result.stderr
    assert_same_run(run_dir, uninterrupted)
    segments = find_run_files(run_dir)  # offline-run-<time>-<id>/run-<id>.wandb, one per segment
    assert len(segments) >= 2 and len({path.parent.name.rsplit("-", 1)[1] for path in segments}) == 1
    assert read_run(segments[-1]).exit_code == 0  # the resumed segment finished the same W&B run


@pytest.mark.slow
@pytest.mark.parametrize("row", ["ddpg", "dq_ac"])  # OU noise, the normaliser, two Adam groups; a second actor
def test_sigkill_then_resume_equals_an_uninterrupted_run_for_other_rows(row: str, tmp_path: Path) -> None:
    overrides = (f"ablation={row}", "agent.hidden_sizes=[32,32]", "run.total_steps=800")  # the command line wins
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    process = subprocess.Popen(
        command(killed, *overrides), env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_for_checkpoint(process, killed, 0.0)  # killed at once: step 300 of 800, mid-episode
    process.kill()
    process.wait()
    assert train(straight, *overrides).returncode == 0
    result = train(killed, *overrides)
    assert result.returncode == 0 and "resuming" in result.stdout + result.stderr, result.stderr
    assert_same_run(killed, straight)


@pytest.mark.slow
def test_sigterm_checkpoints_mid_episode_and_resumes(uninterrupted: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    process = subprocess.Popen(
        command(run_dir), env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    wait_for_checkpoint(process, run_dir, 1.0)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1 and "stopped by SIGTERM at env step" in stderr
    parts = checkpoint.load(run_dir / "checkpoint.pt")
    step = parts["counters"]["step"]
    assert len(parts["seeds"][0]["tape"]["actions"]) == step % 200  # the episode so far, replayed on resume
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "running" and summary["failure"] is None and "SIGTERM" in summary["interrupted"]
    assert train(run_dir).returncode == 0
    assert_same_run(run_dir, uninterrupted)


def signal_during_evaluation(process: subprocess.Popen[str], run_dir: Path, step: int) -> str:
    """SIGTERM to ``process`` once its training row of env step ``step`` is written (its evaluation at ``step``
    follows at once), then its output (stdout and stderr) once it has exited."""
    metrics, deadline = run_dir / "metrics.jsonl", time.monotonic() + 300
    while not (metrics.exists() and f'"step": {step},' in metrics.read_text()):
        assert process.poll() is None and time.monotonic() < deadline, "the run ended before the step"
        time.sleep(0.02)
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=120)
    return stdout + stderr


def kill_once_evaluated(arguments: list[str], run_dir: Path, step: int) -> None:
    """Resume the run in ``run_dir``, whose checkpoint at ``step`` records its evaluation as due, and SIGKILL it as
    soon as it has written that evaluation's row, before its next checkpoint: the next resume, from the same
    checkpoint, must drop the row before making the evaluation again."""
    process = subprocess.Popen(arguments, env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    eval_csv, deadline = run_dir / "eval.csv", time.monotonic() + 300
    while f"\n{step}," not in eval_csv.read_text():
        assert process.poll() is None and time.monotonic() < deadline, "the resumed run ended before its evaluation"
        time.sleep(0.01)
    process.kill()
    process.wait()
    parts = checkpoint.load(run_dir / "checkpoint.pt")
    assert parts["counters"]["step"] == step and parts["counters"]["evaluation_due"]  # no checkpoint since
    with eval_csv.open() as file:
        assert [int(row["step"]) for row in csv.DictReader(file)][-1] == step  # the evaluation's row, once


@pytest.mark.slow
def test_sigterm_during_an_evaluation_is_acknowledged_and_cuts_it_short_and_resume_makes_it(tmp_path: Path) -> None:
    """Evaluations of 40 episodes (a second or more): SIGTERM during the one at step 400 is acknowledged in one line
    and stops the run within an episode, after a checkpoint that records the evaluation as due, with no row of it
    written; a resume that makes it and is killed before its next checkpoint leaves its row, which the next resume
    drops and writes again; a SIGTERM during the final evaluation (step 800) leaves a run that is not complete. The
    run resumed three times has the uninterrupted run's eval.csv (each evaluation once), metrics and final state."""
    overrides = ("run.total_steps=800", "run.eval_episodes=40", "logging.wandb_mode=disabled")  # evals: 0, 400, 800
    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    for step in (400, 800):
        process = subprocess.Popen(
            command(stopped, *overrides), env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        output = signal_during_evaluation(process, stopped, step)
        assert process.returncode == 1, output
        acknowledged = f"SIGTERM received at env step {step}: stopping after a checkpoint"
        assert sum(acknowledged in line for line in output.splitlines()) == 1, output
        assert (
            f"training stopped: stopped by SIGTERM during the evaluation at env step {step}, after a checkpoint "
            "(a resumed run makes this evaluation); resume with: td3x-resume"
        ) in output
        parts = checkpoint.load(stopped / "checkpoint.pt")
        assert parts["counters"]["step"] == step and parts["counters"]["evaluation_due"]
        with (stopped / "eval.csv").open() as file:
            assert [int(row["step"]) for row in csv.DictReader(file)][-1] == step - 400  # the cut one not written
        assert json.loads((stopped / "summary.json").read_text())["status"] == "running"
        if step == 400:  # a resume that makes the evaluation, killed before its next checkpoint (at 600)
            kill_once_evaluated(command(stopped, *overrides), stopped, step)
    assert train(straight, *overrides).returncode == 0
    result = train(stopped, *overrides)
    assert result.returncode == 0 and "resuming" in result.stdout + result.stderr, result.stderr
    assert_same_run(stopped, straight)


@pytest.mark.slow
def test_k_seeds_killed_then_resumed_equal_an_uninterrupted_k_seed_run(tmp_path: Path) -> None:
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    assert train(straight, "run.num_seeds=2").returncode == 0
    process = subprocess.Popen(
        command(killed, "run.num_seeds=2"), env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_for_checkpoint(process, killed, 1.5)
    process.kill()
    process.wait()
    result = train(killed, "run.num_seeds=2")
    assert result.returncode == 0 and "resuming" in result.stdout + result.stderr, result.stderr
    for seed in ("seed_0", "seed_1"):
        assert_same_run(killed / seed, straight / seed)
    assert without_timing(straight / "seed_0" / "eval.csv") != without_timing(straight / "seed_1" / "eval.csv")


@pytest.mark.slow
def test_finished_run_relaunched_does_nothing(uninterrupted: Path) -> None:
    before = (uninterrupted / "eval.csv").stat().st_mtime_ns
    result = train(uninterrupted)
    assert result.returncode == 0 and "already holds a complete run" in result.stdout + result.stderr
    assert (uninterrupted / "eval.csv").stat().st_mtime_ns == before


@pytest.mark.slow
def test_resume_never_refuses_a_dir_with_results(uninterrupted: Path) -> None:
    """A resume refusal through the entrypoint: one line, exit 2 (the other refusals: test_training.py)."""
    result = train(uninterrupted, "run.resume=never")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "resume error: run.resume=never: " in result.stderr and "already holds results" in result.stderr


@pytest.mark.slow
def test_extending_needs_the_buffer(tmp_path: Path) -> None:
    dropped, kept = tmp_path / "dropped", tmp_path / "kept"
    assert train(dropped, "run.total_steps=800").returncode == 0
    assert checkpoint.load(dropped / "checkpoint.pt")["buffer"] is None  # a finished run drops its buffer
    result = train(dropped, "run.total_steps=1200")
    assert result.returncode == 2 and "dropped the replay buffer" in result.stderr
    assert train(kept, "run.total_steps=800", "run.keep_buffer=true").returncode == 0
    assert train(kept, "run.total_steps=1200", "run.keep_buffer=true").returncode == 0
    with (kept / "eval.csv").open() as file:
        assert [int(row["step"]) for row in csv.DictReader(file)] == [0, 400, 800, 1200]


@pytest.mark.slow
def test_a_corrupt_checkpoint_is_reported_not_loaded(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "checkpoint.pt").write_bytes(b"PK\x03\x04 truncated")
    result = train(run_dir)
    assert result.returncode == 2 and "truncated or corrupt" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_nan_stops_the_run_with_its_logs_and_last_good_checkpoint(tmp_path: Path) -> None:
    """Through the entrypoint (in-process, the message and the checkpoint guard: test_training.py)."""
    run_dir = tmp_path / "run"
    blow_up = ("agent.critic_lr=1e30", "env.random_steps=300", "run.checkpoint_every=301", "run.log_every=1")
    result = train(run_dir, *blow_up)  # Adam's first step moves each critic weight by ~1e30; the second overflows
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert re.search(r"training stopped: non-finite critic_loss=(inf|nan) for seed 0 at env step 302 ", result.stderr)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "failed" and "at env step 302" in summary["failure"] and summary["steps"] == 302
    assert without_timing(run_dir / "eval.csv")  # the evaluations so far are kept
    parts = checkpoint.load(run_dir / "checkpoint.pt")  # the last good checkpoint: after update 1, finite
    assert parts["counters"]["step"] == 301 and parts["agent"]["num_updates"] == 1
    assert all(torch.isfinite(t).all() for t in parts["agent"]["critic"].values())


@pytest.mark.slow
def test_two_processes_never_train_in_one_dir(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    process = subprocess.Popen(
        command(run_dir), env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_checkpoint(process, run_dir, 0.0)
        result = train(run_dir)
        assert result.returncode == 2 and "another process is training in" in result.stderr
    finally:
        process.kill()
        process.wait()


def test_td3x_resume_finds_a_k_seeds_process_from_its_dir_or_a_seed_dir(k_seed_run: Path) -> None:
    for given in (k_seed_run, k_seed_run / "seed_1"):
        run_dir, saved = resume.stored_run(given)
        assert run_dir == k_seed_run and saved["seed"] == 0 and saved["run"]["num_seeds"] == 2
    with pytest.raises(resume.ResumeError, match=r"agent\.tau=0\.1"):
        resume.resume_overrides(saved, ["agent.tau=0.1"])
    assert resume.resume_overrides(saved, ["run.total_steps=900"])["run"]["total_steps"] == 900
    with pytest.raises(ConfigError, match=r"^run\.total_steps='abc' is not allowed: expected an integer$"):
        resume.resume_overrides(saved, ["run.total_steps=abc"])  # the user's value, named as td3x-train names it


def test_td3x_resume_continues_a_run_started_with_resume_never(tmp_path: Path) -> None:
    """``run.resume=never`` guards a launch against an existing dir; td3x-resume is asked to continue it."""
    overrides = [*TINY_COMMAND_LINE, "run.resume=never"]
    td3x.train(td3x.compose(overrides), tmp_path)
    with pytest.raises(resume.ResumeError, match=r"run\.resume=never"):  # td3x-train's guard holds
        td3x.train(td3x.compose(overrides), tmp_path)
    resume.main([str(tmp_path)])  # finished: says so and returns, where the same guard would exit 2
    assert json.loads((tmp_path / "summary.json").read_text())["status"] == "complete"


# ---------------------------------------------------------------------- a run trained on a GPU, resumed on the CPU
CUDA = torch.cuda.is_available()
GPU = "NVIDIA H200"


def as_if_trained_on_cuda(run_dir: Path) -> None:
    """Rewrite a run stopped on the CPU as a run stopped on a GPU records itself: ``run.device=cuda`` in its
    config.yaml and in its checkpoint's config, provenance.json's device and GPU, and each seed's target smoothing
    generator in CUDA's format (its Philox seed and offset, 16 bytes: torch.Generator('cuda').get_state()). What a
    machine without a GPU cannot make is a checkpoint whose tensors were saved from CUDA memory: td3x loads every
    checkpoint with map_location='cpu', which maps those to the CPU before anything reads them."""
    parts = checkpoint.load(run_dir / "checkpoint.pt")
    parts.pop("format_version")  # save adds it
    parts["config"]["run"]["device"] = "cuda"
    for seed in parts["seeds"]:
        assert seed["generators"]["torch"].numel() == torch.Generator().get_state().numel()  # the CPU's, before
        seed["generators"]["torch"] = torch.tensor([1234, 4000], dtype=torch.int64).view(torch.uint8)
    checkpoint.save(run_dir / "checkpoint.pt", parts)
    config = yaml.safe_load((run_dir / CONFIG_FILE).read_text())
    config["run"]["device"] = "cuda"
    (run_dir / CONFIG_FILE).write_text(yaml.safe_dump(config, sort_keys=False))
    provenance = json.loads((run_dir / "provenance.json").read_text())
    (run_dir / "provenance.json").write_text(json.dumps({**provenance, "device": "cuda", "cuda": GPU}))


def files_of(run_dir: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(run_dir.iterdir()) if path.is_file()}


def td3x_resume(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BIN / "td3x-resume", *args], capture_output=True, text=True, timeout=600, env=no_wandb())


@pytest.mark.slow
def test_a_run_trained_on_a_gpu_goes_on_on_the_cpu_with_run_device_cpu_and_says_so(
    make_config: Callable[..., TrainConfig], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was refused with advice td3x-resume refused in turn (run.device is not one of its keys). Now the refusal
    gives the command that works, and that command continues the run on the CPU: a new sitting in provenance.json,
    one warning in train.log, the rows before the stop kept, and the same numbers from one checkpoint every time."""
    run_dir = tmp_path / "run"
    overrides = ("run.total_steps=800", "run.eval_every=200", "env.random_steps=300", "run.checkpoint_every=200")
    config = make_config(*TINY_SIZES, *overrides)
    signal_at(monkeypatch, 330)
    with pytest.raises(RunInterrupted):
        td3x.train(config, run_dir)
    monkeypatch.undo()
    as_if_trained_on_cuda(run_dir)
    kept = eval_rows(run_dir)  # steps 0-200, before the stop
    again = shutil.copytree(run_dir, tmp_path / "again")
    if not CUDA:
        before = files_of(run_dir)
        refused = td3x_resume(run_dir)
        assert refused.returncode == 2 and refused.stderr.splitlines() == [
            f"resume error: {run_dir} was trained with run.device='cuda' and torch sees no CUDA device here: resume "
            "it where one is, or go on on this machine's CPU (its numbers from there on are the CPU's, not an "
            f"uninterrupted run's): td3x-resume {run_dir} run.device=cpu"
        ]
        assert files_of(run_dir) == before  # nothing written, train.log included

    moved = td3x_resume(run_dir, "run.device=cpu")

    assert moved.returncode == 0, moved.stderr
    here = torch.backends.cpu.get_cpu_capability()
    warning = (
        f"[td3x.training.run][WARNING] - {run_dir}: resumed on cpu (fp32 kernels {here}) after cuda ({GPU}): from "
        "here its numbers are this machine's, not an uninterrupted run's"
    )
    assert (run_dir / "train.log").read_text().count(warning) == 1
    provenance = json.loads((run_dir / "provenance.json").read_text())
    assert provenance["device"] == "cpu" and [s["device"] for s in provenance["earlier_sittings"]] == ["cuda"]
    assert yaml.safe_load((run_dir / CONFIG_FILE).read_text())["run"]["device"] == "cpu"  # where it trains now
    rows = eval_rows(run_dir)
    assert [int(row["step"]) for row in rows] == [0, 200, 400, 600, 800] and rows[:2] == kept
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "complete"
    assert td3x_resume(again, "run.device=cpu").returncode == 0
    assert eval_rows(again) == rows  # the same checkpoint, resumed on the CPU again: the same numbers


# ---------------------------------------------------------------------- td3x-resume, end to end
SWEEP = (
    "-m",
    "run.total_steps=1800",
    "run.eval_every=300",
    "run.checkpoint_every=300",
    "env.random_steps=300",
    "seed=0",
)


def no_wandb() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}, "WANDB_MODE": "disabled"}


def eval_rows(run_dir: Path) -> list[dict[str, str]]:
    with (run_dir / "eval.csv").open() as file:
        return [{k: v for k, v in row.items() if not is_timing_column(k)} for row in csv.DictReader(file)]


# a replay buffer no machine holds (24 TB for Pendulum): check_runtime refuses it on any Linux machine
UNRUNNABLE_BUFFER = 10**12


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/meminfo").is_file(), reason="the memory check reads Linux's /proc/meminfo")
def test_td3x_resume_refuses_what_td3x_train_refuses_on_this_machine(tmp_path: Path) -> None:
    """td3x-resume goes through the same runtime checks as td3x-train: a stored config this machine cannot run is
    a config error, exit 2, before anything is trained or written (it used to reach the buffer's allocation)."""
    config = td3x.compose([*RUN, f"agent.buffer_size={UNRUNNABLE_BUFFER}"])
    (tmp_path / CONFIG_FILE).write_text(yaml.safe_dump({**to_container(config), "choices": {}}, sort_keys=False))
    result = subprocess.run(
        [str(BIN / "td3x-resume"), str(tmp_path)], capture_output=True, text=True, timeout=300, env=environment()
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"config error: agent.buffer_size={UNRUNNABLE_BUFFER} is not allowed: the replay")
    assert len(result.stderr.splitlines()) == 1
    assert sorted(path.name for path in tmp_path.iterdir()) == [CONFIG_FILE, "train.log"]


@pytest.mark.slow
def test_td3x_resume_of_a_sigkilled_sweep_job_equals_the_job_uninterrupted(tmp_path: Path) -> None:
    def sweep_command(sweep_dir: Path) -> list[str]:
        return [str(BIN / "td3x-train"), *SWEEP, *TINY_SIZES, f"hydra.sweep.dir={sweep_dir}"]

    # the two sweep dirs share their name, the W&B group a sweep gets by default (config.yaml records it)
    straight_dir, killed_dir = tmp_path / "straight" / "sweep", tmp_path / "killed" / "sweep"
    straight = subprocess.run(sweep_command(straight_dir), env=no_wandb(), capture_output=True, timeout=600)
    assert straight.returncode == 0, straight.stderr
    (job,) = straight_dir.glob("pendulum/none/*")
    assert "=" in job.name and "," in job.name  # the name a shell would need quoted as a Hydra override

    process = subprocess.Popen(sweep_command(killed_dir), env=no_wandb(), stderr=subprocess.DEVNULL)
    killed_job = killed_dir / "pendulum" / "none" / job.name
    deadline = time.monotonic() + 300
    while not (killed_job / "checkpoint.pt").exists():
        assert process.poll() is None and time.monotonic() < deadline, "the job ended before its first checkpoint"
        time.sleep(0.05)
    # halfway through the rest (steps 300 to 1800), as long as the uninterrupted job took for it: never after the end
    time.sleep(0.5 * json.loads((job / "summary.json").read_text())["wall_time_s"] * (1800 - 300) / 1800)
    process.kill()
    process.wait()
    assert json.loads((killed_job / "summary.json").read_text())["status"] == "running"

    resumed = subprocess.run(
        [BIN / "td3x-resume", killed_job], env=no_wandb(), capture_output=True, text=True, timeout=600
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" in resumed.stderr and "done: final eval return" in resumed.stderr
    assert eval_rows(killed_job) == eval_rows(job)
    assert yaml.safe_load((killed_job / "config.yaml").read_text()) == yaml.safe_load((job / "config.yaml").read_text())
    again = subprocess.run([BIN / "td3x-resume", killed_job], env=no_wandb(), capture_output=True, text=True)
    assert again.returncode == 0 and "already holds a complete run" in again.stderr


COMMITTED_RUNS = Path(__file__).resolve().parents[2] / "docs" / "results" / "runs"


@pytest.mark.parametrize(
    ("run", "expected"),
    [  # computed by the code before inert_keys existed (resume.py's own NOT_HASHED)
        ("reference_td3/hopper/none/seed=0/seed_0", "ca39f63cdba68590"),
        ("reference_bias/hopper/ahe/seed=0/seed_0", "542c03951643443a"),
        ("reference_td3_2018/halfcheetah/none/seed=0", "e0894c14cc0bf147"),
    ],
)
def test_the_hash_of_a_committed_runs_config_is_unchanged(run: str, expected: str) -> None:
    stored = yaml.safe_load((COMMITTED_RUNS / run / CONFIG_FILE).read_text())
    stored.pop("choices")  # a checkpoint stores the config without the group choices
    assert config_hash(stored) == expected  # what resuming computes from a checkpoint's stored config
    assert config_hash(to_container(from_saved(stored))) == expected, "this td3x would refuse to resume the run"


def test_the_hash_leaves_out_the_resume_inert_keys_only() -> None:
    config = to_container(from_saved({}))
    left_out = set(flatten(config)) - set(learning_keys(config))
    assert left_out == {key for key in flatten(config) if key.startswith("logging.")} | {
        "run.checkpoint_every",
        "run.log_every",
        "run.total_steps",
        "run.resume",
        "run.keep_buffer",
    }
    # td3x-resume continues whatever run.resume was, and may move the run to another device
    assert set(RESUME_KEYS) == set(RESUME_INERT) - {"run.resume"} | set(RESUME_MOVABLE)
