"""The seed study end to end: ``+experiment=seed_study`` as a real Hydra multirun of short Pendulum runs (N = 3), then
``td3x-report`` on its folder: the section, its csv files and plots, and a determinism control with zero spread.
And the statistics' small hand-checkable cases."""

from __future__ import annotations

import csv
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers.runs import TINY_NETWORKS
from helpers.sweeps import td3x
from scipy import stats

from td3x.analysis.reading.runs import find_runs
from td3x.analysis.reading.source_studies import CONDITIONS, Sample, study_sources
from td3x.analysis.stats.spread_tests import ratio_interval, sd_interval
from td3x.commands.report import main as report_main
from td3x.rundir.layout import is_timing_column

N = 3
STUDY = (
    "+experiment=seed_study",
    "env=pendulum",
    f"seeds.evaluation_sets={N}",
    "run.total_steps=400",
    "run.eval_every=200",
    "run.eval_episodes=2",
    "env.random_steps=200",
    *TINY_NETWORKS,
)


def test_the_sd_interval_is_the_chi_square_one() -> None:
    low, high = sd_interval(2.0, 5)  # 4 degrees of freedom: χ²(0.975) = 11.143, χ²(0.025) = 0.4844
    assert low == pytest.approx(2.0 * math.sqrt(4 / 11.1433), rel=1e-4)
    assert high == pytest.approx(2.0 * math.sqrt(4 / 0.48442), rel=1e-4)
    assert all(math.isnan(x) for x in sd_interval(1.0, 1))


def test_the_ratio_interval_is_the_f_one_and_contains_the_ratio() -> None:
    low, high = ratio_interval(1.0, 5, 5)  # F(4, 4): 0.975 point 9.6045
    assert low == pytest.approx(1 / math.sqrt(9.6045), rel=1e-4) and high == pytest.approx(math.sqrt(9.6045), rel=1e-4)
    assert stats.f.ppf(0.975, 4, 4) == pytest.approx(9.6045, rel=1e-4)


def test_a_run_ends_below_its_start_when_its_final_return_is_under_its_step_0_return() -> None:
    steps = np.array([0, 5, 10])
    assert Sample("unlearned", steps, np.array([50.0, 60.0, 40.0])).below_start
    assert not Sample("learned", steps, np.array([50.0, 40.0, 60.0])).below_start
    assert not Sample("no step 0", np.array([5, 10]), np.array([60.0, 40.0])).below_start


def rows(path: Path) -> list[dict[str, str]]:
    with path.open() as file:
        return list(csv.DictReader(file))


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sweep = tmp_path_factory.mktemp("study") / "seed_study"
    result = td3x("td3x.commands.train", *STUDY, f"hydra.sweep.dir={sweep}")
    assert result.returncode == 0, result.stderr[-3000:]
    return sweep


@pytest.mark.slow
def test_the_study_trains_each_condition_with_only_its_source_varying(study: Path) -> None:
    jobs = sorted(path.name for path in (study / "pendulum" / "none").iterdir() if path.is_dir())
    assert len(jobs) == 10 and len(set(jobs)) == 10  # every condition and both repeats: a dir each
    replay_job = study / "pendulum" / "none" / next(job for job in jobs if "seed_study=replay," in job)
    configs = [yaml.safe_load((replay_job / f"seed_{k}" / "config.yaml").read_text()) for k in range(N)]
    effective = [config["effective_seeds"] for config in configs]
    assert [seeds["replay"] for seeds in effective] == [0, 1, 2]  # the varying source moves with the seed
    assert {seeds["weights"] for seeds in effective} == {0} and {seeds["env"] for seeds in effective} == {0}
    evaluation_job = study / "pendulum" / "none" / next(job for job in jobs if "seed_study=evaluation," in job)
    header = rows(evaluation_job / "eval.csv")[0]
    assert {f"return_mean_set_{j}" for j in range(1, N)} <= set(header)  # one run, N sets of start states


