"""td3x-eval refuses, before it evaluates, what it could not finish: options that only matter with another one,
output paths it cannot write (a folder where a file goes, a file where the videos' folder goes, a read-only run
dir); and it leaves no temporary or unchecked file behind."""

from __future__ import annotations

import functools
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.read_only import read_only_dir
from helpers.runs import TINY_LENGTH, TINY_NETWORKS
from helpers.scripts import exit_code

import td3x
from td3x.commands.eval import main
from td3x.rundir import export

RESULT = "eval_step300_seed1000000_n2.json"  # the run's protocol: 2 episodes from seed 0's eval seed, at step 300
FOLDER = "is a folder, where td3x-eval writes a file: move it away"


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Pendulum run, trained once; each test evaluates a copy of it."""
    run_dir = tmp_path_factory.mktemp("eval_outputs") / "run"
    # two evaluation episodes: --video-episodes 2 records the second, and more than 2 are refused naming the run's 2
    config = td3x.compose([*TINY_NETWORKS, "run.eval_episodes=2", *TINY_LENGTH, "logging.wandb_mode=disabled"])
    assert td3x.train(config, run_dir)["steps"] == 300
    return run_dir


@pytest.fixture
def run_dir(trained: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(trained, tmp_path / "run"))


@pytest.fixture
def read_only_run(trained: Path, tmp_path: Path) -> Iterator[Path]:
    """A copy of the run in a dir this process cannot write."""
    with read_only_dir(tmp_path / "read_only", trained) as path:
        yield path


def evaluate(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, list[str]]:
    """td3x-eval in this process: (exit code, stdout, stderr's lines)."""
    code = exit_code(main, argv)
    out, err = capsys.readouterr()
    return code, out, err.splitlines()


def temporary_files(run_dir: Path) -> list[str]:
    return sorted(path.name for path in run_dir.rglob("*.tmp"))


@pytest.mark.parametrize(
    ("blocked", "options", "problem"),
    [
        (RESULT, [], f"{RESULT} {FOLDER}"),
        ("videos", ["--video"], "videos is a file, where --video makes the folder of its MP4 files: move it away"),
        ("policy.onnx", ["--export"], f"policy.onnx {FOLDER}"),
    ],
    ids=["result", "videos", "onnx"],
)
def test_an_output_path_it_cannot_write_is_refused_before_the_evaluation(
    run_dir: Path, capsys: pytest.CaptureFixture[str], blocked: str, options: list[str], problem: str
) -> None:
    if blocked == "videos":
        (run_dir / blocked).write_text("a file where the videos folder goes")
    else:
        (run_dir / blocked).mkdir()
    code, out, err = evaluate([str(run_dir), *options], capsys)
    assert (code, err) == (2, [f"td3x-eval: error: {run_dir}/{problem}"])
    assert out == ""  # no episode ran
    assert temporary_files(run_dir) == [] and not (run_dir / RESULT).is_file()


def test_every_output_path_it_cannot_write_is_named_on_its_own_line(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (run_dir / RESULT).mkdir()
    (run_dir / "videos").mkdir()
    (run_dir / "videos" / "step300_seed1000001.mp4").mkdir()  # episode 1's video, with --video-episodes 2
    (run_dir / "policy.onnx").mkdir()
    code, out, err = evaluate([str(run_dir), "--video", "--video-episodes", "2", "--export"], capsys)
    assert (code, out) == (2, "")
    assert err == [
        f"td3x-eval: error: {path} {FOLDER}"
        for path in (run_dir / RESULT, run_dir / "videos" / "step300_seed1000001.mp4", run_dir / "policy.onnx")
    ]


def test_a_read_only_run_dir_is_refused_before_the_evaluation(
    read_only_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = evaluate([str(read_only_run)], capsys)
    assert (code, out) == (2, "")
    assert err == [
        f"td3x-eval: error: {read_only_run} is not writable here (a read-only disk or no write permission): "
        "td3x-eval writes its results beside the checkpoint; copy the run to a dir you can write"
    ]


def test_video_options_without_video_are_refused_not_ignored(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = evaluate([str(run_dir), "--video-episodes", "3", "--wandb-mode", "online"], capsys)
    assert (code, out) == (2, "")
    assert err == [
        "td3x-eval: error: --video-episodes 3 has no effect without --video: add --video, or drop --video-episodes",
        "td3x-eval: error: --wandb-mode online has no effect without --video: add --video, or drop --wandb-mode",
    ]
    assert list(run_dir.glob("eval_step*.json")) == []


@pytest.mark.parametrize(
    ("options", "episodes", "evaluated"),
    [
        (["--episodes", "1"], 1, "--episodes 1"),
        ([], 2, "the run's run.eval_episodes=2, evaluated without --episodes"),  # known once the run is loaded
    ],
    ids=["given", "the_runs"],
)
def test_more_episodes_recorded_than_evaluated_are_refused_naming_both(
    run_dir: Path, capsys: pytest.CaptureFixture[str], options: list[str], episodes: int, evaluated: str
) -> None:
    """A video is one of the evaluation's episodes (episode i from reset seed S + i): none past the last."""
    code, out, err = evaluate([str(run_dir), *options, "--video", "--video-episodes", "3"], capsys)
    assert (code, out) == (2, "")  # refused before any episode ran, or any video support was looked for
    assert err == [
        f"td3x-eval: error: --video-episodes 3 is more than {evaluated}: --video records the evaluation's own "
        f"episodes; give --video-episodes at most {episodes}, or --episodes at least 3"
    ]
    assert list(run_dir.glob("eval_step*.json")) == [] and not (run_dir / "videos").exists()


def test_an_export_that_fails_its_check_leaves_no_file_and_keeps_the_previous_one(
    run_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (run_dir / "policy.onnx").write_text("a previous export")
    # the real onnxruntime check, held to a tolerance no graph meets
    monkeypatch.setattr(export, "check_onnx", functools.partial(export.check_onnx, atol=-1.0))
    code, _, err = evaluate([str(run_dir), "--export"], capsys)
    assert code == 1 and len(err) == 1
    assert err[0].startswith("td3x-eval: error: the ONNX graph differs from the torch policy by ")
    assert err[0].endswith(f"; {run_dir / 'policy.onnx'} not written")
    assert (run_dir / "policy.onnx").read_text() == "a previous export"
    assert temporary_files(run_dir) == [] and (run_dir / RESULT).is_file()  # the evaluation's result stays
