"""The run-dir lock: one process trains in a run dir at a time, and anyone may ask whether one does now.

The lock is an advisory ``flock`` on the run dir itself (the process dir of K stacked seeds), held for as long as a
process trains there and released by the kernel when that process ends, however it ends. :func:`exclusive` takes it
(training); :func:`is_locked` probes it (a run's state, a study's dead trials), by the same protocol.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

# a probe holds the lock for an instant: a process that starts training at that instant retries for this long
TAKE_RETRIES = 10
TAKE_RETRY_S = 0.05


class ResumeError(RuntimeError):
    """A run dir td3x will not train in (another process trains there, another config's results, or
    ``run.resume=never``)."""


def _try_lock(descriptor: int) -> bool:
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


# run dirs whose lock this process holds: an exclusive() inside another on the same dir takes nothing more (a study
# holds its trial's dir from the claim to the told score, and the training inside takes it again)
_held: set[Path] = set()


@contextlib.contextmanager
def exclusive(run_dir: Path) -> Iterator[None]:
    """Hold ``run_dir``'s lock while the block trains (a sweep relaunched while its jobs still run would otherwise
    put two processes in one dir); raises :class:`ResumeError` when another process holds it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    key = run_dir.resolve()
    if key in _held:
        yield
        return
    descriptor = os.open(run_dir, os.O_RDONLY)
    try:
        for _ in range(TAKE_RETRIES):
            if _try_lock(descriptor):
                break
            time.sleep(TAKE_RETRY_S)
        else:
            raise ResumeError(f"another process is training in {run_dir}; let it finish or stop it first")
        _held.add(key)
        try:
            yield
        finally:
            _held.discard(key)
    finally:
        os.close(descriptor)


def is_locked(run_dir: Path) -> bool:
    """Whether a process holds ``run_dir``'s lock now (this one included): it is training there."""
    if not run_dir.is_dir():
        return False
    descriptor = os.open(run_dir, os.O_RDONLY)
    try:
        return not _try_lock(descriptor)
    finally:
        os.close(descriptor)  # releases the lock the probe took


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's counts): a stale file named for a process that is gone."""
    try:
        os.kill(pid, 0)  # signal 0: checks that the process exists, sends nothing
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
