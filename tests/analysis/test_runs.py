"""What a run's provenance.json says, read once for every table (compute, registered tests, the seed study); which
runs the report reads as unreadable: a config.yaml td3x-resume refuses, a summary.json that is not td3x's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.report_runs import curve, write_run

from td3x.analysis.reading.cells import row_labels
from td3x.analysis.reading.runs import NOT_RECORDED, Run, distinct, find_runs
from td3x.analysis.sections.compute import MIXED, capability_text, cpu_text

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def run(path: Path, provenance: dict | None) -> Run:
    return Run(path, {}, None, None, None, provenance)


def test_a_commit_is_shortened_and_marked_dirty_and_a_missing_fact_is_none(tmp_path: Path) -> None:
    clean, dirty = (
        run(tmp_path, {"git_commit": COMMIT, "git_dirty": False}),
        run(tmp_path, {"git_commit": COMMIT, "git_dirty": True}),
    )
    assert (clean.commit, dirty.commit) == ("0123456", "0123456+dirty")
    for lacking in (run(tmp_path, None), run(tmp_path, {}), run(tmp_path, {"git_commit": None, "cpu_capability": ""})):
        assert lacking.commit is None and lacking.kernels is None and lacking.recorded("cpu") is None


def test_each_value_once_sorted_with_not_recorded_last(tmp_path: Path) -> None:
    assert distinct(["b", None, "a", "b", None]) == ["a", "b", NOT_RECORDED]
    assert distinct([]) == []
    runs = (
        run(tmp_path, {"cpu": "EPYC", "cpu_count": 2}),
        run(tmp_path, {"cpu": "EPYC", "cpu_count": 2}),
        run(tmp_path, {"cpu": "Xeon"}),  # no core count: the CPU alone
        run(tmp_path, None),
    )
    assert cpu_text(runs) == f"EPYC (2 cores), Xeon, {NOT_RECORDED}"


def test_a_resumed_run_names_each_sitting_s_commit_and_kernels_in_turn(tmp_path: Path) -> None:
    first = {"git_commit": "a" * 40, "git_dirty": False, "cpu_capability": "AVX2"}
    again = run(tmp_path, {**first, "earlier_sittings": [first]})  # resumed on the same machine and code
    assert (again.commit, again.kernels, len(again.sittings)) == ("aaaaaaa", "AVX2", 2)
    moved = run(tmp_path, {"git_commit": "b" * 40, "cpu_capability": "AVX512", "earlier_sittings": [first]})
    assert (moved.commit, moved.kernels) == ("aaaaaaa → bbbbbbb", "AVX2 → AVX512")
    assert capability_text((moved,)) == f"{MIXED} AVX2 → AVX512"  # one run, but not one machine's numbers
    assert capability_text((again, again)) == "AVX2"
    unknown = run(tmp_path, {"git_commit": "b" * 40, "earlier_sittings": [{"cpu_capability": "AVX2"}]})
    assert unknown.commit is None and unknown.kernels is None  # a sitting that recorded none: not recorded


FIT = "the stored config does not fit this td3x:"
NOT_A_KEY = "is not a td3x key; td3x-train --help lists the keys"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda config: config["agent"].update(bogus=1), f"{FIT} agent.bogus {NOT_A_KEY}"),
        (lambda config: config.update(bogus=1), f"{FIT} bogus {NOT_A_KEY}"),
        (lambda config: config["agent"].update(tau=5.0), "agent.tau=5.0 is not allowed: must be in (0, 1]"),
    ],
)
def test_a_run_whose_config_td3x_resume_refuses_is_left_out_named(
    tmp_path: Path, change: Callable[[dict[str, Any]], None], problem: str
) -> None:
    """A key td3x lacks (in a group, at the top) or a value it refuses in config.yaml: the run is unreadable, named by
    its file and the key as td3x-resume names them (before: averaged into a cell of its own); the good run is not."""
    good = write_run(tmp_path / "good", "Hopper-v5", "TD3", 0, curve(100, 0))
    bad = write_run(tmp_path / "bad", "Hopper-v5", "TD3", 1, curve(100, 1))
    config = yaml.safe_load((bad / "config.yaml").read_text())
    change(config)
    (bad / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    problems = {run.path: run.problem for run in find_runs([tmp_path])}
    assert problems[good] is None
    assert str(problems[bad]).startswith(f"unreadable: {bad}/config.yaml: {problem}"), problems[bad]


def test_a_run_whose_config_names_a_key_td3x_lacks_stays_in_its_launch_s_row(tmp_path: Path) -> None:
    """Left out, the run still sits in its launch's row (before: a row of its own, ``TD3 [agent.bogus=1]``, and its
    key beside every other run's label, ``bogus=None``); a value out of range is the file's value and splits."""
    runs = [write_run(tmp_path / f"seed_{seed}", "Hopper-v5", "TD3", seed, curve(100, seed)) for seed in range(3)]
    for bad, change in ((runs[1], {"bogus": 1}), (runs[2], {"agent": {"bogus": 1}})):
        config = yaml.safe_load((bad / "config.yaml").read_text())
        config.update(change) if "bogus" in change else config["agent"].update(change["agent"])
        (bad / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    found = find_runs([tmp_path])
    assert [run.problem is None for run in found] == [True, False, False]
    assert row_labels(found) == ["TD3", "TD3", "TD3"]
    config = yaml.safe_load((runs[2] / "config.yaml").read_text())
    config["agent"] = {key: value for key, value in config["agent"].items() if key != "bogus"} | {"tau": 5.0}
    (runs[2] / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    labels = row_labels(find_runs([tmp_path]))
    assert labels == ["TD3 [agent.tau=0.005]", "TD3 [agent.tau=0.005]", "TD3 [agent.tau=5.0]"]


def test_a_summary_without_status_or_steps_is_unreadable_as_td3x_sweep_status_says(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run", "Hopper-v5", "TD3", 0, curve(100, 0))
    (run_dir / "summary.json").write_text('{"steps": 1100}')  # before: "unfinished (status None)"
    (found,) = find_runs([tmp_path])
    assert (
        found.problem == f"unreadable: {run_dir}/summary.json is not a td3x summary: it lacks a status or a steps count"
    )
