"""Progress: a tqdm bar on a terminal; plain lines (one per evaluation) in CI and SLURM logs; both with an ETA once
the speed is known.

Steps are env steps per seed (a K-seeds process steps its K envs together), as the run's first line counts them.
The ETA adds two parts: the env steps left at the training speed, measured from the first step with updates on
(the random warm-up before it runs many times faster and would promise far too early an end) with the evaluations'
seconds left out; and the evaluations left at the last one's duration (an evaluation of long MuJoCo episodes may
take minutes, as long as thousands of training steps)."""

from __future__ import annotations

import logging
import sys
import time

from tqdm import tqdm

log = logging.getLogger("td3x")

BAR_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]"  # tqdm's own ETA would leave out evaluations


def format_duration(seconds: float) -> str:
    """``42s``, ``3m05s`` or ``2h07m``: an ETA a person reads at a glance."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def evaluations_left(step: int, total_steps: int, eval_every: int) -> int:
    """The evaluations a run makes after env step ``step``: every ``eval_every`` steps and after the last."""
    left = total_steps // eval_every - step // eval_every
    return max(0, left + int(total_steps % eval_every != 0 and step < total_steps))


class Progress:
    """Args:
    total_steps: the run's env steps per seed.
    update_start: the env step from which updates run; the speed (and the ETA) is measured from there on.
    eval_every: env steps between evaluations (the ETA counts those left).
    """

    def __init__(self, total_steps: int, update_start: int = 0, eval_every: int | None = None) -> None:
        self.total_steps = total_steps
        self.update_start = update_start
        self.eval_every = eval_every or total_steps
        self.bar = (
            tqdm(total=total_steps, unit="step", dynamic_ncols=True, bar_format=BAR_FORMAT)
            if sys.stderr.isatty()
            else None
        )
        self.since: tuple[int, float] | None = None  # (step, time) of the first call with updates on
        self.eval_seconds_since = 0.0  # seconds of the evaluations made since then
        self.last_eval_seconds = 0.0
        self.last_return: float | None = None

    def _speed_at(self, step: int) -> tuple[float, float]:
        """Env steps per second from the first call with updates on to ``step`` now, with and without the
        evaluations' seconds ((0, 0) before it is known)."""
        if self.since is None or step <= self.since[0]:
            return 0.0, 0.0
        seconds = max(time.monotonic() - self.since[1], 1e-9)
        training_seconds = max(seconds - self.eval_seconds_since, 1e-9)
        return (step - self.since[0]) / seconds, (step - self.since[0]) / training_seconds

    def _eta(self, step: int, training_speed: float) -> str:
        """The ETA (see the module's docstring), or "" while the speed is unknown."""
        if not training_speed:
            return ""
        evaluations = evaluations_left(step, self.total_steps, self.eval_every)
        return format_duration((self.total_steps - step) / training_speed + evaluations * self.last_eval_seconds)

    def advance(self, step: int) -> None:
        if self.since is None and step >= self.update_start:
            self.since = (step, time.monotonic())
        if self.bar is not None:
            self.bar.update(step - self.bar.n)
            eta = self._eta(step, self._speed_at(step)[1])
            self.bar.set_postfix(eval_return=self.last_return, ETA=eta or "?", refresh=False)

    def evaluated(self, step: int, mean_return: float, seconds: float = 0.0) -> None:
        """After the evaluation at env step ``step``, which took ``seconds``."""
        self.last_return = round(mean_return, 2)
        if self.since is not None:
            self.eval_seconds_since += seconds
        self.last_eval_seconds = seconds
        self.advance(step)
        if self.bar is None:
            speed, training_speed = self._speed_at(step)
            eta = self._eta(step, training_speed)
            shown = f"  {speed:.0f} steps/s  ETA {eta}" if eta else ""  # known once updates have run a while
            log.info("step %d/%d  eval return %.2f%s", step, self.total_steps, mean_return, shown)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
