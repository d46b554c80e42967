"""Progress: a tqdm bar on a terminal (with its ETA); plain lines (one per evaluation, with an ETA once the
speed is known) in CI and SLURM logs.

Steps are env steps per seed (a K-seeds process steps its K envs together), as the run's first line counts them.
The speed behind the ETA is measured from the first step with updates on: the random warm-up before it runs many
times faster and would promise far too early an end."""

from __future__ import annotations

import logging
import sys
import time

from tqdm import tqdm

log = logging.getLogger("td3x")


def format_duration(seconds: float) -> str:
    """``42s``, ``3m05s`` or ``2h07m``: an ETA a person reads at a glance."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Progress:
    """Args:
    total_steps: the run's env steps per seed.
    update_start: the env step from which updates run; the speed (and the ETA) is measured from there on.
    """

    def __init__(self, total_steps: int, update_start: int = 0) -> None:
        self.total_steps = total_steps
        self.update_start = update_start
        self.bar = tqdm(total=total_steps, unit="step", dynamic_ncols=True) if sys.stderr.isatty() else None
        self.since: tuple[int, float] | None = None  # (step, time) of the first call with updates on
        self.last_return: float | None = None

    def _speed_at(self, step: int) -> float:
        """Env steps per second from the first call with updates on to ``step`` now (0 before it is known)."""
        if self.since is None or step <= self.since[0]:
            return 0.0
        return (step - self.since[0]) / max(time.monotonic() - self.since[1], 1e-9)

    def advance(self, step: int) -> None:
        if self.since is None and step >= self.update_start:
            self.since = (step, time.monotonic())
        if self.bar is not None:
            self.bar.update(step - self.bar.n)
            self.bar.set_postfix(eval_return=self.last_return, refresh=False)

    def evaluated(self, step: int, mean_return: float) -> None:
        self.last_return = round(mean_return, 2)
        self.advance(step)
        if self.bar is None:
            sps = self._speed_at(step)
            eta = format_duration((self.total_steps - step) / sps) if sps else ""
            speed = f"  {sps:.0f} steps/s  ETA {eta}" if eta else ""  # known once updates have run a while
            log.info("step %d/%d  eval return %.2f%s", step, self.total_steps, mean_return, speed)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
