"""What to do with a run dir that may already hold a run: start, resume, extend, do nothing, or refuse.

``run.resume=auto`` (the default) resumes from ``checkpoint.pt`` when the checkpoint's config matches
on every key that changes what is learned (logging keys, the checkpoint and log intervals may change;
a larger ``run.total_steps`` extends a run), returns at once for a finished run, and refuses a
mismatch naming the differing keys. ``run.resume=never`` refuses a dir that already holds results.

``td3x-resume RUN_DIR`` relaunches a run in place from the config it stored, without Hydra: the same
decisions, no overrides to retype and no run-dir path to quote.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from td3x import checkpoint
from td3x.cli import HelpFormatter, add_version_flag
from td3x.config import ConfigError, ResumeMode, TrainConfig, from_saved, to_container
from td3x.loggers import CONFIG_FILE, EVAL_FILE, METRICS_FILE, run_configs

# keys that never change what is learned or evaluated: they may differ between a run and its resumption
NOT_HASHED = ("logging", "run.checkpoint_every", "run.log_every", "run.total_steps", "run.resume", "run.keep_buffer")
RESULT_FILES = (EVAL_FILE, METRICS_FILE, checkpoint.CHECKPOINT_FILE)


class ResumeError(RuntimeError):
    """A run dir td3x will not train in (another config's results, or ``run.resume=never``)."""


@dataclass
class Plan:
    action: str  # "start" | "resume" | "complete"
    parts: dict[str, Any] = field(default_factory=dict)  # the checkpoint, when resuming or complete


@contextlib.contextmanager
def exclusive(run_dir: Path) -> Iterator[None]:
    """One process trains in a run dir at a time (a sweep relaunched while its jobs still run would otherwise
    put two in one dir): an advisory lock on the directory itself, released when the process ends."""
    run_dir.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(run_dir, os.O_RDONLY)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResumeError(f"another process is training in {run_dir}; let it finish or stop it first") from None
        yield
    finally:
        os.close(descriptor)


def flatten(container: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in container.items():
        if isinstance(value, dict) and value:
            flat |= flatten(value, f"{prefix}{key}.")
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def learning_keys(config: dict[str, Any]) -> dict[str, Any]:
    """The flattened config minus :data:`NOT_HASHED`: what the config hash covers."""
    return {
        key: value
        for key, value in flatten(config).items()
        if not any(key == skip or key.startswith(f"{skip}.") for skip in NOT_HASHED)
    }


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(learning_keys(config), sort_keys=True, default=str).encode()).hexdigest()[:16]


def plan(config: TrainConfig, run_dir: Path) -> Plan:
    """Decide from the run dir's contents; raises :class:`ResumeError` with one readable line."""
    existing = [name for name in RESULT_FILES if (run_dir / name).exists()]
    if existing and config.run.resume is ResumeMode.never:
        raise ResumeError(
            f"run.resume=never: {run_dir} already holds results ({', '.join(existing)}); "
            "choose another hydra.run.dir, or run.resume=auto to continue it"
        )
    checkpoint_path = run_dir / checkpoint.CHECKPOINT_FILE
    if not checkpoint_path.exists():
        return Plan("start")
    parts = checkpoint.load(checkpoint_path)
    _check_same_config(parts["config"], to_container(config))
    done, total = parts["counters"]["step"], config.run.total_steps
    if done >= total:
        return Plan("complete", parts)
    if parts["buffer"] is None:
        raise ResumeError(
            f"run.total_steps={total} would extend {run_dir} past its {done} steps, but its final "
            "checkpoint dropped the replay buffer (run.keep_buffer=false); train a new run instead"
        )
    return Plan("resume", parts)


def _check_same_config(saved: dict[str, Any], current: dict[str, Any]) -> None:
    if config_hash(saved) == config_hash(current):
        return
    old, new = learning_keys(saved), learning_keys(current)
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


# ---------------------------------------------------------------------- td3x-resume
# what td3x-resume may change: the keys that never change what is learned (NOT_HASHED, but run.resume)
RESUME_KEYS = tuple(key for key in NOT_HASHED if key != "run.resume")
RUN_LOG = "train.log"  # the name Hydra gives td3x-train's log in the run dir: a resumed run appends to it


def stored_run(run_dir: Path) -> tuple[Path, dict[str, Any]]:
    """The dir to train in and its stored config (``config.yaml``, with ``choices``): a run dir or a sweep job
    as it is; a K-seeds process dir through its first seed's config; a ``seed_<k>`` dir of such a process
    through its process dir, which holds the process's checkpoint.

    Raises:
        ResumeError: no td3x run there.
    """
    configs = run_configs(run_dir)
    if not configs:
        raise ResumeError(f"{run_dir} holds no td3x run (no {CONFIG_FILE}, no seed_<k>/{CONFIG_FILE})")
    saved = yaml.safe_load(configs[0].read_text())  # a K-seeds process's config is its first seed's
    if saved.get("run", {}).get("num_seeds", 1) > 1 and run_dir.name == f"seed_{saved.get('seed')}":
        return stored_run(run_dir.parent)  # one seed of a K-seeds process: the process resumes as a whole
    return run_dir, saved


def resume_overrides(saved: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """``saved`` with ``KEY=VALUE`` overrides of :data:`RESUME_KEYS` applied; raises ResumeError naming any
    other key (it would change what is learned: train a new run instead)."""
    for line in overrides:
        key = line.partition("=")[0]
        if "=" not in line or not any(key == allowed or key.startswith(f"{allowed}.") for allowed in RESUME_KEYS):
            raise ResumeError(
                f"{line!r} is not allowed: td3x-resume takes KEY=VALUE for {', '.join(RESUME_KEYS)} only "
                "(other keys change what is learned: start a new run)"
            )
    try:  # each value checked against its key's type on its own, so that a bad one is named as the user's
        OmegaConf.merge(OmegaConf.structured(TrainConfig), OmegaConf.from_dotlist(overrides))
    except OmegaConfBaseException as error:
        raise ResumeError(f"{' '.join(overrides)}: {' '.join(str(error).split())}") from error
    merged = OmegaConf.merge(OmegaConf.create(saved), OmegaConf.from_dotlist(overrides))
    container = OmegaConf.to_container(merged)
    assert isinstance(container, dict)
    return {str(key): value for key, value in container.items()}


def _log_to(run_dir: Path) -> None:
    """Log as td3x-train does under Hydra: to the terminal and appended to the run dir's ``train.log``."""
    logging.basicConfig(
        level=logging.INFO,
        format="[%(asctime)s][%(name)s][%(levelname)s] - %(message)s",
        handlers=[logging.StreamHandler(), logging.FileHandler(run_dir / RUN_LOG)],
    )


def main(argv: list[str] | None = None) -> None:
    """Console script ``td3x-resume RUN_DIR [KEY=VALUE ...]``: continue a run in place from its stored config."""
    from td3x.entrypoint import run_and_report  # the training stack, only once the arguments are good

    parser = argparse.ArgumentParser(
        prog="td3x-resume",
        description="Continue a td3x run in place from its own stored config and last checkpoint: a run dir, a "
        "sweep job's dir (no quoting needed) or a K-seeds process dir. A finished run says so and exits 0.",
        formatter_class=HelpFormatter,
    )
    add_version_flag(parser)
    parser.add_argument("run_dir", type=Path, help="the run's dir (the one holding config.yaml, or seed_<k>/)")
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help=f"changes that keep what is learned: {', '.join(RESUME_KEYS)}; a larger run.total_steps extends a "
        "run whose final checkpoint kept its buffer (run.keep_buffer=true)",
    )
    args = parser.parse_args(argv)
    try:
        run_dir, saved = stored_run(args.run_dir)
        choices = saved.get("choices") or {}
        config = from_saved(resume_overrides(saved, args.overrides))
        config.run.resume = ResumeMode.auto  # a run started with run.resume=never too: continuing is what is asked
    except (ResumeError, ConfigError) as error:
        for line in getattr(error, "problems", [str(error)]):
            print(f"resume error: {line}", file=sys.stderr)
        sys.exit(2)
    _log_to(run_dir)
    if run_and_report(config, run_dir, choices) is None:
        sys.exit(1)


if __name__ == "__main__":
    main()
