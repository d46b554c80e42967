"""A user's registration end to end, with real parts: the docs page's registration file (TD3 against TD3 - CDQ on
Pendulum, three seeds stacked) planned with ``td3x-report --plan``, a real multirun of both rows, then
``td3x-report --registration`` judging it; beside the docs' comparisons, a known-equal case (one side's runs against
themselves, which equivalence must claim) and a known-different one (the runs against a number no Pendulum run
reaches, which it must not), and a side whose seeds never ran (incomplete, no number)."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.sweeps import SWEEP_JOB

ROOT = Path(__file__).resolve().parents[3]
STEPS = int(next(item for item in SWEEP_JOB if item.startswith("run.total_steps=")).split("=")[1])

pytestmark = pytest.mark.slow


def docs_registration() -> dict[str, object]:
    """The YAML block of docs/registration.md's walkthrough, its runs' length set to this test's tiny runs."""
    page = (ROOT / "docs/registration.md").read_text()
    block = re.search(r"```yaml\n(registration: 1\n.*?)```", page, re.DOTALL)
    assert block is not None, "docs/registration.md lost its walkthrough's registration file"
    data: dict[str, object] = yaml.safe_load(block.group(1))
    for side in data["sides"].values():  # type: ignore[attr-defined]
        side["runs"]["steps"] = STEPS
    return data


def td3x_report(*arguments: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "td3x.commands.report", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=ROOT)


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """The registration planned, its runs trained, the report's registration.csv by comparison."""
    tmp = tmp_path_factory.mktemp("registered")
    data = docs_registration()
    td3x = data["sides"]["TD3"]  # type: ignore[index]
    data["sides"].update({  # type: ignore[attr-defined]
        "TD3 again": {"runs": td3x["runs"]},
        "out of reach": {"published": {"mean": 5000.0, "source": "no Pendulum return reaches it (its maximum is 0)"}},
        "TD3 later seeds": {"runs": {**td3x["runs"], "seeds": "3-5"}},
    })
    data["comparisons"] += [  # type: ignore[operator]
        {"name": "known equal", "test": "equivalence", "statistic": "final", "sides": ["TD3", "TD3 again"],
         "bound": 2000},
        {"name": "known different", "test": "equivalence", "statistic": "final", "sides": ["TD3", "out of reach"],
         "bound": 100, "question": "Can a Pendulum return reach 5000?"},
        {"name": "never run", "test": "difference", "statistic": "final", "sides": ["TD3 later seeds", "TD3 - CDQ"]},
    ]
    registration = tmp / "cdq.yaml"
    registration.write_text(yaml.safe_dump(data, sort_keys=False))

    plan = td3x_report("--plan", str(registration), "--out", str(tmp / "plan"))
    assert plan.returncode == 0, plan.stderr
    rows = {row["comparison"]: row for row in csv.DictReader((tmp / "plan" / "plan.csv").open())}
    # the walkthrough's design: a difference of +200 at SD 60, three seeds a side
    assert rows["clipped double Q helps"]["power at"] == "a difference of +200.00"
    assert 0.8 < float(rows["clipped double Q helps"]["power"]) <= 1
    assert float(rows["clipped double Q helps"]["power at 2×SD"]) < float(rows["clipped double Q helps"]["power"])
    assert "## Plan: Does clipped double Q help on Pendulum?" in plan.stdout
    asked = "- known different: Can a Pendulum return reach 5000?\n"  # the file's own words, in plan and verdicts
    assert plan.stdout.endswith(f"### The questions the file asks\n\n{asked}")

    sweep = tmp / "sweep"
    train = subprocess.run(
        [sys.executable, "-m", "td3x.commands.train", "-m", "ablation=none,no_twin", "seed=0", "run.num_seeds=3",
         *SWEEP_JOB, "logging.wandb_mode=disabled", f"hydra.sweep.dir={sweep}"],
        capture_output=True, text=True, timeout=900, cwd=tmp,
    )
    assert train.returncode == 0, train.stderr[-2000:]
    report = td3x_report(str(sweep), "--registration", str(registration), "--out", str(tmp / "report"),
                         "--plotly", "none", "--reps", "200")
    assert report.returncode == 0, report.stderr[-2000:]
    markdown = (tmp / "report" / "report.md").read_text()
    sections = re.findall(r"^## .*$", markdown, re.MULTILINE)
    assert sections[0] == "## Registered comparisons: Does clipped double Q help on Pendulum?"
    assert f"The questions the file asks:\n\n{asked}" in markdown
    return {row["comparison"]: row for row in csv.DictReader((tmp / "report" / "registration.csv").open())}


def test_equivalence_claims_the_known_equal_case_and_not_the_known_different_one(judged: dict) -> None:
    assert float(judged["known equal"]["estimate"]) == 0.0
    assert judged["known equal"]["verdict"] == "equivalent within ±2000"
    assert judged["known different"]["verdict"] == "equivalence not shown"
    assert float(judged["known different"]["estimate"]) < -5000


def test_the_directional_claim_is_judged_and_the_descriptive_one_has_no_verdict(judged: dict) -> None:
    assert judged["clipped double Q helps"]["verdict"] in ("TD3 above TD3 - CDQ", "not shown")
    assert judged["clipped double Q helps"]["seeds"] == "3 / 3"
    assert float(judged["clipped double Q helps"]["power_registered"]) > 0.8
    assert 0 <= float(judged["clipped double Q helps"]["power_observed_sds"]) <= 1
    assert judged["the two rows end alike"]["verdict"] == "descriptive (no claim)"


def test_a_comparison_with_runs_missing_is_incomplete_and_shows_no_number(judged: dict) -> None:
    row = judged["never run"]
    assert row["verdict"] == "incomplete: 3 of 6 runs"
    named = ("comparison", "test", "role", "family", "verdict")
    assert all(not value for key, value in row.items() if key not in named)
