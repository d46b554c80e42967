"""What to do with a run dir that may already hold a run: start, resume, extend, do nothing, or refuse.

``run.resume=auto`` (the default) resumes from ``checkpoint.pt`` when the checkpoint's config matches
on every key that changes what is learned (:data:`td3x.config.inert.RESUME_INERT` may change: the logging keys,
the checkpoint and log intervals; a larger ``run.total_steps`` extends a run; and ``run.device`` moves it,
:data:`td3x.config.inert.RESUME_MOVABLE`), returns at once for a finished run, and refuses a mismatch naming the
differing keys. ``run.resume=never`` refuses a dir that already holds
results. One process trains in a run dir at a time (:func:`td3x.rundir.lock.exclusive`); a run is complete when its
checkpoint says so (:func:`td3x.rundir.state.checkpoint_complete`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from td3x.config.enums import ResumeMode
from td3x.config.hydra import flatten, to_container
from td3x.config.inert import RESUME_INERT, RESUME_MOVABLE, is_inert, without_neutral_defaults
from td3x.config.schema import TrainConfig
from td3x.rundir import checkpoint
from td3x.rundir.layout import CHECKPOINT_FILE, EVAL_FILE, METRICS_FILE
from td3x.rundir.lock import ResumeError
from td3x.rundir.state import checkpoint_complete

RESULT_FILES = (EVAL_FILE, METRICS_FILE, CHECKPOINT_FILE)


@dataclass
class Plan:
    action: str  # "start" | "resume" | "complete"
    parts: dict[str, Any] = field(default_factory=dict)  # the checkpoint, when resuming or complete


def learning_keys(config: dict[str, Any]) -> dict[str, Any]:
    """The flattened config minus :data:`~td3x.config.inert.RESUME_INERT`: what the config hash covers."""
    return {key: value for key, value in flatten(config).items() if not is_inert(key, RESUME_INERT)}


def hashed_keys(config: dict[str, Any], leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    """:func:`learning_keys` without the keys at their :data:`~td3x.config.inert.NEUTRAL_DEFAULTS` value and those
    of ``leave_out``: what the config hash covers."""
    keys = without_neutral_defaults(learning_keys(config))
    return {key: value for key, value in keys.items() if not is_inert(key, leave_out)}


def config_hash(config: dict[str, Any], leave_out: tuple[str, ...] = ()) -> str:
    """The hash of :func:`hashed_keys`: ``run.numerics`` counts only when not ``native``, ``run.precision`` only when
    not ``fp32`` and a ``seeds.*`` key only when set, so that the config of a run trained before those keys existed
    hashes as it did. Resuming compares hashes that ``leave_out`` the keys a run may move by
    (:data:`~td3x.config.inert.RESUME_MOVABLE`)."""
    keys = hashed_keys(config, leave_out)
    return hashlib.sha256(json.dumps(keys, sort_keys=True, default=str).encode()).hexdigest()[:16]


def plan(config: TrainConfig, run_dir: Path) -> Plan:
    """Decide from the run dir's contents; raises :class:`ResumeError` with one readable line."""
    existing = [name for name in RESULT_FILES if (run_dir / name).exists()]
    if existing and config.run.resume is ResumeMode.never:
        raise ResumeError(
            f"run.resume=never: {run_dir} already holds results ({', '.join(existing)}); "
            "choose another hydra.run.dir, or run.resume=auto to continue it"
        )
    checkpoint_path = run_dir / CHECKPOINT_FILE
    if not checkpoint_path.exists():
        return Plan("start")
    parts = checkpoint.load(checkpoint_path)
    _check_same_config(parts["config"], to_container(config))
    done, total = parts["counters"]["step"], config.run.total_steps
    if checkpoint_complete(parts["counters"], total):
        return Plan("complete", parts)
    if parts["buffer"] is None:
        raise ResumeError(
            f"run.total_steps={total} would extend {run_dir} past its {done} steps, but its final "
            "checkpoint dropped the replay buffer (run.keep_buffer=false); train a new run instead"
        )
    return Plan("resume", parts)


def _check_same_config(saved: dict[str, Any], current: dict[str, Any]) -> None:
    """Refuse another config than the checkpoint's, naming the keys that differ; a move to another device is none
    (provenance.json records it, and the run warns of it)."""
    if config_hash(saved, RESUME_MOVABLE) == config_hash(current, RESUME_MOVABLE):
        return
    old, new = hashed_keys(saved, RESUME_MOVABLE), hashed_keys(current, RESUME_MOVABLE)
    differing = [
        f"{key}={old[key]!r} (checkpoint) vs {new.get(key)!r} (now)"
        if key in old
        else f"{key}={new.get(key)!r} is new (the checkpoint was written by an older td3x)"
        for key in sorted(old | new)
        if old.get(key) != new.get(key)
    ]
    raise ResumeError(
        f"the run dir's checkpoint was trained with another config: {'; '.join(differing)}; "
        "start a new run in another run dir"
    )
