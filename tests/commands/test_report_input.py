"""td3x-report's bad input on real tiny runs: an empty or unwritable ``--out``, an ``--at-step`` past every run, a
``WANDB_MODE`` td3x-train refuses, each refused up front in one line with exit 2 and nothing written; and runs
without summary.json or eval.csv named as such in the runs not averaged."""

from __future__ import annotations

import json
import os
import resource
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pandas as pd
import pytest
from helpers.runs import TINY_SIZES

from td3x.commands.report import STAGING_PREFIX, main

# a tiny Pendulum run evaluated every 100 steps, its length and W&B mode given beside
RUN = ("env=pendulum", *TINY_SIZES, "env.random_steps=100", "run.eval_every=100")
FAST = ("--reps", "50", "--plotly", "none")  # the report's options that keep it to seconds


def report(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    """td3x-report in this process: (exit code, stderr's lines); argparse's refusals exit through SystemExit."""
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, capsys.readouterr().err.splitlines()


def files_below(path: Path) -> list[Path]:
    return sorted(path.rglob("*"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two real tiny Pendulum runs trained by td3x-train: ``long`` (300 steps, seed 0) and ``short`` (200, seed 1),
    rows of their own (their run.total_steps differ)."""
    root = tmp_path_factory.mktemp("report_input") / "runs"
    environment = {key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}
    for name, steps, seed in (("long", 300, 0), ("short", 200, 1)):
        command = [sys.executable, "-m", "td3x.commands.train", *RUN, f"run.total_steps={steps}", f"seed={seed}"]
        result = subprocess.run(
            [*command, "logging.wandb_mode=disabled", f"hydra.run.dir={root / name}"],
            capture_output=True,
            text=True,
            timeout=300,
            env=environment,
        )
        assert result.returncode == 0, result.stderr
    return root


# ---------------------------------------------------------------------------------------------------- --out
@pytest.mark.slow
def test_an_empty_out_is_refused_not_read_as_the_current_directory(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # where an empty --out used to put the report's 14 files
    line = "td3x-report: error: argument --out: is empty: name a directory (see td3x-report --help)"
    assert report([str(runs), "--out", "", *FAST], capsys) == (2, [line])
    assert report([str(runs), "--out=", *FAST], capsys) == (2, [line])
    line = "td3x-report: error: argument paths: is empty: name a directory (see td3x-report --help)"
    assert report([str(runs), "", "--out", "report", *FAST], capsys) == (2, [line])
    assert files_below(tmp_path) == []


def unwritable_dirs() -> list[object]:
    """Dirs where no --out can be made: one without write permission (root writes there anyway), and sysfs's top
    (Linux; EPERM for root, EACCES for others)."""
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    return [
        pytest.param("read-only", marks=pytest.mark.skipif(is_root, reason="root writes in a dir without write bits")),
        pytest.param("/sys", marks=pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="no sysfs here")),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("where", unwritable_dirs())
def test_an_unwritable_out_is_refused_before_the_analysis(
    runs: Path, tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parent = Path(where) if where.startswith("/") else tmp_path / where
    if not parent.exists():
        parent.mkdir()
        parent.chmod(stat.S_IRUSR | stat.S_IXUSR)
    out = parent / "td3x-report-test" / "report"
    before = files_below(tmp_path)
    code, err = report([str(runs), "--out", str(out), *FAST], capsys)
    assert code == 2 and len(err) == 1
    assert err[0].startswith(f"report error: --out {out} cannot be written: ")  # then the system's reason
    assert not (parent / "td3x-report-test").exists() and files_below(tmp_path) == before


@pytest.mark.slow
def test_a_refused_report_leaves_no_out_dir_behind(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--out is checked by creating it; a refusal after that check (here --at-step) removes what it created."""
    code, _ = report([str(runs), "--out", str(tmp_path / "new" / "report"), "--at-step", "301", *FAST], capsys)
    assert code == 2 and files_below(tmp_path) == []


# ---------------------------------------------------------------------------------------------------- paths
NO_RUN = (
    "holds no run dir (a directory with a td3x config.yaml) at or below it: td3x-report takes run dirs, sweep dirs "
    "or folders above them"
)


def test_a_folder_without_runs_and_a_missing_one_are_each_named_before_any_run_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "docs" / "deep" / "er").mkdir(parents=True)
    (tmp_path / "docs" / "page.md").write_text("# not a run\n")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.yaml").write_text("seed: [\n")  # a run dir whose config cannot be read
    (broken / "eval.csv").write_text("step\n")
    paths = [tmp_path / "docs", tmp_path / "nowhere", broken]
    code, err = report([*map(str, paths), "--out", str(tmp_path / "report"), *FAST], capsys)
    assert code == 2
    assert err[0] == f"report error: {paths[0]} {NO_RUN}"
    assert err[1] == f"report error: no such file or directory: {paths[1]}"
    assert err[2].startswith(f"report error: {broken / 'config.yaml'}") and err[2].endswith("the run dir is skipped")
    assert err[3:] == [f"report error: {broken} {NO_RUN}"]
    assert not (tmp_path / "report").exists()


@pytest.mark.slow
def test_a_folder_without_runs_beside_runs_is_refused_not_left_out(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the report of the other path's runs, made in silence without the mistyped folder."""
    (tmp_path / "empty").mkdir()
    code, err = report([str(runs), str(tmp_path / "empty"), "--out", str(tmp_path / "report"), *FAST], capsys)
    assert (code, err) == (2, [f"report error: {tmp_path / 'empty'} {NO_RUN}"])
    assert files_below(tmp_path) == [tmp_path / "empty"]


# ---------------------------------------------------------------------------------------------------- writing
def report_process(
    argv: list[str], stdout: int | IO[str] = subprocess.DEVNULL, max_file_bytes: int | None = None
) -> subprocess.CompletedProcess[str]:
    """td3x-report in a process of its own, its files capped at ``max_file_bytes`` (RLIMIT_FSIZE: a write past it
    fails with EFBIG, as on a full disk, root included; Python ignores the SIGXFSZ that comes with it)."""

    def cap() -> None:
        if max_file_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    command = [sys.executable, "-m", "td3x.commands.report", *argv, *FAST]
    return subprocess.run(command, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=300, preexec_fn=cap)


@pytest.mark.slow
def test_a_file_that_cannot_be_written_leaves_out_as_it_was(runs: Path, tmp_path: Path) -> None:
    """The CSV and LaTeX tables (under 10 kB each) are written, then the first PNG plot (tens of kB) fails: nothing
    of the report is left, a missing --out is removed again, and a previous report's file is kept as it was."""
    new, previous = tmp_path / "new" / "report", tmp_path / "previous"
    previous.mkdir()
    (previous / "table2.csv").write_text("a previous report's table\n")
    for out in (new, previous):
        result = report_process([str(runs), "--out", str(out)], max_file_bytes=10_000)
        assert (result.returncode, result.stderr) == (
            1,
            f"report error: {out} cannot be written: File too large (no file of the report written)\n",
        )
    assert files_below(tmp_path) == [previous, previous / "table2.csv"]
    assert (previous / "table2.csv").read_text() == "a previous report's table\n"


@pytest.mark.slow
def test_paths_in_out_that_take_no_report_file_are_named_and_nothing_is_moved_in(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    (out / "report.md").mkdir(parents=True)  # a folder where a file goes
    (out / "plots").write_text("a file where the plots' folder goes")
    before = files_below(tmp_path)
    assert report([str(runs), "--out", str(out), *FAST], capsys) == (
        1,
        [
            f"report error: {out / 'plots'} is a file, where td3x-report makes a folder: move it away (no file of "
            "the report written)",
            f"report error: {out / 'report.md'} is a folder, where td3x-report writes a file: move it away (no file "
            "of the report written)",
        ],
    )
    assert files_below(tmp_path) == before


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_stdout_on_a_full_disk_is_one_line_and_the_complete_files_stay(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    with open("/dev/full", "w") as full:  # every write: ENOSPC
        result = report_process([str(runs), "--out", str(out)], stdout=full)
    assert (result.returncode, result.stderr) == (
        1,
        f"report error: stdout cannot be written: No space left on device (the Markdown is in {out / 'report.md'})\n",
    )
    assert (out / "report.md").is_file() and (out / "plots").is_dir()
    assert not list(out.glob(".td3x-report-partial-*"))


@pytest.mark.slow
def test_a_report_killed_while_writing_leaves_its_staging_dir_which_the_next_report_removes(
    runs: Path, tmp_path: Path
) -> None:
    """SIGKILL runs no ``finally``: the killed report's staging dir stays in ``--out`` (hidden, never a file of the
    report), and the next report into ``--out`` removes it (before: it stayed for good); a running report's is kept."""
    out = tmp_path / "report"
    command = [sys.executable, "-m", "td3x.commands.report", str(runs), "--out", str(out), *FAST]
    killed = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    staged: list[Path] = []
    for _ in range(1200):  # the staging dir once a file is in it: up to a minute
        staged = [path for path in out.glob(f"{STAGING_PREFIX}{killed.pid}-*") if any(path.iterdir())]
        if staged or killed.poll() is not None:
            break
        time.sleep(0.05)
    killed.kill()
    killed.wait(timeout=30)
    assert staged and all(path.is_dir() for path in staged), "the report was not caught writing"
    running = out / f"{STAGING_PREFIX}{os.getpid()}-running"  # this process's: alive
    running.mkdir()
    assert report_process([str(runs), "--out", str(out)]).returncode == 0
    assert sorted(out.glob(f"{STAGING_PREFIX}*")) == [running]
    assert (out / "report.md").is_file()


# ---------------------------------------------------------------------------------------------------- --at-step
@pytest.mark.slow
def test_at_step_past_every_run_is_refused_naming_the_longest_runs_last_step(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(runs.parent)
    line = "report error: --at-step 99999: must be <= 300, the last evaluated step of the longest complete run"
    refused = (2, [f"{line} (runs/long)"])
    assert report(["runs", "--out", str(tmp_path / "far"), "--at-step", "99999", *FAST], capsys) == refused
    assert not (tmp_path / "far").exists()
    # a step only some runs reach is no error: the shorter run's row is n/a, the longer run's has its return
    assert report(["runs", "--out", str(tmp_path / "out"), "--at-step", "300", *FAST], capsys)[0] == 0
    table = pd.read_csv(tmp_path / "out" / "return_at_300.csv", index_col="row")["Pendulum-v1"]
    last_return = pd.read_csv(runs / "long" / "eval.csv")["return_mean"].iloc[-1]
    assert table["TD3 [run.total_steps=200]"].startswith("n/a")
    assert table["TD3 [run.total_steps=300]"].startswith(f"{last_return:.2f} ")


# ---------------------------------------------------------------------------------------------------- --wandb
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["bogus", "shared", ""])  # wandb itself takes "shared"; td3x-train does not
def test_wandb_mode_is_checked_up_front_as_td3x_train_checks_it(
    runs: Path, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("WANDB_MODE", mode)
    line = f"logging.wandb_mode={mode!r} is not allowed: must be one of online, offline, disabled"
    result = subprocess.run(  # td3x-train's own line for this WANDB_MODE: td3x-report's says the same
        [sys.executable, "-m", "td3x.commands.train", *RUN, f"hydra.run.dir={tmp_path / 'train'}"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (result.returncode, result.stderr.splitlines()) == (2, [f"config error: {line}"])
    refused = (2, [f"report error: WANDB_MODE: {line}"])
    assert report([str(runs), "--out", str(tmp_path / "report"), "--wandb", *FAST], capsys) == refused
    assert files_below(tmp_path) == []


# ---------------------------------------------------------------------------------------------------- not averaged
@pytest.mark.slow
def test_runs_without_summary_or_evaluations_are_named_so_in_the_runs_not_averaged(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(runs / "long", broken / "good")
    for name in ("no_summary", "no_eval", "empty_eval", "no_summary_no_eval", "running_empty_eval"):
        shutil.copytree(runs / "long", broken / name)
    (broken / "no_summary" / "summary.json").unlink()
    (broken / "no_eval" / "eval.csv").unlink()
    (broken / "empty_eval" / "eval.csv").write_text("")
    (broken / "no_summary_no_eval" / "summary.json").unlink()
    (broken / "no_summary_no_eval" / "eval.csv").unlink()
    summary = broken / "running_empty_eval" / "summary.json"
    summary.write_text(json.dumps({**json.loads(summary.read_text()), "status": "running"}))
    eval_csv = broken / "running_empty_eval" / "eval.csv"
    eval_csv.write_text(eval_csv.read_text().splitlines()[0] + "\n")  # the header alone
    monkeypatch.chdir(tmp_path)
    assert report(["broken", "--out", "out", *FAST], capsys)[0] == 0
    not_averaged = pd.read_csv(tmp_path / "out" / "not_averaged.csv")["not averaged"]
    assert sorted(not_averaged) == [
        "seed 0 left out, eval.csv has no rows: a complete run's ends at run.total_steps=300 (broken/empty_eval)",
        "seed 0 left out, eval.csv is missing: a complete run's ends at run.total_steps=300 (broken/no_eval)",
        "seed 0 left out, unfinished (status running): eval.csv has no rows (broken/running_empty_eval)",
        "seed 0 left out, unfinished (summary.json is missing): eval.csv is missing (broken/no_summary_no_eval)",
        "seed 0 left out, unfinished (summary.json is missing): evaluated up to step 300 of 300 (broken/no_summary)",
    ]
    markdown = (tmp_path / "out" / "report.md").read_text().split("## Runs not averaged")[1]
    assert all(line in markdown for line in not_averaged) and "None" not in markdown
