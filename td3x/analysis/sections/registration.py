"""The registered comparisons' section: a registration file's comparisons judged on the runs (``td3x-report
--registration``), first in report.md, in ``registration.csv`` and ``registration_sides.csv``."""

from __future__ import annotations

from td3x.analysis.comparisons import render
from td3x.analysis.render.tables import Notes
from td3x.analysis.sections.section import Frames, Report, Section


class RegistrationSection(Section):
    """The verdicts of the report's registration file (nothing without one)."""

    def frames(self, report: Report) -> Frames:
        """``registration`` and ``registration_sides``."""
        if report.verdicts is None:
            return {}
        return {
            "registration": render.verdicts_frame(report.verdicts),
            "registration_sides": render.sides_records(report.verdicts),
        }

    def markdown(self, report: Report, frames: Frames, notes: Notes) -> str:
        return "" if report.verdicts is None else render.verdicts_markdown(report.verdicts)
