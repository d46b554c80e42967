"""The peer section: each TD3 row against the peer row, another implementation of TD3 under td3x's protocol.

Where the folder holds the peer row (``SB3 TD3``: Stable-Baselines3's TD3 under the same protocol,
``scripts/sb3_reference.py``), every TD3 row on that env (another algorithm, AHE say, would differ for its own
reasons) is compared with it by the fidelity section's primary test of the same statistic, Holm-adjusted per row.
Against the authors a difference may be the task's (v5 against v1) or the code's; against the peer, on the same v5
task, it is the code's (or the implementation's choices). Here are the section's numbers, tables and Markdown; it is
printed as the last part of the fidelity section.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from td3x.analysis import tables
from td3x.analysis.fidelity import PRIMARY, STATISTICS, Fidelity
from td3x.analysis.tables import MARGIN_COLUMN, difference_text, margin_text, number, p_text, welch_csv_columns
from td3x.analysis.two_sample import Welch, holm_by_row, welch

PEER_ROW = "SB3 TD3"  # scripts/sb3_reference.py's row: another implementation under td3x's protocol
PEER_OF = "TD3"  # the paper row the peer implements: only rows of it are compared with the peer


@dataclass(frozen=True, eq=False)  # holds arrays
class PeerComparison:
    """One row's primary statistic against the peer row's on one env, over the same evaluation steps.

    Attributes:
        row: the compared row's label.
        env_id: the env.
        ours: the row's seeds' mean return over 5k..T.
        peer: the peer's seeds' values of the same statistic.
        test: the Welch comparison of ours against the peer's.
        holm_p: the p-value Holm-adjusted over the row's envs with a peer.
    """

    row: str
    env_id: str
    ours: np.ndarray
    peer: np.ndarray
    test: Welch
    holm_p: float = float("nan")


def peer_comparisons(results: list[Fidelity], rows: Collection[str], peer_row: str = PEER_ROW) -> list[PeerComparison]:
    """Each of ``rows`` against the peer row, on each env where both were compared with the authors' curves over
    the same steps: Welch's test of each seed's mean return over 5k..T, Holm-adjusted per row over its envs.

    Args:
        results: from :func:`fidelities`.
        rows: the row labels to compare (the rows of the algorithm the peer implements).
        peer_row: the peer's row label.
    """
    peers = {f.env_id: f for f in results if f.row == peer_row}
    found = [
        PeerComparison(f.row, f.env_id, f.run_mean.ours, peer.run_mean.ours, welch(f.run_mean.ours, peer.run_mean.ours))
        for f in results
        if f.row in rows and (peer := peers.get(f.env_id)) is not None and np.array_equal(f.steps, peer.steps)
    ]
    adjusted = holm_by_row([c.row for c in found], [c.test.p for c in found])
    return [replace(c, holm_p=p) for c, p in zip(found, adjusted, strict=True)]


# ---------------------------------------------------------------------------------------------------- tables
def frames(peers: list[PeerComparison]) -> dict[str, pd.DataFrame]:
    """The section's table by name, ``peer`` (none without a row compared with the peer)."""
    return {"peer": peer_frame(peers)} if peers else {}


def peer_frame(peers: list[PeerComparison]) -> pd.DataFrame:
    """``peer.csv``: per row and env with a peer, the row's and the peer's mean of the primary statistic, the
    difference with its 95% Welch interval, Welch's and Holm's p and the TOST margin."""
    return pd.DataFrame(
        {
            "env": [c.env_id for c in peers],
            "peer": [PEER_ROW] * len(peers),
            "seeds": [len(c.ours) for c in peers],
            "peer_seeds": [len(c.peer) for c in peers],
            f"{PRIMARY}_ours": [float(c.ours.mean()) for c in peers],
            f"{PRIMARY}_peer": [float(c.peer.mean()) for c in peers],
            **welch_csv_columns(PRIMARY, [c.test for c in peers]),
            f"{PRIMARY}_holm_p": [c.holm_p for c in peers],
            f"{PRIMARY}_margin": [c.test.margin for c in peers],
        },
        index=pd.Index([c.row for c in peers], name="row"),
    )


def peer_test_frame(peers: list[PeerComparison]) -> pd.DataFrame:
    """The report's display table of the rows against the peer (see :func:`peer_frame`)."""
    return pd.DataFrame(
        {
            "env": [c.env_id for c in peers],
            "seeds": [len(c.ours) for c in peers],
            "peer's seeds": [len(c.peer) for c in peers],
            "ours": [number(float(c.ours.mean())) for c in peers],
            "peer's": [number(float(c.peer.mean())) for c in peers],
            "ours − peer [95% CI]": [difference_text(c.test) for c in peers],
            "Welch p": [p_text(c.test.p) for c in peers],
            "Holm p": [p_text(c.holm_p) for c in peers],
            MARGIN_COLUMN: [margin_text(c.test) for c in peers],
        },
        index=pd.Index([c.row for c in peers], name="row"),
    )


# ---------------------------------------------------------------------------------------------------- Markdown
def markdown(peers: list[PeerComparison]) -> str:
    """The fidelity section's last part: the rows against the peer ('' without a peer).

    Args:
        peers: from :func:`peer_comparisons`.
    """
    if not peers:
        return ""
    return (
        f"\n\n**Against the peer, {PEER_ROW}**: Stable-Baselines3's TD3 trained and evaluated under the same "
        "protocol on the same v5 task (`scripts/sb3_reference.py`). Against the authors a difference may be the "
        f"task's as much as the code's; against the peer it is the implementation's. Each {PEER_OF} row (another "
        "algorithm would differ for its own reasons), by the same primary test: Welch's "
        f"t-test of each seed's {STATISTICS[PRIMARY]}, ours against the peer's seeds, Holm-adjusted per row over "
        "its envs with a peer, and the margin beyond which differences are ruled out (TOST). `peer.csv` has every "
        f"number.\n\n{tables.markdown(peer_test_frame(peers))}"
    )
