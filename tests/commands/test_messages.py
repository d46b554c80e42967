"""What training says as it goes and when it stops (issue 29, item 6): the ETA from the speed since updates began,
the K-seeds header and progress lines counting env steps per seed alike, the resume command in the stop line, and a
resume that finds no checkpoint saying that it starts over."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.runs import TINY

from td3x.commands import train_and_report
from td3x.commands.train_and_report import last10_label
from td3x.config.schema import TrainConfig
from td3x.training import progress
from td3x.training import run as training_run
from td3x.training.loop import RunInterrupted
from td3x.training.progress import Progress, evaluations_left
from td3x.training.run import run, start_line


class TestProgress:
    def test_eta_comes_from_the_speed_since_updates_began(
        self, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
    ) -> None:
        clock = iter([0.1, 10.1])  # the warm-up took 0.1 s to step 100 (1000 steps/s), then 500 steps in 10 s
        monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
        caplog.set_level(logging.INFO, logger="td3x")
        shown = Progress(1000, update_start=100)
        shown.advance(0)  # warm-up: not measured
        shown.evaluated(100, -1.0)  # updates begin: the speed is measured from here
        shown.evaluated(600, -0.5)
        assert [record.getMessage() for record in caplog.records] == [
            "step 100/1000  eval return -1.00",
            "step 600/1000  eval return -0.50  50 steps/s  ETA 8s",  # 400 steps left at 50/s
        ]

    def test_eta_adds_the_evaluations_left_at_the_last_ones_duration(
        self, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
    ) -> None:
        clock = iter([0.1, 10.1])  # updates begin at step 100; 500 steps later 10 s have passed, 4 s of them evaluating
        monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
        caplog.set_level(logging.INFO, logger="td3x")
        shown = Progress(1000, update_start=100, eval_every=250)
        shown.evaluated(100, -1.0, seconds=2.0)  # before the speed is measured: not subtracted from it
        shown.evaluated(600, -0.5, seconds=4.0)
        # training: 500 steps in 10 - 4 = 6 s, so 400 steps left take 4.8 s; evaluations left: 750 and 1000, 4 s each
        assert caplog.records[-1].getMessage() == "step 600/1000  eval return -0.50  50 steps/s  ETA 13s"

    def test_evaluations_left_count_every_eval_every_and_the_last_step(self) -> None:
        assert [evaluations_left(step, 1000, 250) for step in (0, 249, 250, 999, 1000)] == [4, 4, 3, 1, 0]
        assert [evaluations_left(step, 1000, 300) for step in (0, 300, 900, 999, 1000)] == [4, 3, 1, 1, 0]

    def test_the_done_line_says_what_its_mean_is_over(self) -> None:
        assert [last10_label(n) for n in (1, 2, 10, 16)] == [
            "mean of the only evaluation",
            "mean of all 2 evaluations",
            "last-10 mean",
            "last-10 mean",
        ]

    def test_k_seeds_header_counts_steps_per_seed_as_the_progress_lines(
        self, make_config: Callable[..., TrainConfig], tmp_path: Path
    ) -> None:
        one = start_line(make_config("run.total_steps=3000"), tmp_path, {"agent": "td3"})
        several = start_line(make_config("run.total_steps=3000", "run.num_seeds=4"), tmp_path, {"agent": "td3"})
        assert "| 3000 steps | seed 0 |" in one
        assert "| 3000 steps per seed | seeds 0-3 |" in several


class TestStopAndResumeMessages:
    def test_the_stop_line_gives_the_resume_command(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        def stopped(*_: Any, **__: Any) -> None:
            raise RunInterrupted("stopped by SIGINT at env step 1200, after a checkpoint")

        monkeypatch.setattr(training_run, "run", stopped)  # run_and_report imports it where training starts
        with pytest.raises(SystemExit) as exit_:
            train_and_report.run_and_report(None, tmp_path / "run", None)  # type: ignore[arg-type]
        assert exit_.value.code == 1
        assert capsys.readouterr().err == (
            "training stopped: stopped by SIGINT at env step 1200, after a checkpoint; "
            f"resume with: td3x-resume {tmp_path / 'run'}\n"
        )

    @pytest.mark.slow
    def test_results_without_a_checkpoint_start_over_and_say_so(
        self, make_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        config, run_dir = make_config(*TINY), tmp_path / "run"
        caplog.set_level(logging.INFO, logger="td3x")
        run(config, run_dir)
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
        (run_dir / "checkpoint.pt").unlink()
        caplog.clear()
        summary = run(config, run_dir)
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert warnings == [f"{run_dir} holds an earlier attempt but no checkpoint.pt: starting over from env step 0"]
        assert summary["status"] == "complete" and summary["steps"] == 300
