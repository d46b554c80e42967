"""A launch's size and estimated cost before it starts: the line td3x-train prints before a sweep of an hour or more."""

from __future__ import annotations

from td3x.rundir.layout import RunFileError, seed_run_dirs
from td3x.rundir.state import run_state
from td3x.sweeps.multirun import Job

# the speed a launch's cost is estimated at, measured and committed: td3x's reference runs of TD3 (agent=td3_paper)
# on Hopper-v5, 100k env steps each with the paper's evaluations, one thread, 2-3 seeds a process, on an AMD EPYC
# (docs/results/report/compute.csv, "env steps per core-second"; tests/commands/test_sweep.py checks it is that table's)
MEASURED_STEPS_PER_CORE_SECOND = 69.4
MEASURED_ON = "TD3 agent=td3_paper on Hopper-v5 in td3x's reference runs, one thread, AMD EPYC; docs/results"
ANNOUNCE_FROM_CORE_HOURS = 1.0  # a launch estimated at less is not announced


def launch_cost(jobs: list[Job]) -> str | None:
    """One line with the size and estimated cost of what the jobs have left to train (steps their run dirs
    already hold are not counted again), or None below ANNOUNCE_FROM_CORE_HOURS."""
    runs = sum(job.num_seeds for job in jobs)
    steps = 0
    for job in jobs:
        for seed_dir in seed_run_dirs(job.run_dir, job.seed, job.num_seeds):
            try:
                steps += max(job.total_steps - run_state(seed_dir, job.total_steps, job.num_seeds).steps, 0)
            except RunFileError:  # a broken summary: the run trains again from what its checkpoint holds
                steps += job.total_steps
    core_hours = steps / MEASURED_STEPS_PER_CORE_SECOND / 3600
    if core_hours < ANNOUNCE_FROM_CORE_HOURS:
        return None
    return (
        f"this sweep: {len(jobs)} jobs, {runs} runs, {steps:,} env steps to train: about {core_hours:,.0f} "
        f"core-hours at {MEASURED_STEPS_PER_CORE_SECOND} env steps per core-second ({MEASURED_ON}); your CPU, env "
        "and agent set the real rate; td3x-sweep list shows its jobs"
    )
