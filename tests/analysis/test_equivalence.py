"""TOST at a bound (td3x.analysis.stats.equivalence): by hand on x = 1, 2, 3 against itself shifted, where the bound
comes from (a bound given per env, or the default rule, post hoc), the MDDs against the pre-registration file's
post_hoc block, the sensitivity table without the warm-up evaluations against the audit's numbers, and td3x-report's
--peer-bound and --peer-bound-of."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from helpers.report_runs import write_run
from scipy import stats

from td3x.analysis import Report, Settings, build_report
from td3x.analysis.reading.paper import AUTHORS_EVAL_EVERY, authors_curves
from td3x.analysis.render.comparison_columns import NOT_SHOWN, decision
from td3x.analysis.sections.fidelity import FidelitySection
from td3x.analysis.sections.peer import PeerSection
from td3x.analysis.stats.equivalence import BoundRule, peer_bound, post_hoc_bound, tost
from td3x.analysis.stats.two_sample import welch
from td3x.commands.report import main

ROOT = Path(__file__).resolve().parents[2]
COMMITTED_RUNS = ROOT / "docs" / "results" / "runs"
PREREGISTRATION = ROOT / "docs" / "results" / "preregistration.yaml"
T_95_DF4 = 2.131847  # Student-t's 95% point with 4 degrees of freedom, from any table
X = np.array([1.0, 2.0, 3.0])


def test_tost_accepts_a_known_equal_case_and_rejects_a_known_different_one_by_hand() -> None:
    """x = 1, 2, 3 against y = x + shift: se = √(2/3) = 0.8165 and df = 4 for every shift, so the 90% interval is
    −shift ± 2.1318·0.8165 = −shift ± 1.7407. At a bound of 2: shift 0 gives [−1.74, 1.74], inside, TOST p =
    P(t₄ > 2/0.8165 = 2.449) = 0.035, equivalent; shift 3 gives [−4.74, −1.26], not inside, TOST p =
    P(t₄ > (−3 + 2)/0.8165 = −1.225) = 0.856, equivalence not shown. At a bound of 5 the shift of 3 is inside."""
    se, half = np.sqrt(2 / 3), T_95_DF4 * np.sqrt(2 / 3)
    equal = tost(welch(X, X), post_hoc_bound(BoundRule(), 10.0, "y's"), detectable=1.0)  # bound 0.2 × 10 = 2
    assert equal.bound.value == 2.0 and (equal.low, equal.high) == (pytest.approx(-half), pytest.approx(half))
    assert half == pytest.approx(1.7407, abs=1e-4) and equal.inside
    assert equal.p == pytest.approx(stats.t.sf(2 / se, 4)) and equal.p == pytest.approx(0.0352, abs=1e-4)
    assert equal.p == pytest.approx(stats.ttest_ind(X + 2, X, equal_var=False, alternative="greater").pvalue)
    assert decision(equal) == "equivalent within ±2.00"
    shifted = tost(welch(X, X + 3), equal.bound, detectable=1.0)
    assert (shifted.low, shifted.high) == (pytest.approx(-3 - half), pytest.approx(-3 + half)) and not shifted.inside
    assert shifted.p == pytest.approx(0.856, abs=1e-3) and decision(shifted) == NOT_SHOWN
    wide = tost(welch(X, X + 3), post_hoc_bound(BoundRule(), 25.0, "y's"), detectable=1.0)  # bound 5
    assert wide.inside and wide.p == pytest.approx(0.0352, abs=1e-4)
    # Holm's p decides where a family adjusts it: an unadjusted p below α is not enough
    assert decision(type(equal)(equal.bound, equal.low, equal.high, equal.p, 1.0, holm_p=0.07)) == NOT_SHOWN
    # no spread: no test, never equivalence
    assert np.isnan(tost(welch(np.ones(3), np.ones(3)), equal.bound, 1.0).p)
    assert decision(tost(welch(np.ones(3), np.ones(3)), equal.bound, 1.0)) == NOT_SHOWN


# the bounds the published report's peer tests are given: the pre-registration's peer.computed.<env>.bound
PEER_BOUNDS = BoundRule(given=(("HalfCheetah-v5", 645.0), ("Hopper-v5", 88.0), ("Walker2d-v5", 91.0)), peer_of="ours")


def test_the_bound_is_the_one_given_else_the_post_hoc_rule_and_says_where() -> None:
    default = post_hoc_bound(BoundRule(), -5.0, "the authors'")
    assert default.value == 1.0 and default.origin == "post hoc: 0.2 × the authors' mean (the default rule)"
    given = peer_bound(PEER_BOUNDS, "HalfCheetah-v5", (3000.0, 3500.0))
    assert given.value == 645.0 and given.origin == "given: --peer-bound HalfCheetah-v5=645; post hoc test"
    ant = peer_bound(PEER_BOUNDS, "Ant-v5", (450.0, 437.0))  # none given: 0.2 × td3x's mean, post hoc
    assert ant.value == pytest.approx(90.0) and ant.origin == "post hoc: 0.2 × td3x's mean (--peer-bound-of ours)"
    peers = peer_bound(BoundRule(), "Ant-v5", (450.0, 437.0))  # the default: the peer's
    assert peers.value == pytest.approx(87.4) and "the peer's mean (the default rule)" in peers.origin


@pytest.mark.parametrize(
    ("arguments", "names"),
    [
        (["--peer-bound", "Ant-v5"], "'Ant-v5': must be ENV=BOUND"),
        (["--peer-bound", "Ant-v5=-3"], "'Ant-v5=-3': must be ENV=BOUND, a bound above 0"),
        (["--peer-bound", "=3"], "'=3': must be ENV=BOUND"),
        (["--peer-bound", "Ant-v5=nan"], "'Ant-v5=nan'"),
        (["--peer-bound", "Ant-v5=3", "--peer-bound", "Ant-v5=4"], "--peer-bound Ant-v5: given twice"),
        (["--peer-bound-of", "theirs"], "invalid choice: 'theirs'"),
        (["--preregistration", "docs/results/preregistration.yaml"], "--registration"),  # retired: the one meant
    ],
)
def test_td3x_report_refuses_a_bad_peer_bound_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], names: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([str(tmp_path), "--out", str(tmp_path / "report"), *arguments])
    error = capsys.readouterr().err.strip()
    assert exit_.value.code == 2 and error.count("\n") == 0 and names in error, error


def test_td3x_report_takes_the_given_peer_bounds(tmp_path: Path) -> None:
    curves = authors_curves("Hopper-v5")
    assert curves is not None
    for seed in range(3):  # the peer row learns as the authors' TD3 does, one seed on
        for folder, row, curve in (("runs", "TD3", curves[seed]), ("sb3", "SB3 TD3", curves[seed + 1])):
            write_run(tmp_path / f"{folder}/{seed}", "Hopper-v5", row, seed, curve[:21], eval_every=AUTHORS_EVAL_EVERY)
    out = tmp_path / "report"
    command = [str(tmp_path / "runs"), str(tmp_path / "sb3"), "--out", str(out), "--plotly", "none", "--reps", "20"]
    assert main([*command, "--peer", "SB3 TD3", "--peer-bound", "Hopper-v5=50"]) == 0
    markdown = (out / "report.md").read_text()
    assert "post hoc: 0.2 × the authors' mean (the default rule)" in markdown
    assert "given: --peer-bound Hopper-v5=50; post hoc test" in markdown


@pytest.fixture(scope="module")
def committed() -> Report:
    return build_report([COMMITTED_RUNS], Settings(reps=20, bounds=PEER_BOUNDS, peer="SB3 TD3"))


@pytest.mark.results
def test_the_mdds_are_the_preregistrations_post_hoc_ones(committed: Report) -> None:
    """The MDD column at the published cells: n seeds against the authors' 10 at the authors' SD (fidelity), and
    td3x's 5 against SB3's 3 at the pilots' SDs (peer), as the file's post_hoc block computes them."""
    post_hoc: dict[str, Any] = yaml.safe_load(PREREGISTRATION.read_text())["post_hoc"]["computed"]
    td3 = {f.env_id: f for f in committed.section(FidelitySection).results if f.row == "TD3 [agent=td3_paper]"}
    assert set(td3) == set(post_hoc["fidelity"])
    for env_id, numbers in post_hoc["fidelity"].items():
        assert round(td3[env_id].run_mean.equivalence.mdd, 2) == numbers["mdd_alpha"], env_id
    peers = {c.env_id: c.comparison for c in committed.section(PeerSection).primary if c.row == "TD3 [agent=td3_paper]"}
    for env_id, numbers in post_hoc["peer"].items():
        assert round(peers[env_id].equivalence.mdd, 2) == numbers["mdd_alpha"], env_id


@pytest.mark.results
def test_the_committed_cells_equivalence_and_permutation(committed: Report) -> None:
    """At 0.2 × the authors' mean, post hoc: no TD3 cell but InvertedPendulum shows equivalence after Holm; on
    Hopper and Walker2d the 90% interval is wider than the bound. SB3 on Ant: the exact permutation p is 1/286."""
    cells = {(f.row, f.env_id): f for f in committed.section(FidelitySection).results}
    td3 = "TD3 [agent=td3_paper]"
    shown = {env for (row, env), f in cells.items() if row == td3 and decision(f.run_mean.equivalence) != NOT_SHOWN}
    assert shown == {"InvertedPendulum-v5"}
    for env_id in ("Hopper-v5", "Walker2d-v5"):
        result = cells[(td3, env_id)].run_mean.equivalence
        assert not result.inside and result.high - result.low > 2 * result.bound.value
    sb3_ant = cells[("SB3 TD3", "Ant-v5")].run_mean.permutation
    assert (sb3_ant.relabellings, sb3_ant.p) == (286, pytest.approx(1 / 286)) and sb3_ant.p == pytest.approx(
        0.0035, abs=1e-4
    )
    peer_cells = {(c.row, c.env_id): c.comparison for c in committed.section(PeerSection).primary}
    five_against_three = peer_cells[(td3, "Hopper-v5")].permutation  # C(8, 3) = 56: never below Holm's 0.05/3
    assert five_against_three.relabellings == 56 and five_against_three.smallest >= 0.05 / 3
    assert all(decision(c.equivalence) == NOT_SHOWN for c in peer_cells.values())


# the audit's §2.5: the difference and Welch's p of the mean over the evaluations after the warm-up (random_steps =
# 10000 on these cells: 15k..100k)
WITHOUT_WARMUP = {
    ("TD3 [agent=td3_paper]", "Ant-v5"): (53.2, 0.008),
    ("TD3 [agent=td3_paper]", "HalfCheetah-v5"): (-379.8, 0.039),
    ("TD3 [agent=td3_2018]", "HalfCheetah-v5"): (-150.8, 0.28),
    ("SB3 TD3", "Ant-v5"): (38.1, 0.52),
}


@pytest.mark.results
def test_the_sensitivity_table_reproduces_the_audits_numbers(committed: Report) -> None:
    cells = {(f.row, f.env_id): f for f in committed.section(FidelitySection).results}
    for key, (difference, p) in WITHOUT_WARMUP.items():
        test = cells[key].comparisons["after_warmup"].test
        assert cells[key].random_steps == 10_000, key
        assert (round(test.difference, 1), test.p) == (difference, pytest.approx(p, abs=1e-3, rel=0.05)), key
    hopper = cells[("TD3 [agent=td3_paper]", "Hopper-v5")]  # random_steps = 1000: the same 20 evaluations
    assert hopper.comparisons["after_warmup"].test.p == hopper.run_mean.test.p


@pytest.mark.results
def test_the_peer_sensitivity_table_compares_the_means_after_the_warm_up_unadjusted(committed: Report) -> None:
    cells = {(f.row, f.env_id): f for f in committed.section(FidelitySection).results}
    peers = committed.section(PeerSection)
    primary = [(c.row, c.env_id) for c in peers.primary]
    assert [(c.row, c.env_id) for c in peers.sensitivity] == primary
    for row, env_id, c in ((c.row, c.env_id, c.comparison) for c in peers.sensitivity):
        ours, peer = (cells[(name, env_id)].comparisons["after_warmup"].ours for name in (row, "SB3 TD3"))
        assert c.test.difference == pytest.approx(ours.mean() - peer.mean())
        assert np.isnan(c.holm_p) and np.isnan(c.equivalence.holm_p)  # descriptive: no family
