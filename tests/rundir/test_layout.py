"""The run-dir layout (td3x.rundir.layout): the seeds' dirs, finding a run's configs, and one summary for a fresh run
and a finished one, from ``td3x.train`` and in ``summary.json`` alike."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.runs import TINY

import td3x
from td3x.config.schema import TrainConfig
from td3x.rundir.layout import (
    CONFIG_FILE,
    SUMMARY_FILE,
    RunFileError,
    RunSummary,
    is_timing_column,
    process_dir,
    run_configs,
    seed_run_dirs,
    truncate_after,
    unwritable_dir_problem,
)

MakeConfig = Callable[..., TrainConfig]
SUMMARY_KEYS = [  # summary.json's keys, in its order
    "status",
    "interrupted",
    "failure",
    "steps",
    "final_return",
    "last10_return",
    "evaluations",
    "updates",
    "wall_time_s",
    "cpu_time_s",
    "run_dir",
]


def test_seed_dirs_and_their_configs(tmp_path: Path) -> None:
    assert seed_run_dirs(tmp_path, 3, 1) == [tmp_path]
    dirs = seed_run_dirs(tmp_path, 3, 11)
    assert dirs[0] == tmp_path / "seed_3" and dirs[-1] == tmp_path / "seed_13"
    assert [process_dir(d, 11) for d in dirs] == [tmp_path] * 11 and process_dir(tmp_path, 1) == tmp_path
    assert run_configs(tmp_path) == []
    for d in dirs:
        d.mkdir()
        (d / CONFIG_FILE).write_text("seed: 0\n")
    assert run_configs(tmp_path) == [d / CONFIG_FILE for d in dirs]  # in seed order: seed_13 after seed_4
    assert run_configs(dirs[1]) == [dirs[1] / CONFIG_FILE]


def test_timing_columns() -> None:
    assert all(map(is_timing_column, ["eval_time_s", "wall_time_s", "sps", "update_time_s"]))
    assert not any(map(is_timing_column, ["step", "return_mean", "return_0", "q1_mean", "updates"]))


def test_a_summary_keeps_the_files_key_order() -> None:
    summary = RunSummary.of("running", [1.0, 2.0, 4.0], 30, 20, 1.5, 1.2, Path("run"))
    assert list(summary.to_dict()) == SUMMARY_KEYS
    assert (summary.final_return, summary.last10_return, summary.evaluations) == (4.0, 7.0 / 3, 3)
    empty = RunSummary.of("failed", [], 0, 0, 0.1, None, Path("run"), failure="ValueError: x")
    assert (empty.final_return, empty.last10_return, empty.failure) == (None, None, "ValueError: x")


def test_train_returns_the_same_summary_for_a_fresh_and_a_finished_run(make_config: MakeConfig, tmp_path: Path) -> None:
    """The docs' promise: ``td3x.train`` returns the run's summary, the content of its summary.json, whether it
    trained the run or found it finished (the wall and CPU times aside: the finished one's are the final
    checkpoint's)."""
    for num_seeds in (1, 2):
        config, run_dir = make_config(*TINY, f"run.num_seeds={num_seeds}"), tmp_path / str(num_seeds)
        fresh, finished = td3x.train(config, run_dir), td3x.train(config, run_dir)
        assert list(fresh) == list(finished)
        assert {key for key in fresh if fresh[key] != finished[key]} <= {"wall_time_s", "cpu_time_s", "seeds"}
        seed_dirs = seed_run_dirs(run_dir, 0, num_seeds)
        for seed, again, seed_dir in zip(
            fresh.get("seeds", [fresh]), finished.get("seeds", [finished]), seed_dirs, strict=True
        ):
            on_disk = json.loads((seed_dir / SUMMARY_FILE).read_text())
            assert list(seed) == list(again) == list(on_disk) == SUMMARY_KEYS
            assert {key: value for key, value in again.items() if not is_timing_column(key)} == {
                key: value for key, value in on_disk.items() if not is_timing_column(key)
            }
            assert again["status"] == "complete" and again["steps"] == 300 and again["evaluations"] == 3


def test_a_resume_drops_the_rows_it_writes_again_and_an_evaluation_due_once_made(tmp_path: Path) -> None:
    """A checkpoint at step 10 whose evaluation a stop cut short: a later sitting made that evaluation and was killed
    before its next checkpoint. Resuming from step 10 again drops eval.csv's row at 10 (made again first) and every
    row after 10, and keeps metrics.jsonl's row at 10 (its training, before the evaluation, is not redone)."""
    (tmp_path / "eval.csv").write_text("step,return_mean\n0,1.0\n5,2.0\n10,3.0\n15,4.0\n")
    (tmp_path / "metrics.jsonl").write_text("".join(f'{{"step": {step}}}\n' for step in (5, 10, 15)))
    truncate_after([tmp_path], 10, evaluation_due=True)
    assert (tmp_path / "eval.csv").read_text() == "step,return_mean\n0,1.0\n5,2.0\n"
    assert (tmp_path / "metrics.jsonl").read_text() == '{"step": 5}\n{"step": 10}\n'
    truncate_after([tmp_path], 5)  # no evaluation due: the row at the checkpoint's step stays
    assert (tmp_path / "eval.csv").read_text() == "step,return_mean\n0,1.0\n5,2.0\n"
    assert (tmp_path / "metrics.jsonl").read_text() == '{"step": 5}\n'


def test_a_resume_drops_a_row_cut_mid_write_and_refuses_a_damaged_one_before_changing_anything(tmp_path: Path) -> None:
    """A last line with no line end was cut by a crash while it was written, after the checkpoint: it goes. A
    damaged row elsewhere is no row td3x wrote: refused with its file and line, no file of any run dir changed."""
    first, second = tmp_path / "seed_0", tmp_path / "seed_1"
    for run_dir in (first, second):
        run_dir.mkdir()
        (run_dir / "eval.csv").write_text("step,return_mean\n5,2.0\n10,3.0\n12")
        (run_dir / "metrics.jsonl").write_text('{"step": 5}\n{"step": 10}\n{"step": 1')
    (second / "metrics.jsonl").write_text('{"step": 5}\n{"step" 10}\n')
    with pytest.raises(RunFileError, match=r"seed_1/metrics.jsonl line 2 is not a row td3x writes: '\{\"step\" 10\}"):
        truncate_after([first, second], 10)
    assert (first / "eval.csv").read_text().endswith("\n12") and (first / "metrics.jsonl").read_text().endswith("1")
    truncate_after([first], 10)
    assert (first / "eval.csv").read_text() == "step,return_mean\n5,2.0\n10,3.0\n"
    assert (first / "metrics.jsonl").read_text() == '{"step": 5}\n{"step": 10}\n'


def test_a_dir_no_one_can_make_is_refused_for_root_too(tmp_path: Path) -> None:
    """Permissions say root may write /proc, yet no dir can be made there: the check tries, and leaves nothing."""
    assert unwritable_dir_problem(Path("/proc/td3x-run/seed_0"), "the run dir") == (
        "the run dir is not writable here (/proc, where it would be made): choose a dir you can write"
    )
    assert unwritable_dir_problem(tmp_path / "run", "the run dir") is None
    assert list(tmp_path.iterdir()) == []
