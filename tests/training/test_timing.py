"""A training process's clock (td3x.training.timing): its CPU time counts the work done, not the waiting a busy
machine adds to its wall time, and both sum a resumed run's segments."""

from __future__ import annotations

import time

from td3x.training.timing import RunClock


def test_the_cpu_time_counts_work_not_waiting_and_sums_the_segments() -> None:
    clock = RunClock()
    time.sleep(0.2)  # another process's turn on the core: wall time passes, this process's CPU time does not
    waited = clock.cpu_time()
    busy_until = time.process_time() + 0.2
    while time.process_time() < busy_until:
        pass
    worked = clock.cpu_time()
    assert waited is not None and worked is not None
    assert waited < 0.1 and worked - waited >= 0.2 and clock.wall_time() >= 0.4
    resumed = RunClock()
    resumed.restore({}, 10.0, 5.0)  # an earlier segment's 10 s of wall time and 5 s of CPU time
    assert 10.0 <= resumed.wall_time() < 10.5
    cpu = resumed.cpu_time()
    assert cpu is not None and 5.0 <= cpu < 5.5


def test_a_run_resumed_from_a_checkpoint_without_cpu_time_has_none() -> None:
    clock = RunClock()
    clock.restore({}, 10.0, None)
    assert clock.cpu_time() is None and clock.wall_time() >= 10.0
