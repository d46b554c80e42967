"""What every section of the report shares: the report itself (``Report``: its settings, the runs found, their
cells and each cell's numbers, and the sections built from them) and the one interface a section implements
(``Section``), which ``report.py`` loops over.

A section is built once, from the report's cells and the sections built before it (``Section.build``); it then
gives its tables (``frames``), its part of report.md (``markdown``) and its figures, one env at a time
(``plot_env``) and across envs (``plot``). Each method has a default that gives nothing, so a section defines what
it has. Adding a section is its module and its line in ``report.SECTIONS``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Self, TypeVar

import pandas as pd

from td3x.analysis.comparisons.judge import Verdicts
from td3x.analysis.reading.cell_stats import CellStats
from td3x.analysis.reading.cells import Grid
from td3x.analysis.reading.runs import Run
from td3x.analysis.render.plots import Figures
from td3x.analysis.render.tables import Notes
from td3x.analysis.stats.equivalence import BoundRule

Frames = dict[str, pd.DataFrame]


@dataclass(frozen=True)
class Settings:
    """How the report computes its statistics.

    Attributes:
        reps: bootstrap replications per CI (rliable's default is 50000; 2000 gives CI bounds stable to about 1%);
            used by means over 10 or more seeds (fewer get Student-t intervals) and by the aggregates.
        seed: seeds every bootstrap, so the same runs give the same report.
        at_step: the env step of the "return at" table (None: the shortest run's ``run.total_steps``, a horizon
            every run reaches).
        bounds: where the fidelity and peer tables' equivalence bounds come from (the default rule, or the peer
            bounds td3x-report is given).
        coverage: a coverage table of scripts/aggregate_coverage.py, which the aggregates section quotes (None:
            it says the coverage is not measured).
        registration: a registration file (docs: Registered comparisons), its comparisons judged on the runs
            (None: nothing is judged).
        peer: the row every TD3 row is compared with as another implementation of TD3 (the peer section; None:
            no peer section).
    """

    reps: int = 2000
    seed: int = 0
    at_step: int | None = None
    bounds: BoundRule = field(default_factory=BoundRule)
    coverage: Path | None = None
    registration: Path | None = None
    peer: str | None = None


SectionT = TypeVar("SectionT", bound="Section")


@dataclass(frozen=True, eq=False)
class Report:
    """Everything the report shows, computed once."""

    sources: list[Path]  # the paths the runs were found under
    runs: list[Run]  # every run found, complete or not
    grid: Grid  # the runs grouped into cells
    stats: dict[tuple[str, str], CellStats]  # each cell's numbers, in display order (rows, then envs)
    settings: Settings
    at_step: int  # the "return at" table's env step: settings.at_step, or the shortest run's total steps
    coverage: pd.DataFrame | None = None  # the aggregates' measured coverage (reading.input_files.read_coverage)
    verdicts: Verdicts | None = None  # a registration file's comparisons judged (comparisons.judge)
    sections: tuple[Section, ...] = ()  # the sections built, in the report's order

    def section(self, kind: type[SectionT]) -> SectionT:
        """The report's section of this kind."""
        return next(section for section in self.sections if isinstance(section, kind))

    def env_cells(self, env_id: str) -> list[CellStats]:
        """The numbers of one env's cells, in display order."""
        return [self.stats[(row, env_id)] for row in self.grid.rows if (row, env_id) in self.stats]


class Section:
    """One section of the report (see the module doc); each method's default gives nothing.

    Attributes:
        LATEX_CAPTIONS: per table of the section to write as LaTeX too (booktabs), its caption.
    """

    LATEX_CAPTIONS: ClassVar[dict[str, str]] = {}

    @classmethod
    def build(cls, report: Report) -> Self:
        """The section's numbers, from the report's cells and the sections built before it (a section without
        numbers of its own reads the report's when it shows them)."""
        return cls()

    def frames(self, report: Report) -> Frames:
        """The section's tables by name (their files' names): display tables (text) and tidy ones (numbers)."""
        return {}

    def markdown(self, report: Report, frames: Frames, notes: Notes) -> str:
        """The section's part of report.md ('' for none), from the report's tables (``frames``), with the notes the
        report has not given yet (``notes``)."""
        return ""

    def plot_env(self, report: Report, env_id: str, figures: Figures) -> None:
        """Draw the section's figures of one env (each env's figures of every section, then the next env's)."""

    def plot(self, report: Report, figures: Figures) -> None:
        """Draw the section's figures across envs (after every env's)."""
