"""The pre-registered peer and bf16 tests (td3x.analysis.registered) on hand-written run dirs whose statistics are
chosen so that every number can be checked by hand.

The runs (HalfCheetah-v5's and Walker2d-v5's env.random_steps set to 10000, evaluations at 0, 5000, 10000, 55000
and 100000): each run returns its value v at 55000 and 100000, the evaluations after the warm-up, so its registered
statistic is v. td3x's seeds 2000, 2001, 2002 return v = 1, 2, 3 on both envs; SB3's 1, 2, 3 on HalfCheetah-v5 and
11, 12, 13 on Walker2d-v5. Each side has mean m and SD 1, so se = √(1/3 + 1/3) = √(2/3) = 0.8165 and df = 4 in
every comparison (t₄'s 95% point 2.1318: the 90% interval is the difference ± 1.7407).

- HalfCheetah-v5, difference 0: at a bound of 3 the TOST p is P(t₄ > 3 / 0.8165 = 3.674) = 0.0107; at a bound of 2,
  P(t₄ > 2.449) = 0.0352. Welch's p is 1.
- Walker2d-v5, difference −10 (a shift beyond any bound used here): the TOST p is P(t₄ > (−10 + 3) / 0.8165 =
  −8.57) = 0.9995 at bound 3, and Welch's p = 2 P(t₄ > 10 / 0.8165 = 12.25) = 0.00025.
- Holm over the family (HalfCheetah-v5, Walker2d-v5): the smaller TOST p doubles, the larger stays (it is
  larger than the doubled one). At bound 3: 0.0213 < 0.05, "equivalent within ±3". At bound 2: 0.0352 < 0.05
  unadjusted, but 0.0704 adjusted: "equivalence not shown". The difference p: Walker2d's 0.00025 doubles to
  0.0005, "difference detected"; HalfCheetah's stays 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.registered_runs import HORIZON_STEPS, PREREGISTRATION, small_registration, write_registered_run
from scipy import stats

from td3x.analysis.equivalence import NOT_SHOWN
from td3x.analysis.registered import RegisteredRunsError, RegisteredTest, registered_tests
from td3x.analysis.registered_design import designs
from td3x.analysis.registered_tables import descriptive_frame, registered_frame
from td3x.analysis.registration import (
    REGISTERED_AGENT,
    REGISTERED_HORIZON_FIRST_SEED,
    REGISTERED_PEER_FIRST_SEED,
    REGISTERED_PEER_STEPS,
    read_registration,
)
from td3x.analysis.runs import find_runs

SE = np.sqrt(2 / 3)
HALF_90 = 2.131847 * SE  # t₄'s 95% point × se
SEEDS = (2000, 2001, 2002)
ENVS = ("HalfCheetah-v5", "Walker2d-v5")
SB3_SHIFT = {"HalfCheetah-v5": 0.0, "Walker2d-v5": 10.0}


def write_peer_runs(root: Path, warmup: float = -1.0, sb3_status: str = "complete") -> None:
    """td3x's and SB3's registered runs (see the module's docstring), td3x's with bias_q1, and three runs the
    registration does not name: seeds 0 and 2003 of td3x, 2005 of SB3."""
    for env_id in ENVS:
        for value, seed in enumerate(SEEDS, start=1):
            write_registered_run(root, env_id, seed, value, warmup, extra={"bias_q1": value})
            status = sb3_status if (env_id, seed) == ("Walker2d-v5", 2002) else "complete"
            write_registered_run(root, env_id, seed, value + SB3_SHIFT[env_id], 50.0, "SB3 TD3", status=status)
    for seed, value in ((0, -1000.0), (2003, 1000.0)):
        write_registered_run(root, "HalfCheetah-v5", seed, value)
    write_registered_run(root, "HalfCheetah-v5", 2005, 500.0, paper_row="SB3 TD3")


def comparisons(root: Path, registration: Path) -> dict[tuple[str, str], RegisteredTest]:
    return {
        (t.design.section, t.design.env_id): t
        for t in registered_tests(read_registration(registration), find_runs([root]))
    }


@pytest.fixture
def peer_runs(tmp_path: Path) -> Path:
    write_peer_runs(tmp_path / "runs")
    return tmp_path / "runs"


def bounds(value: float) -> dict[str, float]:
    return {f"peer.computed.{env_id}.bound": value for env_id in ENVS}


def test_equivalence_passes_and_a_known_difference_is_detected_by_hand(peer_runs: Path, tmp_path: Path) -> None:
    """At bound 3 (module docstring): HalfCheetah-v5 equivalent (Holm TOST p 0.0213), Walker2d-v5's shift of 10
    not (TOST p 0.9995) and its difference detected (Holm p 0.0005); unregistered seeds never enter."""
    found = comparisons(peer_runs, small_registration(tmp_path, **bounds(3)))
    assert set(found) == {
        ("peer", "HalfCheetah-v5"),
        ("peer", "Walker2d-v5"),
        ("bf16", "HalfCheetah-v5"),
        ("bf16", "Walker2d-v5"),
        ("bf16_fp32_tanh", "Walker2d-v5"),  # its fp32 side is bf16's: the peer runs
    }
    cheetah, walker = found["peer", "HalfCheetah-v5"], found["peer", "Walker2d-v5"]
    assert cheetah.outcome is not None and walker.outcome is not None
    assert list(cheetah.outcome.ours) == [1, 2, 3] and list(cheetah.outcome.other) == [1, 2, 3]  # not 2003, 0, 2005
    assert list(cheetah.outcome.steps) == [55000, 100000]
    test = cheetah.outcome.test
    assert (test.low90, test.high90) == (pytest.approx(-HALF_90), pytest.approx(HALF_90)) and test.p == pytest.approx(1)
    assert cheetah.outcome.tost.p == pytest.approx(stats.t.sf(3 / SE, 4)) and cheetah.outcome.tost.p == pytest.approx(
        0.0107, abs=1e-4
    )
    assert cheetah.holm_tost_p == pytest.approx(2 * cheetah.outcome.tost.p)
    assert cheetah.decision == "equivalent within ±3" and cheetah.difference_decision == "no difference detected"
    assert walker.outcome.test.difference == pytest.approx(-10)
    assert walker.outcome.tost.p == pytest.approx(stats.t.sf(-7 / SE, 4)) and walker.outcome.tost.p > 0.999
    assert walker.holm_tost_p == pytest.approx(walker.outcome.tost.p) and walker.decision == NOT_SHOWN
    assert walker.outcome.test.p == pytest.approx(2 * stats.t.sf(10 / SE, 4)) and walker.outcome.test.p < 3e-4
    assert (
        walker.holm_p == pytest.approx(2 * walker.outcome.test.p)
        and walker.difference_decision == "difference detected"
    )
    assert cheetah.holm_p == pytest.approx(1.0)
    assert cheetah.outcome.tost.bound.origin == "registered (peer.computed.HalfCheetah-v5.bound)"
    assert cheetah.design.mdd == 5.0  # the file's mdd_holm_first_step, read, not computed


def test_holm_turns_an_unadjusted_pass_into_not_shown(peer_runs: Path, tmp_path: Path) -> None:
    """At bound 2, HalfCheetah-v5's TOST p 0.0352 is below 0.05, but Holm's 0.0704 over the family is not."""
    cheetah = comparisons(peer_runs, small_registration(tmp_path, **bounds(2)))["peer", "HalfCheetah-v5"]
    assert cheetah.outcome is not None and cheetah.outcome.tost.p == pytest.approx(0.0352, abs=1e-4)
    assert cheetah.holm_tost_p == pytest.approx(0.0704, abs=2e-4) and cheetah.decision == NOT_SHOWN


def test_warm_up_evaluations_change_nothing_registered(tmp_path: Path) -> None:
    """Evaluations at or before env.random_steps returning −1 or 10⁶ give the same statistic, TOST and Holm p;
    only the descriptive statistic with the warm-up in moves: td3x's mean over 5000..100000 is (2·w + 2·v) / 4,
    SB3's (2·50 + 2·v) / 4, so the difference is (2·w − 100) / 4: −25.5 for w = −1."""
    registration = small_registration(tmp_path, **bounds(3))
    results = []
    for warmup in (-1.0, 1e6):
        write_peer_runs(tmp_path / str(warmup), warmup)
        results.append(comparisons(tmp_path / str(warmup), registration)["peer", "HalfCheetah-v5"])
    low, high = (t.outcome for t in results)
    assert low is not None and high is not None
    assert (
        list(low.ours) == list(high.ours)
        and low.tost.p == high.tost.p
        and results[0].holm_tost_p == results[1].holm_tost_p
    )
    assert low.warmup_in is not None and low.warmup_in.difference == pytest.approx(-25.5)
    assert high.warmup_in is not None and high.warmup_in.difference == pytest.approx((2e6 - 100) / 4)


def test_an_incomplete_registration_has_no_verdict_and_holds_its_family(tmp_path: Path) -> None:
    """SB3's Walker2d-v5 seed 2002 still running: Walker2d-v5 is "incomplete: 5 of 6 runs" with no numbers, and
    HalfCheetah-v5 (its family) gets no verdict, its Holm p computed with Walker2d's p taken as 1."""
    write_peer_runs(tmp_path / "runs", sb3_status="running")
    found = comparisons(tmp_path / "runs", small_registration(tmp_path, **bounds(3)))
    walker, cheetah = found["peer", "Walker2d-v5"], found["peer", "HalfCheetah-v5"]
    assert walker.outcome is None and walker.decision == "incomplete: 5 of 6 runs"
    assert walker.ours.missing == () and walker.other.missing == (2002,)
    assert cheetah.decision == "no verdict yet: the family's Walker2d-v5 not complete"
    assert cheetah.difference_decision == "no verdict" and cheetah.holm_tost_p == pytest.approx(
        2 * stats.t.sf(3 / SE, 4)
    )


def test_an_env_the_file_registers_as_not_run_holds_no_verdict(peer_runs: Path, tmp_path: Path) -> None:
    """peer.computed.Walker2d-v5.decision "not run: ..." (the sizing rule's words): Walker2d-v5 is listed with that
    decision and no numbers, and HalfCheetah-v5 is judged without waiting for it, Walker2d's p taken as 1."""
    decision = "not run: no affordable n can pass"
    changes = {**bounds(3), "peer.computed.Walker2d-v5.decision": decision}
    found = comparisons(peer_runs, small_registration(tmp_path, **changes))
    walker, cheetah = found["peer", "Walker2d-v5"], found["peer", "HalfCheetah-v5"]
    assert walker.outcome is None and walker.decision == f"{decision} (the file's peer.computed.Walker2d-v5.decision)"
    assert cheetah.family_pending == () and cheetah.decision == "equivalent within ±3"
    assert cheetah.holm_tost_p == pytest.approx(2 * stats.t.sf(3 / SE, 4))


def test_bf16_against_the_peer_runs_of_fp32_with_the_bias_columns(peer_runs: Path, tmp_path: Path) -> None:
    """bf16's runs (seeds 2000..2002, run.precision=bf16) against the fp32 ones (td3x's peer runs, a config without
    the key): before any bf16 run exists, bf16 is incomplete, 3 of 6. With bf16 runs returning 2, 3, 4 and bias_q1
    2, 3, 4 against fp32's 1, 2, 3 and 1, 2, 3: the difference is +1 with the 90% interval 1 ± 1.7407 on both;
    bias_min_q is in no fp32 run's eval.csv, and the table says so."""
    registration = small_registration(tmp_path, **{f"bf16.computed.{env_id}.bound": 3 for env_id in ENVS})
    before = comparisons(peer_runs, registration)["bf16", "HalfCheetah-v5"]
    assert before.outcome is None and before.status == "incomplete: 3 of 6 runs" and before.ours.missing == SEEDS
    for env_id in ENVS:
        for value, seed in enumerate(SEEDS, start=2):
            write_registered_run(
                peer_runs, env_id, seed, value, precision="bf16", extra={"bias_q1": value, "bias_min_q": 0}
            )
    found = comparisons(peer_runs, registration)
    cheetah = found["bf16", "HalfCheetah-v5"]
    assert cheetah.outcome is not None and list(cheetah.outcome.other) == [1, 2, 3]
    assert cheetah.outcome.test.difference == pytest.approx(1)
    bias = cheetah.outcome.bias["bias_q1"]
    assert not isinstance(bias, str) and (bias.low90, bias.high90) == (
        pytest.approx(1 - HALF_90),
        pytest.approx(1 + HALF_90),
    )
    assert cheetah.outcome.bias["bias_min_q"] == (
        "no bias_min_q column in eval.csv of fp32 seed 2000, fp32 seed 2001, fp32 seed 2002"
    )
    assert found["peer", "HalfCheetah-v5"].outcome is not None  # the bf16 runs are no peer run


def test_the_amendment_judges_only_its_new_bf16_seeds_in_a_family_of_one(peer_runs: Path, tmp_path: Path) -> None:
    """bf16_fp32_tanh: bf16 seeds 2100..2102 (returning 4, 5, 6) against the fp32 runs of seeds 2000..2002 (1, 2, 3)
    on Walker2d-v5, beside bf16 runs of the bf16 comparison's seeds 2000..2002 (returning 1000): each comparison
    takes only its own seeds. Difference +3, TOST p at bound 5 P(t₄ > 2 / 0.8165) = 0.0350, and in a family of one
    Holm leaves it: "equivalent within ±5" (the bf16 comparison, in a family of two, would double it)."""
    registration = small_registration(tmp_path, **{"bf16_fp32_tanh.computed.Walker2d-v5.bound": 5})
    for seed in SEEDS:
        write_registered_run(peer_runs, "Walker2d-v5", seed, 1000.0, precision="bf16")
        write_registered_run(
            peer_runs, "Walker2d-v5", seed + 100, seed - 1996, precision="bf16", extra={"bias_q1": 0, "bias_min_q": 0}
        )
    found = comparisons(peer_runs, registration)
    amended, registered = found["bf16_fp32_tanh", "Walker2d-v5"], found["bf16", "Walker2d-v5"]
    assert amended.outcome is not None and registered.outcome is not None
    assert list(amended.outcome.ours) == [4, 5, 6] and list(amended.outcome.other) == [1, 2, 3]
    assert list(registered.outcome.ours) == [1000, 1000, 1000]
    assert amended.outcome.tost.p == pytest.approx(stats.t.sf(2 / SE, 4)) and amended.outcome.tost.p < 0.05
    assert amended.holm_tost_p == pytest.approx(amended.outcome.tost.p) and amended.decision == "equivalent within ±5"
    assert amended.design.family == ("Walker2d-v5",) and not isinstance(amended.outcome.bias["bias_q1"], str)
    assert amended.ours.seeds == (2100, 2101, 2102) and amended.other.seeds == SEEDS


def test_a_bf16_comparison_counts_the_actors_frozen_at_their_last_log_row(peer_runs: Path, tmp_path: Path) -> None:
    """bf16 seed 2000's actor gradient is 0 at its last log row (frozen); seed 2001's was 0 and moved again; seed
    2002 logged none (SB3-like): one frozen bf16 actor of 3, none of fp32's. The peer comparison counts none."""
    for value, seed in enumerate(SEEDS, start=2):
        run = write_registered_run(peer_runs, "HalfCheetah-v5", seed, value, precision="bf16")
        norms = {2000: [0.5, 0.0, 0.0], 2001: [0.0, 0.0, 0.3], 2002: []}[seed]
        lines = [json.dumps({"step": 1000 * i, "actor_grad_norm": norm}) for i, norm in enumerate(norms, start=1)]
        (run / "metrics.jsonl").write_text("".join(line + "\n" for line in lines))
    found = comparisons(peer_runs, small_registration(tmp_path))
    cheetah = found["bf16", "HalfCheetah-v5"]
    assert cheetah.outcome is not None and cheetah.outcome.frozen_actors == (1, 0)
    frame = descriptive_frame([cheetah])
    assert frame["actors with a gradient of exactly 0 at the last log row: ours; other's"].tolist() == [
        "1 of 3; 0 of 3"
    ]
    assert registered_frame([cheetah])[["frozen_actors_ours", "frozen_actors_other"]].values.tolist() == [[1, 0]]
    peer = found["peer", "HalfCheetah-v5"]
    assert peer.outcome is not None and peer.outcome.frozen_actors is None


def test_a_failed_run_rerun_with_its_seed_is_named_and_left_out(peer_runs: Path, tmp_path: Path) -> None:
    """A failed run dir of td3x's seed 2001 beside its complete rerun: the complete one's statistic (2) counts, and
    the seed is listed as rerun."""
    write_registered_run(tmp_path / "failed", "HalfCheetah-v5", 2001, 500.0, status="failed")
    registration = read_registration(small_registration(tmp_path, **bounds(3)))
    found = registered_tests(registration, find_runs([peer_runs, tmp_path / "failed"]))
    cheetah = next(t for t in found if (t.design.section, t.design.env_id) == ("peer", "HalfCheetah-v5"))
    assert cheetah.outcome is not None and list(cheetah.outcome.ours) == [1, 2, 3] and cheetah.ours.reruns == (2001,)
    assert registered_frame([cheetah])["rerun_seeds"].tolist() == ["td3x: 2001"]


def test_two_complete_runs_of_one_registered_seed_are_refused(peer_runs: Path, tmp_path: Path) -> None:
    write_registered_run(tmp_path / "again", "HalfCheetah-v5", 2001, 7.0)
    with pytest.raises(RegisteredRunsError, match="two complete registered td3x runs of seed 2001"):
        registered_tests(read_registration(small_registration(tmp_path)), find_runs([peer_runs, tmp_path / "again"]))


def test_no_registered_run_no_comparison(tmp_path: Path) -> None:
    """With the committed file (peer HalfCheetah-v5: td3x seeds 2000..2009, SB3 2000..2013; paper_horizon 4000..4004
    at 1M steps), runs of other seeds or lengths only: no registered comparison at all."""
    for seed in (0, 2010, 4000):
        write_registered_run(tmp_path / "runs", "HalfCheetah-v5", seed, 1.0)
    write_registered_run(tmp_path / "runs", "HalfCheetah-v5", 2014, 1.0, paper_row="SB3 TD3")
    write_registered_run(tmp_path / "runs", "HalfCheetah-v5", 2000, 1.0, steps=HORIZON_STEPS)
    assert registered_tests(read_registration(PREREGISTRATION), find_runs([tmp_path / "runs"])) == []


def test_the_committed_file_s_designs() -> None:
    """Read from the committed file: the seeds (first seeds as its command lines state them), bounds, MDDs and
    families; Walker2d-v5's peer design waits for its pilot (n_sb3 null)."""
    registration = read_registration(PREREGISTRATION)
    rows, runs = str(registration.value("peer.rows")), str(registration.value("paper_horizon.runs"))
    assert f"seed={REGISTERED_PEER_FIRST_SEED}" in rows and f"run.total_steps={REGISTERED_PEER_STEPS}" in rows
    assert f"seed={REGISTERED_HORIZON_FIRST_SEED}" in runs and f"agent={REGISTERED_AGENT}" in rows + runs
    found = {(d.section, d.env_id): d for d in designs(registration)}
    assert list(found) == [
        *(("peer", e) for e in ENVS),
        *(("bf16", e) for e in ENVS),
        ("bf16_fp32_tanh", "Walker2d-v5"),
        ("paper_horizon", "HalfCheetah-v5"),
    ]
    peer = found["peer", "HalfCheetah-v5"]
    assert (
        peer.seeds == (tuple(range(2000, 2010)), tuple(range(2000, 2014))) and peer.bound == 645 and peer.mdd == 613.47
    )
    walker = found["peer", "Walker2d-v5"]  # sized by the SB3 pilot's rule: n_sb3 = 10
    assert walker.pending == "" and walker.seeds == (tuple(range(2000, 2015)), tuple(range(2000, 2010)))
    assert (walker.bound, walker.mdd) == (91, 69.47)
    bf16 = found["bf16", "Walker2d-v5"]
    assert bf16.seeds == (tuple(range(2000, 2015)),) * 2 and (bf16.bound, bf16.mdd, bf16.precision) == (
        91,
        85.31,
        "bf16",
    )
    amended = found["bf16_fp32_tanh", "Walker2d-v5"]  # new bf16 seeds 2100..2109 against bf16's 15 fp32 runs
    assert amended.seeds == (tuple(range(2100, 2110)), tuple(range(2000, 2015))) and amended.family == ("Walker2d-v5",)
    assert (amended.bound, amended.mdd, amended.precision) == (91, 87.12, "bf16")
    horizon = found["paper_horizon", "HalfCheetah-v5"]
    assert horizon.seeds == (tuple(range(4000, 4005)), ()) and (horizon.first_step, horizon.last_step) == (
        955000,
        1000000,
    )
    assert (horizon.bound, horizon.mdd, horizon.family, horizon.alpha) == (1907, 1510.17, ("HalfCheetah-v5",), 0.05)
