"""td3x-sweep (td3x.commands.sweep): status, rerun and recheck on a real (tiny) multirun (slow); list and status of
single runs in each state, trained in-process (fast); --help.

The paper's sweeps stacked: one job per (env, row) trains its seeds in one process (``run.num_seeds``). Listing covers
every (env, row, seed) run; the one-seed-per-job form is one override away and gets dirs of its own; the SLURM
launcher's cores follow ``run.num_threads``. Then a stacked sweep through the real entrypoint: status, recheck of a
seed that is not its process's first, rerun of a stopped job, td3x-resume, the report's run discovery; and a stacked
job preempted on a local SLURM cluster, requeued and resumed, ending bit-identical to the same job uninterrupted.
And table2_smoke end to end: every row's job through the real multirun, in the dirs td3x-sweep list names."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from helpers.report_runs import curve, write_run
from helpers.run_files import assert_same_run, signal_at, without_timing
from helpers.runs import TINY_SIZES
from helpers.scripts import BIN, exit_code
from helpers.sweeps import (
    ONE_CLUSTER_AT_A_TIME,
    STOPPABLE_JOB,
    _last_eval_step,
    _wait_for,
    _weights,
    learned,
    slurm_cluster,
    summary,
    td3x,
    without_wandb_settings,
)

from td3x.analysis.reading.runs import find_runs
from td3x.commands.sweep import main
from td3x.commands.sweep import main as sweep_main
from td3x.config.hydra import CONF_DIR
from td3x.config.schema import TrainConfig
from td3x.rundir.layout import seed_run_dirs
from td3x.rundir.lock import exclusive
from td3x.sweeps.cost import MEASURED_ON, MEASURED_STEPS_PER_CORE_SECOND, launch_cost
from td3x.sweeps.launches import read_launches, sweep_dir_override
from td3x.sweeps.multirun import Job, launch_summary, launcher_resources, list_jobs
from td3x.training.loop import RunInterrupted, TrainingError
from td3x.training.run import run

__all__ = ["slurm_cluster"]  # a fixture, imported so that this module's tests can use it

MakeConfig = Callable[..., TrainConfig]
# 900 steps of Pendulum, updates from step 300, evaluations every 200 steps
LENGTH = ("run.total_steps=900", "run.eval_every=200", "env.random_steps=300")
SWEEP = ("-m", "seed=0,1", *LENGTH, *TINY_SIZES)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sweep_dir = tmp_path_factory.mktemp("sweep")
    launched = td3x("td3x.commands.train", *SWEEP, f"hydra.sweep.dir={sweep_dir}")
    assert launched.returncode == 0
    assert launched.stdout.splitlines()[-1] == f"multirun: 2 jobs (2 runs): 2 complete; sweep dir {sweep_dir}"
    return sweep_dir


@pytest.mark.slow
def test_status_counts_and_rerun_completes_the_missing_run(sweep: Path) -> None:
    status = td3x("td3x.commands.sweep", "status", str(sweep))
    assert (
        status.returncode == 0 and "2 complete, 0 running, 0 stopped, 0 stale, 0 failed, 0 not started" in status.stdout
    )
    assert "steps: 1800/1800 (100.0%); finished: no compute left" in status.stdout
    (missing,) = [path for path in sweep.glob("pendulum/none/*seed=1")]
    shutil.rmtree(missing)
    status = td3x("td3x.commands.sweep", "status", str(sweep))
    assert (
        status.returncode == 1 and "1 complete, 0 running, 0 stopped, 0 stale, 0 failed, 1 not started" in status.stdout
    )
    assert "steps: 900/1800 (50.0%)" in status.stdout
    assert td3x("td3x.commands.sweep", "rerun", str(sweep)).returncode == 0
    assert "2 complete" in td3x("td3x.commands.sweep", "status", str(sweep)).stdout


@pytest.mark.slow
def test_the_line_a_multirun_ends_with_counts_a_run_it_cannot_read_as_failed(sweep: Path, tmp_path: Path) -> None:
    """As td3x-sweep status lists it (before: "its runs could not be counted", the other jobs' outcomes unsaid)."""
    copy = shutil.copytree(sweep, tmp_path / "sweep")
    (run_dir,) = copy.glob("pendulum/none/*seed=1")
    (run_dir / "summary.json").write_text('{"status": ')
    (launch,) = read_launches(copy)
    assert launch_summary(copy, launch) == (
        f"multirun: 2 jobs (2 runs): 1 complete, 1 failed; sweep dir {copy}; `td3x-sweep status {copy}` lists its "
        f"runs, `td3x-sweep rerun {copy}` relaunches it"
    )


@pytest.mark.slow
def test_recheck_finds_identical_runs_and_a_tampered_one(sweep: Path) -> None:
    result = td3x("td3x.commands.sweep", "recheck", str(sweep), "--runs", "2")
    assert result.returncode == 0 and result.stdout.count("identical") == 2, result.stdout + result.stderr
    (run_dir,) = [path for path in sweep.glob("pendulum/none/*seed=0")]
    rows = list(csv.DictReader((run_dir / "eval.csv").open()))
    rows[1]["return_0"] = str(float(rows[1]["return_0"]) + 1e-9)
    with (run_dir / "eval.csv").open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    result = td3x("td3x.commands.sweep", "recheck", str(sweep), "--runs", "1")
    assert result.returncode == 1 and "DIFFERENT" in result.stdout and "at step 200, return_0" in result.stdout


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/meminfo").is_file(), reason="the memory check reads Linux's /proc/meminfo")
def test_recheck_refuses_a_run_this_machine_cannot_run_as_td3x_train_does(
    sweep: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recheck trains through the same runtime checks as td3x-train: a stored config this machine cannot run (a
    replay buffer of 24 TB) is a config error, exit 2, not an allocation's traceback."""
    copy = tmp_path / "sweep"
    shutil.copytree(sweep, copy)
    for config_file in copy.glob("pendulum/none/*/config.yaml"):
        stored = yaml.safe_load(config_file.read_text())
        stored["agent"]["buffer_size"] = 10**12
        config_file.write_text(yaml.safe_dump(stored, sort_keys=False))
    code, _, err = sweep_cli(capsys, "recheck", str(copy), "--runs", "1")
    assert code == 2 and err.startswith("config error: agent.buffer_size=1000000000000 is not allowed: the replay")
    assert len(err.splitlines()) == 1


@pytest.mark.slow
def test_not_a_sweep_dir_is_one_line(tmp_path: Path) -> None:
    result = td3x("td3x.commands.sweep", "status", str(tmp_path))
    assert result.returncode == 2 and result.stderr.strip() == (
        f"td3x-sweep: {tmp_path} holds no run: not a sweep dir (no multirun.yaml), a run dir or a folder of runs"
    )
    result = td3x("td3x.commands.sweep", "rerun", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.strip() == f"td3x-sweep: {tmp_path} is not a sweep dir: it has no multirun.yaml"


SETTOTALMASS = "compiler attribute 'settotalmass' is deprecated"  # Gymnasium's HalfCheetah model, at every compile


@pytest.mark.slow
def test_mujoco_s_warnings_go_to_the_log_once_per_process_and_no_file_is_written_where_td3x_runs(
    tmp_path: Path,
) -> None:
    """MuJoCo printed its warning at every env made (96 times in the smoke sweep, 4 in ``list``) and appended it to
    MUJOCO_LOG.TXT in the working dir, for ``td3x-sweep list`` too."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    listed = td3x("td3x.commands.sweep", "list", "env=halfcheetah", "seed=0,1", cwd=cwd)
    assert listed.returncode == 0 and "2 jobs, 2 runs" in listed.stdout, listed.stderr
    assert SETTOTALMASS not in listed.stdout + listed.stderr and not list(cwd.iterdir())  # creates nothing

    sweep_dir = tmp_path / "sweep"
    short = (*TINY_SIZES, "run.total_steps=300", "run.eval_every=300")
    launched = td3x(
        "td3x.commands.train", "-m", "env=halfcheetah", "seed=0,1", *short, f"hydra.sweep.dir={sweep_dir}", cwd=cwd
    )
    assert launched.returncode == 0, launched.stderr
    console = launched.stdout + launched.stderr
    assert console.count(SETTOTALMASS) == 1 and "(logged once per process)" in console  # both jobs: one process
    first, second = (next(sweep_dir.glob(f"halfcheetah/none/*seed={seed}")) for seed in (0, 1))
    (logged,) = [line for line in (first / "train.log").read_text().splitlines() if SETTOTALMASS in line]
    assert "[td3x.algo.envs][INFO] - MuJoCo: " in logged
    assert SETTOTALMASS not in (second / "train.log").read_text()
    status = td3x("td3x.commands.sweep", "status", str(sweep_dir), cwd=cwd)
    assert status.returncode == 0 and SETTOTALMASS not in status.stdout + status.stderr
    assert not list(cwd.iterdir())  # no MUJOCO_LOG.TXT


# ---------------------------------------------------------------------- bookkeeping: the dir given, every launch
@pytest.mark.slow
def test_status_and_rerun_work_on_the_dir_given_counting_every_launch_into_it(tmp_path: Path) -> None:
    """No hydra.sweep.dir given: the sweep lands in outputs/multirun/<time>, which status and rerun must use
    (not a new <time>): all complete right after, and rerun trains nothing more, in place. Then a second launch
    into that dir (as two env options of one experiment would be): Hydra's multirun.yaml holds only the last,
    status counts both launches' jobs, and a job that never started as not started."""
    assert td3x("td3x.commands.train", *SWEEP, cwd=tmp_path).returncode == 0
    (sweep_dir,) = (tmp_path / "outputs/multirun").iterdir()
    status = td3x("td3x.commands.sweep", "status", str(sweep_dir))
    assert (
        status.returncode == 0 and "2 complete, 0 running, 0 stopped, 0 stale, 0 failed, 0 not started" in status.stdout
    )
    before = {path: td3x_files(path) for path in sweep_dir.glob("pendulum/none/*")}
    time.sleep(1)  # the ${now:...} default would name another dir if rerun recomputed it
    rerun = td3x("td3x.commands.sweep", "rerun", str(sweep_dir), cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert (rerun.stdout + rerun.stderr).count("already holds a complete run of 900 steps: nothing to do") == 2
    assert list((tmp_path / "outputs/multirun").iterdir()) == [sweep_dir]
    assert {path: td3x_files(path) for path in sweep_dir.glob("pendulum/none/*")} == before

    overrides = [o for o in SWEEP if not o.startswith("seed=")]
    assert td3x("td3x.commands.train", *overrides, "seed=2", f"hydra.sweep.dir={sweep_dir}").returncode == 0
    assert len(list((sweep_dir / "launches").iterdir())) == 2  # the relaunch added none
    status = td3x("td3x.commands.sweep", "status", str(sweep_dir))
    assert (
        status.returncode == 0 and "3 complete, 0 running, 0 stopped, 0 stale, 0 failed, 0 not started" in status.stdout
    )
    (first,) = sweep_dir.glob("pendulum/none/*seed=0")
    shutil.rmtree(first)  # the first launch's job, as if it had never started
    status = td3x("td3x.commands.sweep", "status", str(sweep_dir))
    assert (
        status.returncode == 1 and "2 complete, 0 running, 0 stopped, 0 stale, 0 failed, 1 not started" in status.stdout
    )
    # the folder above the job dirs is no sweep dir: its runs, as td3x-report finds them
    status = td3x("td3x.commands.sweep", "status", str(sweep_dir / "pendulum"))
    assert status.returncode == 0 and "2 complete, 0 running" in status.stdout and "1800/1800" in status.stdout


@pytest.mark.slow
def test_ctrl_c_during_rerun_stops_at_a_checkpoint_without_a_traceback_and_rerun_resumes(tmp_path: Path) -> None:
    sweep_dir = tmp_path / "sweep"
    longer = (*[o for o in SWEEP if not o.startswith(("seed=", "run.total_steps="))], "run.total_steps=1500")
    launched = td3x("td3x.commands.train", *longer, "seed=0", f"hydra.sweep.dir={sweep_dir}")
    assert launched.returncode == 0
    (job,) = sweep_dir.glob("pendulum/none/*total_steps=1500*")
    straight = without_timing(job / "eval.csv")
    shutil.rmtree(job)
    with (tmp_path / "rerun.log").open("w") as log:  # a session of its own: Ctrl-C reaches it and its launch
        rerun = subprocess.Popen(
            [sys.executable, "-m", "td3x.commands.sweep", "rerun", str(sweep_dir)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=without_wandb_settings(),
            start_new_session=True,
        )
    try:
        _wait_for(lambda: _last_eval_step(job) >= 400, 120, "the rerun job at step 400")
        os.killpg(rerun.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
        assert rerun.wait(timeout=120) == 1
    finally:
        if rerun.poll() is None:
            os.killpg(rerun.pid, signal.SIGKILL)
    output = (tmp_path / "rerun.log").read_text()
    assert "Traceback" not in output, output[-3000:]
    assert f"training stopped: interrupted; resume with: td3x-sweep rerun {sweep_dir}" in output.splitlines()
    assert summary(job)["status"] == "running" and summary(job)["steps"] < 1500
    assert td3x("td3x.commands.sweep", "rerun", str(sweep_dir)).returncode == 0
    assert summary(job)["status"] == "complete" and without_timing(job / "eval.csv") == straight


@pytest.mark.slow
def test_k_seed_jobs_count_and_recheck_each_seed_dir(tmp_path: Path) -> None:
    """Two jobs of run.num_seeds=2: status sees four runs (each seed's own dir), recheck reruns a seed in its mode."""
    sweep_dir = tmp_path / "sweep"
    overrides = [o for o in SWEEP if not o.startswith("seed=")]
    launched = td3x("td3x.commands.train", *overrides, "seed=0,2", "run.num_seeds=2", f"hydra.sweep.dir={sweep_dir}")
    assert launched.returncode == 0
    status = td3x("td3x.commands.sweep", "status", str(sweep_dir))
    assert status.returncode == 0 and "4 complete, 0 running" in status.stdout and "3600/3600" in status.stdout
    result = td3x("td3x.commands.sweep", "recheck", str(sweep_dir), "--runs", "1")
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
    status = td3x("td3x.commands.sweep", "status", str(sweep))
    assert status.returncode == 1 and "1 complete, 0 running, 1 stopped, 0 stale, 0 failed" in status.stdout
    assert "steps: 1350/1800 (75.0%)" in status.stdout
    result = td3x("td3x.commands.sweep", "rerun", str(sweep))
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


def test_list_warns_of_a_job_too_short_to_update(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = sweep_cli(capsys, "list", "run.total_steps=1000,1001")
    short, long = (line for line in out.splitlines() if line.endswith("thread]"))
    assert (
        code == 0
        and short.endswith("[1000 steps, seed=0, 1 thread]")
        and long.endswith("[1001 steps, seed=0, 1 thread]")
    )
    warnings = [line for line in out.splitlines() if "warning:" in line]
    assert warnings == [
        "      warning: run.total_steps=1000 makes no update: updates start at env step 1000 "
        "(max(env.random_steps=1000, agent.batch_size=256)), so every evaluation is of the untrained policy, whatever "
        "the agent or ablation; train more than 1000 steps for the agent to learn"
    ]
    assert out.index(short) < out.index(warnings[0]) < out.index(long)  # under its job
    (job,) = list_jobs(["run.total_steps=2000", "agent.update_start=2000"])
    assert job.no_update is not None and "(agent.update_start=2000)" in job.no_update


def test_a_sweep_dir_is_given_back_to_hydra_whole_even_with_a_comma_or_quote_in_its_path(tmp_path: Path) -> None:
    """status and rerun pass the sweep dir to Hydra as an override: a comma unquoted would make it a sweep."""
    odd = tmp_path / "a,b'c"
    (job,) = list_jobs(["seed=3", sweep_dir_override(odd)])
    assert job.run_dir == odd / "pendulum/none/seed=3"


STATUS_RUN = (*TINY_SIZES, "env.random_steps=300")


def test_status_of_a_failed_run_gives_its_reason(
    make_config: MakeConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blow_up = ("agent.critic_lr=1e30", "run.log_every=1", "run.total_steps=700")  # non-finite at env step 302
    with pytest.raises(TrainingError):
        run(make_config(*STATUS_RUN, *blow_up), tmp_path)
    code, out, _ = sweep_cli(capsys, "status", str(tmp_path))
    assert code == 1 and "0 complete, 0 running, 0 stopped, 0 stale, 1 failed, 0 not started" in out
    failed = f"failed   {tmp_path}  at step 302: TrainingError: non-finite critic_loss="
    assert any(line.startswith(failed) for line in out.splitlines()), out


def test_status_of_a_run_stopped_by_ctrl_c_is_stopped_at_once_and_running_while_a_process_holds_it(
    make_config: MakeConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run of 10,000,000 steps stopped by SIGINT at step 330: stopped (its summary records the interruption) from
    the first second, with the compute left at its own speed per second of CPU time (per second of wall time for a
    summary of an older td3x, which has none); running again while a process holds its lock (as a relaunch
    resuming it does, before its first evaluation rewrites the summary)."""
    signal_at(monkeypatch, 330)
    with pytest.raises(RunInterrupted):
        run(make_config(*STATUS_RUN, "run.total_steps=10000000", "agent.buffer_size=1000"), tmp_path)
    monkeypatch.undo()
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["status"] == "running" and summary["interrupted"].startswith("RunInterrupted: stopped by SIGINT")
    left_h = (10_000_000 - 330) / (330 / summary["cpu_time_s"]) / 3600
    code, out, _ = sweep_cli(capsys, "status", str(tmp_path))
    assert code == 1 and "0 complete, 0 running, 1 stopped, 0 stale, 0 failed, 0 not started" in out
    estimate = f"steps: 330/10000000 (0.0%); about {left_h:.1f} h of compute left at the mean speed of the runs so far"
    assert f"{estimate}\n" in out  # every run counted CPU time: nothing said of wall time
    older = {key: value for key, value in summary.items() if key != "cpu_time_s"}
    (tmp_path / "summary.json").write_text(json.dumps(older))
    left_h = (10_000_000 - 330) / (330 / summary["wall_time_s"]) / 3600
    _, out, _ = sweep_cli(capsys, "status", str(tmp_path))
    estimate = f"steps: 330/10000000 (0.0%); about {left_h:.1f} h of compute left at the mean speed of the runs so far"
    walled = (
        "1 of the 1 runs it rests on counted wall time only (an older td3x): too high if other work shared their CPU"
    )
    assert f"{estimate}; {walled}\n" in out
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    assert f"stopped  {tmp_path}  at step 330: {summary['interrupted']}; resume with: td3x-resume {tmp_path}" in out
    with exclusive(tmp_path):
        code, out, _ = sweep_cli(capsys, "status", str(tmp_path))
    assert code == 1 and "0 complete, 1 running, 0 stopped, 0 stale, 0 failed, 0 not started" in out


def test_the_compute_left_of_seeds_sharing_a_process_counts_its_wall_clock_once(
    make_config: MakeConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two seeds in one process stopped at step 330 of 10,000,000: each seed's summary records the process's whole
    CPU time, and the process trains both at once, so what is left takes that process as long as one seed's
    steps at its rate, not twice as long (as it would, summed over the seeds as if each had a process)."""
    signal_at(monkeypatch, 330)
    config = make_config(*STATUS_RUN, "run.total_steps=10000000", "agent.buffer_size=1000", "run.num_seeds=2")
    with pytest.raises(RunInterrupted):
        run(config, tmp_path)
    monkeypatch.undo()
    cpus = [json.loads(path.read_text())["cpu_time_s"] for path in tmp_path.glob("seed_*/summary.json")]
    assert len(cpus) == 2 and max(cpus) - min(cpus) < 1  # the one clock, read as each seed's summary is written
    process_rate = sum(330 / cpu for cpu in cpus) / 2  # env steps a second of each seed: of the process, for two
    left_h = 2 * (10_000_000 - 330) / (2 * process_rate) / 3600
    code, out, _ = sweep_cli(capsys, "status", str(tmp_path))
    assert code == 1 and "0 complete, 0 running, 2 stopped, 0 stale, 0 failed, 0 not started" in out
    assert f"steps: 660/20000000 (0.0%); about {left_h:.1f} h of compute left" in out
    stopped = [line for line in out.splitlines() if line.startswith("stopped")]
    assert [line.split()[1] for line in stopped] == [str(tmp_path / "seed_0"), str(tmp_path / "seed_1")]
    assert all(line.endswith(f"; resume with: td3x-resume {tmp_path}") for line in stopped)  # their one process


def test_status_gives_minutes_under_an_hour_and_the_command_that_resumes_a_stopped_run(
    make_config: MakeConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It said "about 0.0 h" for minutes left, and nothing of how to continue; the command it gives runs as printed
    (the dir quoted: a space, and brackets a shell would glob)."""
    run_dir = tmp_path / "my run [1]"
    signal_at(monkeypatch, 330)
    with pytest.raises(RunInterrupted):
        run(make_config(*STATUS_RUN, "run.total_steps=1000", "run.eval_every=200"), run_dir)
    monkeypatch.undo()
    (shutil.copytree(run_dir, tmp_path / "fresh") / "summary.json").unlink()  # not started: no speed known yet
    code, out, _ = sweep_cli(capsys, "status", str(tmp_path / "fresh"))
    assert "steps: 0/1000 (0.0%); the compute left is estimated once a run has reached its first evaluation" in out
    summary = json.loads((run_dir / "summary.json").read_text())
    left_s = (1000 - 330) / (330 / summary["cpu_time_s"])
    minutes = max(1, round(left_s / 60))
    code, out, _ = sweep_cli(capsys, "status", str(run_dir))
    assert code == 1 and left_s < 3600
    assert f"steps: 330/1000 (33.0%); about {minutes} minute{'s' * (minutes > 1)} of compute left" in out
    command = f"td3x-resume '{run_dir}'"
    assert f"stopped  {run_dir}  at step 330: {summary['interrupted']}; resume with: {command}" in out.splitlines()
    environment = {**without_wandb_settings(), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    resumed = subprocess.run(command, shell=True, capture_output=True, text=True, env=environment, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    code, out, _ = sweep_cli(capsys, "status", str(run_dir))
    assert code == 0 and "1 complete" in out and "steps: 1000/1000 (100.0%); finished: no compute left" in out


@pytest.mark.slow
def test_status_of_a_killed_run_is_stale_once_its_lock_is_free(tmp_path: Path) -> None:
    """td3x-train in a process of its own: running while it trains, stale the moment SIGKILL ends it (no summary
    can record a SIGKILL; the kernel frees the lock at once)."""
    run_dir = tmp_path / "run"
    overrides = [o for o in SWEEP if o not in ("-m", "seed=0,1") and not o.startswith("run.total_steps=")]
    with (tmp_path / "train.log").open("w") as log:
        training = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "td3x.commands.train",
                *overrides,
                "run.total_steps=1000000",
                f"hydra.run.dir={run_dir}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=without_wandb_settings(),
        )
    try:
        _wait_for(lambda: _last_eval_step(run_dir) >= 400, 120, "the run at step 400")
        status = td3x("td3x.commands.sweep", "status", str(run_dir))
        assert status.returncode == 1 and "0 complete, 1 running, 0 stopped, 0 stale" in status.stdout, status.stdout
        training.kill()
        training.wait(timeout=60)
    finally:
        if training.poll() is None:
            training.kill()
    steps = summary(run_dir)["steps"]
    assert summary(run_dir)["status"] == "running" and summary(run_dir)["interrupted"] is None
    status = td3x("td3x.commands.sweep", "status", str(run_dir))
    assert status.returncode == 1 and "0 complete, 0 running, 0 stopped, 1 stale, 0 failed" in status.stdout
    stale = (
        f"stale    {run_dir}  at step {steps}: killed: no process holds its lock; resume with: td3x-resume {run_dir}"
    )
    assert stale in status.stdout.splitlines(), status.stdout


def test_status_and_the_report_count_the_same_runs_complete(
    make_config: MakeConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A complete run, a copy of it whose eval.csv lost its last row, and a stopped run: one complete to both."""
    config = make_config(*STATUS_RUN, "run.total_steps=700", "run.eval_every=200")
    run(config, tmp_path / "complete")
    shutil.copytree(tmp_path / "complete", tmp_path / "short")
    eval_csv = tmp_path / "short" / "eval.csv"
    eval_csv.write_text("".join(eval_csv.read_text().splitlines(keepends=True)[:-1]))
    signal_at(monkeypatch, 330)
    with pytest.raises(RunInterrupted):
        run(config, tmp_path / "stopped")
    monkeypatch.undo()
    code, out, _ = sweep_cli(capsys, "status", str(tmp_path))
    assert code == 1 and "1 complete, 0 running, 1 stopped, 0 stale, 1 failed, 0 not started" in out
    short = f"failed   {tmp_path / 'short'}  at step 700: eval.csv ends at step 600, not at run.total_steps=700"
    assert short in out.splitlines(), out
    reported = {run.path.name: run.problem for run in find_runs([tmp_path])}
    assert [name for name, problem in reported.items() if problem is None] == ["complete"]
    assert reported["short"] == "eval.csv ends at step 600, not at run.total_steps=700"


def _add_bogus_key(run_dir: Path, node: str | None) -> None:
    """A key td3x lacks in the run's config.yaml: in ``node`` (``agent``), or at the top with None."""
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    (config[node] if node else config)["bogus"] = 1
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def test_status_lists_a_run_it_cannot_read_as_failed_and_goes_on_as_the_report_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A summary.json that is not JSON or not td3x's, a config.yaml with a key td3x lacks (in agent, at the top, as
    td3x-resume refuses them): each failed, unreadable, named by its file, and the listing goes on (before: the first
    broken summary stopped it, exit 2, and a key td3x lacks went unseen); exit 1 as for any failed run; the report
    leaves out the same runs with the same reasons. A run dir given alone is listed so too, a config.yaml that is no
    YAML as well."""
    names = ("good", "json", "no_status", "agent_key", "top_key")
    runs = {name: write_run(tmp_path / "runs" / name, "Pendulum-v1", "TD3", 0, curve(100, 0)) for name in names}
    (runs["json"] / "summary.json").write_text('{"status": ')
    (runs["no_status"] / "summary.json").write_text('{"steps": 1100}')
    _add_bogus_key(runs["agent_key"], "agent")
    _add_bogus_key(runs["top_key"], None)
    code, out, err = sweep_cli(capsys, "status", str(tmp_path / "runs"))
    assert code == 1 and err == "" and "1 complete, 0 running, 0 stopped, 0 stale, 4 failed, 0 not started" in out
    assert "steps: 1100/5500 (20.0%)" in out  # an unreadable run's steps are unknown: none counted done
    reasons = {run.path.name: run.problem for run in find_runs([tmp_path / "runs"]) if run.problem}
    fit = "the stored config does not fit this td3x:"
    not_a_key = "is not a td3x key; td3x-train --help lists the keys"
    expected = {
        "json": f"{runs['json']}/summary.json is not valid JSON: Expecting value at line 1, column 12",
        "no_status": f"{runs['no_status']}/summary.json is not a td3x summary: it lacks a status or a steps count",
        "agent_key": f"{runs['agent_key']}/config.yaml: {fit} agent.bogus {not_a_key}",
        "top_key": f"{runs['top_key']}/config.yaml: {fit} bogus {not_a_key}",
    }
    assert reasons.keys() == expected.keys()
    for name, reason in reasons.items():
        assert reason is not None and reason.startswith(f"unreadable: {expected[name]}"), reason
        assert f"failed   {runs[name]}: {reason}" in out.splitlines(), out
    (runs["json"] / "config.yaml").write_text("run: [unclosed\n  : :")
    for name, problem in (("top_key", reasons["top_key"]), ("json", f"unreadable: {runs['json']}/config.yaml is not")):
        code, out, err = sweep_cli(capsys, "status", str(runs[name]))
        assert code == 1 and err == "" and "0 complete, 0 running, 0 stopped, 0 stale, 1 failed" in out
        assert out.startswith(f"failed   {runs[name]}: {problem}"), out


def test_status_of_a_sweep_dir_lists_a_run_it_cannot_read_and_counts_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A launch recorded as td3x-train records it, its two jobs' run dirs as they write them, one summary.json
    broken: that run is failed, unreadable, the other complete (before: exit 2 on the broken one, nothing counted)."""
    sweep_dir = tmp_path / "sweep"
    task = ["env=pendulum", "run.total_steps=1100", "run.eval_every=100", "seed=0,1"]
    (sweep_dir / "launches").mkdir(parents=True)
    record = {"task": task, "hydra": [], "cwd": str(tmp_path)}
    (sweep_dir / "launches" / "launch.yaml").write_text(yaml.safe_dump(record, sort_keys=False))
    jobs = list_jobs([*task, sweep_dir_override(sweep_dir)])
    for job in jobs:
        write_run(job.run_dir, "Pendulum-v1", "TD3", job.seed, curve(100, job.seed), total_steps=job.total_steps)
    broken = jobs[1].run_dir
    (broken / "summary.json").write_text('{"status": ')
    code, out, err = sweep_cli(capsys, "status", str(sweep_dir))
    assert code == 1 and err == "" and "1 complete, 0 running, 0 stopped, 0 stale, 1 failed, 0 not started" in out
    problem = f"{broken}/summary.json is not valid JSON: Expecting value at line 1, column 12"
    assert f"failed   {broken}: unreadable: {problem}" in out.splitlines(), out


def test_a_run_killed_between_its_final_checkpoint_and_its_summary_is_complete_once_relaunched(
    make_config: MakeConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its summary.json is the last evaluation's (status running, all steps): stale to status, complete to the
    resume decision; the relaunch that finds nothing to train writes the summary, and status agrees."""
    config = make_config(*STATUS_RUN, "run.total_steps=700")
    run(config, tmp_path)
    finished = json.loads((tmp_path / "summary.json").read_text())
    (tmp_path / "summary.json").write_text(json.dumps(finished | {"status": "running"}))
    assert "0 complete, 0 running, 0 stopped, 1 stale" in sweep_cli(capsys, "status", str(tmp_path))[1]
    assert run(config, tmp_path)["status"] == "complete"
    assert json.loads((tmp_path / "summary.json").read_text())["status"] == "complete"
    code, out, _ = sweep_cli(capsys, "status", str(tmp_path))
    assert code == 0 and "1 complete, 0 running, 0 stopped, 0 stale, 0 failed, 0 not started" in out


def test_sweep_help_says_which_subcommands_train(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(sweep_main, ["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "rerun trains: launch a sweep again" in text and "recheck trains briefly" in text
    assert "list print every job" in text and "runs and creates nothing" in text
    assert "without running" not in text  # the old description said the whole command ran nothing


ROWS = sorted(path.stem for path in (CONF_DIR / "ablation").glob("*.yaml"))


TABLE2_ENVS = ("halfcheetah", "hopper", "walker2d", "ant")


def runs_of(jobs: list[Job]) -> list[tuple[str, str, int]]:
    """(env option, row option, seed) of every run the jobs train (the options read from the job dir's path)."""
    return [
        (job.run_dir.parts[-3], job.run_dir.parts[-2], seed)
        for job in jobs
        for seed in range(job.seed, job.seed + job.num_seeds)
    ]


# ---------------------------------------------------------------------- listing (fast: composes, trains nothing)
def test_table2_is_44_one_thread_jobs_of_10_seeds_covering_its_440_runs() -> None:
    jobs = list_jobs(["+experiment=table2"])
    assert len(jobs) == 44 and not any(job.problems for job in jobs)
    assert all((job.seed, job.num_seeds, job.num_threads) == (0, 10, 1) for job in jobs)
    assert {job.run_dir.name for job in jobs} == {"run.num_seeds=10,seed=0"}  # the dir says what it holds
    runs = runs_of(jobs)
    assert len(runs) == len(set(runs)) == 440
    seed_dirs = {path for job in jobs for path in seed_run_dirs(job.run_dir, job.seed, job.num_seeds)}
    assert len(seed_dirs) == 440 and {path.name for path in seed_dirs} == {f"seed_{seed}" for seed in range(10)}
    assert set(runs) == {(env, row, seed) for env in TABLE2_ENVS for row in ROWS for seed in range(10)}


def test_the_one_seed_per_job_form_is_one_override_away_in_dirs_of_its_own() -> None:
    stacked = list_jobs(["+experiment=table2", "env=hopper", "ablation=none"])
    alone = list_jobs(["+experiment=table2", "env=hopper", "ablation=none", "run.num_seeds=1", "seed=range(0,10)"])
    assert len(stacked) == 1 and len(alone) == 10 and all(job.num_seeds == 1 for job in alone)
    assert sorted(runs_of(alone)) == sorted(runs_of(stacked))  # the same ten runs, trained one per process
    assert {job.run_dir.name for job in alone} == {f"run.num_seeds=1,seed={seed}" for seed in range(10)}
    stacked_dir = stacked[0].run_dir
    assert not any(stacked_dir in job.run_dir.parents or job.run_dir == stacked_dir for job in alone)


@pytest.mark.parametrize(
    ("experiment", "jobs", "seeds"),
    [("table1", 7, 10), ("table2_smoke", 22, 2), ("smoke_slurm", 22, 2)],
)
def test_the_other_paper_sweeps_are_stacked_too(experiment: str, jobs: int, seeds: int) -> None:
    listed = list_jobs([f"+experiment={experiment}"])
    assert len(listed) == jobs and all((job.num_seeds, job.num_threads) == (seeds, 1) for job in listed)
    assert len(set(runs_of(listed))) == jobs * seeds


def test_a_seed_sweep_that_would_train_a_seed_twice_is_refused_by_list() -> None:
    """With K stacked seeds, ``seed=0,1`` would train seeds 1..9 in two jobs: td3x-sweep list says so."""
    overlapping = list_jobs(["+experiment=table2", "env=hopper", "ablation=none", "seed=0,1"])
    assert [job.problems for job in overlapping] == [
        [],
        [
            "seeds 1-9 are trained by job 0 too (run.num_seeds=10: seed=S trains seeds S..S+9); sweep seed in steps "
            "of 10, e.g. seed=0,10"
        ],
    ]
    stepped = list_jobs(["+experiment=table2", "env=hopper", "ablation=none", "seed=0,10"])
    assert all(not job.problems for job in stepped)


def test_the_slurm_launcher_asks_for_the_cores_the_job_trains_on() -> None:
    assert launcher_resources(["+experiment=table2_slurm"]) == "each job asks SLURM for cpus_per_task=1, mem_gb=20"
    assert "cpus_per_task=2," in str(launcher_resources(["+experiment=table2_slurm", "run.num_threads=2"]))
    assert "cpus_per_task=1," in str(launcher_resources(["+experiment=smoke_slurm"]))
    assert launcher_resources(["+experiment=table2"]) is None  # Hydra's basic launcher: no resources to ask for


# ---------------------------------------------------------------------- a stacked sweep's life (slow: trains)
# table2_smoke itself (its sweeper params make each job stacked), shrunk to two rows on Pendulum
SMOKE = ("+experiment=table2_smoke", "env=pendulum", "ablation=none,ahe", *LENGTH, *TINY_SIZES)


@pytest.fixture(scope="module")
def stacked_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sweep_dir = tmp_path_factory.mktemp("stacked") / "sweep"
    launched = td3x("td3x.commands.train", *SMOKE, f"hydra.sweep.dir={sweep_dir}")
    assert launched.returncode == 0, launched.stderr[-3000:]
    return sweep_dir


def job_dirs(sweep_dir: Path) -> dict[str, Path]:
    """Each row option's job dir (the process dir, holding seed_0 and seed_1)."""
    return {row: next((sweep_dir / "pendulum" / row).iterdir()) for row in ("none", "ahe")}


@pytest.mark.slow
def test_status_recheck_and_the_report_see_each_seed_of_a_stacked_job(stacked_sweep: Path) -> None:
    status = td3x("td3x.commands.sweep", "status", str(stacked_sweep))
    assert status.returncode == 0 and "4 complete, 0 running" in status.stdout and "3600/3600" in status.stdout
    runs = find_runs([stacked_sweep])  # td3x-report's discovery: every seed dir, never the process dir
    found = sorted((found.paper_row, found.seed, found.problem) for found in runs)
    assert found == [(row, seed, None) for row in ("AHE", "TD3") for seed in (0, 1)]
    # seed_1 is not its process's first seed: recheck reruns it first of two (seeds 1 and 2), in the same mode
    result = td3x("td3x.commands.sweep", "recheck", str(stacked_sweep), "--runs", "2")
    assert result.returncode == 0 and result.stdout.count("identical") == 2, result.stdout + result.stderr
    assert "seed_0" in result.stdout and "seed_1" in result.stdout


@pytest.mark.slow
def test_a_stopped_stacked_job_resumes_with_rerun_and_td3x_resume_like_the_job_uninterrupted(
    stacked_sweep: Path, make_config: MakeConfig, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Both jobs of the sweep stopped at step 450 (their process checkpoint), as preempted jobs would be:
    td3x-resume continues one from a seed's dir, td3x-sweep rerun the other; each seed then equals its run in
    the same job uninterrupted. The sweep ends complete again, as the other tests expect it."""
    overrides = [o for o in SMOKE if not o.startswith("ablation=")]
    configs = {row: make_config(*overrides, f"ablation={row}", "run.num_seeds=2", "seed=0") for row in ("none", "ahe")}
    for row, config in configs.items():
        run(config, tmp_path / row)  # uninterrupted
    for row, job in job_dirs(stacked_sweep).items():
        shutil.rmtree(job)
        signal_at(monkeypatch, 450)
        with pytest.raises(RunInterrupted):  # the job's own config, composed as the sweep composed it
            run(configs[row], job)
        monkeypatch.undo()
    status = td3x("td3x.commands.sweep", "status", str(stacked_sweep))
    assert (
        status.returncode == 1 and "0 complete, 0 running, 4 stopped" in status.stdout and "1800/3600" in status.stdout
    )

    resumed = td3x("td3x.commands.resume", str(job_dirs(stacked_sweep)["ahe"] / "seed_1"))  # a seed's dir: its process
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "from its checkpoint at env step 450" in resumed.stdout + resumed.stderr
    rerun = td3x("td3x.commands.sweep", "rerun", str(stacked_sweep))  # resumes the other job; the finished one returns
    assert rerun.returncode == 0 and (rerun.stdout + rerun.stderr).count("from its checkpoint at env step 450") == 1
    for row, job in job_dirs(stacked_sweep).items():
        for seed in ("seed_0", "seed_1"):
            assert_same_run(job / seed, tmp_path / row / seed)
        assert without_timing(job / "seed_1" / "eval.csv") != without_timing(job / "seed_0" / "eval.csv")


# ---------------------------------------------------------------------- SLURM preemption of a stacked job
@pytest.mark.slow
@ONE_CLUSTER_AT_A_TIME
@pytest.mark.usefixtures("slurm_cluster")
def test_a_preempted_stacked_slurm_job_resumes_and_ends_bit_identical(tmp_path: Path, make_config: MakeConfig) -> None:
    """One array task training seeds 0 and 1 stacked, preempted (USR2) after its checkpoint at step 400: SLURM
    requeues it, the process resumes both seeds from its checkpoint, and every seed ends as in the same job run
    uninterrupted (eval.csv, final weights and targets, the process checkpoint's agent)."""
    sweep_dir = tmp_path / "sweep"
    learning = (*STOPPABLE_JOB, "run.total_steps=2400", "run.num_seeds=2", "seed=0")
    overrides = (
        "hydra/launcher=submitit_slurm",
        "hydra.launcher.timeout_min=30",  # > 10: a USR2 well before the limit counts as a preemption
        "hydra.launcher.mem_gb=1",
        "hydra.launcher.setup=['echo td3x-test SLURM_RESTART_COUNT=$SLURM_RESTART_COUNT']",
        "run.checkpoint_every=400",
        *learning,
        f"hydra.sweep.dir={sweep_dir}",
    )
    environment = {key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}
    with (tmp_path / "launcher.log").open("w") as log:
        command = [sys.executable, "-m", "td3x.commands.train", "-m", *overrides]
        launcher = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment)
    try:
        job = _wait_for(lambda: next(iter((sweep_dir / "pendulum/none").glob("*seed=0")), None), 180, "the job dir")
        seed_dirs = [job / "seed_0", job / "seed_1"]
        step_at_signal = _wait_for(lambda: (s := _last_eval_step(seed_dirs[1])) >= 600 and s, 180, "step 600")
        assert step_at_signal < 2400, "the job finished before it could be preempted"
        job_id = json.loads((seed_dirs[0] / "provenance.json").read_text())["slurm_job_id"]
        subprocess.run(["scancel", "--signal=USR2", job_id], check=True, timeout=30)
        alone = tmp_path / "alone"  # while SLURM requeues: the same process uninterrupted, default checkpoints
        run(make_config(*learning), alone)
        assert launcher.wait(timeout=300) == 0, (tmp_path / "launcher.log").read_text()[-3000:]
    finally:
        if launcher.poll() is None:
            launcher.kill()

    job_log = "\n".join(path.read_text() for path in sweep_dir.glob(".submitit/*/*_log.out"))
    assert "this job is preempted" in job_log and "td3x-test SLURM_RESTART_COUNT=1" in job_log
    resumed = re.search(r"from its checkpoint at env step (\d+)", job_log)
    assert resumed and 400 <= int(resumed.group(1)) <= step_at_signal, job_log[-3000:]
    for seed_dir in seed_dirs:
        reference = alone / seed_dir.name
        assert summary(seed_dir)["status"] == "complete"
        assert learned(seed_dir) == learned(reference), f"{seed_dir.name}: eval.csv differs from the job uninterrupted"
        ours, theirs = _weights(seed_dir), _weights(reference)
        assert ours.keys() == theirs.keys() and all(ours[name].equal(theirs[name]) for name in theirs), seed_dir.name
    ours, theirs = _weights(job), _weights(alone)  # the process checkpoint: both seeds stacked
    assert all(ours[name].equal(theirs[name]) for name in theirs)


@pytest.mark.slow
def test_table2_smoke_runs_every_row_through_the_entrypoint(tmp_path: Path) -> None:
    """The smoke sweep shrunk to one env and 32-32 networks: every row's job through the real multirun (each
    row's learning is checked by test_every_row_trains_on_hopper; table2's 44 jobs of 440 runs by test_launchers)."""
    shrink = ("env=hopper", "agent.hidden_sizes=[32,32]", f"hydra.sweep.dir={tmp_path}")  # the command line wins
    listed = list_jobs(["+experiment=table2_smoke", *shrink])
    environment = {key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}
    result = subprocess.run(
        [sys.executable, "-m", "td3x.commands.train", "+experiment=table2_smoke", *shrink],
        capture_output=True,
        text=True,
        timeout=1500,
        env={**environment, "WANDB_MODE": "disabled"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    run_dirs = {path.parent for path in tmp_path.rglob("summary.json")}
    # td3x-sweep list names the dirs Hydra really uses (a job of K stacked seeds: one dir per seed below its own)
    assert run_dirs == {path for job in listed for path in seed_run_dirs(job.run_dir, job.seed, job.num_seeds)}
    rows = set()
    for run_dir in run_dirs:
        assert json.loads((run_dir / "summary.json").read_text())["status"] == "complete"
        config = yaml.safe_load((run_dir / "config.yaml").read_text())
        assert config["agent"]["hidden_sizes"] == [32, 32] and config["env"]["id"] == "Hopper-v5"
        rows.add(config["paper_row"])
    assert len(run_dirs) == 22 and len(rows) == 11  # 11 rows x 2 seeds


# ---------------------------------------------------------------------- a launch's size and cost, before it starts
COMPUTE_TABLE = Path(__file__).resolve().parents[2] / "docs" / "results" / "report" / "compute.csv"
STUDY_RUNS = Path(__file__).resolve().parents[2] / "docs" / "results" / "seed_study" / "runs"
STUDY_15K = ["+experiment=seed_study", "env=hopper", "agent=td3_paper", "run.total_steps=15000"]


@pytest.mark.results
def test_the_rate_a_launch_is_costed_at_is_the_committed_measurement_it_names() -> None:
    with COMPUTE_TABLE.open() as file:
        measured = next(
            row for row in csv.DictReader(file) if (row["row"], row["env"]) == ("TD3 [agent=td3_paper]", "Hopper-v5")
        )
    assert float(measured["env steps per core-second"]) == MEASURED_STEPS_PER_CORE_SECOND
    assert "agent=td3_paper on Hopper-v5" in MEASURED_ON and "docs/results" in MEASURED_ON


def test_the_full_seed_study_is_sized_and_costed_and_a_small_sweep_is_not(tmp_path: Path) -> None:
    jobs = list_jobs(["+experiment=seed_study", "env=hopper", "agent=td3_paper", f"hydra.sweep.dir={tmp_path}"])
    assert launch_cost(jobs) == (
        "this sweep: 10 jobs, 38 runs, 38,000,000 env steps to train: about 152 core-hours at 69.4 env steps per "
        f"core-second ({MEASURED_ON}); your CPU, env and agent set the real rate; td3x-sweep list shows its jobs"
    )
    assert launch_cost(list_jobs([*SWEEP[1:], f"hydra.sweep.dir={tmp_path}"])) is None


def test_a_relaunch_is_costed_by_the_steps_its_runs_have_left(tmp_path: Path) -> None:
    jobs = list_jobs([*STUDY_15K, f"hydra.sweep.dir={tmp_path}"])
    assert "38 runs, 570,000 env steps to train: about 2 core-hours" in str(launch_cost(jobs))
    shutil.copytree(STUDY_RUNS, tmp_path, dirs_exist_ok=True)  # the committed study: the same job dirs, complete
    assert launch_cost(jobs) is None
    shutil.rmtree(next(tmp_path.rglob("*seed_study=all_vary")))  # one job of 5 runs to train again: 75,000 steps
    assert launch_cost(jobs) is None  # under an hour


@pytest.mark.slow
def test_td3x_train_prints_the_cost_before_the_first_job_starts(tmp_path: Path) -> None:
    environment = {**without_wandb_settings(), "WANDB_MODE": "disabled"}
    command = [
        sys.executable,
        "-m",
        "td3x.commands.train",
        "-m",
        "env=hopper",
        "seed=0,1",
        f"hydra.sweep.dir={tmp_path}",
    ]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=environment)
    try:
        assert process.stderr is not None
        first_line = process.stderr.readline()  # printed before Hydra is called: no job has started
    finally:
        process.kill()
        process.wait()
    assert first_line.startswith("this sweep: 2 jobs, 2 runs, 2,000,000 env steps to train: about 8 core-hours at ")


# ---------------------------------------------------------------------- bad input: one line, nothing trained or made
# the brief's tiny runs: 300 steps, updates from step 100; evaluated every 100 and every 200 steps, the second shorter
# than the 2 run.eval_every + 1 = 401 steps recheck re-runs by default
SHORT = ("env=pendulum", "run.total_steps=300", "env.random_steps=100", *TINY_SIZES, "logging.wandb_mode=disabled")


@pytest.fixture(scope="module")
def short_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sweep_dir = tmp_path_factory.mktemp("short") / "sweep"
    launched = td3x("td3x.commands.train", "-m", *SHORT, "run.eval_every=100,200", f"hydra.sweep.dir={sweep_dir}")
    assert launched.returncode == 0, launched.stderr[-3000:]
    return sweep_dir


@pytest.mark.parametrize(
    ("option", "value"), [("--runs", "0"), ("--runs", "-1"), ("--runs", "two"), ("--steps", "0"), ("--steps", "-1")]
)
def test_recheck_refuses_a_count_below_1_naming_the_option(
    option: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--runs -1 rechecked all runs but the last, --steps 0 the default length, --steps -1 was named
    run.total_steps=-1: each is a usage error, before the sweep dir is read."""
    code, out, err = sweep_cli(capsys, "recheck", str(tmp_path), option, value)
    assert code == 2 and out == ""
    assert err == (
        f"td3x-sweep recheck: error: argument {option}: must be an integer >= 1, got '{value}' "
        "(see td3x-sweep recheck --help)\n"
    )


@pytest.mark.slow
def test_recheck_refuses_steps_past_a_runs_length_before_training(
    short_sweep: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Re-run past its 300 steps, a run evaluates where it never did: recheck said DIFFERENT, exit 1, after
    training that long."""
    code, out, err = sweep_cli(capsys, "recheck", str(short_sweep), "--steps", "301")
    (first,) = short_sweep.glob("pendulum/none/*run.eval_every=100*")
    assert code == 2 and out == ""
    assert err == (
        f"td3x-sweep: --steps 301 is more than the 300 env steps of {first} (its run.total_steps): "
        "give --steps 300 or fewer\n"
    )


@pytest.mark.slow
def test_recheck_re_runs_a_run_no_longer_than_its_steps_whole_and_compares_its_last_evaluation(
    short_sweep: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """By default the run evaluated every 100 steps re-runs 201 steps (evaluations 0, 100, 200 compare) and the one
    evaluated every 200 its whole 300 (its 401 evaluated at step 400, a false DIFFERENT); --steps 300 compares a
    run's last evaluation too, so a changed final return is found."""
    code, out, _ = sweep_cli(capsys, "recheck", str(short_sweep))
    assert code == 0, out
    every_100, every_200 = out.splitlines()
    assert every_100.startswith("identical") and every_100.endswith("(3 evaluations, before step 201)")
    assert every_200.startswith("identical") and every_200.endswith("(3 evaluations, the whole run of 300 steps)")
    copy = tmp_path / "sweep"
    shutil.copytree(short_sweep, copy)
    (run_dir,) = copy.glob("pendulum/none/*run.eval_every=100*")
    rows = list(csv.DictReader((run_dir / "eval.csv").open()))
    rows[-1]["return_0"] = str(float(rows[-1]["return_0"]) + 1e-9)
    with (run_dir / "eval.csv").open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    code, out, _ = sweep_cli(capsys, "recheck", str(copy), "--runs", "1", "--steps", "300")
    assert code == 1 and out.startswith(f"DIFFERENT  {run_dir}  (4 evaluations, the whole run of 300 steps): ")
    assert ": at step 300, return_0: " in out.splitlines()[0]


def test_view_of_runs_without_a_wandb_run_is_refused_and_creates_nothing(
    make_config: MakeConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It made an empty <folder>/wandb/ and named it in a line before refusing."""
    run(make_config(*SHORT[1:], "run.eval_every=100"), tmp_path / "runs" / "run")
    before = sorted(tmp_path.rglob("*"))
    code, out, err = sweep_cli(capsys, "view", "--no-open", str(tmp_path / "runs"))
    assert code == 1 and sorted(tmp_path.rglob("*")) == before
    assert out == "" and err == (
        f"td3x-sweep: {tmp_path / 'runs'} holds no W&B run to view: its 1 run(s) logged none "
        "(logging.wandb_mode=disabled)\n"
    )


def test_rerun_refuses_a_launch_whose_dir_is_gone_before_relaunching_any(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two launches into one sweep dir, recorded as td3x-train records them: the older one's dir is there, the
    newer one's is gone. Neither is relaunched (the older one trained, then the newer one failed with
    "[Errno 2] No such file or directory: PosixPath(...)")."""
    records = tmp_path / "sweep" / "launches"
    records.mkdir(parents=True)
    for name, seed, cwd in (("older", 0, tmp_path), ("newer", 1, tmp_path / "gone")):
        record = {"task": [*SHORT, "run.eval_every=100", f"seed={seed}"], "hydra": [], "cwd": str(cwd)}
        (records / f"{name}.yaml").write_text(yaml.safe_dump(record, sort_keys=False))
    os.utime(records / "older.yaml", ns=(0, 0))
    code, out, err = sweep_cli(capsys, "rerun", str(tmp_path / "sweep"))
    assert code == 2 and out == ""
    assert err == (
        f"td3x-sweep: {records / 'newer.yaml'}: the launch ran from {tmp_path / 'gone'}, which does not exist; a "
        "relaunch runs where its launch ran: restore that dir, or set cwd in newer.yaml to the dir to relaunch from\n"
    )
    assert [path.name for path in (tmp_path / "sweep").iterdir()] == ["launches"]


def test_rerun_of_a_sweep_recorded_by_hydra_alone_names_its_cwd_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sweep launched before td3x recorded launches: its cwd is multirun.yaml's hydra.runtime.cwd."""
    sweep_dir = tmp_path / "sweep"
    sweep_dir.mkdir()
    hydra = {"overrides": {"task": [*SHORT, "run.eval_every=100"], "hydra": []}, "runtime": {"cwd": "/nonexistent"}}
    (sweep_dir / "multirun.yaml").write_text(yaml.safe_dump({"hydra": hydra}))
    code, out, err = sweep_cli(capsys, "rerun", str(sweep_dir))
    assert code == 2 and out == ""
    assert err == (
        f"td3x-sweep: {sweep_dir / 'multirun.yaml'}: the launch ran from /nonexistent, which does not exist; a "
        "relaunch runs where its launch ran: restore that dir, or set hydra.runtime.cwd in multirun.yaml to the dir "
        "to relaunch from\n"
    )
    assert [path.name for path in sweep_dir.iterdir()] == ["multirun.yaml"]
