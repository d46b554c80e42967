"""The compute section: what a cell's runs cost: processes, seeds per process, threads,
wall time, core-hours and env steps per core-second, with the CPU and the code commit they ran on, from each run's
``summary.json``, ``config.yaml`` and ``provenance.json``.

A process is a run dir, or, in the K-seeds mode (``run.num_seeds`` > 1), the dir above its ``seed_<k>`` run dirs:
its seeds share its clocks. A sweep is paid in core-hours: a process's CPU time where its runs count it
(``cpu_time_s``, which other work on the machine does not stretch), else its wall time times its threads.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from td3x.analysis.reading.cells import Cell, Grid
from td3x.analysis.reading.runs import IN_TURN, NOT_RECORDED, Run, distinct
from td3x.analysis.render import tables
from td3x.analysis.render.tables import Notes
from td3x.analysis.sections.section import Frames, Report, Section
from td3x.rundir.layout import process_dir

MIXED = "MIXED:"  # a cell whose runs ran on different CPU capabilities or run.numerics modes


@dataclass(frozen=True)
class Process:
    """One training process of a cell: its seeds' runs share its wall clock and threads."""

    runs: tuple[Run, ...]

    @property
    def wall_time_s(self) -> float:
        return max(float((run.summary or {}).get("wall_time_s") or 0.0) for run in self.runs)

    @property
    def cpu_time_s(self) -> float | None:
        """The process's CPU time (each of its runs records it whole); None where a run does not count it."""
        recorded = [(run.summary or {}).get("cpu_time_s") for run in self.runs]
        counted = [float(value) for value in recorded if isinstance(value, (int, float))]
        return max(counted) if len(counted) == len(recorded) else None

    @property
    def core_seconds(self) -> float:
        """What the process cost: its CPU time, else its wall time times its threads."""
        return self.wall_time_s * self.threads if self.cpu_time_s is None else self.cpu_time_s

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


def cpu_text(runs: tuple[Run, ...]) -> str:
    """The CPUs the runs' ``provenance.json`` name, with their core counts where recorded, each once."""
    recorded = ((run.recorded("cpu"), run.recorded("cpu_count")) for run in runs)
    return ", ".join(distinct(f"{cpu} ({cores} cores)" if cpu and cores else cpu for cpu, cores in recorded))


def capability_text(runs: tuple[Run, ...]) -> str:
    """The fp32 kernels the runs recorded (:attr:`Run.kernels`); ``MIXED`` marks a cell whose runs came from
    different capabilities or numerics modes, or a run resumed on others (their numbers are not bit-comparable)."""
    found = distinct(run.kernels for run in runs)
    recorded = [value for value in found if value != NOT_RECORDED]
    mixed = len(recorded) > 1 or any(IN_TURN in value for value in recorded)
    return f"{MIXED} {', '.join(found)}" if mixed else ", ".join(found)


def compute_frame(grid: Grid) -> pd.DataFrame:
    """One line per cell with complete runs: what its runs cost and where they ran."""
    records = []
    for cell in (grid.cell(row, env_id) for row in grid.rows for env_id in grid.envs):  # the tables' order
        if cell is None or not cell.runs:
            continue
        procs = processes(cell)
        core_seconds = sum(p.core_seconds for p in procs)
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
                "CPU": cpu_text(cell.runs),
                "CPU capability": capability_text(cell.runs),
                "code": ", ".join(distinct(run.commit for run in cell.runs)),
            }
        )
    return pd.DataFrame(records).set_index("row") if records else pd.DataFrame()


class ComputeSection(Section):
    """What each cell's complete runs cost, and where they ran."""

    def frames(self, report: Report) -> Frames:
        """``compute`` (none when no cell has a complete run)."""
        frame = compute_frame(report.grid)
        return {} if frame.empty else {"compute": frame}

    def markdown(self, report: Report, frames: Frames, notes: Notes) -> str:
        if "compute" not in frames:
            return ""
        counted = any(p.cpu_time_s is not None for cell in report.grid.cells.values() for p in processes(cell))
        core_hours = "CPU time where the runs count it, else wall time × threads" if counted else "wall time × threads"
        return (
            "## Compute\n\nWhat each cell's complete runs cost, from their `summary.json`, `config.yaml` and "
            "`provenance.json`: the processes that trained them (in the K-seeds mode one process trains several "
            f"seeds), the median wall time of a process, core-hours ({core_hours}, summed over processes) and "
            "env steps per core-second; the CPU, its capability (the fp32 kernels torch dispatched to: `AVX512`, "
            "`AVX2`, ...) and the code commit they ran on. Wall times depend on what else the machine ran. The same "
            "seed gives the same numbers bit for bit on the same CPU capability, not across capabilities: a cell "
            "marked `MIXED:` holds runs from different ones."
            f"\n\n{tables.markdown(frames['compute'])}"
        )
