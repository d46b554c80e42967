"""The folders td3x writes, recognised by what each holds: run dirs, Hydra's job and sweep dirs, ``td3x-report``'s
reports and ``td3x-tune``'s studies.

A run's provenance lists a checkout's untracked files (:mod:`td3x.host.provenance`) without these: a report written
into the checkout (``td3x-report ... --out report/``) or a run dir outside the git-ignored ``outputs/`` is what td3x
made, not a change to the code that trains.
"""

from __future__ import annotations

from pathlib import Path

from td3x.rundir.layout import CHECKPOINT_FILE, HYDRA_DIR, PROVENANCE_FILE, SWEEP_FILE

REPORT_FILE = "report.md"  # td3x-report's Markdown, in every report dir
REPORT_TITLE = "# td3x report"  # its first line: a report.md of another tool's is not td3x's
STUDY_FILE = "study.yaml"  # td3x-tune's settings, in every study dir

# files only td3x writes: a run dir's provenance and checkpoint (a K-seeds process dir, trained through td3x.train
# without Hydra, holds its checkpoint alone), Hydra's record of a sweep, a study's settings
MARKER_FILES = (PROVENANCE_FILE, CHECKPOINT_FILE, SWEEP_FILE, STUDY_FILE)


def is_output_dir(path: Path) -> bool:
    """Whether td3x wrote the folder ``path`` (everything below it is then td3x's too): it holds one of
    :data:`MARKER_FILES`, Hydra's ``.hydra`` record of a td3x-train job, or a td3x report."""
    return any((path / name).is_file() for name in MARKER_FILES) or (path / HYDRA_DIR).is_dir() or _is_report(path)


def _is_report(path: Path) -> bool:
    try:
        with (path / REPORT_FILE).open(encoding="utf-8", errors="replace") as file:
            return file.readline().rstrip("\n") == REPORT_TITLE
    except OSError:  # no report.md (or one that cannot be read: not td3x's to vouch for)
        return False
