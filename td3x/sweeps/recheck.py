"""What ``td3x-sweep recheck`` compares: a run's eval.csv before a step, timing columns aside, against a re-run's, and
what changed between the machines and libraries of the two when they differ."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from td3x.rundir.layout import EVAL_FILE, is_timing_column


def eval_prefix(run_dir: Path, before_step: int) -> list[dict[str, str]]:
    """eval.csv rows before ``before_step`` (the last one of a shorter run may differ), timing columns aside."""
    with (run_dir / EVAL_FILE).open() as file:
        return [
            {k: v for k, v in row.items() if not is_timing_column(k)}
            for row in csv.DictReader(file)
            if int(row["step"]) < before_step
        ]


def first_difference(expected: list[dict[str, str]], got: list[dict[str, str]]) -> str | None:
    """The first evaluation and column where ``got`` differs from ``expected``, or None when they agree."""
    for want, have in zip(expected, got, strict=False):
        changed = [key for key in want if want[key] != have.get(key)]
        if changed:
            return f"at step {want['step']}, {changed[0]}: {want[changed[0]]} then, {have.get(changed[0])} now"
    return None if len(expected) == len(got) else f"{len(expected)} evaluations then, {len(got)} now"


def provenance_changes(then: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs between the machine and libraries of the original run and of the recheck: the CPU capability
    and its instruction-set extensions decide fp32 numerics (a host name would tell less, and is not recorded)."""
    keys = ("python", "cpu", "cpu_capability", "cpu_flags", "torch_threads", "git_commit", "os")
    changes = [f"{key}: {then.get(key)!r} then, {now.get(key)!r} now" for key in keys if then.get(key) != now.get(key)]
    versions_then, versions_now = then.get("versions", {}), now.get("versions", {})
    changes += [
        f"{name}: {versions_then.get(name)} then, {versions_now.get(name)} now"
        for name in sorted(versions_then | versions_now)
        if versions_then.get(name) != versions_now.get(name)
    ]
    return changes or ["same versions, threads, CPU capability and code: look for nondeterministic ops or a device"]
