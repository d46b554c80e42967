"""The peer section: each TD3 row against the peer row, another implementation of TD3 under td3x's protocol.

Where the folder holds the peer row (``SB3 TD3``: Stable-Baselines3's TD3 under the same protocol,
``scripts/sb3_reference.py``), every TD3 row on that env (another algorithm, AHE say, would differ for its own
reasons) is compared with it on the fidelity section's primary statistic: Welch's test, Holm-adjusted per row; TOST
at a bound (one given for the env, else post hoc: ``equivalence``), its TOST p Holm-adjusted per row, the MDD at the
two sides' SDs, and the exact permutation test of the pooled seeds. Every test here is post hoc: a registered
comparison is judged by ``td3x-report --registration``.
Against the authors a difference may be the task's (v5 against v1) or the code's; against the peer, on the same v5
task, it is the code's (or the implementation's choices). Here are the section's numbers, tables and Markdown; it is
printed as the last part of the fidelity section.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from td3x.analysis.render import comparison_columns, tables
from td3x.analysis.render.comparison_columns import ORIGIN_COLUMN
from td3x.analysis.render.tables import difference_text, number, p_text, welch_csv_columns
from td3x.analysis.sections.fidelity import PRIMARY, SENSITIVITY, STATISTICS, Fidelity
from td3x.analysis.stats.equivalence import BoundRule, Tost, detectable_difference, peer_bound, tost
from td3x.analysis.stats.two_sample import ALPHA, Permutation, Welch, holm_by_row, permutation_test, welch

PEER_ROW = "SB3 TD3"  # scripts/sb3_reference.py's row: another implementation under td3x's protocol
PEER_OF = "TD3"  # the paper row the peer implements: only rows of it are compared with the peer
MDD_DESIGN = "our seeds against the peer's, each side at its own SD"


@dataclass(frozen=True, eq=False)  # holds arrays
class PeerComparison:
    """One row's primary statistic against the peer row's on one env, over the same evaluation steps.

    Attributes:
        row: the compared row's label.
        env_id: the env.
        ours: the row's seeds' values of the statistic (the primary: the mean return over 5k..T).
        peer: the peer's seeds' values of the same statistic.
        test: the Welch comparison of ours against the peer's.
        permutation: the exact permutation test of the same two groups.
        equivalence: TOST at the cell's bound, with the MDD at the two sides' SDs.
        holm_p: the p-value Holm-adjusted over the row's envs with a peer (the primary statistic only).
        statistic: the statistic (a key of the fidelity section's ``STATISTICS``).
    """

    row: str
    env_id: str
    ours: np.ndarray
    peer: np.ndarray
    test: Welch
    permutation: Permutation
    equivalence: Tost
    holm_p: float = float("nan")
    statistic: str = PRIMARY


def peer_comparisons(
    results: list[Fidelity],
    rows: Collection[str],
    rule: BoundRule | None = None,
    statistic: str = PRIMARY,
    peer_row: str = PEER_ROW,
) -> list[PeerComparison]:
    """Each of ``rows`` against the peer row, on each env where both were compared with the authors' curves over
    the same steps: Welch's test and TOST of each seed's value of ``statistic``, both Holm-adjusted per row over
    its envs for the primary statistic (the others are descriptive), and the exact permutation test.

    Args:
        results: from :func:`fidelities`.
        rows: the row labels to compare (the rows of the algorithm the peer implements).
        rule: where the equivalence bounds come from (the default rule when None).
        statistic: a key of the fidelity section's ``STATISTICS``.
        peer_row: the peer's row label.
    """
    peers = {f.env_id: f for f in results if f.row == peer_row}
    found = [
        _against(f, peer, rule or BoundRule(), statistic)
        for f in results
        if f.row in rows and (peer := peers.get(f.env_id)) is not None and np.array_equal(f.steps, peer.steps)
    ]
    if statistic != PRIMARY:
        return found
    rows_of = [c.row for c in found]
    adjusted = holm_by_row(rows_of, [c.test.p for c in found])
    adjusted_tost = holm_by_row(rows_of, [c.equivalence.p for c in found])
    return [
        replace(c, holm_p=p, equivalence=replace(c.equivalence, holm_p=tost_p))
        for c, p, tost_p in zip(found, adjusted, adjusted_tost, strict=True)
    ]


def _against(ours: Fidelity, peer: Fidelity, rule: BoundRule, statistic: str) -> PeerComparison:
    x, y = ours.comparisons[statistic].ours, peer.comparisons[statistic].ours
    test = welch(x, y)
    bound = peer_bound(rule, ours.env_id, (float(x.mean()), float(y.mean())))
    sd_x, sd_y = (float(v.std(ddof=1)) if len(v) > 1 else float("nan") for v in (x, y))
    detectable = detectable_difference(sd_x, len(x), sd_y, len(y))
    tested = tost(test, bound, detectable)
    return PeerComparison(ours.row, ours.env_id, x, y, test, permutation_test(x, y), tested, statistic=statistic)


# ---------------------------------------------------------------------------------------------------- tables
def frames(peers: list[PeerComparison], sensitivity: list[PeerComparison] | None = None) -> dict[str, pd.DataFrame]:
    """The section's table by name, ``peer`` (none without a row compared with the peer).

    Args:
        peers: the primary statistic's comparisons.
        sensitivity: the same cells' comparisons of the mean after the warm-up (in the same order).
    """
    return {"peer": peer_frame(peers, sensitivity or [])} if peers else {}


def peer_frame(peers: list[PeerComparison], sensitivity: list[PeerComparison]) -> pd.DataFrame:
    """``peer.csv``: per row and env with a peer, for the primary statistic (and the mean after the warm-up), the
    row's and the peer's means, the difference with its 95% Welch interval, Welch's p (Holm's for the primary),
    TOST at the bound, the MDD and the permutation test."""
    return pd.DataFrame(
        {
            "env": [c.env_id for c in peers],
            "peer": [PEER_ROW] * len(peers),
            "seeds": [len(c.ours) for c in peers],
            "peer_seeds": [len(c.peer) for c in peers],
            **_csv_columns(peers),
            **(_csv_columns(sensitivity) if sensitivity else {}),
        },
        index=pd.Index([c.row for c in peers], name="row"),
    )


def _csv_columns(comparisons: list[PeerComparison]) -> dict[str, list[Any]]:
    statistic, tests = comparisons[0].statistic, [c.test for c in comparisons]
    columns: dict[str, list[Any]] = {
        f"{statistic}_ours": [float(c.ours.mean()) for c in comparisons],
        f"{statistic}_peer": [float(c.peer.mean()) for c in comparisons],
        **welch_csv_columns(statistic, tests),
    }
    if statistic == PRIMARY:
        columns[f"{statistic}_holm_p"] = [c.holm_p for c in comparisons]
    equivalences, permutations = [c.equivalence for c in comparisons], [c.permutation for c in comparisons]
    return columns | comparison_columns.csv_columns(statistic, tests, equivalences, permutations)


def peer_test_frame(peers: list[PeerComparison]) -> pd.DataFrame:
    """The report's display table of the rows against the peer on one statistic (see :func:`peer_frame`)."""
    primary = bool(peers) and peers[0].statistic == PRIMARY
    columns: dict[str, list[object]] = {
        "env": [c.env_id for c in peers],
        "seeds": [len(c.ours) for c in peers],
        "peer's seeds": [len(c.peer) for c in peers],
        "ours": [number(float(c.ours.mean())) for c in peers],
        "peer's": [number(float(c.peer.mean())) for c in peers],
        "ours − peer [95% CI]": [difference_text(c.test) for c in peers],
        "Welch p": [p_text(c.test.p) for c in peers],
    }
    if primary:
        columns["Holm p"] = [p_text(c.holm_p) for c in peers]
    columns |= comparison_columns.display_columns(
        [c.test for c in peers],
        [c.equivalence for c in peers],
        [c.permutation for c in peers],
        _levels(peers) if primary else [ALPHA] * len(peers),
        holm=primary,
    )
    frame = pd.DataFrame(columns, index=pd.Index([c.row for c in peers], name="row"))
    return tables.verdicts_first(frame, [comparison_columns.DECISION_COLUMN], keys=1)


