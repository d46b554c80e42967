"""Hydra launchers running real td3x sweeps: joblib (local processes), submitit_local, submitit_slurm on a real
single-node SLURM cluster started by ``scripts/slurm_local.sh``, with a job preempted (USR2), requeued and resumed,
and Ray, on a local Ray the launcher starts and on a Ray cluster on 127.0.0.1 that a sweep joins, with a job's worker
killed and the sweep relaunched.

Every job must learn exactly what the same seed learns when run alone: launchers choose where and when a job runs,
never its numbers. The SLURM test skips only where the cluster cannot be hosted (not root, no apt-get).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
import submitit
import torch
from helpers.sweeps import (
    ONE_CLUSTER_AT_A_TIME,
    RAY_ENVIRONMENT,
    STOPPABLE_JOB,
    SWEEP_JOB,
    RayCluster,
    _last_eval_step,
    _wait_for,
    _weights,
    learned,
    processes_with_open_files_in,
    ray_cluster,
    slurm_cluster,
    summary,
    without_wandb_settings,
)
from helpers.wandb_records import find_run_files, read_run
from hydra import compose, initialize_config_dir
from hydra.types import RunMode
from omegaconf import OmegaConf

from td3x.config.hydra import CONF_DIR
from td3x.config.schema import TrainConfig
from td3x.sweeps.multirun import list_jobs
from td3x.training.run import run

__all__ = ["ray_cluster", "slurm_cluster"]  # fixtures, imported so that this module's tests can use them
pytestmark = ONE_CLUSTER_AT_A_TIME


def sweep(
    *overrides: str, timeout: float = 600, environment: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``td3x-train -m ...`` as a subprocess; W&B writes offline files (the test machine's WANDB_* are dropped),
    with ``environment``'s variables added."""
    inherited = {key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}
    return subprocess.run(
        [sys.executable, "-m", "td3x.commands.train", "-m", *overrides],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**inherited, **(environment or {})},
    )


def eval_steps(run_dir: Path) -> list[int]:
    return [int(row["step"]) for row in learned(run_dir)]


def job_dir(sweep_dir: Path, seed: int) -> Path:
    (path,) = (sweep_dir / "pendulum/none").glob(f"*seed={seed}")
    return path


def wandb_pids(run_dir: Path) -> set[int]:
    """The processes that trained in ``run_dir``, as W&B's debug log names them (``MainThread:<pid>``)."""
    pids = {int(pid) for pid in re.findall(r"MainThread:(\d+)", (run_dir / "wandb" / "debug.log").read_text())}
    assert pids, f"no pid in {run_dir}/wandb/debug.log (W&B's log format changed?)"
    return pids


@pytest.fixture
def run_alone(make_config: Callable[..., TrainConfig], tmp_path: Path) -> Callable[..., Path]:
    """run_alone(seed, *overrides) trains that seed in this process, uninterrupted, and returns its run dir."""

    def train_one(seed: int, *overrides: str) -> Path:
        run_dir = tmp_path / "alone" / f"seed{seed}"
        run(make_config(f"seed={seed}", *overrides), run_dir)
        return run_dir

    return train_one


# ---------------------------------------------------------------------- config and submitit basics
@pytest.mark.skipif(torch.cuda.is_available(), reason="torch sees a CUDA device here: cuda is not refused")
def test_machine_checks_refuse_a_local_job_but_leave_a_slurm_job_to_its_node() -> None:
    """run.device=cuda on this CPU-only machine: a job of a local launcher would train here and is refused before
    the launch; a SLURM job trains on a node of its own partition, which checks it when the job starts."""
    refused = "run.device='cuda' is not allowed: torch sees no CUDA device here; use auto or cpu"
    local = list_jobs(["seed=0,1", "run.device=cuda", "hydra/launcher=joblib"])
    assert [job.problems for job in local] == [[refused], [refused]]
    on_slurm = list_jobs(["+experiment=smoke_slurm", "env=pendulum", "ablation=none", "run.device=cuda"])
    assert on_slurm and not any(job.problems for job in on_slurm)
    typo = list_jobs(["+experiment=smoke_slurm", "env=pendulum", "ablation=none", "env.id=Pendulm-v1"])
    assert all(job.problems and "not a registered Gymnasium env" in job.problems[0] for job in typo)  # no node differs


