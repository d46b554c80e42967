"""A run dir's layout: its files' names, the ``seed_<k>`` dirs of a K-seeds process, finding run dirs and their configs,
atomic JSON writes, and what ``summary.json`` holds (:class:`RunSummary`).

A run dir holds ``config.yaml`` (the resolved config, with the group ``choices``), ``eval.csv``,
``metrics.jsonl``, ``summary.json``, ``provenance.json``, ``checkpoint.pt``, ``train.log`` (Hydra's log of
td3x-train, appended to by td3x-resume) and ``wandb/``. A K-seeds process (``run.num_seeds`` > 1) writes one such
run dir per seed, ``seed_<seed>``, below its own dir, which holds the process's ``checkpoint.pt``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import yaml

from td3x.algo import seed_statistics

CONFIG_FILE = "config.yaml"
EVAL_FILE = "eval.csv"
METRICS_FILE = "metrics.jsonl"
SUMMARY_FILE = "summary.json"
PROVENANCE_FILE = "provenance.json"
CHECKPOINT_FILE = "checkpoint.pt"
RUN_LOG = "train.log"  # the name Hydra gives td3x-train's log in the run dir: a resumed run appends to it
WANDB_DIR = "wandb"  # the offline W&B run's files
SWEEP_FILE = "multirun.yaml"  # Hydra's record of a launched sweep, in the sweep dir above its run dirs
SEED_DIR_PREFIX = "seed_"
HYDRA_DIR = ".hydra"  # Hydra's unresolved copy of a job's config.yaml
# these hold config.yaml files that are not a run's own: W&B's run files and Hydra's unresolved copy
SKIPPED_DIRS = frozenset({WANDB_DIR, HYDRA_DIR})
RUN_FILES = (EVAL_FILE, SUMMARY_FILE)  # beside a config.yaml that is not a run's, they say a run's was broken


# ---------------------------------------------------------------------- the seeds of a process
def seed_dir_name(seed: int) -> str:
    """The dir of seed ``seed`` of a K-seeds process: ``seed_<seed>``."""
    return f"{SEED_DIR_PREFIX}{seed}"


def seed_range(seed: int, num_seeds: int) -> range:
    """The seeds one process trains: ``seed .. seed + K - 1`` for ``seed`` and ``run.num_seeds`` K."""
    return range(seed, seed + num_seeds)


def seed_run_dirs(run_dir: Path, seed: int, num_seeds: int) -> list[Path]:
    """Where each seed of a process writes: a plain run in ``run_dir``, K seeds each in ``run_dir/seed_<seed>``."""
    if num_seeds == 1:
        return [run_dir]
    return [run_dir / seed_dir_name(each) for each in seed_range(seed, num_seeds)]


def process_dir(run_dir: Path, num_seeds: int) -> Path:
    """The dir of the process that trained the run in ``run_dir``: itself, or, in the K-seeds mode, the dir above
    its ``seed_<k>`` dir (the seeds share its checkpoint and wall clock)."""
    return run_dir.parent if num_seeds > 1 else run_dir


def unwritable_dir_problem(path: Path, named: str) -> str | None:
    """One line when the dir ``path`` cannot be made or written here: the nearest part of it that exists is not a
    dir, or not writable (a read-only disk counts, for root too); None when it can. ``named``: how the line names
    it (``hydra.run.dir=outputs/x``, ``the study dir outputs/s``)."""
    existing = next((part for part in (path, *path.parents) if part.exists()), None)
    if existing is not None and not existing.is_dir():
        return f"{named} cannot be made: {existing} is a file, not a directory"
    if existing is not None and not _can_make_dir_in(existing):
        below = "" if existing == path else f" ({existing}, where it would be made)"
        return f"{named} is not writable here{below}: choose a dir you can write"
    return None


def _can_make_dir_in(existing: Path) -> bool:
    """Whether a dir can be made in ``existing``, tried: permissions alone miss what root cannot write either
    (``/proc``, a full disk). The dir tried is removed at once."""
    if not os.access(existing, os.W_OK | os.X_OK):
        return False
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".td3x-write-check-", dir=existing))
    except OSError:
        return False
    return True


def run_configs(path: Path) -> list[Path]:
    """The ``config.yaml`` of a run dir, or those of a K-seeds process dir's seeds in seed order; [] for neither."""
    if (path / CONFIG_FILE).is_file():
        return [path / CONFIG_FILE]
    return sorted(
        path.glob(f"{SEED_DIR_PREFIX}[0-9]*/{CONFIG_FILE}"),
        key=lambda config: int(config.parent.name[len(SEED_DIR_PREFIX) :]),
    )


