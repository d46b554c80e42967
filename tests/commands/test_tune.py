"""td3x-tune (td3x.commands.tune, td3x.tuning): a Pendulum study of K=2 seeds per trial through the real console script,
with a search space built so that a trial must be pruned, its scores and pruning read back from the trials' own
eval.csv, its summary and fresh-seed score; a study SIGKILLed mid-trial and relaunched ends as an uninterrupted one; two
processes on one journal train each trial once; bad input is one line and exit code 2 before anything trains. The
tuning library's own units (scores, search spaces): tests/tuning/."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.run_files import without_timing
from helpers.runs import TINY_NETWORKS
from helpers.scripts import BIN, exit_code
from helpers.wandb_records import find_run_files, read_run

from td3x.commands import tune

# a trial: 2 seeds x 300 env steps of Pendulum, evaluated every 100 (about a second)
TRIAL = (
    *TINY_NETWORKS,
    "run.eval_episodes=2",  # the scores the median rule compares, each evaluation on two start states
    "run.total_steps=300",
    "run.eval_every=100",
    "env.random_steps=100",
    "run.num_seeds=2",
    "logging.wandb_mode=disabled",
)
# a hopeless region by construction: under gravity 10 Pendulum returns about -1300 at every evaluation of these
# short runs, under gravity 0 about -1000 (the pendulum stays where it starts), whatever τ is
GRAVITY_SPACE = """\
env.kwargs.g: {distribution: categorical, choices: [0.0, 10.0]}
agent.tau: {distribution: float, low: 0.004, high: 0.006}
"""


def tune_command(study_dir: Path, *arguments: str) -> list[str]:
    return [str(BIN / "td3x-tune"), str(study_dir), *arguments]


def eval_means(seed_dir: Path) -> dict[int, float]:
    with (seed_dir / "eval.csv").open() as file:
        return {int(row["step"]): float(row["return_mean"]) for row in csv.DictReader(file)}


def running_score(trial_dir: Path, step: int) -> float:
    """By hand: the mean over the trial's two seeds of the mean of their evaluations up to ``step``."""
    per_seed = [[v for s, v in eval_means(trial_dir / f"seed_{k}").items() if s <= step] for k in (0, 1)]
    return statistics.mean(statistics.mean(values) for values in per_seed)


def trials_table(study_dir: Path) -> list[dict[str, str]]:
    with (study_dir / "summary" / "trials.csv").open() as file:
        return list(csv.DictReader(file))


@pytest.fixture(scope="module")
def pruned_study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    root = tmp_path_factory.mktemp("tune")
    space = root / "gravity.yaml"
    space.write_text(GRAVITY_SPACE)
    study_dir = root / "gravity"
    arguments = ("--search", str(space), "--trials", "4", "--sampler", "random", "--startup-trials", "1")
    result = subprocess.run(
        tune_command(study_dir, *TRIAL, *arguments, "--fresh-seeds", "2"), capture_output=True, text=True, timeout=300
    )
    return study_dir, result


@pytest.mark.slow
def test_a_study_prunes_the_hopeless_region_by_the_median_rule(pruned_study: tuple[Path, Any]) -> None:
    study_dir, result = pruned_study
    assert result.returncode == 0, result.stderr
    rows = trials_table(study_dir)
    assert [row["trial"] for row in rows] == ["0", "1", "2", "3"]
    pruned = [row for row in rows if row["state"] == "pruned"]
    complete = [row for row in rows if row["state"] == "complete"]
    assert pruned and complete, rows
    for row in pruned:
        step, trial_dir = int(row["pruned_at_step"]), study_dir / row["run_dir"]
        assert float(row["env.kwargs.g"]) == 10.0  # only the hopeless region is cut
        earlier = [r for r in complete if int(r["trial"]) < int(row["trial"])]
        median = statistics.median(running_score(study_dir / r["run_dir"], step) for r in earlier)
        assert running_score(trial_dir, step) < median  # the median rule, recomputed from the files
        assert max(eval_means(trial_dir / "seed_0")) == step  # it stopped at that evaluation
        summary = json.loads((trial_dir / "seed_0" / "summary.json").read_text())
        assert summary["status"] == "failed" and summary["failure"].startswith("TrialPruned")
    for row in complete:
        assert float(row["score"]) == pytest.approx(running_score(study_dir / row["run_dir"], 300), abs=1e-9)


