"""The compute section, its table and Markdown: what a cell's runs cost: processes, seeds per process, threads,
wall time, core-hours and env steps per core-second, with the CPU and the code commit they ran on, from each run's
``summary.json``, ``config.yaml`` and ``provenance.json``.

A process is a run dir, or, in the K-seeds mode (``run.num_seeds`` > 1), the dir above its ``seed_<k>`` run dirs:
its seeds share one wall clock. A sweep is paid in core-hours: a process's wall time times its threads.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from td3x.analysis import tables
from td3x.analysis.cells import Cell, Grid
from td3x.analysis.runs import Run
from td3x.rundir.layout import process_dir

UNKNOWN = "?"
MIXED = "MIXED:"  # a cell whose runs ran on different CPU capabilities or run.numerics modes


@dataclass(frozen=True)
class Process:
    """One training process of a cell: its seeds' runs share its wall clock and threads."""

    runs: tuple[Run, ...]

    @property
    def wall_time_s(self) -> float:
        return max(float((run.summary or {}).get("wall_time_s") or 0.0) for run in self.runs)

    @property
    def threads(self) -> int:
        return int(self.runs[0].config["run"].get("num_threads", 1))

    @property
    def env_steps(self) -> int:
        return sum(int((run.summary or {}).get("steps") or 0) for run in self.runs)


def processes(cell: Cell) -> list[Process]:
    """A cell's complete runs grouped by the process that trained them, in path order."""
    by_dir: dict[Path, list[Run]] = {}
    for run in cell.runs:
        by_dir.setdefault(process_dir(run.path, int(run.config["run"].get("num_seeds", 1))), []).append(run)
    return [Process(tuple(runs)) for _, runs in sorted(by_dir.items())]


def duration(seconds: float) -> str:
    """``1h47m`` or ``12m`` (whole minutes; a wall time is not measured more finely than that)."""
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m"


def provenance_text(runs: tuple[Run, ...]) -> tuple[str, str]:
    """The CPUs (with their core counts) and the short code commits the runs' ``provenance.json`` name, each
    distinct value once (``?`` for a run without the file; ``+dirty`` for uncommitted changes)."""
    cpus, commits = set(), set()
    for run in runs:
        provenance = run.provenance or {}
        cpu = provenance.get("cpu")
        cpus.add(f"{cpu} ({provenance.get('cpu_count', UNKNOWN)} cores)" if cpu else UNKNOWN)
        commit = str(provenance.get("git_commit") or UNKNOWN)[:7]
        commits.add(commit + ("+dirty" if provenance.get("git_dirty") else ""))
    return ", ".join(sorted(cpus)), ", ".join(sorted(commits))


def kernels(run: Run) -> str | None:
    """The fp32 kernels a run recorded: ``portable`` (``run.numerics``: meant to give the same bits on any x86-64
    CPU), else the CPU capability torch ran (``AVX512``, ``AVX2``, ...); None when its provenance has neither."""
    provenance = run.provenance or {}
    if (provenance.get("numerics") or {}).get("mode") == "portable":
        return "portable"
    capability = provenance.get("cpu_capability")
    return str(capability) if capability else None


def capability_text(runs: tuple[Run, ...]) -> str:
    """The fp32 kernels the runs recorded (:func:`kernels`); ``MIXED`` marks a cell whose runs came from different
    capabilities or numerics modes (their numbers are not bit-comparable); ``not recorded`` for runs of a td3x that
    did not record it."""
    recorded = {found for run in runs if (found := kernels(run))}
    unrecorded = any(kernels(run) is None for run in runs)
    text = ", ".join([*sorted(recorded), *(["not recorded"] if unrecorded else [])])
    return f"{MIXED} {text}" if len(recorded) > 1 else text


def compute_frame(grid: Grid) -> pd.DataFrame:
    """One line per cell with complete runs: what its runs cost and where they ran."""
    records = []
    for cell in (grid.cell(row, env_id) for row in grid.rows for env_id in grid.envs):  # the tables' order
        if cell is None or not cell.runs:
            continue
        procs = processes(cell)
        core_seconds = sum(p.wall_time_s * p.threads for p in procs)
        cpus, commits = provenance_text(cell.runs)
        records.append(
            {
                "row": cell.row,
                "env": cell.env_id,
                "seeds": len(cell.runs),
                "processes": len(procs),
                "seeds per process": "/".join(sorted({str(len(p.runs)) for p in procs})),
                "threads": "/".join(sorted({str(p.threads) for p in procs})),
                "wall time per process": duration(statistics.median(p.wall_time_s for p in procs)),
                "core-hours": round(core_seconds / 3600, 2),
                "env steps per core-second": round(sum(p.env_steps for p in procs) / core_seconds, 1)
                if core_seconds
                else float("nan"),
                "CPU": cpus,
                "CPU capability": capability_text(cell.runs),
                "code": commits,
            }
        )
    return pd.DataFrame(records).set_index("row") if records else pd.DataFrame()


def frames(grid: Grid) -> dict[str, pd.DataFrame]:
    """The section's table by name, ``compute`` (none when no cell has a complete run)."""
    frame = compute_frame(grid)
    return {} if frame.empty else {"compute": frame}


def markdown(frames: dict[str, pd.DataFrame]) -> str:
    """The report's compute section around the table from :func:`frames` ('' without one)."""
    if "compute" not in frames:
        return ""
    return (
        "## Compute\n\nWhat each cell's complete runs cost, from their `summary.json`, `config.yaml` and "
        "`provenance.json`: the processes that trained them (in the K-seeds mode one process trains several seeds), "
        "the median wall time of a process, core-hours (wall time × threads, summed over processes) and env steps "
        "per core-second; the CPU, its capability (the fp32 kernels torch dispatched to: `AVX512`, `AVX2`, ...) and "
        "the code commit they ran on. Wall times depend on what else the machine ran. The same seed gives the same "
        "numbers bit for bit on the same CPU capability, not across capabilities: a cell marked `MIXED:` holds runs "
        "from different ones."
        f"\n\n{tables.markdown(frames['compute'])}"
    )
