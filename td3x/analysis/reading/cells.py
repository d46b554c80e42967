"""Grouping runs into the cells of a table: one row per Table 2 row (``paper_row``) and config variant, one
column per env.

Only complete runs are averaged, one per seed. A cell lists what it leaves out (unfinished, failed and duplicate
runs, each with its reason) and the seeds it lacks (seeds that other runs on the same env have), so the report
can mark it: nothing is averaged or dropped silently.

Runs of the same ``paper_row`` and env whose configs differ in a key that changes results (e.g. a sweep over
``agent.tau``) are different experiments: they become separate rows, labelled by the differing keys.

A registration file (``td3x-report --registration``) says more about the runs it registers (``Registered``): the
seeds each side was registered with are the seeds its cell expects (not every seed found on the env), and a side's
runs that would share a cell with another side's (the same config, other code) get a row of their own, named by
the side.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from td3x.analysis.reading.paper import TD3_ROW, paper_env, paper_tables, table2_rows
from td3x.analysis.reading.runs import Run
from td3x.config.hydra import flatten
from td3x.config.inert import REPORT_INERT, is_inert, with_neutral_defaults


@dataclass(frozen=True, eq=False)
class Cell:
    """The runs of one table row on one env.

    Attributes:
        row: the row's label: its ``paper_row``, plus the config keys that set it apart from other rows of the
            same ``paper_row``, e.g. ``TD3 [agent.tau=0.01]``.
        paper_row: the Table 2 row the runs' ablation option names.
        env_id: the Gymnasium id.
        runs: the complete runs, one per seed, sorted by seed; the only runs averaged.
        left_out: runs of this cell that are not averaged, each with its ``problem``.
        missing_seeds: seeds that other runs on this env have and this cell has no run dir for.
    """

    row: str
    paper_row: str
    env_id: str
    runs: tuple[Run, ...]
    left_out: tuple[Run, ...]
    missing_seeds: tuple[int, ...]

    @property
    def seeds(self) -> list[int]:
        return [run.seed for run in self.runs]

    @property
    def flagged(self) -> bool:
        """Whether the cell's numbers rest on fewer runs than were meant to be there."""
        return bool(self.left_out or self.missing_seeds)

    def notes(self) -> list[str]:
        """One line per run left out and one for the missing seeds."""
        notes = [f"seed {run.seed} left out, {run.problem} ({run.path})" for run in self.left_out]
        if self.missing_seeds:
            notes.append(f"no run dir for seed(s) {', '.join(map(str, self.missing_seeds))}")
        return notes


@dataclass(frozen=True, eq=False)
class Grid:
    """The cells of a report, with its rows and envs in display order."""

    rows: list[str]
    envs: list[str]
    cells: dict[tuple[str, str], Cell]

    def cell(self, row: str, env_id: str) -> Cell | None:
        """The cell of a row and env, or None when no run has both."""
        return self.cells.get((row, env_id))

    def paper_row(self, row: str) -> str:
        """The Table 2 row name behind a row label."""
        return next(cell.paper_row for (label, _), cell in self.cells.items() if label == row)

    def reference_row(self, row: str) -> str | None:
        """The TD3 row a row is compared with: the TD3 row of the same variant (``TD3 [agent.tau=0.01]`` for
        ``TD3 - CDQ [agent.tau=0.01]``), else the TD3 row on the most envs (the first of those) when the row's
        variant has none; None without one.
        """
        td3_rows = [label for label in self.rows if self.paper_row(label) == TD3_ROW]
        same_variant = TD3_ROW + row.removeprefix(self.paper_row(row))
        if not td3_rows:
            return None
        if same_variant in td3_rows:
            return same_variant
        return max(td3_rows, key=lambda label: sum(cell_row == label for cell_row, _ in self.cells))


@dataclass(frozen=True)
class Registered:
    """What a registration fixes about one of its runs, for the general tables.

    Attributes:
        seeds: the registered seeds of the run's side (of every side it is in): the seeds its cell expects.
        arm: the side whose run it is, where another side's runs share its cell: its row's name ends in it;
            None for the other registered runs.
    """

    seeds: frozenset[int]
    arm: str | None = None


def result_keys(run: Run) -> dict[str, str]:
    """The run's config keys that can change its results: all but :data:`td3x.config.inert.REPORT_INERT` (where and
    how it ran and was logged, the table's own axes: row, env, seed, and the group choices, whose values are in
    the other keys)."""
    keys = with_neutral_defaults(flatten(run.config))  # a run written before a key splits no row from its default
    return {key: str(value) for key, value in keys.items() if not is_inert(key, REPORT_INERT)}


def row_labels(runs: list[Run]) -> list[str]:
    """Each run's row label: its ``paper_row``, plus what sets runs of that ``paper_row`` *on one env* apart.

    That is the group options (``agent``, ``noise``) that differ, when they account for every differing key
    (``TD3 [agent=td3_2018]``), else the differing keys themselves (``TD3 [agent.tau=0.01]``). Keys that differ
    only between envs (e.g. each env's ``env.random_steps``) do not split a row.
    """
    keys, choices = [result_keys(run) for run in runs], [label_choices(run) for run in runs]
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, run in enumerate(runs):
        groups[(run.paper_row, run.env_id)].append(i)
    differing_keys: dict[str, set[str]] = defaultdict(set)
    differing_choices: dict[str, set[str]] = defaultdict(set)
    for (paper_row, _), members in groups.items():
        differing_keys[paper_row] |= differing([keys[i] for i in members])
        differing_choices[paper_row] |= differing([choices[i] for i in members])
    # name a paper_row's variants by their group options only where, on every env, those options fix the keys
    by_choice = {paper_row: bool(options) for paper_row, options in differing_choices.items()}
    for (paper_row, _), members in groups.items():
        chosen, run_keys = [choices[i] for i in members], [keys[i] for i in members]
        by_choice[paper_row] = by_choice[paper_row] and determines(chosen, run_keys, differing_keys[paper_row])
    labels = []
    for i, run in enumerate(runs):
        row = run.paper_row
        values, shown = (choices[i], differing_choices[row]) if by_choice[row] else (keys[i], differing_keys[row])
        labels.append(_label(row, values, shown))
    return labels


