"""The code a run records (td3x.host.provenance.git_state) in a real git checkout: ``git_dirty`` says whether a tracked
file changed; the untracked files are listed apart, bounded, without the folders td3x wrote (a report written into
the checkout, run dirs outside ``outputs/``), which are outputs and not a change to the code."""

from __future__ import annotations

import datetime
import shutil
import subprocess
from pathlib import Path

import pytest

from td3x.host.provenance import UNTRACKED_NAMED, collect_provenance, git_state
from td3x.rundir.outputs import is_output_dir

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "docs" / "results" / "report"  # a report as td3x-report wrote it
RUNS = ROOT / "docs" / "results" / "runs" / "reference_bias" / "walker2d" / "ahe"  # run dirs as td3x.train wrote them


def git(checkout: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=checkout, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout with one committed file."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    git(checkout, "init", "--quiet")
    (checkout / "code.py").write_text("x = 1\n")
    git(checkout, "add", "code.py")
    git(checkout, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "code")
    return checkout


def test_td3x_s_outputs_in_the_checkout_leave_it_clean_and_the_user_s_files_are_listed_apart(checkout: Path) -> None:
    shutil.copytree(REPORT, checkout / "report")  # the README's `td3x-report ... --out report/`
    shutil.copytree(RUNS, checkout / "runs")  # single runs and a K-seeds process's seed dirs
    (checkout / "sweep" / "launches").mkdir(parents=True)
    (checkout / "sweep" / "multirun.yaml").write_text("hydra: {}\n")  # Hydra's record of a sweep
    (checkout / "sweep" / "launches" / "0.yaml").write_text("overrides: []\n")
    (checkout / "job" / ".hydra").mkdir(parents=True)  # a td3x-train job that has written nothing else yet
    (checkout / "job" / "train.log").write_text("")
    (checkout / "notes.txt").write_text("mine\n")
    (checkout / "scratch" / "report").mkdir(parents=True)  # a folder holding a td3x report and a file of the user's
    shutil.copy(REPORT / "report.md", checkout / "scratch" / "report" / "report.md")
    (checkout / "scratch" / "todo.md").write_text("mine\n")
    (checkout / "other").mkdir()
    (checkout / "other" / "report.md").write_text("# another tool's report\n")  # not td3x's

    state = git_state(checkout, is_output_dir)

    assert state == {
        "git_commit": git(checkout, "rev-parse", "HEAD"),
        "git_dirty": False,
        "git_untracked": ["notes.txt", "other/report.md", "scratch/todo.md"],
        "git_untracked_count": 3,
    }
    (checkout / "code.py").write_text("x = 2\n")  # a change to the code
    assert git_state(checkout / "report", is_output_dir)["git_dirty"] is True  # from a folder below the root too


def test_a_staged_rename_is_a_change_and_the_untracked_files_named_are_bounded(checkout: Path) -> None:
    git(checkout, "mv", "code.py", "renamed.py")
    for number in range(UNTRACKED_NAMED + 5):
        (checkout / f"file {number:02d}.txt").write_text("")  # a space: git quotes nothing with -z

    state = git_state(checkout, is_output_dir)

    assert state["git_dirty"] is True
    assert state["git_untracked"] == [f"file {number:02d}.txt" for number in range(UNTRACKED_NAMED)]
    assert state["git_untracked_count"] == UNTRACKED_NAMED + 5


def test_outside_a_checkout_the_code_is_not_recorded(tmp_path: Path) -> None:
    assert git_state(tmp_path, is_output_dir) == dict.fromkeys(
        ("git_commit", "git_dirty", "git_untracked", "git_untracked_count")
    )


def test_a_sitting_records_when_it_began_in_utc() -> None:
    """Each sitting's provenance says when it started, so a run can be placed after the registration it is judged
    by (a resumed run keeps each earlier sitting's record, with its own start)."""
    before = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    started = datetime.datetime.fromisoformat(collect_provenance("cpu", is_output_dir)["started_at"])
    assert started.tzinfo is not None and started.utcoffset() == datetime.timedelta(0)
    assert before <= started <= datetime.datetime.now(datetime.UTC)
