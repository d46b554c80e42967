"""td3x's analysis side: run dirs → the paper's tables, rliable statistics and plots. It reads run dirs and never
trains: it imports config/, algo/ (``seed_statistics``: the last-10 metric and the Student-t interval), host/ and
rundir/ (the layout, a run's files and state), never training/ or above. ``td3x-report`` is
:mod:`td3x.commands.report`.

Its own floors, each importing only the ones below it (tests/test_layers.py): ``stats`` (statistics on arrays),
``reading`` (runs, input files, the paper's numbers, cells), ``render`` (tables and plots), ``comparisons``
(registration files), ``sections`` (the report's sections, one interface each) and ``report`` (the report built and
written by looping over the sections).
"""

from td3x.analysis.report import build_report, write_report
from td3x.analysis.sections.section import Report, Settings

__all__ = ["Report", "Settings", "build_report", "write_report"]