def _levels(peers: list[PeerComparison]) -> list[float]:
    """Holm's first step for each comparison's row: α over the row's envs with a peer."""
    return [ALPHA / sum(other.row == c.row for other in peers) for c in peers]


# ---------------------------------------------------------------------------------------------------- Markdown
def markdown(peers: list[PeerComparison], sensitivity: list[PeerComparison], notes: tables.Notes) -> str:
    """The fidelity section's last part: the rows against the peer ('' without a peer).

    Args:
        peers: from :func:`peer_comparisons`.
        sensitivity: the same on the mean after the warm-up (``statistic="after_warmup"``).
        notes: the report's notes so far (each bound's origin is one, given once).
    """
    if not peers:
        return ""
    text = (
        f"\n\n**Against the peer, {PEER_ROW}**: Stable-Baselines3's TD3 trained and evaluated under the same "
        "protocol on the same v5 task (`scripts/sb3_reference.py`). Against the authors a difference may be the "
        f"task's as much as the code's; against the peer it is the implementation's. Each {PEER_OF} row (another "
        "algorithm would differ for its own reasons), on the same primary statistic, each seed's "
        f"{STATISTICS[PRIMARY]}, ours against the peer's seeds: Welch's t-test, Holm-adjusted per row over its envs "
        "with a peer, and TOST at the bound, all post hoc (a registered comparison is judged by `--registration`). "
        f"{comparison_columns.columns_text('peer', MDD_DESIGN)} `peer.csv` has every number."
        f"\n\n{notes.table(peer_test_frame(peers), [ORIGIN_COLUMN])}"
    )
    if sensitivity:
        text += (
            f"\n\n**Against the peer, sensitivity (descriptive): the {STATISTICS[SENSITIVITY]}**, unadjusted."
            f"\n\n{notes.table(peer_test_frame(sensitivity), [ORIGIN_COLUMN])}"
        )
    return text