def is_run_config(config: Any) -> TypeGuard[dict[str, Any]]:
    """Whether a parsed config.yaml is a td3x run's (it names an env, a seed and a Table 2 row)."""
    return (
        isinstance(config, dict)
        and isinstance(config.get("env"), dict)
        and "id" in config["env"]
        and "seed" in config
        and "paper_row" in config
    )


def walk_runs(root: Path, warn: Callable[[str], None]) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every run dir at or below ``root`` (a dir holding a td3x run's ``config.yaml``) with its parsed config, in
    walk order (sorted names, depth first), never below a run dir or in :data:`SKIPPED_DIRS`. ``warn`` gets one
    line for a ``config.yaml`` that is unreadable or not a run's while run files lie beside it (a broken run is
    never skipped in silence)."""
    for dirpath, dirnames, filenames in os.walk(root):
        config = _run_config(Path(dirpath) / CONFIG_FILE, filenames, warn) if CONFIG_FILE in filenames else None
        if is_run_config(config):
            yield Path(dirpath), config
            dirnames.clear()  # a run dir holds no other runs
        else:
            dirnames[:] = sorted(name for name in dirnames if name not in SKIPPED_DIRS)


def _run_config(path: Path, filenames: list[str], warn: Callable[[str], None]) -> Any:
    """A config.yaml's content, or None when it is not readable."""
    try:
        config = read_yaml_mapping(path)
    except RunFileError as error:
        if any(name in filenames for name in RUN_FILES):
            warn(f"{error}; the run dir is skipped")
        return None
    if not is_run_config(config) and any(name in filenames for name in RUN_FILES):
        warn(f"{path} is not a td3x run's config (no env.id, seed or paper_row); the run dir is skipped")
    return config


# ---------------------------------------------------------------------- files
def is_timing_column(name: str) -> bool:
    """Whether an ``eval.csv`` or ``metrics.jsonl`` column measures time (``*time*``, ``sps``): the columns that
    never repeat, left out when two runs are compared bit for bit."""
    return "time" in name or "sps" in name


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write then rename, so a reader (or a kill) never sees a half-written file."""
    write_text_atomic(path, json.dumps(data, indent=2, default=str) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """``path`` whole or as it was: written beside it, then renamed over it, so a reader (or a kill) never sees a
    half-written file."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    finally:  # a failed write or rename (a full disk, a folder at path) leaves no temporary file behind
        tmp.unlink(missing_ok=True)


def truncate_after(run_dirs: Sequence[Path], step: int, evaluation_due: bool = False) -> None:
    """Drop the rows of each run dir's ``eval.csv`` and ``metrics.jsonl`` logged after env step ``step`` (a resumed
    run writes them again, identically), each file rewritten atomically. With ``evaluation_due`` (the checkpoint
    records the evaluation at ``step`` as not made: a stop cut it short) eval.csv's row at ``step`` goes too: the
    resumed run makes that evaluation first, and an earlier resume from the same checkpoint may have written it.
    A last line with no line end is a row cut mid-write (a crash, a full disk): td3x ends every row with one, and
    the row was being written after the checkpoint, so it goes too.

    Raises:
        RunFileError: a row that is not one td3x writes, before any file is changed.
    """
    eval_until = step - 1 if evaluation_due else step
    kept = {}
    for run_dir in run_dirs:
        files = ((EVAL_FILE, 1, _csv_step, eval_until), (METRICS_FILE, 0, _jsonl_step, step))  # 1: eval.csv's header
        for name, header, step_of, until in files:
            path = run_dir / name
            if path.exists():
                kept[path] = _rows_until(path, header, step_of, until)
    for path, text in kept.items():
        write_text_atomic(path, text)


def _rows_until(path: Path, header: int, step_of: Callable[[str], int], step: int) -> str:
    """``path``'s text without the rows after env step ``step`` and a cut last line; its first ``header`` lines
    (a CSV's header) stay."""
    try:
        lines = path.read_text().splitlines(keepends=True)
    except (OSError, UnicodeDecodeError) as error:
        raise _unreadable(path, error) from error
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines.pop()
    kept = lines[:header]
    for number, line in enumerate(lines[header:], start=header + 1):
        try:
            row_step = step_of(line)
        except (ValueError, KeyError, TypeError) as error:  # JSON's errors are ValueErrors
            raise RunFileError(f"{path} line {number} is not a row td3x writes: {line[:60]!r}") from error
        if row_step <= step:
            kept.append(line)
    return "".join(kept)


def _csv_step(line: str) -> int:
    return int(line.split(",", 1)[0])