@pytest.mark.slow  # composes 66 jobs
def test_slurm_experiments_are_table2_and_table2_smoke_on_the_submitit_slurm_launcher() -> None:
    on_slurm = list_jobs(["+experiment=table2_slurm"])
    assert len(on_slurm) == 44 and not any(job.problems for job in on_slurm)  # one job per env and row, 10 seeds
    # table2's own run dirs: a sweep started locally resumes on the cluster, and the other way round
    envs, rows = ("halfcheetah", "hopper", "walker2d", "ant"), {path.stem for path in (CONF_DIR / "ablation").iterdir()}
    assert len(rows) == 11  # every Table 2 row
    assert {(job.run_dir, job.seed, job.num_seeds) for job in on_slurm} == {
        (Path("outputs/table2", env, row, "run.num_seeds=10,seed=0"), 0, 10) for env in envs for row in rows
    }
    smoke = list_jobs(["+experiment=smoke_slurm"])
    assert len(smoke) == 22 and not any(job.problems for job in smoke)
    assert all(job.run_dir.parts[:2] == ("outputs", "smoke_slurm") for job in smoke)

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        plain = compose(config_name="train", overrides=["+experiment=table2", "env=ant", "ablation=ddpg"])
        cfg = compose(
            config_name="train",
            overrides=["+experiment=table2_slurm", "env=ant", "ablation=ddpg"],
            return_hydra_config=True,
        )
    launcher = cfg.hydra.launcher
    assert launcher._target_.endswith("submitit_launcher.SlurmLauncher")
    assert launcher.max_num_timeout > 0 and launcher.cpus_per_task == cfg.run.num_threads == 1
    assert launcher.additional_parameters.requeue
    assert cfg.hydra.mode == RunMode.MULTIRUN
    task = {key: value for key, value in OmegaConf.to_container(cfg).items() if key != "hydra"}
    assert task == OmegaConf.to_container(plain)  # the launcher changes no learning value


def test_td3x_leaves_submitits_signal_handlers_in_place_in_a_submitit_job(tmp_path: Path) -> None:
    """submitit handles SIGTERM in its jobs (a preempted SLURM job is requeued): inside a submitit job, td3x's
    stop-after-checkpoint handler must stand down and leave submitit's in place. The SLURM variant
    (``export SUBMITIT_EXECUTOR=slurm`` in the sbatch script) is checked in the SLURM test."""
    executor = submitit.AutoExecutor(folder=tmp_path, cluster="local")
    executor.update_parameters(timeout_min=2)

    def handlers_under_td3x(run_dir: str) -> dict[str, object]:  # local, so pickled by value
        import os
        import signal

        from td3x.config.schema import LoggingConfig, TrainConfig
        from td3x.training.loop import Trainer
        from td3x.training.run import stop_after_checkpoint

        before = signal.getsignal(signal.SIGTERM)
        trainer = Trainer(TrainConfig(logging=LoggingConfig(wandb_mode="disabled")), Path(run_dir))
        with stop_after_checkpoint(trainer):
            inside = signal.getsignal(signal.SIGTERM)
        trainer.close("running")
        return {
            "executor": os.environ.get("SUBMITIT_EXECUTOR"),
            "kept": inside is before,
            "handler_module": getattr(before, "__module__", None),
        }

    result = executor.submit(handlers_under_td3x, str(tmp_path / "run")).result()
    assert result["executor"] == "local" and result["kept"], result
    assert str(result["handler_module"]).startswith("submitit"), result  # submitit's own, not Python's default


