"""Every W&B run of a sweep (or of any folder of runs) in one W&B directory, for ``wandb leet`` to browse together.

Each run keeps its own ``<run dir>/wandb/`` (``td3x-report``, ``td3x-resume`` and ``wandb sync`` read it there);
:func:`gather` adds ``<folder>/wandb/``, a W&B directory of relative links to those runs' segment dirs, named
``run-<row>-<env>-s<seed>-run-<start time>-<id>`` after the command line's ``ablation``, ``env`` and ``seed``:

* ``wandb leet`` lists every entry of a W&B directory whose name starts with ``run-`` or ``offline-run-``, shows
  the start of that name (about 30 characters in its default layout: here the row, the env and the seed), and finds
  the run's log ``run-<id>.wandb`` from the ``run-<YYYYmmdd_HHMMSS>-<id>`` inside the name. Names that do not start
  with a start time sort by name, so a row's seeds are listed together. Its run filter matches each run's config and
  tags (``config.paper_row="TD3 - CDQ"``).
* A resumed run (and one that ``td3x-eval --video`` added videos to) has one segment dir per process, offline; each
  is listed as a part of its run: ``...-s0.part1``, ``...-s0.part2``. Online, ``wandb sync`` joins them into one run.
* ``wandb sync <folder>/wandb`` follows the links and uploads each run once; the marks of what was synced land
  next to each run's log, in its run dir.

:class:`ViewHint`, a Hydra callback (``hydra.callbacks`` in ``conf/train.yaml``), prints the one command that
gathers and opens a sweep's runs when the sweep ends: ``td3x-sweep view <sweep dir>``.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from td3x.rundir.layout import CONFIG_FILE, WANDB_DIR, RunFileError, read_yaml_mapping, run_configs
from td3x.sweeps.multirun import runs_below

LINK_PREFIX = "run-"  # a prefix wandb leet lists, and the shortest: the label gets the most of the shown width
SEGMENT_NAME = re.compile(r"^(?:offline-)?run-(\d{8}_\d{6})-([a-z0-9]+)$")  # W&B's own name for a segment dir
UNSAFE = re.compile(r"[^A-Za-z0-9_.+=-]+")


@dataclass(frozen=True)
class View:
    """What :func:`gather` made: the W&B directory to open and how many runs and segment dirs it lists."""

    wandb_dir: Path
    runs: int
    segments: int
    runs_without_wandb: int

    def command(self) -> str:
        return f"wandb leet {shlex.quote(str(self.wandb_dir))}"


def view_command(path: Path) -> str:
    """The one command that gathers the runs at or below ``path`` and opens them in ``wandb leet``."""
    return f"td3x-sweep view {shlex.quote(str(path))}"


def run_label(config: dict[str, Any]) -> str:
    """``<row>-<env>-s<seed>`` from a run's ``config.yaml``: the ablation and env options of its command line
    (the row's paper name and the env id for a run composed without them)."""
    choices, env = config.get("choices"), config.get("env")
    choices, env = choices if isinstance(choices, dict) else {}, env if isinstance(env, dict) else {}
    row = choices.get("ablation") or config.get("paper_row") or "custom"
    env_name = choices.get("env") or env.get("id") or "env"
    return UNSAFE.sub("_", f"{row}-{env_name}-s{config.get('seed')}")


def run_segments(run_dir: Path) -> list[Path]:
    """The segment dirs of the run's W&B run, oldest first: those of the run id that started last (an attempt
    that started over from step 0 has a new id; its abandoned run is left out)."""
    segments = []
    for entry in (run_dir / WANDB_DIR).glob("*run-*"):
        match = SEGMENT_NAME.match(entry.name)
        if match and entry.is_dir() and not entry.is_symlink() and (entry / f"run-{match[2]}.wandb").is_file():
            segments.append((match[1], match[2], entry))
    if not segments:
        return []
    current = max(segments)[1]
    return [entry for _, run_id, entry in sorted(segments) if run_id == current]


def link_names(label: str, segments: list[Path]) -> list[str]:
    """The names of a run's links: its label, a part number when it has several segments, and the segment's own
    ``run-<time>-<id>`` (from which leet finds the log)."""
    parts = [f".part{number}" for number in range(1, len(segments) + 1)] if len(segments) > 1 else [""]
    return [
        f"{LINK_PREFIX}{label}{part}-{segment.name.removeprefix('offline-')}"
        for part, segment in zip(parts, segments, strict=True)
    ]


def wandb_runs(path: Path) -> tuple[dict[Path, list[Path]], int]:
    """The segment dirs of each run at or below ``path`` that has a W&B run, by the run's ``config.yaml`` (in
    :func:`runs_below`'s order), and how many runs have none (``logging.wandb_mode=disabled``).

    Raises:
        FileNotFoundError: ``path`` holds no run.
    """
    configs = runs_below(path)
    if not configs:
        raise FileNotFoundError(f"{path} holds no run: not a sweep dir, a run dir or a folder of runs")
    runs = {config: segments for config in configs if (segments := run_segments(config.parent))}
    return runs, len(configs) - len(runs)


def gather(path: Path) -> View:
    """Link every W&B run at or below ``path`` into ``path/wandb`` (links made before are replaced); a run dir's
    own ``wandb/`` is already its view and is left as it is. Runs none of which has a W&B run change nothing: there
    is no view to make, and ``td3x-sweep view`` refuses it.

    Raises:
        FileNotFoundError: ``path`` holds no run.
        RunFileError: ``path/wandb`` cannot be written (not a dir, no permission).
    """
    runs, without = wandb_runs(path)
    view_dir = path / WANDB_DIR
    if not runs or run_configs(path) == [path / CONFIG_FILE]:  # nothing to link, or a run dir: its own view
        return View(view_dir, len(runs), sum(map(len, runs.values())), without)
    links: dict[str, Path] = {}
    for config, segments in runs.items():
        names = link_names(run_label(read_yaml_mapping(config)), segments)
        links.update(zip(names, segments, strict=True))
    try:
        view_dir.mkdir(exist_ok=True)
        for entry in view_dir.iterdir():
            if entry.is_symlink() and entry.name.startswith(LINK_PREFIX):
                entry.unlink()
        for name, segment in links.items():
            os.symlink(os.path.relpath(segment, view_dir), view_dir / name, target_is_directory=True)
    except OSError as error:
        raise RunFileError(f"cannot link the runs into {view_dir}: {error.strerror or error}") from error
    return View(view_dir, len(runs), len(links), without)


def view_lines(view: View) -> list[str]:
    """What ``td3x-sweep view`` says about a gathered view."""
    lines = [f"{view.runs} W&B run(s) in {view.segments} segment dir(s) listed in {view.wandb_dir}"]
    if view.runs_without_wandb:
        lines.append(f"{view.runs_without_wandb} run(s) without a W&B run (logging.wandb_mode=disabled) left out")
    return lines


class ViewHint(Callback):
    """Hydra callback: at the end of a multirun, print the command that opens all its runs in ``wandb leet``."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        if OmegaConf.select(config, "logging.wandb_mode", default=None) == "disabled":
            return  # no W&B run to view
        print(f"every run of this sweep in W&B's terminal viewer: {view_command(Path(str(config.hydra.sweep.dir)))}")