STUDY_GROUP = "seed_study"  # +experiment=seed_study's group: its option names a run's condition (seed_sources.py)
LABEL_GROUPS = ("agent", "noise", STUDY_GROUP)  # group options that set result keys: a row variant's readable name


def label_choices(run: Run) -> dict[str, str]:
    """The run's options of the groups in ``LABEL_GROUPS``, e.g. ``{"agent": "td3_2018"}``."""
    choices = run.config.get("choices") or {}
    return {group: str(choices[group]) for group in LABEL_GROUPS if group in choices}


def differing(dicts: list[dict[str, str]]) -> set[str]:
    """The keys whose values are not the same in every dict (a key some lack counts as differing)."""
    return {key for key in set().union(*dicts) if len({values.get(key) for values in dicts}) > 1}


def determines(choices: list[dict[str, str]], keys: list[dict[str, str]], differing_keys: set[str]) -> bool:
    """Whether runs with the same group options always have the same values of ``differing_keys``."""
    seen: dict[tuple[tuple[str, str], ...], tuple[str | None, ...]] = {}
    for run_choices, run_keys in zip(choices, keys, strict=True):
        values = tuple(run_keys.get(key) for key in sorted(differing_keys))
        if seen.setdefault(tuple(sorted(run_choices.items())), values) != values:
            return False
    return True


def _label(paper_row: str, values: dict[str, str], shown: set[str]) -> str:
    if not shown:
        return paper_row
    return f"{paper_row} [{', '.join(f'{key}={values.get(key)}' for key in sorted(shown))}]"


def make_grid(runs: list[Run], registered: Mapping[Path, Registered] | None = None) -> Grid:
    """Group runs into cells (row × env); rows in Table 2's order, envs in the paper's, the others after.

    Args:
        runs: every run found, complete or not.
        registered: what a registration file fixes about the runs it registers, by run dir (none without one).
    """
    registered = registered or {}
    arms = {path: facts.arm for path, facts in registered.items() if facts.arm is not None}
    members: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run, label in zip(runs, row_labels(runs), strict=True):
        members[(f"{label} ({arms[run.path]})" if run.path in arms else label, run.env_id)].append(run)
    unregistered_seeds: dict[str, set[int]] = defaultdict(set)
    for run in runs:
        if run.path not in registered:
            unregistered_seeds[run.env_id].add(run.seed)
    cells = {
        (label, env_id): make_cell(label, env_id, group, expected_seeds(group, unregistered_seeds[env_id], registered))
        for (label, env_id), group in members.items()
    }
    rows = sorted({label for label, _ in cells}, key=lambda label: _row_order(label, cells))
    envs = sorted({env_id for _, env_id in cells}, key=_env_order)
    return Grid(rows, envs, cells)


def expected_seeds(runs: list[Run], env_seeds: set[int], registered: Mapping[Path, Registered]) -> set[int]:
    """The seeds a cell should have: its registered runs' registered seeds, and, where it has runs no
    registration registers, the seeds of every such run on its env; but only its own for a seed study's
    one-seed conditions (``evaluation`` and the repeats train one seed, ``run.num_seeds=1``, by design).

    Args:
        runs: the cell's runs.
        env_seeds: the seeds of every unregistered run on the cell's env.
        registered: what a registration file fixes about the runs it registers, by run dir.
    """
    one_seed_study = all(
        (run.config.get("choices") or {}).get(STUDY_GROUP) is not None and run.num_seeds == 1 for run in runs
    )
    if one_seed_study:
        return {run.seed for run in runs}
    expected = set().union(*(registered[run.path].seeds for run in runs if run.path in registered))
    return expected | env_seeds if any(run.path not in registered for run in runs) else expected


def make_cell(row: str, env_id: str, runs: Iterable[Run], expected_seeds: set[int]) -> Cell:
    """One cell: the complete runs (the first run dir of each seed), and the rest left out with a reason.

    Args:
        row: the row label.
        env_id: the env of every run given.
        runs: the runs of this row and env.
        expected_seeds: the seeds the cell should have (those of every run on this env).
    """
    complete: dict[int, Run] = {}
    left_out: list[Run] = []
    ordered = sorted(runs, key=lambda run: (run.seed, str(run.path)))
    for run in ordered:
        if run.problem is not None:
            left_out.append(run)
        elif run.seed in complete:
            left_out.append(replace(run, problem=f"duplicate of the seed's run in {complete[run.seed].path}"))
        else:
            complete[run.seed] = run
    missing = sorted(expected_seeds - {run.seed for run in ordered})
    return Cell(row, ordered[0].paper_row, env_id, tuple(complete.values()), tuple(left_out), tuple(missing))


def _row_order(label: str, cells: dict[tuple[str, str], Cell]) -> tuple[int, str]:
    paper_row = next(cell.paper_row for (row, _), cell in cells.items() if row == label)
    order = table2_rows()
    return (order.index(paper_row) if paper_row in order else len(order), label)


def _env_order(env_id: str) -> tuple[int, str]:
    order = paper_tables()["table1"]["envs"]
    column = paper_env(env_id)
    return (order.index(column) if column in order else len(order), env_id)