@pytest.fixture(scope="module")
def report(study: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    assert report_main([str(study), "--out", str(out), "--plotly", "none", "--reps", "200"]) == 0
    return out


@pytest.mark.slow
def test_td3x_report_writes_the_study_and_the_control_has_zero_spread(report: Path) -> None:
    out = report
    spreads = pd.read_csv(out / "seed_sources.csv")
    assert list(dict.fromkeys(spreads["condition"])) == list(CONDITIONS)
    assert set(spreads["n"]) == {N, 2}  # N runs a condition, N evaluation sets, two repeats
    repeat = spreads[spreads["condition"] == "repeat"]
    assert (repeat["sd"] == 0).all() and repeat["bit_identical"].all()  # the determinism control: no degenerate
    assert repeat[["sd_low", "sd_high", "ratio_to_all_vary", "brown_forsythe_p"]].isna().all().all()  # statistics
    all_vary = spreads[spreads["condition"] == "all_vary"]
    assert (all_vary["sd"] > 0).all() and (all_vary["ratio_to_all_vary"] == 1).all()
    weights = spreads[(spreads["condition"] == "weights") & (spreads["statistic"] == "final")].iloc[0]
    assert weights["sd_low"] < weights["sd"] < weights["sd_high"] and 0 <= weights["brown_forsythe_p"] <= 1
    runs = pd.read_csv(out / "seed_sources_runs.csv")
    assert len(runs) == 7 * N + N + 2 and runs["outlier"].dtype == bool and runs["below_start"].dtype == bool
    report = (out / "report.md").read_text()
    assert "## Sources of seed variance" in report and "Brown-Forsythe" in report and "Measurement" in report
    assert "| repeat | 2 | bit-identical: yes | — | — | bit-identical: yes | — | — |" in report
    # every source condition's seed 0 is all_vary's seed 0 (the others pinned to 0): disclosed
    assert "**Shared run.** In 6 of 6 source conditions a run is bit for bit all_vary's run" in report
    for name in ("seed_sources_curves_Pendulum-v1.png", "seed_sources_strip_Pendulum-v1.png"):
        assert (out / "plots" / name).stat().st_size > 10_000


@pytest.mark.slow
def test_the_two_repeats_are_bit_identical(study: Path) -> None:
    repeats = sorted((study / "pendulum" / "none").glob("*seed_study=repeat_*"))
    assert len(repeats) == 2
    first, second = (
        [{k: v for k, v in row.items() if not is_timing_column(k)} for row in rows(r / "eval.csv")] for r in repeats
    )
    assert first == second and len(first) == 3
    assert not np.isnan([float(row["return_mean"]) for row in first]).any()


@pytest.mark.slow
def test_running_the_study_again_finds_every_job_complete(study: Path) -> None:
    again = td3x("td3x.commands.train", *STUDY, f"hydra.sweep.dir={study}")
    assert again.returncode == 0, again.stderr[-3000:]
    logs = [(job / "train.log").read_text() for job in (study / "pendulum" / "none").iterdir() if job.is_dir()]
    assert len(logs) == 10 and all("already holds a complete run" in log for log in logs)


@pytest.mark.slow
def test_two_studies_of_one_env_in_one_folder_stay_apart(study: Path, tmp_path: Path) -> None:
    # the experiment's sweep dir is literal: a second study of Pendulum with another agent lands in the same folder
    shutil.copytree(study, tmp_path / "first")
    shutil.copytree(study, tmp_path / "second")
    for path in (tmp_path / "second").rglob("config.yaml"):
        config = yaml.safe_load(path.read_text())
        if isinstance(config, dict) and "choices" in config:
            config["choices"]["agent"] = "td3_paper"
            path.write_text(yaml.safe_dump(config))
    studies = study_sources(find_runs([tmp_path]))
    assert sorted(s.label for s in studies) == [
        "Pendulum-v1 TD3 agent=td3 noise=gaussian",
        "Pendulum-v1 TD3 agent=td3_paper noise=gaussian",
    ]
    for found in studies:  # each study holds only its own runs: N a condition, as in one folder alone
        assert len(found.samples["weights"]) == N and len(found.samples["repeat"]) == 2


@pytest.mark.slow
def test_a_clean_study_s_report_warns_of_nothing(report: Path) -> None:
    # evaluation and the repeats train one seed by design: no seed is missing, and no cell is marked (!)
    text = (report / "report.md").read_text()
    assert pd.read_csv(report / "not_averaged.csv").empty
    assert "0 cells are marked (!)" in text and "(!)" not in text.split("## ", 1)[1]
    assert "no run dir" not in text and "No cell has" not in text  # the N-seeds section of cells of 6+ seeds
    assert "None: every cell averages all its seeds." in text
    rows = pd.read_csv(report / "table2.csv")["row"]
    assert sorted(rows) == sorted(f"TD3 [seed_study={name}]" for name in (*CONDITIONS[:-1], "repeat_1", "repeat_2"))


def launch_dirs(folder: Path, marker: str) -> list[str]:
    return sorted(str(path) for path in (folder / "pendulum" / "none").iterdir() if marker in path.name)


@pytest.mark.slow
def test_a_folder_holding_two_launches_is_refused_in_one_line_and_each_launch_reports_alone(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the experiment's sweep dir is literal: an aborted try with other steps lands in the same folder
    folder = tmp_path / "seed_study"
    shutil.copytree(study, folder)
    aborted = [*(o for o in STUDY if not o.startswith("run.total_steps=")), "run.total_steps=300"]
    only = "hydra.sweeper.params.seed_study='all_vary,repeat_1'"
    tried = td3x("td3x.commands.train", *aborted, only, f"hydra.sweep.dir={folder}")
    assert tried.returncode == 0, tried.stderr[-3000:]
    capsys.readouterr()
    assert report_main([str(folder), "--out", str(tmp_path / "both"), "--plotly", "none", "--reps", "50"]) == 2
    error = capsys.readouterr().err
    assert len(error.splitlines()) == 1 and not (tmp_path / "both").exists()
    assert "2 launches" in error and "run.total_steps=300: 2 job dirs" in error
    assert "run.total_steps=400: 10 job dirs" in error and "td3x-report DIR [DIR ...]" in error
    one = launch_dirs(folder, "run.total_steps=400")
    assert report_main([*one, "--out", str(tmp_path / "one"), "--plotly", "none", "--reps", "50"]) == 0
    assert pd.read_csv(tmp_path / "one" / "not_averaged.csv").empty
    assert pd.read_csv(tmp_path / "one" / "seed_sources.csv")["study"].unique().tolist() == ["Pendulum-v1"]
