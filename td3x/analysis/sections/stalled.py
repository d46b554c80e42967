"""Actors that stopped learning: averaged runs whose actor's gradient norm at the last log row (``metrics.jsonl``'s
``actor_grad_norm``) is below :data:`~td3x.algo.seed_statistics.STALLED_ACTOR_NORM`, per cell, in
``stalled_actors.csv`` and a section of the report.

TD3's actor ends in tanh. Once the output pre-activation of every action on a batch passes the point where tanh
rounds to ±1 (about 9 in float32, 3.5 in bf16), 1 − tanh² is exactly 0 there and so is the actor's gradient: the
policy no longer changes. A gradient short of 0 but orders of magnitude below a learning actor's most likely marks
the same saturation, nearly complete; Adam rescales small gradients, so such an actor can still come out of it,
as one at exactly 0 cannot. Such runs stay in every number of the report; this section says where they
are, as a spread across seeds that mixes stalled and learning runs reads otherwise as plain variance.
"""

from __future__ import annotations

import pandas as pd

from td3x.algo.seed_statistics import STALLED_ACTOR_NORM
from td3x.analysis.reading.cells import Grid
from td3x.analysis.render import tables
from td3x.analysis.render.tables import Notes
from td3x.analysis.sections.section import Frames, Report, Section


def summary(grid: Grid) -> str:
    """The report header's sentence: how many averaged runs ended with a stalled actor, among those that log it."""
    logged = [run for cell in grid.cells.values() for run in cell.runs if run.actor_stalled is not None]
    if not logged:
        return "No averaged run logs its actor's gradient."
    stalled = [run for run in logged if run.actor_stalled]
    frozen = sum(run.actor_frozen is True for run in stalled)
    where = " (see “Actors that stopped learning”)" if stalled else ""
    return (
        f"{len(stalled)} of the {len(logged)} averaged runs that log their actor's gradient ended with it below "
        f"{STALLED_ACTOR_NORM:g} ({frozen} at exactly 0), an actor that has stopped learning or nearly{where}."
    )


class StalledSection(Section):
    """The cells whose averaged runs ended with a stalled actor, listed."""

    def frames(self, report: Report) -> Frames:
        """``stalled_actors``: per cell with an averaged run below STALLED_ACTOR_NORM, how many of its runs that log
        an actor gradient are, how many of those are at exactly 0, and their seeds."""
        columns = ["row", "env", "stalled", "logged", "exactly_0", "seeds"]
        lines = []
        for (row, env_id), cell in report.grid.cells.items():
            logged = [run for run in cell.runs if run.actor_stalled is not None]
            stalled = [run for run in logged if run.actor_stalled]
            if stalled:
                frozen, seeds = sum(run.actor_frozen is True for run in stalled), " ".join(str(r.seed) for r in stalled)
                lines.append((row, env_id, len(stalled), len(logged), frozen, seeds))
        return {"stalled_actors": pd.DataFrame(lines, columns=columns).set_index("row")}

    def markdown(self, report: Report, frames: Frames, notes: Notes) -> str:
        frame = frames["stalled_actors"]
        if frame.empty:
            return ""
        below = f"actor gradient below {STALLED_ACTOR_NORM:g} at the last log row"
        shown = frame.assign(**{below: frame["stalled"].astype(str) + " of " + frame["logged"].astype(str)})
        shown = shown[["env", below, "exactly_0", "seeds"]].rename(columns={"exactly_0": "of them exactly 0"})
        return (
            "## Actors that stopped learning\n\n"
            "Averaged runs whose actor's gradient norm at the last log row (`metrics.jsonl`) is below "
            f"{STALLED_ACTOR_NORM:g}, a heuristic threshold (learning actors log far more). TD3's actor ends in "
            "tanh: once every action's pre-activation on a batch passes the point where tanh rounds to ±1 (about 9 "
            "in float32, 3.5 in bf16), its gradient there is exactly 0 and the policy stops changing for good; a norm "
            "just above 0 most likely marks the same saturation, nearly complete (the norm alone cannot tell), which "
            "Adam, rescaling small gradients, may still bring the actor out of. These runs are in every "
            "number above, not removed: a cell's spread mixes them with learning runs. Each run's last norm is in "
            "`runs.csv` (actor_grad_norm_last).\n\n"
            f"{tables.markdown(shown)}"
        )
