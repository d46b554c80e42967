"""A study's journal (Optuna's ``study.journal``, one JSON record a line) checked before a process opens it.

Optuna skips a last record that lacks its newline, then appends the next record right after it: the two run
together on one line, and from then on every read of the journal stops at that line with a JSONDecodeError. A
record cut so is a write that a crash (a kill, a full disk) stopped; under the journal's own lock no live process
can be writing it, so it is dropped, with a warning naming it: the study goes on from the whole records before it,
as a study killed just before that write would. A record that is no JSON object before the last one is refused,
naming the file and line: that is damage td3x cannot undo.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from optuna.storages.journal import JournalFileSymlinkLock

from td3x.rundir.layout import RunFileError

log = logging.getLogger("td3x")


def repair_cut_record(journal: Path) -> None:
    """Drop the journal's last record when a write stopped mid-record (no newline, and not a whole JSON object),
    logging one warning; a whole last record without its newline gets it. Nothing to do without a journal.

    Raises:
        RunFileError: a record before the last one is no JSON object, or the journal cannot be read (one line
            naming the file and line).
    """
    if not journal.is_file():
        return
    lock = JournalFileSymlinkLock(str(journal))  # Optuna's own: no process appends while this one reads and cuts
    lock.acquire()
    try:
        _repair(journal)
    finally:
        lock.release()


def _repair(journal: Path) -> None:
    try:
        data = journal.read_bytes()
    except OSError as error:
        raise RunFileError(f"{journal} cannot be read: {error.strerror or error}") from error
    lines = data.splitlines(keepends=True)
    cut = bool(lines) and not lines[-1].endswith(b"\n")  # the last write stopped before its newline
    for number, line in enumerate(lines[:-1] if cut else lines, start=1):
        if not _is_record(line):
            raise RunFileError(
                f"{journal} line {number} is not an Optuna journal record (a JSON object): restore the file, or start "
                "a new study dir"
            )
    if not cut:
        return
    if _is_record(lines[-1]):  # whole, only its newline missing (a hand edit): kept
        with journal.open("ab") as file:
            file.write(b"\n")
        return
    os.truncate(journal, len(data) - len(lines[-1]))
    log.warning(
        "%s line %d was cut mid-record (no newline: a write stopped by a crash): dropped; the study goes on from the "
        "%d whole records before it",
        journal,
        len(lines),
        len(lines) - 1,
    )


def _is_record(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except (UnicodeDecodeError, ValueError):  # JSONDecodeError is a ValueError
        return False
