"""Each launch of a sweep, recorded in its sweep dir: what ``td3x-sweep status`` counts and ``rerun`` relaunches.

Hydra keeps one ``multirun.yaml`` per sweep dir, rewritten by every launch, and its ``hydra.sweep.dir`` is the
unresolved default (``outputs/multirun/${now:...}``). Several launches may write into one sweep dir (an
experiment's literal dir: ``env=hopper`` today, ``env=ant`` tomorrow), so :class:`RecordLaunch`, a Hydra callback
(``hydra.callbacks`` in ``conf/train.yaml``), writes each distinct launch's overrides to
``<sweep dir>/launches/<digest>.yaml`` in the resolved sweep dir, before any job starts. A launch made again with
the same overrides (a relaunch) finds its record already there.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from td3x.config.overrides import hydra_quoted
from td3x.rundir.layout import SWEEP_FILE, RunFileError, read_yaml_mapping

LAUNCHES_DIR = "launches"
SWEEP_DIR_KEY = "hydra.sweep.dir"
MULTIRUN_MODE = "hydra.mode=MULTIRUN"  # set by -m: a relaunch with -m gets it again


@dataclass(frozen=True)
class Launch:
    """One launch of a sweep: its command line's overrides and the dir it ran from."""

    task_overrides: list[str]
    hydra_overrides: list[str]  # without hydra.sweep.dir: the sweep dir is where the record lies
    cwd: Path

    def digest(self) -> str:
        """The same for the same overrides: a relaunch does not add a record."""
        text = json.dumps([self.task_overrides, self.hydra_overrides])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _launch_of(task: list[str], hydra_lines: list[str], cwd: Path) -> Launch:
    kept = [line for line in hydra_lines if line != MULTIRUN_MODE and not line.startswith(f"{SWEEP_DIR_KEY}=")]
    return Launch(task_overrides=task, hydra_overrides=kept, cwd=cwd)


# the launches this process started, (sweep dir, launch): td3x-train sums each up in one line when it ends (Hydra's
# on_multirun_end cannot: its basic sweeper raises before it when a job failed, and a stop exits the process)
LAUNCHED_HERE: list[tuple[Path, Launch]] = []


class RecordLaunch(Callback):
    """Hydra callback: at the start of a multirun, record its overrides in its resolved sweep dir."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        overrides = config.hydra.overrides
        launch = _launch_of(
            [str(line) for line in overrides.task], [str(line) for line in overrides.hydra], Path(os.getcwd())
        )
        # resolving ${now:...} here caches it in the config, so the sweeper creates this very dir
        sweep_dir = Path(str(config.hydra.sweep.dir))
        LAUNCHED_HERE.append((sweep_dir, launch))
        records = sweep_dir / LAUNCHES_DIR
        records.mkdir(parents=True, exist_ok=True)
        path = records / f"{launch.digest()}.yaml"
        if not path.exists():
            record = {"task": launch.task_overrides, "hydra": launch.hydra_overrides, "cwd": str(launch.cwd)}
            temporary = path.with_name(f".{path.name}.tmp")
            temporary.write_text(yaml.safe_dump(record, sort_keys=False))
            os.replace(temporary, path)  # a reader never sees half a record


def is_sweep_dir(path: Path) -> bool:
    return (path / SWEEP_FILE).is_file() or (path / LAUNCHES_DIR).is_dir()


def read_launches(sweep_dir: Path) -> list[Launch]:
    """Every launch into ``sweep_dir``, oldest first (:func:`launch_records`, without the files)."""
    return [launch for _, launch in launch_records(sweep_dir)]


def launch_records(sweep_dir: Path) -> list[tuple[Path, Launch]]:
    """Every launch into ``sweep_dir``, oldest first, with the file it is recorded in; a sweep launched before
    launches were recorded has only Hydra's ``multirun.yaml`` (its last launch).

    Raises:
        FileNotFoundError: ``sweep_dir`` has neither.
        RunFileError: a record is not one.
    """
    records = sorted((sweep_dir / LAUNCHES_DIR).glob("*.yaml"), key=lambda path: (path.stat().st_mtime_ns, path))
    if records:
        return [(path, _read_record(path)) for path in records]
    path = sweep_dir / SWEEP_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{sweep_dir} is not a sweep dir: it has no multirun.yaml")
    try:
        recorded = read_yaml_mapping(path)["hydra"]
        return [
            (
                path,
                _launch_of(
                    [str(line) for line in recorded["overrides"]["task"]],
                    [str(line) for line in recorded["overrides"]["hydra"]],
                    Path(recorded["runtime"]["cwd"]),
                ),
            )
        ]
    except (KeyError, TypeError) as error:
        raise RunFileError(
            f"{path} is not Hydra's record of a sweep: it lacks hydra.overrides or hydra.runtime"
        ) from error


def _read_record(path: Path) -> Launch:
    record = read_yaml_mapping(path)
    task, hydra_lines, cwd = record.get("task"), record.get("hydra"), record.get("cwd")
    if not (isinstance(task, list) and isinstance(hydra_lines, list) and isinstance(cwd, str)):
        raise RunFileError(f"{path} is not a td3x launch record: it needs the lists task and hydra and a cwd")
    return _launch_of([str(line) for line in task], [str(line) for line in hydra_lines], Path(cwd))


def cwd_problem(record: Path, launch: Launch) -> str | None:
    """One line when the dir a launch ran from is gone (or not a dir one can enter), naming the record that says
    so and the key to change: a relaunch runs there, where the launch's relative paths resolve; None when it can."""
    if launch.cwd.is_dir() and os.access(launch.cwd, os.X_OK):
        return None
    what = "is not a dir you can enter" if launch.cwd.exists() else "does not exist"
    key = "hydra.runtime.cwd" if record.name == SWEEP_FILE else "cwd"
    return (
        f"{record}: the launch ran from {launch.cwd}, which {what}; a relaunch runs where its launch ran: restore "
        f"that dir, or set {key} in {record.name} to the dir to relaunch from"
    )


def sweep_dir_override(sweep_dir: Path) -> str:
    """``hydra.sweep.dir=<sweep_dir>``, quoted for Hydra's override parser (a comma would make it a sweep)."""
    return f"{SWEEP_DIR_KEY}={hydra_quoted(str(sweep_dir.resolve()))}"
