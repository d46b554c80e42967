"""Actors that stopped learning (td3x.analysis.sections.stalled): a run's last logged actor gradient, read from
metrics.jsonl, counted per cell below the threshold and at exactly 0; a metrics.jsonl the report cannot read leaves
its run out."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.report_runs import curve, write_run

from td3x.algo.seed_statistics import STALLED_ACTOR_NORM
from td3x.analysis import Settings, build_report
from td3x.analysis.reading.runs import find_runs
from td3x.analysis.render.tables import Notes
from td3x.analysis.sections.stalled import StalledSection, summary


def write_metrics(run_dir: Path, norms: list[float | None]) -> None:
    """metrics.jsonl rows at steps 1000, 2000, ...: the actor's gradient norm where given (None: a row without it,
    as the first row, before the first actor update)."""
    rows = [
        {"step": 1000 * (i + 1), **({} if norm is None else {"actor_grad_norm": norm})} for i, norm in enumerate(norms)
    ]
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_stalled_actors_are_counted_per_cell_below_the_threshold_and_at_exactly_0(tmp_path: Path) -> None:
    norms = {  # seed: the run's logged actor gradient norms
        0: [None, 0.4, 0.0, 0.0],  # frozen
        1: [None, 0.5, 2e-6, None],  # stalled: the last row that logs one counts
        2: [None, 1.0, STALLED_ACTOR_NORM],  # at the threshold: not below it
        3: [None],  # logs none (as SB3's runs)
    }
    for seed, logged in norms.items():
        write_metrics(write_run(tmp_path / f"td3/{seed}", "Hopper-v5", "TD3", seed, curve(1000, seed)), logged)
        cdq = write_run(tmp_path / f"cdq/{seed}", "Hopper-v5", "TD3 - CDQ", seed, curve(800, seed))
        write_metrics(cdq, [None, 0.9])
    runs = find_runs([tmp_path])
    assert {run.seed: run.actor_grad_norm for run in runs if run.paper_row == "TD3"} == {
        0: 0.0,
        1: 2e-6,
        2: STALLED_ACTOR_NORM,
        3: None,
    }
    report = build_report([tmp_path], Settings(reps=20))
    frames = report.section(StalledSection).frames(report)
    assert frames["stalled_actors"].to_dict("index") == {
        "TD3": {"env": "Hopper-v5", "stalled": 2, "logged": 3, "exactly_0": 1, "seeds": "0 1"}
    }
    assert summary(report.grid).startswith(
        "2 of the 7 averaged runs that log their actor's gradient ended with it below 0.001 (1 at exactly 0)"
    )
    assert "| TD3 | Hopper-v5 | 2 of 3 | 1 | 0 1 |" in report.section(StalledSection).markdown(report, frames, Notes())
    healthy = build_report([tmp_path / "cdq"], Settings(reps=20))
    frames = healthy.section(StalledSection).frames(healthy)
    assert frames["stalled_actors"].empty and healthy.section(StalledSection).markdown(healthy, frames, Notes()) == ""
    assert summary(healthy.grid).endswith("(0 at exactly 0), an actor that has stopped learning or nearly.")


def test_a_metrics_file_the_report_cannot_read_leaves_its_run_out_named(tmp_path: Path) -> None:
    broken = write_run(tmp_path / "broken", "Hopper-v5", "TD3", 0, curve(1000, 0))
    (broken / "metrics.jsonl").write_text('{"step": 1000, "actor_grad_norm": 0.5}\n{"step": 2000, "actor_')
    text = write_run(tmp_path / "text", "Hopper-v5", "TD3", 1, curve(1000, 1))
    (text / "metrics.jsonl").write_text('{"step": 1000, "actor_grad_norm": "0.5"}\n')
    problems = {run.seed: run.problem for run in find_runs([tmp_path])}
    assert problems == {
        0: f"unreadable: {broken / 'metrics.jsonl'} line 2 is not valid JSON: Unterminated string starting at",
        1: f"unreadable: {text / 'metrics.jsonl'}'s last actor_grad_norm is '0.5', not a number",
    }
