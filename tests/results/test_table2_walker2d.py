"""Table 2's Walker2d column (docs/results/table2_walker2d): registered before any of its runs, its plan what
``td3x-report --plan`` makes of the file, every committed run from code that descends from the registration, and
the page and the README saying how many of the registered runs are complete, with no number of an incomplete
comparison anywhere."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest

from td3x.analysis.comparisons.judge import Verdicts, judge
from td3x.analysis.comparisons.schema import read_registration
from td3x.analysis.reading.runs import find_runs

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "docs/results/table2_walker2d"
REGISTRATION = STUDY / "registration.yaml"
RUNS = STUDY / "runs"
HORIZON_VERDICT = ROOT / "docs/results/horizon/report/registration.csv"
pytestmark = pytest.mark.results  # every test here checks docs/results (pyproject.toml's markers)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30).stdout.strip()


def descends(commit: str, ancestor: str) -> bool:
    """Whether ``commit`` is ``ancestor`` or has it in its history."""
    done = subprocess.run(["git", "merge-base", "--is-ancestor", ancestor, commit], cwd=ROOT, timeout=30)
    return done.returncode == 0


def verdicts() -> Verdicts:
    return judge(read_registration(REGISTRATION), find_runs([RUNS]) if RUNS.exists() else [])


def test_the_committed_plan_is_what_td3x_report_makes_of_the_registration(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "td3x.commands.report", "--plan", str(REGISTRATION.relative_to(ROOT)), "--out",
               str(tmp_path)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for name in ("plan.md", "plan.csv"):
        assert (tmp_path / name).read_text() == (STUDY / "plan" / name).read_text(), name


def test_the_registration_came_before_every_run_and_every_run_descends_from_it() -> None:
    if git("rev-parse", "--is-shallow-repository") != "false":
        pytest.skip("needs the repository's full git history")
    added = git("log", "--diff-filter=A", "--format=%H", "--", str(REGISTRATION.relative_to(ROOT))).split()[-1]
    assert descends(added, added) and not descends(f"{added}~1", added)  # the check can reject
    runs_added = git("log", "--diff-filter=A", "--format=%H", "--", str(RUNS.relative_to(ROOT))).split()
    assert all(descends(commit, added) and commit != added for commit in runs_added)
    for run in find_runs([RUNS]) if RUNS.exists() else []:
        for sitting in run.sittings:
            commit = str(sitting.get("git_commit"))
            assert descends(commit, added), f"{run.path}: {commit} does not descend from {added}"


def test_the_page_and_the_readme_count_the_complete_registered_runs() -> None:
    judged = verdicts()
    count = f"{judged.runs_complete} of {judged.runs_registered} registered runs complete"
    assert judged.runs_registered == 55
    assert count in (STUDY / "index.md").read_text()
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"{judged.runs_complete} of {judged.runs_registered} runs complete" in readme


def test_the_readme_quotes_the_horizon_verdict_as_its_report_gives_it() -> None:
    row = next(row for row in csv.DictReader(HORIZON_VERDICT.open()) if row["test"] == "equivalence")
    readme = " ".join((ROOT / "README.md").read_text().split())
    verdict = row["verdict"].replace("equivalent", "equivalent to the authors'")
    assert f"TD3 on HalfCheetah-v5: {verdict}, TOST p {float(row['p']):.3f}" in readme


def test_no_number_of_an_incomplete_comparison_is_published() -> None:
    """While a comparison waits for runs, the page quotes only the registered design (the file and its plan), and no
    report is committed."""
    judged = verdicts()
    if all(row.judgement is not None for row in judged.rows):
        pytest.skip("every comparison is complete: the page quotes its report")
    assert not (STUDY / "report").exists()
    design = (STUDY / "plan" / "plan.md").read_text() + REGISTRATION.read_text()
    page = (STUDY / "index.md").read_text()
    for number in re.findall(r"\d+\.\d+", page):
        assert number in design, f"the page quotes {number}, which the registered design does not give"
