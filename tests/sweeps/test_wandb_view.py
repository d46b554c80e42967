"""td3x-sweep view (td3x.sweeps.wandb_view): every W&B run of a sweep in one W&B directory, named by row, env and seed.

A 2 x 2 command-line sweep through the real td3x-train prints the command; that command links the four runs into
``<sweep>/wandb``; W&B's own tools, over that folder, read each link as its run (``wandb leet inspect``: the row, env
and seed of the name are the run's config) and ``wandb sync --dry-run`` finds each run once; ``wandb leet`` itself,
driven in tmux by scripts/leet_runs.sh, lists the four by name and filters them by ``paper_row``. The link names,
the parts of a resumed run and the views of a run dir and of an empty folder are checked on their own, fast.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.runs import TINY_SIZES
from helpers.scripts import BIN, exit_code
from helpers.wandb_records import segment

from td3x.analysis.reading.runs import find_runs
from td3x.commands.sweep import main as sweep_main
from td3x.sweeps.multirun import runs_below
from td3x.sweeps.wandb_view import gather, link_names, run_label, run_segments

REPO = Path(__file__).resolve().parents[2]
SWEEP = (
    "-m",
    "env=pendulum",
    "ablation=none,no_twin",
    "seed=0,1",
    "run.total_steps=400",
    "run.eval_every=200",
    "env.random_steps=200",
    *TINY_SIZES,
    "logging.wandb_mode=offline",
)
EXPECTED = {("none", "pendulum", 0), ("none", "pendulum", 1), ("no_twin", "pendulum", 0), ("no_twin", "pendulum", 1)}


def environment() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}


def wandb_cli(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "wandb", *args], capture_output=True, text=True, timeout=120, env=environment(), cwd=cwd
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout + done.stderr


def leet_summary(path: Path) -> dict[str, Any]:
    """W&B's own reading of a run: ``wandb leet inspect --summary --json`` (state, name, tags, config)."""
    return dict(json.loads(wandb_cli("leet", "inspect", "--summary", "--json", str(path))))


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A 2 x 2 sweep as a user types it (offline W&B), and what td3x-train printed."""
    sweep_dir = tmp_path_factory.mktemp("view") / "sweep"
    done = subprocess.run(
        [BIN / "td3x-train", *SWEEP, f"hydra.sweep.dir={sweep_dir}"],
        capture_output=True,
        text=True,
        timeout=600,
        env=environment(),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return sweep_dir, done.stdout


@pytest.mark.slow
def test_a_sweep_prints_one_command_that_lists_its_four_runs_by_row_env_and_seed_for_wandb(
    sweep: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    sweep_dir, printed = sweep
    (command,) = re.findall(r"td3x-sweep view \S+", printed)
    assert command == f"td3x-sweep view {sweep_dir}"
    assert exit_code(sweep_main, ["status", str(sweep_dir)]) == 0
    assert capsys.readouterr().out.endswith(f"all its runs in W&B's terminal viewer: {command}\n")
    assert exit_code(sweep_main, ["view", "--no-open", str(sweep_dir)]) == 0
    assert f"open them with: wandb leet {sweep_dir / 'wandb'}" in capsys.readouterr().out

    links = sorted((sweep_dir / "wandb").iterdir())
    assert len(links) == 4 and all(link.is_symlink() for link in links)
    seen = set()
    for link in links:
        run = leet_summary(link)
        config = run["config"]
        row, env, seed = config["choices"]["ablation"], config["choices"]["env"], config["seed"]
        assert link.name.startswith(f"run-{row}-{env}-s{seed}-run-") and link.name.endswith(run["run_id"])
        assert run["state"] == "finished" and run["name"] == f"{env}-td3-{config['paper_row']}-s{seed}"
        assert config["paper_row"] in run["tags"]
        seen.add((row, env, seed))
    assert seen == EXPECTED

    # W&B's sync finds each run once through the links (its marks would land in the run dirs)
    dry_run = wandb_cli("sync", "--dry-run", str(sweep_dir / "wandb"))
    assert "Would sync 4 run(s)" in dry_run, dry_run


@pytest.mark.slow
def test_the_view_links_relatively_is_made_again_in_place_and_adds_no_run_to_the_sweep(sweep: tuple[Path, str]) -> None:
    sweep_dir, _ = sweep
    gather(sweep_dir)
    copy = sweep_dir.with_name("copy")
    shutil.copytree(sweep_dir, copy, symlinks=True)
    links = sorted((copy / "wandb").iterdir())
    assert len(links) == 4 and all(link.resolve().is_relative_to(copy.resolve()) for link in links)
    view = gather(copy)  # again: the links are replaced, not added to
    assert (view.runs, view.segments, view.runs_without_wandb) == (4, 4, 0)
    assert sorted((copy / "wandb").iterdir()) == links
    assert len(find_runs([copy])) == 4 and len(runs_below(copy)) == 4  # td3x-report and td3x-sweep status


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="scripts/leet_runs.sh drives wandb leet in tmux")
def test_wandb_leet_lists_the_four_runs_by_name_and_filters_them_by_paper_row(sweep: tuple[Path, str]) -> None:
    sweep_dir, _ = sweep
    gather(sweep_dir)
    script = [str(REPO / "scripts" / "leet_runs.sh"), str(sweep_dir / "wandb")]
    env = {**environment(), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    screen = subprocess.run(script, capture_output=True, text=True, timeout=180, env=env)
    assert screen.returncode == 0, screen.stderr
    assert "Runs [4 items]" in screen.stdout
    for row, env_name, seed in EXPECTED:
        assert f"run-{row}-{env_name}-s{seed}-" in screen.stdout
    filtered = subprocess.run(
        [*script, 'config.paper_row="TD3 - CDQ"'], capture_output=True, text=True, timeout=180, env=env
    )
    assert filtered.returncode == 0, filtered.stderr
    assert "Runs [2 filtered from 4 total]" in filtered.stdout
    assert "run-no_twin-pendulum-s0-" in filtered.stdout and "run-none-" not in filtered.stdout
    assert not (sweep_dir / "wandb" / ".wandb-leet.json").exists()  # the script viewed a scratch copy


# ---------------------------------------------------------------------- names and parts (fast)
def test_a_run_is_named_by_its_command_line_row_env_and_seed() -> None:
    config = {"choices": {"ablation": "no_smoothing", "env": "hopper"}, "seed": 12, "paper_row": "TD3 - TPS"}
    assert run_label(config) == "no_smoothing-hopper-s12"
    # composed without Hydra's groups (td3x.train): the paper's row and the env id, made safe for a file name
    assert run_label({"env": {"id": "Hopper-v5"}, "seed": 3, "paper_row": "TD3 - TPS"}) == "TD3_-_TPS-Hopper-v5-s3"


def test_a_resumed_run_is_listed_as_parts_of_its_last_attempt_in_start_order(tmp_path: Path) -> None:
    segment(tmp_path, "offline-run-20261101_120000-abandon1")  # an attempt that started over: another W&B run
    parts = [
        segment(tmp_path, "offline-run-20261101_130000-current1"),
        segment(tmp_path, "offline-run-20261102_090000-current1"),
        segment(tmp_path, "offline-run-20261101_140000-current1"),
    ]
    (tmp_path / "wandb" / "latest-run").symlink_to(parts[1])
    found = run_segments(tmp_path)
    assert found == [parts[0], parts[2], parts[1]]
    assert link_names("none-hopper-s0", found) == [
        "run-none-hopper-s0.part1-run-20261101_130000-current1",
        "run-none-hopper-s0.part2-run-20261101_140000-current1",
        "run-none-hopper-s0.part3-run-20261102_090000-current1",
    ]
    assert link_names("none-hopper-s0", found[:1]) == ["run-none-hopper-s0-run-20261101_130000-current1"]


def test_a_run_dir_is_its_own_view_and_a_folder_without_runs_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    segment(run_dir, "offline-run-20261101_130000-only0001")
    (run_dir / "config.yaml").write_text("seed: 0\n")
    view = gather(run_dir)
    assert view.wandb_dir == run_dir / "wandb" and (view.runs, view.segments) == (1, 1)
    assert sorted(entry.name for entry in (run_dir / "wandb").iterdir()) == ["offline-run-20261101_130000-only0001"]

    empty = tmp_path / "empty"
    empty.mkdir()
    assert exit_code(sweep_main, ["view", "--no-open", str(empty)]) == 2
    err = capsys.readouterr().err
    assert err == f"td3x-sweep: {empty} holds no run: not a sweep dir, a run dir or a folder of runs\n"
    assert not (empty / "wandb").exists()


def test_a_view_that_cannot_be_written_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "runs" / "run"
    segment(run_dir, "offline-run-20261101_130000-only0001")
    (run_dir / "config.yaml").write_text("env: {id: Pendulum-v1}\nseed: 0\npaper_row: TD3\n")  # a td3x run's
    (tmp_path / "runs" / "wandb").write_text("a file where the view should be")
    assert exit_code(sweep_main, ["view", "--no-open", str(tmp_path / "runs")]) == 2
    view_dir = tmp_path / "runs" / "wandb"
    assert capsys.readouterr().err == f"td3x-sweep: cannot link the runs into {view_dir}: File exists\n"
