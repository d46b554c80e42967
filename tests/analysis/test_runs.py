"""What a run's provenance.json says, read once for every table (compute, registered tests, the seed study)."""

from __future__ import annotations

from pathlib import Path

from td3x.analysis.compute import MIXED, capability_text, cpu_text
from td3x.analysis.runs import NOT_RECORDED, Run, distinct

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
