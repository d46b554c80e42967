"""A run's state (td3x.rundir.state) from its summary, its eval.csv and its lock, and the lock
itself (td3x.rundir.lock): taken by one process, seen by the others, freed by the kernel when its holder dies, however
it dies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.report_runs import curve, write_run

from td3x.rundir.layout import RunFileError
from td3x.rundir.lock import ResumeError, exclusive, is_locked
from td3x.rundir.state import (
    COMPLETE,
    FAILED,
    NOT_STARTED,
    RUNNING,
    STALE,
    STOPPED,
    checkpoint_complete,
    last_eval_step,
    listed_run_state,
    run_state,
    state_of,
)


def summary(status: str, steps: int = 1000, **outcome: Any) -> dict[str, Any]:
    return {"status": status, "steps": steps, "interrupted": None, "failure": None, **outcome}


def idle() -> bool:
    return False


def training() -> bool:
    return True


@pytest.mark.parametrize(
    ("record", "last_step", "lock_held", "expected"),
    [
        (summary("complete"), 1000, False, (COMPLETE, None)),
        (summary("complete"), 1000, True, (COMPLETE, None)),  # a relaunch returning at once holds it a moment
        (None, None, False, (NOT_STARTED, None)),
        (None, None, True, (RUNNING, None)),  # started, no evaluation written yet
        (summary("running", 330), 200, True, (RUNNING, None)),
        (
            summary("running", 330, interrupted="RunInterrupted: stopped by SIGINT"),
            200,
            False,
            (STOPPED, "RunInterrupted: stopped by SIGINT"),
        ),
        (summary("running", 330, interrupted="RunInterrupted: stopped by SIGINT"), 200, True, (RUNNING, None)),
        (summary("running", 330), 200, False, (STALE, "killed: no process holds its lock")),
        (summary("failed", 302, failure="TrainingError: nan"), 200, False, (FAILED, "TrainingError: nan")),
        (summary("failed", 302, failure="TrainingError: nan"), 200, True, (RUNNING, None)),  # being resumed
        (summary("complete", 500), 500, False, (STOPPED, "finished 500 steps; run.total_steps=1000 extends it")),
        (summary("complete"), 800, False, (FAILED, "eval.csv ends at step 800, not at run.total_steps=1000")),
    ],
)
def test_the_state_of_a_run(
    record: dict[str, Any] | None, last_step: int | None, lock_held: bool, expected: tuple[str, str | None]
) -> None:
    assert state_of(record, last_step, 1000, training if lock_held else idle) == expected


def test_a_complete_run_is_never_probed() -> None:
    def probe() -> bool:
        raise AssertionError("a complete run's lock was probed")

    assert state_of(summary("complete"), 1000, 1000, probe) == (COMPLETE, None)


def test_a_checkpoint_is_complete_at_total_steps_with_no_evaluation_due() -> None:
    assert checkpoint_complete({"step": 1000, "evaluation_due": False}, 1000)
    assert checkpoint_complete({"step": 1000}, 1000)  # an older checkpoint, without the flag
    assert not checkpoint_complete({"step": 1000, "evaluation_due": True}, 1000)  # a stop cut the last one short
    assert not checkpoint_complete({"step": 999}, 1000)


def test_last_eval_step_reads_the_last_row(tmp_path: Path) -> None:
    path = tmp_path / "eval.csv"
    assert last_eval_step(path) is None
    path.write_text("step,return_mean\n")
    assert last_eval_step(path) is None
    path.write_text("step,return_mean\n0,-1.5\n200,-0.5\n")
    assert last_eval_step(path) == 200
    path.write_text("step,return_mean\n0,-1.5\nx,-0.5\n")
    with pytest.raises(RunFileError, match=r"eval.csv has 'x' in its step column, not a number"):
        last_eval_step(path)
    # every row is checked as td3x-report checks it (before: the last row only, so a run with a nan in a middle row
    # was complete in td3x-sweep status and left out of the report)
    path.write_text("step,return_mean\n0,-1.5\n100,nan\n200,-0.5\n")
    with pytest.raises(RunFileError, match=r"eval.csv has 'nan' in its return_mean column \(line 3, step 100\), "):
        last_eval_step(path)
    path.write_text("step,return_mean\n0,-1.5\n200,-0.7\n200,-0.5\n")
    with pytest.raises(RunFileError, match=r"has step 200 on line 4 after step 200 on line 3: its steps must increase"):
        last_eval_step(path)


def test_a_seed_of_k_seeds_is_running_while_its_process_dir_is_locked(tmp_path: Path) -> None:
    seed_dir = tmp_path / "seed_3"
    seed_dir.mkdir()
    (seed_dir / "summary.json").write_text(json.dumps(summary("running", 330)))
    assert run_state(seed_dir, 1000, num_seeds=2).state == STALE
    with exclusive(tmp_path):
        assert run_state(seed_dir, 1000, num_seeds=2).state == RUNNING
        assert run_state(seed_dir, 1000, num_seeds=1).state == STALE  # its own dir holds no lock


def test_a_summary_without_status_or_steps_is_refused(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"status": "running"}))
    with pytest.raises(RunFileError, match="is not a td3x summary: it lacks a status or a steps count"):
        run_state(tmp_path, 1000)


def _with_bogus_agent_key(text: str) -> str:
    config = yaml.safe_load(text)
    config["agent"]["bogus"] = 1
    return yaml.safe_dump(config, sort_keys=False)


def test_a_listing_names_a_run_it_cannot_read_as_failed_while_run_state_still_raises(tmp_path: Path) -> None:
    """A summary.json that is not JSON or not td3x's, an eval.csv whose step is no number, a config.yaml that is no
    YAML or holds a key td3x lacks: failed and unreadable to a listing, at no step; run_state, which resuming acts on,
    raises on the run files as before (it never reads config.yaml)."""
    good = write_run(tmp_path / "good", "Hopper-v5", "TD3", 0, curve(100, 0))
    total = int(yaml.safe_load((good / "config.yaml").read_text())["run"]["total_steps"])
    assert listed_run_state(good, total) == run_state(good, total)
    assert listed_run_state(good, total).state == COMPLETE
    broken = {  # name: (file, its new text from the old, the problem named after the file)
        "json": ("summary.json", lambda _: '{"status": ', " is not valid JSON: Expecting value at line 1, column 12"),
        "no_steps": ("summary.json", lambda _: '{"status": "complete"}', " is not a td3x summary: it lacks a status"),
        "step": ("eval.csv", lambda _: "step,return_mean\n0,1.0\nx,2.0\n", " has 'x' in its step column, not a number"),
        "yaml": ("config.yaml", lambda _: "run: [unclosed\n  : :", " is not valid YAML: expected ',' or ']', but got"),
        "agent_key": (
            "config.yaml",
            _with_bogus_agent_key,
            ": the stored config does not fit this td3x: agent.bogus is not a td3x key; td3x-train --help lists",
        ),
    }
    for name, (file, rewrite, problem) in broken.items():
        run_dir = write_run(tmp_path / name, "Hopper-v5", "TD3", 0, curve(100, 0))
        (run_dir / file).write_text(rewrite((run_dir / file).read_text()))
        listed = listed_run_state(run_dir, total)
        assert (listed.state, listed.steps, listed.readable) == (FAILED, 0, False), name
        assert listed.reason is not None and listed.reason.startswith(f"unreadable: {run_dir}/{file}{problem}"), name
        if file != "config.yaml":
            with pytest.raises(RunFileError, match=problem.strip().split(":")[0]):
                run_state(run_dir, total)
        else:
            assert run_state(run_dir, total).state == COMPLETE


HOLD = (
    "import sys; from pathlib import Path; from td3x.rundir.lock import exclusive\n"
    "with exclusive(Path(sys.argv[1])):\n    print('held', flush=True); sys.stdin.read()"
)


def test_the_lock_is_seen_by_other_processes_and_freed_when_its_holder_is_killed(tmp_path: Path) -> None:
    assert not is_locked(tmp_path) and not is_locked(tmp_path / "absent")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert is_locked(tmp_path)
        with pytest.raises(ResumeError, match=f"another process is training in {tmp_path}"), exclusive(tmp_path):
            pass
        assert is_locked(tmp_path)  # a probe and a refused take leave the holder's lock alone
    finally:
        holder.kill()
        holder.wait()
    assert not is_locked(tmp_path)
    with exclusive(tmp_path):
        assert is_locked(tmp_path)
    assert not is_locked(tmp_path)


def test_a_take_inside_a_take_of_the_same_dir_holds_it_until_the_outer_one_ends(tmp_path: Path) -> None:
    """td3x-tune holds its trial's dir from the claim until the score is told, and the training inside takes it again:
    the inner take must not be refused, and its end must not free the dir while the outer one holds it."""
    run_dir, link = tmp_path / "trial_0", tmp_path / "link"
    run_dir.mkdir()
    link.symlink_to(run_dir)
    with exclusive(run_dir):
        with exclusive(link):  # the same dir by another path
            assert is_locked(run_dir)
        assert is_locked(run_dir)  # the score is told here: no other process may see the trial dead
    assert not is_locked(run_dir)
    with exclusive(run_dir):  # and free to take again
        assert is_locked(run_dir)
