"""The peer section: each TD3 row against the peer row, another implementation of TD3 under td3x's protocol.

The peer is a row like any other, of any folder of runs: ``td3x-report --peer ROW`` names it (``Settings.peer``),
and without it there is no peer section. On each env where the peer has runs, every TD3 row (another algorithm, AHE
say, would differ for its own reasons) is compared with it on the fidelity section's primary statistic: Welch's
test, Holm-adjusted per row; TOST at a bound (one given for the env, else post hoc: ``stats.equivalence``), its TOST
p Holm-adjusted per row, the MDD at the two sides' SDs, and the exact permutation test of the pooled seeds. Every
test here is post hoc: a registered comparison is judged by ``td3x-report --registration``.
Against the authors a difference may be the task's (v5 against v1) or the code's; against the peer, on the same v5
task, it is the code's (or the implementation's choices). It is printed as the last part of the fidelity section.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Self

import numpy as np
import pandas as pd

from td3x.analysis.reading.paper import TD3_ROW
from td3x.analysis.render import comparison_columns
from td3x.analysis.render.comparison_columns import ORIGIN_COLUMN, csv_columns, test_frame
from td3x.analysis.render.tables import Notes
from td3x.analysis.sections.fidelity import PRIMARY, SENSITIVITY, STATISTICS, Fidelity, FidelitySection
from td3x.analysis.sections.section import Frames, Report, Section
from td3x.analysis.stats.equivalence import BoundRule, Comparison, compare, holm_adjusted, peer_bound, sd

PEER_OF = TD3_ROW  # the paper row the peer implements: only rows of it are compared with the peer
MDD_DESIGN = "our seeds against the peer's, each side at its own SD"


@dataclass(frozen=True, eq=False)
class PeerComparison:
    """One row's seeds against the peer row's on one env and statistic, over the same evaluation steps."""

    row: str
    env_id: str
    comparison: Comparison


@dataclass(frozen=True, eq=False)
class PeerSection(Section):
    """The rows of the algorithm the peer implements against the peer row (nothing without one).

    Attributes:
        peer: the peer row (``Settings.peer``), or None.
        primary: on the primary statistic, Holm-adjusted per row (:func:`peer_comparisons`).
        sensitivity: the same cells on the mean after the warm-up, descriptive.
    """

    peer: str | None
    primary: list[PeerComparison]
    sensitivity: list[PeerComparison]

    @classmethod
    def build(cls, report: Report) -> Self:
        peer, results, rule = report.settings.peer, report.section(FidelitySection).results, report.settings.bounds
        if peer is None:
            return cls(None, [], [])
        rows = [row for row in report.grid.rows if report.grid.paper_row(row) == PEER_OF and row != peer]
        compared = (peer_comparisons(results, rows, peer, rule, statistic) for statistic in (PRIMARY, SENSITIVITY))
        return cls(peer, *compared)

    def frames(self, report: Report) -> Frames:
        """``peer.csv``: per row and env with a peer, for the primary statistic and the mean after the warm-up, the
        row's and the peer's means and the tests (``comparison_columns.csv_columns``); none without a peer."""
        if not self.primary:
            return {}
        primary, sensitivity = ([c.comparison for c in found] for found in (self.primary, self.sensitivity))
        frame = pd.DataFrame(
            {
                "env": [c.env_id for c in self.primary],
                "peer": [self.peer] * len(primary),
                "seeds": [len(c.ours) for c in primary],
                "peer_seeds": [len(c.theirs) for c in primary],
                **csv_columns(PRIMARY, primary, "peer", primary=True),
                **csv_columns(SENSITIVITY, sensitivity, "peer", primary=False),
            },
            index=pd.Index([c.row for c in self.primary], name="row"),
        )
        return {"peer": frame}

    def markdown(self, report: Report, frames: Frames, notes: Notes) -> str:
        if not self.primary:
            return ""
        return (
            f"**Against the peer, {self.peer}** (`--peer`): another implementation of TD3, trained and evaluated "
            "under the same protocol on the same task. Against the authors a difference may be the "
            f"task's as much as the code's; against the peer it is the implementation's. Each {PEER_OF} row (another "
            "algorithm would differ for its own reasons), on the same primary statistic, each seed's "
            f"{STATISTICS[PRIMARY]}, ours against the peer's seeds: Welch's t-test, Holm-adjusted per row over its "
            "envs with a peer, and TOST at the bound, all post hoc (a registered comparison is judged by "
            f"`--registration`). {comparison_columns.columns_text('peer', MDD_DESIGN)} `peer.csv` has every number."
            f"\n\n{notes.table(peer_test_frame(self.primary, primary=True), [ORIGIN_COLUMN])}"
            f"\n\n**Against the peer, sensitivity (descriptive): the {STATISTICS[SENSITIVITY]}**, unadjusted."
            f"\n\n{notes.table(peer_test_frame(self.sensitivity, primary=False), [ORIGIN_COLUMN])}"
        )


def peer_comparisons(
    results: list[Fidelity], rows: Collection[str], peer_row: str, rule: BoundRule | None = None,
    statistic: str = PRIMARY,
) -> list[PeerComparison]:
    """Each of ``rows`` against the peer row, on each env where both were compared with the authors' curves over
    the same steps: Welch's test and TOST (at the env's peer bound, the MDD at each side's SD) of each seed's value
    of ``statistic``, both Holm-adjusted per row over its envs for the primary statistic (the others are
    descriptive), and the exact permutation test.

    Args:
        results: from ``fidelity.fidelities``.
        rows: the row labels to compare (the rows of the algorithm the peer implements).
        peer_row: the peer's row label.
        rule: where the equivalence bounds come from (the default rule when None).
        statistic: a key of the fidelity section's ``STATISTICS``.
    """
    rule = rule or BoundRule()
    peers = {f.env_id: f for f in results if f.row == peer_row}
    found = []
    for f in results:
        peer = peers.get(f.env_id)
        if f.row in rows and peer is not None and np.array_equal(f.steps, peer.steps):
            x, y = f.comparisons[statistic].ours, peer.comparisons[statistic].ours
            bound = peer_bound(rule, f.env_id, (float(x.mean()), float(y.mean())))
            found.append(PeerComparison(f.row, f.env_id, compare(x, y, bound, (sd(x), sd(y)))))
    if statistic != PRIMARY:
        return found
    adjusted = holm_adjusted([c.row for c in found], [c.comparison for c in found])
    return [replace(c, comparison=comparison) for c, comparison in zip(found, adjusted, strict=True)]


def peer_test_frame(peers: list[PeerComparison], primary: bool) -> pd.DataFrame:
    """The report's display table of the rows against the peer on one statistic (``comparison_columns.test_frame``),
    with the peer's seeds."""
    comparisons = [c.comparison for c in peers]
    return test_frame(
        [c.row for c in peers],
        [c.env_id for c in peers],
        comparisons,
        ("peer", "peer's"),
        primary,
        {"peer's seeds": [len(c.theirs) for c in comparisons]},
    )
