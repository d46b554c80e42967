"""The stalled-actors amendments (td3x.analysis.stalled_registered) judged as the pre-registration file registers
them, on run dirs written here with 4 runs an arm (the committed file with those runs): Fisher's p checked by hand,
a difference claimed and none claimed, the control paired by warm-up seed, an incomplete arm, runs on two CPU
capabilities and runs without an actor gradient left unjudged, other runs not taken; the committed runs; and
td3x-report --preregistration end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers.seed_study_runs import REGISTRATION, write_condition
from scipy import stats

from td3x.analysis.registration import read_registration
from td3x.analysis.runs import find_runs
from td3x.analysis.stalled_registered import (
    CLAIMS,
    CONTROL,
    NO_DIFFERENCE,
    TREATED,
    FisherTest,
    Judgement,
    fisher_p,
    judge_stalled,
)
from td3x.commands.report import main as report_main

ROOT = Path(__file__).resolve().parents[2]
N = 4
STALLED, LEARNING = 1e-5, 0.3  # actor gradient norms at the last log row, below and above the threshold 0.001


def small_registration(folder: Path, reference: tuple[int, int]) -> Path:
    """The committed pre-registration with N runs an arm and the seed study's count ``reference``."""
    data = yaml.safe_load(REGISTRATION.read_text())
    data[TREATED]["computed"] |= {"runs": N, "reference_stalled": reference[0], "reference_runs": reference[1]}
    data[CONTROL]["runs_per_side"] = N
    path = folder / "preregistration.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def write_arm(
    folder: Path, weights: int, norms: list[float | None], cpu: str = "AVX512", num_seeds: int = N
) -> list[Path]:
    """One arm's job: warm-up seeds 3200.., the warmup condition's other sources at 3200, the initial weights at
    ``weights``; run k's last logged actor gradient norm is ``norms[k]`` (None: it logs none)."""
    paths = write_condition(folder, "warmup", np.full(len(norms), 120.0), num_seeds, cpu=cpu)
    for path, norm in zip(paths, norms, strict=True):
        config = yaml.safe_load((path / "config.yaml").read_text())
        config["effective_seeds"]["weights"] = weights
        (path / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        rows = [{"step": 2000}, {"step": 14000, **({} if norm is None else {"actor_grad_norm": norm})}]
        (path / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return paths


def judged(folder: Path, reference: tuple[int, int]) -> Judgement:
    judgement = judge_stalled(find_runs([folder]), read_registration(small_registration(folder, reference)))
    assert judgement is not None
    return judgement


def fisher_test(judgement: Judgement, section: str) -> FisherTest:
    return next(test for test in judgement.tests if test.section == section)


def test_fisher_s_two_sided_p_by_hand() -> None:
    # 0 of 4 against 4 of 4: of the C(8, 4) = 70 tables with these margins, only this one and its mirror are as
    # extreme, each with probability 1/70
    assert fisher_p((0, 4), (4, 4)) == pytest.approx(2 / 70)
    # 0 of 2 against 2 of 2: tables a = 0, 1, 2 with probabilities 1/6, 4/6, 1/6
    assert fisher_p((0, 2), (2, 2)) == pytest.approx(1 / 3)
    assert fisher_p((1, 4), (1, 4)) == pytest.approx(1.0)


def test_each_arm_s_stall_rate_gets_its_exact_interval_by_hand(tmp_path: Path) -> None:
    write_arm(tmp_path / "treated", 3300, [LEARNING] * 4)
    write_arm(tmp_path / "control", 3200, [STALLED] * 4)
    judgement = judged(tmp_path, (4, 4))
    # Clopper-Pearson at 0 of n: [0, 1 - 0.025^(1/n)]; at n of n: [0.025^(1/n), 1]
    assert fisher_test(judgement, TREATED).rate_interval == pytest.approx((0.0, 1 - 0.025 ** (1 / 4)))
    assert fisher_test(judgement, CONTROL).rate_interval == pytest.approx((0.025 ** (1 / 4), 1.0))


def test_other_weights_stalling_less_are_claimed_and_the_control_is_paired_by_seed(tmp_path: Path) -> None:
    write_arm(tmp_path / "treated", 3300, [LEARNING] * 4)
    write_arm(tmp_path / "control", 3200, [STALLED, STALLED, STALLED, LEARNING])
    judgement = judged(tmp_path, (4, 4))
    treated, control = fisher_test(judgement, TREATED), fisher_test(judgement, CONTROL)
    assert (treated.stalled, treated.runs, treated.against_count) == ((), 4, (4, 4))
    assert treated.p == pytest.approx(2 / 70) and treated.status == CLAIMS[TREATED]
    assert (control.stalled, control.against_count) == ((3200, 3201, 3202), (0, 4))
    assert control.p == pytest.approx(fisher_p((3, 4), (0, 4))) and control.p > 0.05  # 3 of 4 vs 0 of 4: 0.14
    assert control.status == NO_DIFFERENCE
    assert control.paired == {"both": 0, "this_only": 3, "other_only": 0, "neither": 1}
    assert treated.capability == control.capability == "AVX512"
    registered = judgement.registered_runs()
    assert len(registered) == 8 and {facts.arm for facts in registered.values()} == {TREATED, CONTROL}
    assert all(facts.seeds == frozenset(range(3200, 3204)) for facts in registered.values())


def test_as_many_stalled_as_the_seed_study_shows_no_difference(tmp_path: Path) -> None:
    write_arm(tmp_path, 3300, [STALLED, LEARNING, STALLED, LEARNING])
    judgement = judged(tmp_path, (2, 4))
    treated = fisher_test(judgement, TREATED)
    assert treated.p == pytest.approx(1.0) and treated.status == NO_DIFFERENCE
    assert [t.section for t in judgement.tests] == [TREATED]  # no control run: no control test


def test_the_control_is_claimed_when_all_its_runs_stall(tmp_path: Path) -> None:
    write_arm(tmp_path / "treated", 3300, [LEARNING] * 4)
    write_arm(tmp_path / "control", 3200, [STALLED] * 4)
    control = fisher_test(judged(tmp_path, (4, 4)), CONTROL)
    assert control.p == pytest.approx(2 / 70) and control.status == CLAIMS[CONTROL]


def test_incomplete_arms_and_mixed_cpus_and_unlogged_gradients_get_no_verdict(tmp_path: Path) -> None:
    write_arm(tmp_path / "a" / "treated", 3300, [LEARNING] * 3)  # 3 of 4 runs
    write_arm(tmp_path / "a" / "control", 3200, [STALLED] * 4)
    judgement = judged(tmp_path / "a", (4, 4))
    assert fisher_test(judgement, TREATED).status == "incomplete: 3 of 4" and np.isnan(
        fisher_test(judgement, TREATED).p
    )
    assert fisher_test(judgement, CONTROL).status == f"no test: {TREATED} incomplete: 3 of 4"
    assert fisher_test(judgement, CONTROL).paired == {}

    write_arm(tmp_path / "b" / "treated", 3300, [LEARNING] * 4)
    write_arm(tmp_path / "b" / "control", 3200, [STALLED] * 4, cpu="AVX2")
    judgement = judged(tmp_path / "b", (4, 4))
    assert fisher_test(judgement, TREATED).status == CLAIMS[TREATED]  # its reference is the file's count: no CPU check
    assert fisher_test(judgement, CONTROL).status == (
        "not judged: the control needs every run on CPUs of one capability, recorded; these ran on AVX2: 4 runs, "
        "AVX512: 4 runs"
    )

    write_arm(tmp_path / "c", 3300, [LEARNING, None, LEARNING, LEARNING])
    assert fisher_test(judged(tmp_path / "c", (4, 4)), TREATED).status == "not judged: 1 runs log no actor gradient"

    write_arm(tmp_path / "d" / "first", 3300, [LEARNING] * 4)
    write_arm(tmp_path / "d" / "again", 3300, [STALLED] * 4)  # every seed twice: which run counts is not defined
    status = fisher_test(judged(tmp_path / "d", (4, 4)), TREATED).status
    assert status == "not judged: seed(s) [3200, 3201, 3202, 3203] have several complete run dirs: give td3x-report one"


def test_runs_of_other_weights_or_jobs_are_not_the_amendments(tmp_path: Path) -> None:
    write_arm(tmp_path / "other_weights", 3301, [LEARNING] * 4)
    write_arm(tmp_path / "seed_study", 3200, [LEARNING] * 4, num_seeds=32)  # the seed study's own warmup runs
    assert judge_stalled(find_runs([tmp_path]), read_registration(small_registration(tmp_path, (4, 4)))) is None


def test_the_committed_runs_are_judged_with_the_file_s_reference_count() -> None:
    runs = find_runs([ROOT / "docs" / "results" / "stalled_actors" / "runs"])
    registration = read_registration(REGISTRATION)
    judgement = judge_stalled(runs, registration)
    assert judgement is not None
    treated = fisher_test(judgement, TREATED)
    reference = (12, 32)  # the seed study's warmup runs that stalled, as its committed report lists them
    assert tuple(
        registration.value(f"{TREATED}.computed.{key}") for key in ("reference_stalled", "reference_runs")
    ) == (reference)
    assert treated.runs == 24 and treated.against_count == reference
    expected = stats.fisher_exact([[len(treated.stalled), 24 - len(treated.stalled)], [12, 20]])[1]
    assert treated.p == pytest.approx(expected)


def test_td3x_report_prints_the_amendments_and_names_their_rows(tmp_path: Path) -> None:
    write_arm(tmp_path / "runs" / "treated", 3300, [LEARNING] * 4)
    write_arm(tmp_path / "runs" / "control", 3200, [STALLED] * 4)
    registration = small_registration(tmp_path, (4, 4))
    out = tmp_path / "report"
    command = [str(tmp_path / "runs"), "--out", str(out), "--plotly", "none", "--preregistration", str(registration)]
    assert report_main(command) == 0
    frame = pd.read_csv(out / "stalled_registered.csv")
    assert frame["amendment"].tolist() == [TREATED, CONTROL]
    assert frame["fisher_p"].tolist() == pytest.approx([2 / 70, 2 / 70])
    assert frame["paired_this_only"].tolist()[1] == 4
    assert frame["stalled_rate_high_95"].tolist() == pytest.approx([1 - 0.025 ** (1 / 4), 1.0])
    report = (out / "report.md").read_text()
    assert "## Registered: stalled actors and the initial weights" in report
    stalled, against = "4 of 4 [39.8%, 100.0%]", f"0 of 4: {TREATED}' runs"
    assert f"| {CONTROL} | {CLAIMS[CONTROL]} | seed 3200 | {stalled} | {against} | 0.029 | AVX512 |" in report
    assert f"({TREATED}) |" in report and f"({CONTROL}) |" in report  # the general tables' rows, by amendment
