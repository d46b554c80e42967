"""td3x-sweep status, rerun and recheck on a real (tiny) multirun (slow); list and status of single runs in each
state, trained in-process (fast)."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from run_files import signal_at, without_timing

from td3x.config import TrainConfig
from td3x.sweep import main
from td3x.trainer import RunInterrupted, TrainingError
from td3x.training import run

MakeConfig = Callable[..., TrainConfig]
SWEEP = (
    "-m",
    "seed=0,1",
    "run.total_steps=900",
    "run.eval_every=200",
    "env.random_steps=300",
    "run.eval_episodes=1",
    "agent.hidden_sizes=[32,32]",
    "agent.batch_size=64",
)


def td3x(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**{k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}, "WANDB_MODE": "disabled"}
    return subprocess.run(
        [sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=600, env=environment
    )


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sweep_dir = tmp_path_factory.mktemp("sweep")
    assert td3x("td3x.entrypoint", *SWEEP, f"hydra.sweep.dir={sweep_dir}").returncode == 0
    return sweep_dir


@pytest.mark.slow
def test_status_counts_and_rerun_completes_the_missing_run(sweep: Path) -> None:
    status = td3x("td3x.sweep", "status", str(sweep))
    assert status.returncode == 0 and "2 complete, 0 running, 0 stale, 0 failed, 0 not started" in status.stdout
    (missing,) = [path for path in sweep.glob("pendulum/none/*seed=1")]
    shutil.rmtree(missing)
    status = td3x("td3x.sweep", "status", str(sweep))
    assert status.returncode == 1 and "1 complete, 0 running, 0 stale, 0 failed, 1 not started" in status.stdout
    assert "steps: 900/1800 (50.0%)" in status.stdout
    assert td3x("td3x.sweep", "rerun", str(sweep)).returncode == 0
    assert "2 complete" in td3x("td3x.sweep", "status", str(sweep)).stdout


@pytest.mark.slow
def test_recheck_finds_identical_runs_and_a_tampered_one(sweep: Path) -> None:
    result = td3x("td3x.sweep", "recheck", str(sweep), "--runs", "2")
    assert result.returncode == 0 and result.stdout.count("identical") == 2, result.stdout + result.stderr
    (run_dir,) = [path for path in sweep.glob("pendulum/none/*seed=0")]
    rows = list(csv.DictReader((run_dir / "eval.csv").open()))
    rows[1]["return_0"] = str(float(rows[1]["return_0"]) + 1e-9)
    with (run_dir / "eval.csv").open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    result = td3x("td3x.sweep", "recheck", str(sweep), "--runs", "1")
    assert result.returncode == 1 and "DIFFERENT" in result.stdout and "at step 200, return_0" in result.stdout


@pytest.mark.slow
def test_not_a_sweep_dir_is_one_line(tmp_path: Path) -> None:
    result = td3x("td3x.sweep", "status", str(tmp_path))
    assert (
        result.returncode == 2
        and result.stderr.strip() == f"td3x-sweep: {tmp_path} is not a sweep dir: it has no multirun.yaml"
    )


@pytest.mark.slow
def test_k_seed_jobs_count_and_recheck_each_seed_dir(tmp_path: Path) -> None:
    """Two jobs of run.num_seeds=2: status sees four runs (each seed's own dir), recheck reruns a seed in its mode."""
    sweep_dir = tmp_path / "sweep"
    overrides = [o for o in SWEEP if not o.startswith("seed=")]
    launched = td3x("td3x.entrypoint", *overrides, "seed=0,2", "run.num_seeds=2", f"hydra.sweep.dir={sweep_dir}")
    assert launched.returncode == 0
    status = td3x("td3x.sweep", "status", str(sweep_dir))
    assert status.returncode == 0 and "4 complete, 0 running" in status.stdout and "3600/3600" in status.stdout
    result = td3x("td3x.sweep", "recheck", str(sweep_dir), "--runs", "1")
    assert result.returncode == 0 and "identical" in result.stdout and "seed_0" in result.stdout, result.stdout


@pytest.mark.slow
def test_rerun_resumes_a_checkpointed_job_and_leaves_finished_ones_alone(
    sweep: Path, make_config: MakeConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Job seed=1 stopped at step 450 (its checkpoint), as a preempted job would be; job seed=0 is finished."""
    (finished,) = sweep.glob("pendulum/none/*seed=0")
    (stopped,) = sweep.glob("pendulum/none/*seed=1")
    straight = without_timing(stopped / "eval.csv")
    shutil.rmtree(stopped)
    signal_at(monkeypatch, 450)
    with pytest.raises(RunInterrupted):  # the job's own config, composed as the sweep composed it
        run(make_config(*[o for o in SWEEP if o != "-m" and not o.startswith("seed=")], "seed=1"), stopped)
    monkeypatch.undo()
    untouched = td3x_files(finished)
    status = td3x("td3x.sweep", "status", str(sweep))
    assert status.returncode == 1 and "1 complete, 1 running, 0 stale, 0 failed" in status.stdout
    assert "steps: 1350/1800 (75.0%)" in status.stdout
    result = td3x("td3x.sweep", "rerun", str(sweep))
    assert result.returncode == 0 and "from its checkpoint at env step 450" in result.stdout + result.stderr
    assert without_timing(stopped / "eval.csv") == straight  # resumed exactly where it stopped
    assert td3x_files(finished) == untouched


def td3x_files(run_dir: Path) -> dict[str, int]:
    """The files td3x writes in a run dir and their modification times (Hydra rewrites its .hydra/ and log)."""
    written = {".csv", ".jsonl", ".json", ".pt", ".yaml"}
    return {path.name: path.stat().st_mtime_ns for path in run_dir.iterdir() if path.suffix in written}


# ---------------------------------------------------------------------- fast: list and the states of single runs
def sweep_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


def test_list_exits_2_naming_a_refused_job(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = sweep_cli(capsys, "list", "agent.tau=0.01,2")
    last = out.splitlines()[-1]
    assert code == 2 and last.startswith("2 jobs") and last.endswith(", 1 with config errors")
    assert out.count("config error: agent.tau=2.0 is not allowed: must be in (0, 1]") == 1
    assert sweep_cli(capsys, "list", "agent.tau=0.01")[0] == 0


STATUS_RUN = ("agent.hidden_sizes=[16,16]", "agent.batch_size=32", "run.eval_episodes=1", "env.random_steps=300")


def test_status_of_a_failed_run_gives_its_reason(
    make_config: MakeConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blow_up = ("agent.critic_lr=1e30", "run.log_every=1", "run.total_steps=700")  # non-finite at env step 302
    with pytest.raises(TrainingError):
        run(make_config(*STATUS_RUN, *blow_up), tmp_path)
    code, out, _ = sweep_cli(capsys, "status", str(tmp_path))
    assert code == 1 and "0 complete, 0 running, 0 stale, 1 failed, 0 not started" in out
    failed = f"failed   {tmp_path}  at step 302: TrainingError: non-finite critic_loss="
    assert any(line.startswith(failed) for line in out.splitlines()), out


def test_status_of_a_running_then_stale_run_and_the_compute_left(
    make_config: MakeConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run of 100,000 steps stopped at step 330: the compute left is its remaining steps at its own speed."""
    signal_at(monkeypatch, 330)
    with pytest.raises(RunInterrupted):
        run(make_config(*STATUS_RUN, "run.total_steps=100000", "agent.buffer_size=1000"), tmp_path)
    monkeypatch.undo()
    summary = json.loads((tmp_path / "summary.json").read_text())
    left_h = (100_000 - 330) / (330 / summary["wall_time_s"]) / 3600
    code, out, _ = sweep_cli(capsys, "status", str(tmp_path))
    assert code == 1 and "0 complete, 1 running, 0 stale, 0 failed, 0 not started" in out
    assert f"steps: 330/100000 (0.3%); about {left_h:.1f} h of compute left" in out
    an_hour_ago = time.time() - 3600  # no summary written for longer than 30 min: the process is gone
    os.utime(tmp_path / "summary.json", (an_hour_ago, an_hour_ago))
    code, out, _ = sweep_cli(capsys, "status", str(tmp_path))
    assert code == 1 and "0 complete, 0 running, 1 stale, 0 failed" in out
    assert re.search(rf"^stale    {re.escape(str(tmp_path))}  at step 330: no update for 30 min$", out, re.MULTILINE)
