"""The results at a glance: one compact table of every comparison td3x publishes against the authors or a peer, made
from the committed reports' tables (a test makes it again and compares it with the results page's).

    python docs/results/glance.py            # prints the table
    python docs/results/glance.py --write    # writes it into docs/results/index.md, between its glance markers

Each row: what was compared, the env and length, the other side's number and ours, one verdict mark and the test
behind it (registered before the runs, or post hoc), and where the detailed tables are.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent
PAGE = RESULTS / "index.md"
START, END = "<!-- glance: made by docs/results/glance.py -->", "<!-- /glance -->"
HEADER = "| compared | env | steps | theirs | ours | verdict | test | details |\n" + "| --- " * 8 + "|"


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as file:
        return list(csv.DictReader(file))


def _mark(equivalence: str, difference: str, observed_power: str = "") -> str:
    """One verdict: ✗ where a difference is detected, ✓ where equivalence is shown, – otherwise (with the power the
    equivalence test had at the spreads the runs showed, where known)."""
    if difference in ("difference detected", "differs"):
        return "✗ differs"
    if equivalence.startswith("equivalent"):
        return f"✓ {equivalence}"
    power = f" (its power at the runs' SDs: {float(observed_power):.3f})" if observed_power else ""
    return f"– equivalence not shown{power}"


def _registered(study: str, steps: str, page: str) -> list[str]:
    """A registered study's equivalence claims, each with the difference test registered beside it."""
    rows = {row["comparison"]: row for row in _rows(RESULTS / study / "report" / "registration.csv")}
    lines = []
    for name, row in rows.items():
        if row["test"] != "equivalence" or row["role"] != "claim":
            continue
        difference = rows.get(f"{name} (difference)", {}).get("verdict", "")
        theirs, ours = (f"{float(mean):.2f}" for mean in (row["means"].split(" / ")[1], row["means"].split(" / ")[0]))
        what, _, env = name.rpartition(" on ")  # registered names end in the env: "... on Walker2d-v5"
        mark = _mark(row["verdict"], difference, row["power_observed_sds"])
        lines.append(f"| {what} | {env} | {steps} | {theirs} | {ours} | {mark} | registered TOST | [{study}]({page}) |")
    return lines


def _post_hoc() -> list[str]:
    """The 100k runs against the authors' curves (the report's fidelity table), judged after the runs were seen."""
    lines = []
    for row in _rows(RESULTS / "report" / "fidelity.csv"):
        theirs, ours = f"{float(row['run_mean_authors']):.2f}", f"{float(row['run_mean_ours']):.2f}"
        mark = _mark(row["run_mean_equivalence"], row["outcome"])
        compared = f"{row['row']} against the authors' curves ({row['seeds']} seeds)"
        lines.append(
            f"| {compared} | {row['env']} | 100k | {theirs} | {ours} | {mark} | post hoc | "
            "[the test](#the-test-td3-against-the-authors-curves) |"
        )
    return lines


def glance() -> str:
    """The table, with a line on how to read it."""
    rows = [
        *_registered("horizon", "1M", "horizon/index.md"),
        *_registered("peer_registered", "100k", "peer_registered/index.md"),
        *_post_hoc(),
    ]
    return "\n".join([
        START,
        HEADER,
        *rows,
        "",
        "✓ equivalence shown within the bound (TOST), ✗ a difference detected, – neither: no evidence either way. "
        "theirs and ours: the mean over seeds of the comparison's statistic (at 1M Table 2's, the last 10 "
        "evaluations; at 100k the mean over the run). Registered tests were fixed before their runs; post hoc ones "
        "after, and say less.",
        END,
    ])


def written(page: str) -> str:
    """``page`` with its glance table made again."""
    head, rest = page.split(START, 1)
    return head + glance() + rest.split(END, 1)[1]


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        PAGE.write_text(written(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(glance())