# ---------------------------------------------------------------------- joblib
@pytest.mark.slow
def test_joblib_jobs_learn_what_each_seed_learns_alone_even_in_a_reused_worker(
    tmp_path: Path, run_alone: Callable[..., Path]
) -> None:
    """3 jobs on 2 loky workers: one worker runs two jobs in a row, so state leaking from one job into the next
    (global RNGs, threads, W&B, env caches) would show as a difference from the seed run alone."""
    result = sweep(
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        "seed=0,1,2",
        *SWEEP_JOB,
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Joblib.Parallel(n_jobs=2,backend=loky" in result.stdout + result.stderr
    dirs = [job_dir(tmp_path / "sweep", seed) for seed in range(3)]
    pids = [wandb_pids(path) for path in dirs]
    assert all(len(job_pids) == 1 for job_pids in pids)
    assert len(set.union(*pids)) < 3, "3 jobs on 2 workers: one worker must have run two of them"
    for seed, path in enumerate(dirs):
        assert summary(path)["status"] == "complete"
        assert json.loads((path / "provenance.json").read_text())["torch_threads"] == 1  # run.num_threads, not loky's
        assert learned(path) == learned(run_alone(seed, *SWEEP_JOB)), (
            f"seed {seed} differs from the same seed run alone"
        )


@pytest.mark.slow
def test_a_job_whose_critic_blows_up_fails_alone_while_the_other_jobs_finish(tmp_path: Path) -> None:
    """agent.critic_lr=1e30: non-finite losses within a few updates. The sweep reports the failure (Hydra
    re-raises it once every job has returned, exit code 1) and the good job has finished regardless."""
    result = sweep(
        "hydra/launcher=joblib",  # n_jobs=-1: as many workers as cores
        "agent.critic_lr=3e-4,1e30",
        "run.log_every=100",  # the non-finite check runs on each training-metrics row
        *SWEEP_JOB,
        f"hydra.sweep.dir={tmp_path}",
    )
    assert result.returncode == 1
    assert "non-finite" in result.stderr
    (good,) = (tmp_path / "pendulum/none").glob("*critic_lr=0.0003,*")
    (bad,) = (tmp_path / "pendulum/none").glob("*critic_lr=1e+30,*")
    assert summary(good)["status"] == "complete" and eval_steps(good) == [0, 200, 400, 600]
    failed = summary(bad)
    assert failed["status"] == "failed" and "non-finite" in failed["failure"] and failed["steps"] < 600, failed


# ---------------------------------------------------------------------- submitit_local
@pytest.mark.slow
def test_submitit_local_runs_each_job_in_its_own_process_dir_and_wandb_run(tmp_path: Path) -> None:
    result = sweep("hydra/launcher=submitit_local", "seed=0,1", *SWEEP_JOB, f"hydra.sweep.dir={tmp_path}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Submitit 'local' sweep output dir" in result.stdout + result.stderr
    dirs = [job_dir(tmp_path, seed) for seed in (0, 1)]
    assert dirs[0] != dirs[1]
    run_ids, pids = set(), set()
    for path in dirs:
        assert summary(path)["status"] == "complete"
        assert eval_steps(path) == [0, 200, 400, 600]
        (wandb_file,) = find_run_files(path)
        run_ids.add(read_run(wandb_file).run_id)
        pids |= wandb_pids(path)
    assert len(run_ids) == 2 and len(pids) == 2  # one process and one W&B run per job
    assert len(list((tmp_path / ".submitit").glob("*/*_log.out"))) == 2  # submitit's per-job logs


@pytest.mark.slow
@pytest.mark.usefixtures("slurm_cluster")
def test_a_preempted_slurm_job_requeues_resumes_and_ends_as_if_never_interrupted(
    tmp_path: Path, run_alone: Callable[..., Path]
) -> None:
    """scancel --signal=USR2 is what a preemption (or the approaching time limit) sends: submitit requeues the job,
    SLURM restarts it in the same dir (SLURM_RESTART_COUNT=1) and td3x resumes from its last checkpoint, redoing
    the steps since, deterministically. The other job of the sweep is not disturbed."""
    sweep_dir = tmp_path / "sweep"
    learning = (*STOPPABLE_JOB, "run.total_steps=2400")  # long enough to be caught mid-run
    overrides = (
        "hydra/launcher=submitit_slurm",
        # > 10: submitit counts a USR2 after min(0.8 x limit, limit - 10 min) as a timeout, not a preemption
        "hydra.launcher.timeout_min=30",
        "hydra.launcher.cpus_per_task=1",
        "hydra.launcher.mem_gb=1",
        "hydra.launcher.setup=['echo td3x-test SLURM_RESTART_COUNT=$SLURM_RESTART_COUNT']",
        "seed=0,1",
        "run.checkpoint_every=400",  # a checkpoint at steps 400, 800, ...
        *learning,
        f"hydra.sweep.dir={sweep_dir}",
    )
    environment = {key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}
    with (tmp_path / "launcher.log").open("w") as log:
        launcher = subprocess.Popen(
            [sys.executable, "-m", "td3x.commands.train", "-m", *overrides],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=environment,
        )
    try:
        preempted = _wait_for(lambda: next(iter((sweep_dir / "pendulum/none").glob("*seed=0")), None), 180, "job dirs")
        # past the checkpoint at step 400 and before the end: the resumed run must redo steps it had already done
        step_at_signal = _wait_for(lambda: (s := _last_eval_step(preempted)) >= 600 and s, 180, "seed 0 at step 600")
        assert step_at_signal < 2400, "the job finished before it could be preempted"
        job_id = json.loads((preempted / "provenance.json").read_text())["slurm_job_id"]
        subprocess.run(["scancel", "--signal=USR2", job_id], check=True, timeout=30)
        # the uninterrupted runs (default run.checkpoint_every: checkpoints change nothing), while SLURM requeues
        alone = {seed: run_alone(seed, *learning) for seed in (0, 1)}
        assert launcher.wait(timeout=300) == 0, (tmp_path / "launcher.log").read_text()[-3000:]
    finally:
        if launcher.poll() is None:
            launcher.kill()

    job_log = "\n".join(path.read_text() for path in sweep_dir.glob(".submitit/*_0/*_0_log.out"))
    assert "Caught signal SIGUSR2" in job_log and "this job is preempted" in job_log
    assert "td3x-test SLURM_RESTART_COUNT=1" in job_log  # the second attempt is SLURM's first restart
    resumed = re.search(r"from its checkpoint at env step (\d+)", job_log)
    assert resumed and 400 <= int(resumed.group(1)) <= step_at_signal, job_log[-3000:]
    (submission,) = sweep_dir.glob(".submitit/*/*_submission.sh")  # the array's one sbatch script
    assert "export SUBMITIT_EXECUTOR=slurm" in submission.read_text()  # so td3x leaves SIGTERM to submitit
    other_log = "\n".join(path.read_text() for path in sweep_dir.glob(".submitit/*_1/*_1_log.out"))
    assert "SLURM_RESTART_COUNT=1" not in other_log and "Caught signal" not in other_log

    for seed in (0, 1):
        in_sweep = job_dir(sweep_dir, seed)
        assert summary(in_sweep)["status"] == "complete"
        assert learned(in_sweep) == learned(alone[seed]), f"seed {seed}: eval.csv differs from the uninterrupted run"
        ours, reference = _weights(in_sweep), _weights(alone[seed])
        assert all(torch.equal(ours[name], reference[name]) for name in reference), f"seed {seed}: final weights differ"
    segments = sorted(job_dir(sweep_dir, 0).glob("wandb/offline-run-*"))
    assert len(segments) == 2 and len({path.name.rsplit("-", 1)[1] for path in segments}) == 1  # one W&B run, resumed


# ---------------------------------------------------------------------- Ray
RAY_LEAN = ("+hydra.launcher.ray.init.include_dashboard=false", "+hydra.launcher.ray.init.num_cpus=2")


@pytest.mark.slow
def test_ray_jobs_on_a_local_ray_learn_what_each_seed_learns_alone_even_in_a_reused_worker(
    tmp_path: Path, run_alone: Callable[..., Path]
) -> None:
    """hydra/launcher=ray with no address: the launcher starts a local Ray (here on 127.0.0.1, 2 CPUs, no
    dashboard) for the sweep. 3 jobs on 2 CPUs: Ray reuses a worker process for a second job."""
    temp_dir = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    try:
        result = sweep(
            "hydra/launcher=ray",
            *RAY_LEAN,
            "+hydra.launcher.ray.init._node_ip_address=127.0.0.1",
            f"+hydra.launcher.ray.init._temp_dir={temp_dir}",
            "seed=0,1,2",
            *SWEEP_JOB,
            f"hydra.sweep.dir={tmp_path / 'sweep'}",
            environment={**RAY_ENVIRONMENT, "WANDB_MODE": "disabled"},
        )
    finally:
        shutil.rmtree(temp_dir, ignore_errors=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Ray Launcher is launching 3 jobs" in result.stdout + result.stderr
    pids = {int(pid) for pid in re.findall(r"\(_run_job pid=(\d+)\)", result.stdout + result.stderr)}
    assert 1 <= len(pids) < 3, "3 jobs on 2 CPUs: one worker must have run two of them"
    for seed in range(3):
        path = job_dir(tmp_path / "sweep", seed)
        assert summary(path)["status"] == "complete"
        assert json.loads((path / "provenance.json").read_text())["torch_threads"] == 1
        assert learned(path) == learned(run_alone(seed, *SWEEP_JOB)), (
            f"seed {seed} differs from the same seed run alone"
        )


@pytest.mark.slow
def test_a_ray_job_whose_worker_is_killed_resumes_when_the_sweep_is_relaunched(
    tmp_path: Path, ray_cluster: RayCluster, run_alone: Callable[..., Path]
) -> None:
    """A sweep joins the running cluster at its address with one job of two stacked seeds (as the paper's
    sweeps run); its worker is killed (kill -9) past its checkpoint at step 400. With max_retries=0 Ray does not
    retry it and the launch fails; td3x-sweep rerun relaunches the sweep on the cluster, and the job resumes from
    its checkpoint, ending as if never killed."""
    sweep_dir = tmp_path / "sweep"
    learning = (*STOPPABLE_JOB, "run.total_steps=1200", "run.num_seeds=2")
    overrides = (
        "hydra/launcher=ray",
        f"hydra.launcher.ray.init.address={ray_cluster.address}",
        "+hydra.launcher.ray.init.object_store_memory=null",  # the launcher's 75 MB default: refused by a cluster
        "+hydra.launcher.ray.remote.max_calls=1",  # a fresh worker per job
        "+hydra.launcher.ray.remote.max_retries=0",  # else Ray reruns the killed job by itself
        "seed=0",
        "run.checkpoint_every=400",
        *learning,
        f"hydra.sweep.dir={sweep_dir}",
    )
    environment = {**without_wandb_settings(), **RAY_ENVIRONMENT}
    with (tmp_path / "launcher.log").open("w") as log:
        command = [sys.executable, "-m", "td3x.commands.train", "-m", *overrides]
        launcher = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment)
    try:
        job = _wait_for(lambda: next(iter((sweep_dir / "pendulum/none").glob("*seed=0")), None), 180, "the job dir")
        step_at_kill = _wait_for(lambda: (s := _last_eval_step(job / "seed_1")) >= 600 and s, 180, "step 600")
        (worker,) = processes_with_open_files_in(job, ray_cluster.session)
        os.kill(worker, signal.SIGKILL)
        assert step_at_kill < 1200, "the job finished before it could be killed"
        assert launcher.wait(timeout=180) != 0  # Ray reports the dead worker; Hydra ends the launch
    finally:
        if launcher.poll() is None:
            launcher.kill()
    assert "WorkerCrashedError" in (tmp_path / "launcher.log").read_text()
    assert summary(job / "seed_0")["status"] == "running"
    rerun = subprocess.run(
        [sys.executable, "-m", "td3x.commands.sweep", "rerun", str(sweep_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
    )
    assert rerun.returncode == 0, rerun.stdout[-2000:] + rerun.stderr[-2000:]
    resumed = re.search(r"from its checkpoint at env step (\d+)", rerun.stdout + rerun.stderr)
    assert resumed and 400 <= int(resumed.group(1)) <= step_at_kill, rerun.stdout[-3000:]
    alone = run_alone(0, *learning)
    for seed_dir in ("seed_0", "seed_1"):
        assert summary(job / seed_dir)["status"] == "complete"
        assert learned(job / seed_dir) == learned(alone / seed_dir), f"{seed_dir} differs from the job run alone"
