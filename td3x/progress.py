"""Progress: a tqdm bar on a terminal (with its ETA); plain lines (one per evaluation, with an ETA once the
speed is known) in CI and SLURM logs."""

from __future__ import annotations

import logging
import sys

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
    def __init__(self, total_steps: int) -> None:
        self.total_steps = total_steps
        self.bar = tqdm(total=total_steps, unit="step", dynamic_ncols=True) if sys.stderr.isatty() else None
        self.sps = 0.0
        self.last_return: float | None = None

    def advance(self, step: int, sps: float) -> None:
        self.sps = sps
        if self.bar is not None:
            self.bar.update(step - self.bar.n)
            self.bar.set_postfix(sps=f"{sps:.0f}", eval_return=self.last_return, refresh=False)

    def evaluated(self, step: int, mean_return: float) -> None:
        self.last_return = round(mean_return, 2)
        if self.bar is not None:
            self.advance(step, self.sps)
        else:
            eta = format_duration((self.total_steps - step) / self.sps) if self.sps else ""
            speed = f"  {self.sps:.0f} steps/s  ETA {eta}" if eta else ""  # known after the first log row
            log.info("step %d/%d  eval return %.2f%s", step, self.total_steps, mean_return, speed)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
