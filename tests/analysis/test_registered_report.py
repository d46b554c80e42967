"""The pre-registered tests at the paper's horizon and in the report: 1M-step runs written cheaply (step 0, one
evaluation before the registered window and its 10 evaluations 955000..1000000) against the authors' packaged
curves, the committed pre-registration file on registered runs, and ``td3x-report --preregistration`` end to end,
reading registered.csv back."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers.registered_runs import HORIZON_STEPS, PREREGISTRATION, small_registration, write_registered_run
from helpers.report_markdown import late_verdicts
from scipy import stats

from td3x.analysis.cells import make_grid
from td3x.analysis.paper import authors_curves, authors_statistic
from td3x.analysis.registered import RegisteredTest, registered_runs, registered_tests
from td3x.analysis.registration import read_registration
from td3x.analysis.runs import find_runs
from td3x.analysis.two_sample import MAX_POOLED, mean_difference_permutation_test
from td3x.commands.report import main

CHEETAH = "HalfCheetah-v5"


def write_horizon_runs(root: Path, seeds: range, values: list[float]) -> None:
    """1M-step td3x runs of ``seeds``: −1 at step 0, 0 at 950000 (outside the window), ``value`` at 955000..1M."""
    for seed, value in zip(seeds, values, strict=True):
        write_registered_run(root, CHEETAH, seed, value, steps=HORIZON_STEPS, at={950000: 0.0})


def judged(root: Path, registration: Path) -> dict[tuple[str, str], RegisteredTest]:
    found = registered_tests(read_registration(registration), find_runs([root]))
    return {(t.design.section, t.design.env_id): t for t in found}


def test_the_paper_horizon_against_the_authors_by_scipy(tmp_path: Path) -> None:
    """3 seeds (the small file's paper_horizon.seeds) returning 9500, 9600, 9700 over 955000..1000000 and 0 at
    950000 against the authors' 10 seeds' mean over the same steps (their entries 191..200): the statistic
    averages exactly those 10 evaluations; Welch's p and both one-sided tests at the bound 1907 are scipy's
    ttest_ind (equal_var=False) on the same values; the family is one env, so Holm leaves the TOST p as it is.
    Table 1: our seed-mean curve peaks at 9600 (the 0 at 950000 is below it), the authors' at the file's
    table1_authors."""
    write_horizon_runs(tmp_path / "runs", range(4000, 4003), [9500.0, 9600.0, 9700.0])
    registration = small_registration(tmp_path)
    test = judged(tmp_path / "runs", registration)["paper_horizon", CHEETAH]
    outcome = test.outcome
    assert outcome is not None and list(outcome.steps) == list(range(955000, 1000001, 5000))
    assert list(outcome.ours) == [9500, 9600, 9700]
    authors = authors_statistic(CHEETAH, 955000, 1000000)
    assert authors is not None and np.array_equal(outcome.other, authors) and len(authors) == 10
    assert round(float(authors.mean()), 2) == read_registration(registration).value(
        "paper_horizon.computed.authors_mean"
    )
    x = outcome.ours
    assert outcome.test.p == pytest.approx(stats.ttest_ind(x, authors, equal_var=False).pvalue)
    above = stats.ttest_ind(x + 1907, authors, equal_var=False, alternative="greater").pvalue
    below = stats.ttest_ind(x - 1907, authors, equal_var=False, alternative="less").pvalue
    assert outcome.tost.p == pytest.approx(max(above, below)) and test.holm_tost_p == pytest.approx(outcome.tost.p)
    assert test.decision == "equivalent within ±1907" and outcome.tost.inside
    assert outcome.table1 is not None and outcome.table1[0] == pytest.approx(9600)
    assert outcome.table1[1] == pytest.approx(9636.95, abs=0.01)
    curves = authors_curves(CHEETAH)
    assert curves is not None and outcome.at_end.difference == pytest.approx(9600 - curves[:, -1].mean())
    assert outcome.warmup_in is None and test.design.table1_at_5 == 9657.22


def test_the_committed_file_on_its_registered_runs(tmp_path: Path) -> None:
    """The committed file: bf16 and fp32 runs of seeds 2000..2009 on HalfCheetah-v5 (its n_per_side, 10) give a
    complete bf16 test at the bound 645 with the MDD 427.04, but no verdict while bf16's Walker2d-v5, its family,
    has no run; the fp32 runs are also the peer comparison's td3x side, which is then incomplete (10 of 24 runs,
    SB3's 14 missing). Five 1M runs of seeds 4000..4004 make the paper_horizon test."""
    root = tmp_path / "runs"
    for seed in range(2000, 2010):
        write_registered_run(root, CHEETAH, seed, 3000.0 + seed % 7)
        write_registered_run(root, CHEETAH, seed, 3001.0 + seed % 5, precision="bf16")
    write_horizon_runs(root, range(4000, 4005), [9000.0, 9200.0, 9400.0, 9600.0, 9800.0])
    found = judged(root, PREREGISTRATION)
    assert list(found) == [("peer", CHEETAH), ("bf16", CHEETAH), ("paper_horizon", CHEETAH)]
    bf16 = found["bf16", CHEETAH]
    assert bf16.outcome is not None and len(bf16.outcome.ours) == len(bf16.outcome.other) == 10
    assert (bf16.design.bound, bf16.design.mdd, bf16.outcome.tost.p < 0.001) == (645, 427.04, True)
    assert bf16.decision == "no verdict yet: the family's Walker2d-v5 not complete"
    assert bf16.outcome.permutation.relabellings == 184_756  # C(20, 10), counted exactly
    peer = found["peer", CHEETAH]
    assert peer.decision == "incomplete: 10 of 24 runs" and peer.other.missing == tuple(range(2000, 2014))
    horizon = found["paper_horizon", CHEETAH]
    assert horizon.outcome is not None and horizon.decision in ("equivalent within ±1907", "equivalence not shown")
    assert len(horizon.outcome.steps) == 10 and horizon.design.mdd == 1510.17


def test_the_general_tables_keep_an_amendment_s_runs_apart_and_expect_each_side_s_registered_seeds(
    tmp_path: Path,
) -> None:
    """bf16 runs of seeds 2000..2002 (the bf16 comparison's, old code) and 2100..2102 (the amendment's: the same
    config, new code), fp32 runs of 2000..2002 on Walker2d-v5, and on HalfCheetah-v5 td3x's 2000..2002 against
    SB3's 2000..2004 (n_sb3 = 5). Without the registration the grid pools the two bf16 codes into one cell of six
    seeds and marks the fp32 cells as lacking 2100..2102 and 2003..2004; with it, the amendment's runs are a row
    of their own and no cell lacks a seed; a registered seed without a run is marked, even one no run on the env
    has."""
    root = tmp_path / "runs"
    for seed in range(2000, 2003):
        write_registered_run(root, "Walker2d-v5", seed, 400.0, precision="fp32")
        write_registered_run(root, "Walker2d-v5", seed, 100.0, precision="bf16")
        write_registered_run(root, "Walker2d-v5", seed + 100, 450.0, precision="bf16")
        write_registered_run(root, CHEETAH, seed, 3000.0, precision="fp32")
    for seed in range(2000, 2005):
        write_registered_run(root, CHEETAH, seed, 3100.0, paper_row="SB3 TD3")
    runs = find_runs([root])
    pooled = make_grid(runs)
    bf16, fp32 = "TD3 [run.precision=bf16]", "TD3 [run.precision=fp32]"
    assert pooled.rows == [bf16, fp32, "SB3 TD3"]
    assert pooled.cells[bf16, "Walker2d-v5"].seeds == [2000, 2001, 2002, 2100, 2101, 2102]
    assert pooled.cells[fp32, "Walker2d-v5"].missing_seeds == (2100, 2101, 2102)
    assert pooled.cells[fp32, CHEETAH].missing_seeds == (2003, 2004)
    registration = small_registration(tmp_path, **{"peer.computed.HalfCheetah-v5.n_sb3": 5})
    tests = registered_tests(read_registration(registration), runs)
    grid = make_grid(runs, registered_runs(tests))
    amendment = f"{bf16} (bf16_fp32_tanh)"
    assert grid.rows == [bf16, amendment, fp32, "SB3 TD3"]
    assert grid.cells[bf16, "Walker2d-v5"].seeds == [2000, 2001, 2002]
    assert grid.cells[amendment, "Walker2d-v5"].seeds == [2100, 2101, 2102]
    assert not any(cell.flagged for cell in grid.cells.values())
    assert grid.cells[("SB3 TD3", CHEETAH)].seeds == [2000, 2001, 2002, 2003, 2004]
    six = small_registration(tmp_path, **{"peer.computed.HalfCheetah-v5.n_sb3": 6})  # a registered seed no run has
    lacking = make_grid(runs, registered_runs(registered_tests(read_registration(six), runs)))
    assert [key for key, cell in lacking.cells.items() if cell.flagged] == [("SB3 TD3", CHEETAH)]
    assert lacking.cells["SB3 TD3", CHEETAH].missing_seeds == (2005,)


def listed_permutation_test(x: list[float], y: list[float]) -> tuple[float, float]:
    """The registered permutation test by listing every relabelling: its p and smallest possible p."""
    pooled, n = np.array(x + y), len(x)
    differences = []
    for chosen in itertools.combinations(range(len(pooled)), n):
        first = np.zeros(len(pooled), dtype=bool)
        first[list(chosen)] = True
        differences.append(abs(pooled[first].mean() - pooled[~first].mean()))
    found, tolerance = np.array(differences), 1e-9 * (np.abs(pooled).max() + 1)
    observed = abs(np.mean(x) - np.mean(y))
    return float(np.mean(found >= observed - tolerance)), float(np.mean(found >= found.max() - tolerance))


def test_the_registered_permutation_test_counts_every_relabelling_of_the_difference_of_means() -> None:
    """By hand: 0, 1 against 2, 3 has 6 relabellings whose differences of means are -2, -1, 0, 0, 1, 2, so p = 2/6.
    Against listing every relabelling (ties included, sizes 2 to 7): the same p and smallest p. Equal means: p = 1.
    10 against 14 (C(24, 10) = 1961256 relabellings) counts in milliseconds; more than MAX_POOLED values are refused."""
    by_hand = mean_difference_permutation_test(np.array([0.0, 1.0]), np.array([2.0, 3.0]))
    assert (by_hand.p, by_hand.smallest, by_hand.relabellings) == (pytest.approx(1 / 3), pytest.approx(1 / 3), 6)
    rng = np.random.default_rng(0)
    for n, m, decimals in [(2, 7, 0), (3, 5, 1), (5, 5, 0), (7, 2, 2), (4, 6, 1)]:
        x, y = list(rng.normal(0, 2, n).round(decimals)), list(rng.normal(1, 2, m).round(decimals))
        counted = mean_difference_permutation_test(np.array(x), np.array(y))
        assert (counted.p, counted.smallest) == pytest.approx(listed_permutation_test(x, y), abs=1e-12), (x, y)
    assert mean_difference_permutation_test(np.array([1.0, 3.0]), np.array([2.0, 2.0, 2.0])).p == 1.0
    shifted = mean_difference_permutation_test(rng.normal(10, 1, 10), rng.normal(0, 1, 14))
    assert shifted.relabellings == 1_961_256 and shifted.p == shifted.smallest == 1 / 1_961_256  # only itself
    assert np.isnan(mean_difference_permutation_test(np.ones(1), np.arange(3.0)).p)  # one value a side: no test
    with pytest.raises(ValueError, match=f"at most {MAX_POOLED} pooled values"):
        mean_difference_permutation_test(np.zeros(MAX_POOLED), np.zeros(1))


@pytest.mark.slow
def test_td3x_report_preregistration_writes_the_section_and_registered_csv(tmp_path: Path) -> None:
    """td3x-report on peer and horizon runs: with --preregistration, the section after the fidelity and peer
    section and registered.csv (read back: one line per comparison and env); without it, neither."""
    root = tmp_path / "runs"
    for env_id, shift in ((CHEETAH, 0.0), ("Walker2d-v5", 10.0)):
        for value, seed in enumerate(range(2000, 2003), start=1):
            write_registered_run(root, env_id, seed, value)
            write_registered_run(root, env_id, seed, value + shift, paper_row="SB3 TD3")
    write_horizon_runs(root, range(4000, 4003), [9500.0, 9600.0, 9700.0])
    registration = small_registration(tmp_path, **{f"peer.computed.{e}.bound": 3 for e in (CHEETAH, "Walker2d-v5")})
    command = [str(root), "--plotly", "none", "--reps", "20"]
    assert main([*command, "--out", str(tmp_path / "with"), "--preregistration", str(registration)]) == 0
    table = pd.read_csv(tmp_path / "with" / "registered.csv")
    assert list(zip(table["section"], table["env"], strict=True)) == [
        ("peer", CHEETAH),
        ("peer", "Walker2d-v5"),
        ("bf16", CHEETAH),
        ("bf16", "Walker2d-v5"),
        ("bf16_fp32_tanh", "Walker2d-v5"),
        ("paper_horizon", CHEETAH),
    ]
    peer = table.set_index(["section", "env"]).loc["peer"]
    assert list(peer["decision"]) == ["equivalent within ±3", "equivalence not shown"]
    assert list(peer["difference_decision"]) == ["no difference detected", "difference detected"]
    assert peer.loc[CHEETAH, "tost_p"] == pytest.approx(stats.t.sf(3 / np.sqrt(2 / 3), 4))
    assert list(peer["sd_ours"]) == list(peer["sd_other"]) == [1.0, 1.0]  # returns 1, 2, 3 a side (+10)
    pilots = yaml.safe_load(registration.read_text())["peer"]["computed"]
    assert list(peer["sd_assumed_other"]) == [pilots[env]["sb3_pilot"]["sd"] for env in (CHEETAH, "Walker2d-v5")]
    assert list(table["status"])[2:5] == ["incomplete: 3 of 6 runs"] * 3 and list(table["evaluations"]) == [
        2,
        2,
        0,
        0,
        0,
        10,
    ]
    markdown = (tmp_path / "with" / "report.md").read_text()
    section = markdown.index("## Pre-registered tests")
    assert markdown.index("Against the peer") < section < markdown.index("## Files")
    assert "never read as equivalence" in markdown and "biased upward at 5 seeds against 10" in markdown
    assert late_verdicts(markdown) == []  # each table's verdicts right after its env
    assert main([*command, "--out", str(tmp_path / "without")]) == 0
    assert not (tmp_path / "without" / "registered.csv").exists()
    assert "Pre-registered tests" not in (tmp_path / "without" / "report.md").read_text()


def test_td3x_report_refuses_registered_runs_it_cannot_judge_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two complete runs of one registered seed: exit 2, one line naming the seed, no traceback, nothing written.
    A bf16 run whose metrics.jsonl has a broken line is left out, as any unreadable run: its seed missing, the
    file and line named."""
    root, registration = tmp_path / "runs", small_registration(tmp_path)
    for seed in range(2000, 2003):
        write_registered_run(root, CHEETAH, seed, 1.0)
    write_registered_run(tmp_path / "again" / "runs", CHEETAH, 2001, 7.0)
    command = ["--plotly", "none", "--preregistration", str(registration), "--out", str(tmp_path / "out")]
    assert main([str(root), str(tmp_path / "again"), *command]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith(
        "report error: two complete registered td3x runs of seed 2001: "
    )
    assert not (tmp_path / "out").exists()
    bf16 = [write_registered_run(root, CHEETAH, seed, 1.0, precision="bf16") for seed in range(2000, 2003)]
    (bf16[1] / "metrics.jsonl").write_text('{"step": 1000, "actor_grad_norm": 0.5}\n{"step": 2000, "actor_')
    assert main([str(root), *command]) == 0  # a file it cannot read leaves its run out, named, as any run's
    table = pd.read_csv(tmp_path / "out" / "registered.csv").set_index(["section", "env"])
    assert table.loc[("bf16", CHEETAH), "status"] == "incomplete: 5 of 6 runs"
    assert table.loc[("bf16", CHEETAH), "missing_seeds"] == "bf16: 2001"
    assert f"{bf16[1] / 'metrics.jsonl'} line 2 is not valid JSON" in (tmp_path / "out" / "report.md").read_text()
