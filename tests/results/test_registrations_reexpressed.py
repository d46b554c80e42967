"""td3x's own studies, re-expressed in the registration format any user writes (docs/results/*/registration.yaml):
judged on their committed runs, every verdict, p, interval and MDD is the one the published reports gave when they
were made from the studies' own code (the reports as committed at ``PUBLISHED``, read from git history)."""

from __future__ import annotations

import csv
import io
import math
import subprocess
from pathlib import Path

import pytest

from td3x.analysis.comparisons.judge import Judged, judge
from td3x.analysis.comparisons.schema import read_registration
from td3x.analysis.reading.runs import find_runs

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"
PUBLISHED = "11239ac"  # the last commit whose reports the studies' own code made
pytestmark = pytest.mark.results  # every test here checks docs/results (pyproject.toml's markers)


def published(path: str) -> list[dict[str, str]]:
    shown = subprocess.run(["git", "show", f"{PUBLISHED}:docs/results/{path}"], cwd=ROOT, capture_output=True,
                           text=True, timeout=30)
    if shown.returncode != 0:
        pytest.skip(f"needs the repository's git history ({PUBLISHED})")
    return list(csv.DictReader(io.StringIO(shown.stdout)))


def judged(study: str, *folders: str) -> dict[str, Judged]:
    registration = read_registration(RESULTS / study / "registration.yaml")
    runs = find_runs([RESULTS / folder for folder in (f"{study}/runs", *folders)])
    return {row.planned.comparison.name: row for row in judge(registration, runs).rows}


def same(value: float, text: str, digits: int | None = None) -> bool:
    expected = float(text) if text else math.nan
    if digits is not None:
        return round(value, digits) == expected
    return math.isclose(value, expected, rel_tol=1e-12, abs_tol=1e-15) or (math.isnan(value) and math.isnan(expected))


def check_two_sample(row: dict[str, str], tost: Judged, welch: Judged) -> None:
    """A legacy registered.csv row (TOST and the difference test beside it) against the two comparisons."""
    assert tost.judgement is not None and welch.judgement is not None
    assert tost.status == row["decision"] and welch.status == row["difference_decision"]
    assert same(tost.judgement.estimate, row["difference"]) and same(welch.judgement.estimate, row["difference"])
    assert same(tost.judgement.low, row["ci90_low"]) and same(tost.judgement.high, row["ci90_high"])
    assert same(welch.judgement.low, row["ci95_low"]) and same(welch.judgement.high, row["ci95_high"])
    assert same(tost.judgement.p, row["tost_p"]) and same(welch.judgement.p, row["difference_p"])
    tost_holm = tost.holm_p if math.isfinite(tost.holm_p) else tost.judgement.p
    welch_holm = welch.holm_p if math.isfinite(welch.holm_p) else welch.judgement.p
    assert same(tost_holm, row["holm_tost_p"]) and same(welch_holm, row["holm_difference_p"])
    assert same(welch.judgement.permutation_p, row["permutation_p"])
    assert same(welch.planned.power.detectable, row["mdd"], digits=2)  # the design's MDD, as registered


PEER = {
    ("peer", "HalfCheetah-v5"): "td3x against SB3 on HalfCheetah-v5",
    ("peer", "Walker2d-v5"): "td3x against SB3 on Walker2d-v5",
    ("bf16", "HalfCheetah-v5"): "bf16 against fp32 on HalfCheetah-v5",
    ("bf16", "Walker2d-v5"): "bf16 against fp32 on Walker2d-v5",
    ("bf16_fp32_tanh", "Walker2d-v5"): "bf16 with the actor's tanh in fp32 against fp32 on Walker2d-v5",
}


@pytest.mark.slow
def test_the_peer_and_bf16_comparisons_are_judged_as_published() -> None:
    found = judged("peer_registered")
    rows = published("peer_registered/report/registered.csv")
    assert sorted((row["section"], row["env"]) for row in rows) == sorted(PEER)
    for row in rows:
        name = PEER[(row["section"], row["env"])]
        check_two_sample(row, found[name], found[f"{name} (difference)"])


def test_the_paper_horizon_is_judged_as_published() -> None:
    found = judged("horizon")
    (row,) = published("horizon/report/registered.csv")
    name = "TD3 at 1M against the authors on HalfCheetah-v5"
    check_two_sample(row, found[name], found[f"{name} (difference)"])
    last = found["at the last step"].judgement
    assert last is not None and same(last.estimate, row["at_last_step_difference"])
    assert same(last.low, row["at_last_step_ci95_low"]) and same(last.high, row["at_last_step_ci95_high"])


@pytest.mark.slow
def test_the_registered_seed_study_is_judged_as_published() -> None:
    found = judged("seed_study_registered")
    rows = [row for row in published("seed_study_registered/report/seed_study_registered.csv")
            if row["condition"] != "all_vary"]
    for row in rows:
        suffix = "" if row["statistic"] == "window_mean" else " (return at 15000)"
        result = found[f"{row['condition']} against all_vary{suffix}"]
        assert result.judgement is not None
        assert same(result.judgement.estimate, row["ratio"]) and same(result.judgement.p, row["tost_p"])
        assert same(result.judgement.low, row["ratio_low_90"]) and same(result.judgement.high, row["ratio_high_90"])
        if row["status"] != "descriptive":  # the claims: Holm over the two sources, and the verdict
            assert same(result.holm_p, row["holm_p"]) and result.status == row["status"]


def test_the_stalled_actors_amendments_are_judged_as_published() -> None:
    found = judged("stalled_actors")
    names = {
        "stalled_actors": "stalled_actors: weights 3300 against the seed study's warmup",
        "stalled_actors_control": "stalled_actors_control: weights 3200 against weights 3300, one CPU",
    }
    for row in published("stalled_actors/report/stalled_registered.csv"):
        result = found[names[row["amendment"]]]
        assert result.judgement is not None
        assert same(result.judgement.p, row["fisher_p"]) and result.status == row["status"]
        first, second = result.values
        assert first.values is not None and second.values is not None
        assert (int(first.values.sum()), first.n) == (int(row["stalled"]), int(row["runs"]))
        assert (int(second.values.sum()), second.n) == (int(row["against_stalled"]), int(row["against_runs"]))