@pytest.mark.slow
def test_a_study_writes_its_summary_and_the_fresh_seed_score_beside_the_search_score(
    pruned_study: tuple[Path, Any],
) -> None:
    study_dir, result = pruned_study
    summary = json.loads((study_dir / "summary" / "summary.json").read_text())
    rows = trials_table(study_dir)
    best = max((row for row in rows if row["state"] == "complete"), key=lambda row: float(row["score"]))
    assert summary["best_trial"] == int(best["trial"]) and summary["search_score"] == pytest.approx(
        float(best["score"])
    )
    fresh = summary["fresh"]
    assert fresh["seeds"] == [2, 3]  # after the trials' seeds 0 and 1
    fresh_dir = study_dir / f"fresh_trial_{best['trial']}"
    by_hand = [statistics.mean(eval_means(fresh_dir / f"seed_{k}").values()) for k in (2, 3)]
    assert fresh["score"] == pytest.approx(statistics.mean(by_hand), abs=1e-9)
    low, high = fresh["interval95"]
    assert low < fresh["score"] < high
    config = yaml.safe_load((fresh_dir / "seed_2" / "config.yaml").read_text())
    assert config["agent"]["tau"] == summary["best_params"]["agent.tau"] and config["logging"]["group"] == "gravity"
    assert summary["trials"]["pruned"] >= 1 and summary["compute"]["trial_env_steps"] > 0
    compute, trials_cpu = summary["compute"], [float(row["cpu_time_s"]) for row in rows]
    assert compute["trial_cpu_time_s"] == pytest.approx(sum(trials_cpu)) and min(trials_cpu) > 0  # pruned ones too
    fresh_process = json.loads((fresh_dir / "seed_2" / "summary.json").read_text())
    assert compute["fresh_cpu_time_s"] == fresh["cpu_time_s"] == fresh_process["cpu_time_s"] > 0
    for name in ("history.png", "params.png"):
        assert (study_dir / "summary" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    markdown = (study_dir / "summary" / "summary.md").read_text()
    assert "search score" in markdown and "fresh-seed score" in markdown
    assert f"s of training in trials ({compute['trial_cpu_time_s']:.0f} s of CPU time)" in markdown
    assert "on fresh seeds [2, 3]" in result.stderr


def study_eval_rows(study_dir: Path) -> dict[str, list[dict[str, object]]]:
    return {
        str(path.relative_to(study_dir)): without_timing(path) for path in sorted(study_dir.glob("trial_*/*/eval.csv"))
    }


STUDY = (*TRIAL, "run.total_steps=400", "run.checkpoint_every=200")
STUDY_OPTIONS = ("--trials", "3", "--startup-trials", "3", "--fresh-seeds", "0")  # no trial pruned before its kill


@pytest.mark.slow
def test_a_study_killed_mid_trial_and_relaunched_ends_as_an_uninterrupted_one(tmp_path: Path) -> None:
    straight = subprocess.run(
        tune_command(tmp_path / "straight", *STUDY, *STUDY_OPTIONS), capture_output=True, text=True, timeout=300
    )
    assert straight.returncode == 0, straight.stderr
    killed = tmp_path / "killed"
    process = subprocess.Popen(
        tune_command(killed, *STUDY, *STUDY_OPTIONS), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while not (killed / "trial_1" / "checkpoint.pt").exists():  # trial 1 at env step 200 of 400
        assert process.poll() is None and time.monotonic() < deadline, "the study ended before its kill"
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert json.loads((killed / "trial_1" / "seed_0" / "summary.json").read_text())["status"] == "running"
    relaunched = subprocess.run(
        tune_command(killed, *STUDY, *STUDY_OPTIONS), capture_output=True, text=True, timeout=300
    )
    assert relaunched.returncode == 0, relaunched.stderr
    assert "trial 1: its process is gone; resuming it" in relaunched.stderr
    columns = ("trial", "state", "score", "agent.actor_lr", "agent.critic_lr", "agent.tau", "agent.policy_delay")
    assert [[row[c] for c in columns] for row in trials_table(killed)] == [
        [row[c] for c in columns] for row in trials_table(tmp_path / "straight")
    ]
    assert study_eval_rows(killed) == study_eval_rows(tmp_path / "straight")


@pytest.mark.slow
def test_two_processes_on_one_journal_train_each_trial_once(tmp_path: Path) -> None:
    command = tune_command(tmp_path / "shared", *TRIAL, "--trials", "4", "--fresh-seeds", "0")
    processes = [subprocess.Popen(command, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    logs = [process.communicate(timeout=300)[1] for process in processes]
    assert [process.returncode for process in processes] == [0, 0], logs
    told = [re.findall(r"trial (\d+) (?:complete|pruned)", log) for log in logs]
    assert sorted(int(n) for numbers in told for n in numbers) == [0, 1, 2, 3], told  # each once, none twice
    rows = trials_table(tmp_path / "shared")
    assert len(rows) == 4 and all(row["state"] in ("complete", "pruned") for row in rows)
    for trial_dir in (tmp_path / "shared").glob("trial_*"):  # one attempt each: every evaluation once
        steps = list(eval_means(trial_dir / "seed_0"))
        assert steps == sorted(set(steps))


@pytest.mark.slow
def test_each_trial_seed_is_a_wandb_run_in_the_study_group(tmp_path: Path) -> None:
    environment = {**{k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}, "WANDB_MODE": "offline"}
    command = tune_command(
        tmp_path / "wandb_study", *TRIAL, "run.total_steps=200", "logging.wandb_mode=offline", "--trials", "1"
    )
    result = subprocess.run(
        [*command, "--fresh-seeds", "0"], capture_output=True, text=True, timeout=300, env=environment
    )
    assert result.returncode == 0, result.stderr
    for seed in (0, 1):
        (wandb_file,) = find_run_files(tmp_path / "wandb_study" / "trial_0" / f"seed_{seed}")
        wandb_run = read_run(wandb_file)
        assert wandb_run.group == "wandb_study" and wandb_run.config["seed"] == seed


# ---------------------------------------------------------------------- bad input: one line, exit 2, nothing made
@pytest.mark.parametrize(
    ("space", "expected"),
    [
        ("agent.polcy_delay: {distribution: int, low: 1, high: 3}", "did you mean agent.policy_delay?"),
        ("agent.updates_per_step: {distribution: float, low: 1, high: 4}", "draws fractional values"),
        ("agent.tau: {distribution: float, low: 0.02, high: 0.001}", "is empty or reversed"),
        ("agent.tau: {distribution: float, low: 0.01, high: 0.01}", "is empty or reversed"),
        ("agent.tau: {distribution: float, low: 0.01, high: 1.5}", "agent.tau=1.5 is not allowed: must be in (0, 1]"),
        ("agent.actor_lr: {distribution: log_float, low: 0.0, high: 0.1}", "needs low > 0"),
        ("noise.kind: {distribution: categorical, choices: [gaussian, pink]}", "expected one of gaussian"),
        ("seed: {distribution: int, low: 0, high: 9}", "seed cannot be searched"),
        ("agent.n_critics: {distribution: categorical, choices: [2, 0]}", "agent.n_critics=0 is not allowed"),
        ("agent.tau: {distribution: gaussian, low: 0.01, high: 0.02}", "an entry takes distribution"),
    ],
)
def test_a_bad_search_space_is_one_line_and_exit_2(
    space: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "space.yaml").write_text(space + "\n")
    study_dir = tmp_path / "study"
    assert exit_code(tune.main, [str(study_dir), "--search", str(tmp_path / "space.yaml"), *TRIAL]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("config error: ") and expected in lines[0], lines
    assert not study_dir.exists()


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["--metric", "last10"], "--metric last10 is not a metric td3x logs: choose one of mean_return"),
        (["agent.polcy_delay=3"], "did you mean agent.policy_delay?"),
        (["agent.tau=2"], "agent.tau=2.0 is not allowed"),
        (["agent.tau=0.01"], "agent.tau is both set on the command line and searched"),
        (["--search", "td3_cor"], "no such file or option of conf/search/ (options: td3_core"),
        (["--pruner", "none", "--percentile", "50"], "--percentile is the percentile pruner's: it needs --pruner"),
        (["agent.hidden_sizes=[32"], "agent.hidden_sizes=[32: no viable alternative at input '[32'"),
        (["seed=0,1"], "Ambiguous value for argument 'seed=0,1'"),  # a sweep: a study trains one config a trial
    ],
)
def test_bad_options_and_overrides_are_one_line_and_exit_2(
    arguments: list[str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study_dir = tmp_path / "study"
    assert exit_code(tune.main, [str(study_dir), *TRIAL, *arguments]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and expected in lines[0], lines
    assert not study_dir.exists()


@pytest.mark.slow
def test_a_drawn_combination_td3x_refuses_fails_its_trial_and_leaves_no_trial_dir(tmp_path: Path) -> None:
    # every value passes the check before the study starts (300 with 64, 1000 with 512); a draw of 300 with 512
    # cannot: the buffer would not hold one mini-batch. The sampler's seed 3 draws it first, then 1000 with 64
    (tmp_path / "space.yaml").write_text(
        "agent.buffer_size: {distribution: categorical, choices: [300, 1000]}\n"
        "agent.batch_size: {distribution: categorical, choices: [64, 512]}\n"
    )
    study_dir = tmp_path / "study"
    base = [override for override in TRIAL if not override.startswith("agent.batch_size=")]
    arguments = ("--search", str(tmp_path / "space.yaml"), "--trials", "2", "--sampler", "random", "--study-seed", "3")
    result = subprocess.run(tune_command(study_dir, *base, *arguments), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = trials_table(study_dir)
    refused = [row for row in rows if (row["agent.buffer_size"], row["agent.batch_size"]) == ("300", "512")]
    assert refused and len(refused) < len(rows), rows  # the seed draws both kinds of trial
    for row in rows:
        if row in refused:  # failed before training: the lock had made its dir, and nothing was written in it
            assert row["state"] == "fail" and row["run_dir"] == "", row
            assert "agent.buffer_size=300 is not allowed: must be >= agent.batch_size (512)" in row["failure"]
            assert not (study_dir / f"trial_{row['trial']}").exists()
        else:
            assert row["state"] == "complete" and (study_dir / row["run_dir"] / "seed_0" / "eval.csv").is_file()


def test_a_dir_that_is_not_a_study_s_is_refused_and_left_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "a_run"
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text("seed: 0\n")
    assert exit_code(tune.main, [str(run_dir), *TRIAL]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"config error: {run_dir} holds files but no study: name a new or empty dir, or a study's dir to resume it"
    ]
    assert [path.name for path in run_dir.iterdir()] == ["config.yaml"]
    assert exit_code(tune.main, ["", *TRIAL]) == 2  # an unset shell variable would name the working dir
    assert "argument study_dir: an empty path" in capsys.readouterr().err


def test_an_override_where_the_study_dir_goes_names_the_missing_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``config error: logging.group=run.total_steps=3000: mismatched input '=' expecting <EOF>``."""
    monkeypatch.chdir(tmp_path)
    assert exit_code(tune.main, ["--trials", "8", "run.total_steps=3000"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "td3x-tune: error: argument study_dir: missing: run.total_steps=3000 is an override, and the study's dir "
        "comes first: td3x-tune STUDY_DIR [OVERRIDE ...] (see td3x-tune --help)"
    ]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_relaunch_with_other_settings_is_refused(
    pruned_study: tuple[Path, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    study_dir, _ = pruned_study
    journal = (study_dir / "study.journal").read_bytes()
    assert exit_code(tune.main, [str(study_dir), *TRIAL, "--metric", "final_return"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "holds a study with other settings" in lines[0] and "metric" in lines[0], lines
    assert (study_dir / "study.journal").read_bytes() == journal
