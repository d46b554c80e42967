"""The registered seed study judged as the pre-registration file registers it, on run dirs written here with 6 runs
per condition (the committed file with runs_per_condition = 6): equal spread claimed, four-fold spread not, Holm
changing a call, collapsed runs counted, an incomplete condition without verdict, CPUs of two capabilities refused,
shared runs named; the three conditions' jobs, each from its own seed, one launch of the seed-sources section; the
committed file's design; and td3x-report --preregistration end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers.seed_study_runs import REGISTRATION, START, small_registration, write_condition
from scipy import stats

from td3x.analysis.registration import read_registration
from td3x.analysis.runs import find_runs
from td3x.analysis.seed_sources import MixedLaunchesError, study_sources
from td3x.analysis.seed_study_registered import (
    PRIMARY,
    SECONDARY,
    Judgement,
    RegisteredStudy,
    judge_registered,
    read_design,
)
from td3x.analysis.seed_study_registered_text import markdown
from td3x.analysis.spread_tests import bf_tost_p
from td3x.commands.report import main as report_main

N = 6
CLAIM = "spread as large as all_vary's within a factor of 2"
OFFSETS = np.array([-10.5, -10.0, -9.5, 9.5, 10.0, 10.5])  # deviations from the median all near 10
ALL_VARY = 100.0 + OFFSETS
EQUAL = 200.0 + OFFSETS  # all_vary's runs shifted (no run equal to one of theirs): the same deviations, ratio 1
FOUR = 100.0 + 4.0 * OFFSETS  # four times all_vary's spread
HOLM = 100.25 + np.array([-16.0, -10.0, -4.0, 4.0, 10.0, 16.0])  # TOST p about 0.036: Holm decides


def judged(folder: Path, weights: np.ndarray, warmup: np.ndarray, **warmup_options: object) -> RegisteredStudy:
    write_condition(folder, "all_vary", ALL_VARY, N)
    write_condition(folder, "weights", weights, N)
    write_condition(folder, "warmup", warmup, N, **warmup_options)  # type: ignore[arg-type]
    study = judge_registered(find_runs([folder]), read_registration(small_registration(folder, N)))
    assert study is not None
    return study


def row(study: RegisteredStudy, condition: str, statistic: str = PRIMARY) -> Judgement:
    return next(r for r in study.judgements if (r.condition, r.statistic) == (condition, statistic))


def test_a_source_spreading_as_all_vary_does_is_claimed_equivalent(tmp_path: Path) -> None:
    study = judged(tmp_path, EQUAL, 105.0 + OFFSETS)
    weights = row(study, "weights")
    assert weights.status == CLAIM and weights.ratio == pytest.approx(1.0) and weights.holm_p < 0.05
    assert weights.tost_p == pytest.approx(float(bf_tost_p(EQUAL, ALL_VARY, 0.5, 2.0)))
    f_ends = (stats.f.ppf(0.95, N - 1, N - 1), stats.f.ppf(0.05, N - 1, N - 1))  # the 90% F interval, ratio 1
    assert weights.ratio_interval == pytest.approx(tuple(1 / np.sqrt(f_ends))) and weights.runs == N
    chi2_ends = (stats.chi2.ppf(0.975, N - 1), stats.chi2.ppf(0.025, N - 1))  # the SD's 95% chi-square interval
    assert weights.sd_interval == pytest.approx(tuple(weights.sd * np.sqrt((N - 1) / np.array(chi2_ends))))
    assert row(study, "all_vary").status == "reference" and study.capability == "AVX2" and not study.refused
    assert row(study, "weights", SECONDARY).status == "descriptive" and not study.shared
    text = markdown(study)
    assert "evaluations at 5000, 10000, 15000" in text and "runs all_vary 3000..3005, weights 3100..3105" in text
    assert f"| {CLAIM} |" in text and "Every one of the 18 complete runs ran on a CPU of capability AVX2" in text
    assert "No run of one condition is bit for bit a run of another" in text and "is post hoc" in text
    assert "The code commits they record: 0123456; that each descends from the commit adding" in text


def test_a_source_with_four_times_the_spread_is_not_claimed(tmp_path: Path) -> None:
    study = judged(tmp_path, EQUAL, FOUR)
    warmup = row(study, "warmup")
    assert warmup.status == "not shown" and warmup.tost_p > 0.5 and warmup.ratio == pytest.approx(4.0)
    assert row(study, "weights").status == CLAIM  # its own call is unchanged by warmup's


def test_holm_over_the_family_changes_a_call(tmp_path: Path) -> None:
    alone = judged(tmp_path / "claimed", HOLM, EQUAL)  # warmup's p is tiny: weights keeps its own p
    raw = row(alone, "weights").tost_p
    assert 0.025 < raw < 0.05 and row(alone, "weights").holm_p == raw and row(alone, "weights").status == CLAIM
    doubled = judged(tmp_path / "not", HOLM, FOUR)  # warmup's p is large: weights' is doubled
    assert row(doubled, "weights").holm_p == pytest.approx(2 * raw) and row(doubled, "weights").status == "not shown"


def test_a_collapsed_run_is_counted(tmp_path: Path) -> None:
    warmup = EQUAL.copy()
    warmup[2] = START - 10.0  # ends below its step-0 return
    study = judged(tmp_path, EQUAL, warmup)
    assert row(study, "warmup").collapsed == 1 and row(study, "weights").collapsed == 0
    assert row(study, "warmup", SECONDARY).collapsed == 1


def test_an_incomplete_condition_gets_no_verdict_and_enters_holm_at_p_1(tmp_path: Path) -> None:
    study = judged(tmp_path, HOLM, np.array([101.0, 102.0, 103.0, 104.0]))  # 4 of its 6 runs
    warmup, weights = row(study, "warmup"), row(study, "weights")
    assert warmup.status == "incomplete: 4 of 6" and np.isnan(warmup.tost_p) and np.isnan(warmup.sd)
    assert weights.holm_p == pytest.approx(2 * weights.tost_p) and weights.status == "not shown"
    assert "| incomplete: 4 of 6 |" in markdown(study)


def test_without_spread_on_either_side_there_is_no_test_and_holm_takes_p_1(tmp_path: Path) -> None:
    write_condition(tmp_path, "all_vary", np.full(N, 100.0), N)  # every run alike: no deviation to test
    write_condition(tmp_path, "weights", HOLM, N)
    write_condition(tmp_path, "warmup", np.full(N, 150.0), N)
    study = judge_registered(find_runs([tmp_path]), read_registration(small_registration(tmp_path, N)))
    assert study is not None and row(study, "warmup").status == "no test: a condition without spread"
    weights = row(study, "weights")  # against an all_vary without spread: a ratio of infinity, never equivalent
    assert np.isnan(weights.ratio) and weights.tost_p > 0.5 and weights.status == "not shown"
    assert weights.holm_p == pytest.approx(min(1.0, 2 * weights.tost_p))


def test_runs_on_cpus_of_two_capabilities_are_not_judged(tmp_path: Path) -> None:
    study = judged(tmp_path, EQUAL, EQUAL, cpu="AVX512")
    assert {r.status for r in study.judgements} == {"not judged"} and study.capability == "AVX2, AVX512"
    assert study.refused == [
        "the registration needs every run on CPUs of one capability, recorded; these ran on AVX2: 12 runs, "
        "AVX512: 6 runs"
    ]
    assert "Not judged: the registration needs every run on CPUs of one capability" in markdown(study)
    unrecorded = judged(tmp_path / "unrecorded", EQUAL, EQUAL, cpu="")  # provenance.json without it
    assert unrecorded.refused and "not recorded: 6 runs" in unrecorded.refused[0]


def test_a_run_two_conditions_share_is_named(tmp_path: Path) -> None:
    study = judged(tmp_path, EQUAL, ALL_VARY)  # warmup's runs are all_vary's, bit for bit
    assert list(study.shared) == ["all_vary/warmup"] and len(study.shared["all_vary/warmup"]) == N
    assert "Runs shared between conditions, bit for bit, which the registration rules out" in markdown(study)


def test_other_runs_are_not_the_registered_ones(tmp_path: Path) -> None:
    write_condition(tmp_path, "all_vary", ALL_VARY, N + 1)  # another run.num_seeds: not these runs
    assert judge_registered(find_runs([tmp_path]), read_registration(small_registration(tmp_path, N))) is None


def test_conditions_starting_at_their_own_seeds_are_one_launch_and_a_second_launch_is_refused(tmp_path: Path) -> None:
    for name, values in (("all_vary", ALL_VARY), ("weights", EQUAL), ("warmup", FOUR)):
        write_condition(tmp_path, name, values, N)
    (study,) = study_sources(find_runs([tmp_path]))
    assert list(study.samples) == ["all_vary", "weights", "warmup"] and len(study.samples["warmup"]) == N
    write_condition(tmp_path, "all_vary", ALL_VARY + 1.0, N, first=4000)  # all_vary again, from another seed
    with pytest.raises(MixedLaunchesError, match=r"2 launches .*seed=3000,3100,3200: 3 job dirs.*seed=4000: 1 job"):
        study_sources(find_runs([tmp_path]))


def test_the_committed_file_registers_32_runs_its_bound_family_and_power() -> None:
    file = yaml.safe_load(REGISTRATION.read_text())["seed_study"]
    design = read_design(read_registration(REGISTRATION))
    assert design.runs == file["computed"]["runs_per_condition"] == 32 and design.steps == 15000
    assert design.conditions == {"all_vary": 3000, "weights": 3100, "warmup": 3200}
    assert design.family == ("weights", "warmup") and design.bound == (0.5, 2.0) and design.alpha == 0.05
    normal = file["computed"]["normal"]
    assert design.power["normal"] == (
        normal["bf_tost_power_ratio_1_holm_first_step"],
        normal["bf_tost_power_sensitivity_ratio_holm_first_step"],
    )
    assert design.power["collapsed"][0] == file["computed"]["collapsed"]["bf_tost_power_ratio_1_holm_first_step"]


@pytest.mark.slow  # td3x-report end to end on 18 runs (seconds)
def test_td3x_report_judges_the_registered_runs_only_with_the_file(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_condition(runs, "all_vary", ALL_VARY, N)
    write_condition(runs, "weights", EQUAL, N)
    write_condition(runs, "warmup", FOUR, N)
    registration = small_registration(tmp_path, N)
    common = ["--plotly", "none", "--reps", "50"]
    registered = ["--preregistration", str(registration)]
    assert report_main([str(runs), "--out", str(tmp_path / "with"), *common, *registered]) == 0
    table = pd.read_csv(tmp_path / "with" / "seed_study_registered.csv")
    primary = table[table["statistic"] == PRIMARY].set_index("condition")
    assert primary.loc["weights", "status"] == CLAIM and primary.loc["warmup", "status"] == "not shown"
    assert primary.loc["warmup", "ratio"] == pytest.approx(4.0) and (primary["runs"] == N).all()
    assert (table["power_normal_ratio_1"] == 0.835).all() and (table["cpu_capability"] == "AVX2").all()
    text = (tmp_path / "with" / "report.md").read_text()
    assert "**Registered seed study.**" in text and "claims equivalence with probability 83.5%" in text
    assert "These are the registered seed study's runs: this table shows them" in text  # the usual table's note
    cells = pd.read_csv(tmp_path / "with" / "cells.csv")  # each condition has its own seeds: none lacks another's
    assert not cells["flagged"].any() and cells["not_averaged"].isna().all()
    assert report_main([str(runs), "--out", str(tmp_path / "without"), *common]) == 0
    assert not (tmp_path / "without" / "seed_study_registered.csv").exists()
    without = (tmp_path / "without" / "report.md").read_text()
    assert "Registered seed study" not in without and "This report states no power for 6 runs" in without
    assert pd.read_csv(tmp_path / "without" / "cells.csv")["flagged"].all()  # without the file, it cannot know
