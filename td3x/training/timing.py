"""A training process's clock: its wall time over every segment of a resumed run, and the seconds each phase of
the loop took (the timing columns of ``eval.csv`` and ``metrics.jsonl``, never compared between runs)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

PHASES = ("act", "env", "update", "eval", "log", "checkpoint")


@dataclass
class Lap:
    """The seconds one timed block took, known once it has ended."""

    seconds: float = 0.0


class RunClock:
    """Started when made; :meth:`restore` adds a resumed run's earlier segments."""

    def __init__(self) -> None:
        self.phase_time = dict.fromkeys(PHASES, 0.0)  # seconds spent in each phase of the loop
        self.start_time, self.earlier_wall_time = time.perf_counter(), 0.0
        self.start_cpu_time: float = time.process_time()
        self.earlier_cpu_time: float | None = 0.0  # None: a segment before this one did not count its CPU time

    def wall_time(self) -> float:
        """Seconds of training, summed over every segment of a resumed run."""
        return self.earlier_wall_time + time.perf_counter() - self.start_time

    def cpu_time(self) -> float | None:
        """CPU seconds of the training process's threads, summed over every segment: the core-seconds the run
        costs, however many other processes share the machine (its wall time grows with them; this does not).
        None for a run resumed from a checkpoint of a td3x that did not count them."""
        if self.earlier_cpu_time is None:
            return None
        return self.earlier_cpu_time + time.process_time() - self.start_cpu_time

    @contextlib.contextmanager
    def timed(self, phase: str) -> Iterator[Lap]:
        """Add the block's seconds to ``phase_time[phase]`` (a block that raises adds none)."""
        lap, started = Lap(), time.perf_counter()
        yield lap
        lap.seconds = time.perf_counter() - started
        self.phase_time[phase] += lap.seconds

    def restore(self, phase_time: dict[str, float], wall_time_s: float, cpu_time_s: float | None) -> None:
        self.phase_time, self.earlier_wall_time, self.earlier_cpu_time = dict(phase_time), wall_time_s, cpu_time_s