def _jsonl_step(line: str) -> int:
    return int(json.loads(line)["step"])


# ---------------------------------------------------------------------- reading a run's files
class RunFileError(ValueError):
    """A run-dir file that td3x cannot read (corrupt, truncated, not what td3x writes): the message is one line
    naming the file and what is wrong."""


def _unreadable(path: Path, error: OSError | UnicodeDecodeError) -> RunFileError:
    reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return RunFileError(f"{path} cannot be read: {reason}")


def read_yaml_mapping(path: Path) -> dict[str, Any]:
    """A YAML file that must hold a mapping (``config.yaml``, ``multirun.yaml``).

    Raises:
        RunFileError: unreadable, not YAML, or not a mapping.
    """
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError) as error:
        raise _unreadable(path, error) from error
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or type(error).__name__
        raise RunFileError(f"{path} is not valid YAML: {problem}{where}") from error
    if not isinstance(data, dict):
        raise RunFileError(f"{path} does not hold a mapping of keys (it holds {type(data).__name__})")
    return data


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The rows of a ``metrics.jsonl``; [] when there is none.

    Raises:
        RunFileError: unreadable, or a line that is no JSON object.
    """
    if not path.exists():
        return []
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise _unreadable(path, error) from error
    rows = []
    for number, line in enumerate(lines, start=1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise RunFileError(f"{path} line {number} is not valid JSON: {error.msg}") from error
        if not isinstance(row, dict):
            raise RunFileError(f"{path} line {number} does not hold a JSON object")
        rows.append(row)
    return rows


def read_json_mapping(path: Path) -> dict[str, Any]:
    """A JSON file that must hold an object (``summary.json``, ``provenance.json``).

    Raises:
        RunFileError: unreadable, not JSON, or not an object.
    """
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as error:
        raise _unreadable(path, error) from error
    except json.JSONDecodeError as error:
        raise RunFileError(
            f"{path} is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}"
        ) from error
    if not isinstance(data, dict):
        raise RunFileError(f"{path} does not hold a JSON object (it holds {type(data).__name__})")
    return data


def config_int(config: dict[str, Any], key: str, path: Path) -> int:
    """The integer at dotted ``key`` of a stored config read from ``path`` (RunFileError naming both if absent
    or not an integer)."""
    value: Any = config
    for name in key.split("."):
        value = value.get(name) if isinstance(value, dict) else None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RunFileError(f"{path} has {key}={value!r}, not an integer")
    return value


# ---------------------------------------------------------------------- summary.json
@dataclass(frozen=True)
class RunSummary:
    """One seed's ``summary.json`` (its keys in this order), and what ``td3x.train`` returns for it.

    Attributes:
        status: running | complete | failed.
        interrupted: the signal or exception that stopped a resumable run, else None.
        failure: why a failed run failed, else None.
        steps: env steps taken.
        final_return: the last evaluation's mean return (None before the first).
        last10_return: the mean of the last ten evaluations' mean returns (the paper's score).
        evaluations: evaluations so far.
        updates: critic updates so far.
        wall_time_s: seconds of training, every segment of a resumed run summed.
        cpu_time_s: CPU seconds of the training process's threads, every segment summed: the run's core-seconds
            (with K seeds in one process, each seed's summary holds the process's whole); None where a segment did
            not count them (a run resumed from an older td3x's checkpoint).
        run_dir: the seed's run dir, relative to the working dir the run was started from.
    """

    status: str
    interrupted: str | None
    failure: str | None
    steps: int
    final_return: float | None
    last10_return: float | None
    evaluations: int
    updates: int
    wall_time_s: float
    cpu_time_s: float | None
    run_dir: str

    @classmethod
    def of(
        cls,
        status: str,
        eval_returns: Sequence[float],
        steps: int,
        updates: int,
        wall_time_s: float,
        cpu_time_s: float | None,
        run_dir: Path,
        interrupted: str | None = None,
        failure: str | None = None,
    ) -> RunSummary:
        """The summary of a run whose evaluations' mean returns are ``eval_returns``."""
        return cls(
            status=status,
            interrupted=interrupted,
            failure=failure,
            steps=steps,
            final_return=eval_returns[-1] if eval_returns else None,
            last10_return=float(seed_statistics.last10_return(eval_returns)) if len(eval_returns) else None,
            evaluations=len(eval_returns),
            updates=updates,
            wall_time_s=wall_time_s,
            cpu_time_s=cpu_time_s,
            run_dir=os.path.relpath(run_dir),  # no absolute path: the file may be published
        )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
