"""A saved W&B workspace for a sweep's runs once they are synced: what ``td3x-sweep workspace`` builds and saves.

A workspace (a "view" of a project in the W&B app) is the layout of the project's page: which runs its runs table
shows, how it groups them, and the sections of panels beside it. :func:`build_workspace` makes one with W&B's own
``wandb-workspaces`` library (td3x's ``workspace`` extra) for the runs at or below a folder (a sweep dir, a K-seeds
dir, a folder of runs), as their ``config.yaml`` files and W&B segment dirs describe them (:func:`sweep_runs`):

* its runs: those of the folder's W&B groups (``logging.group``; by W&B run id for a run without one), of job type
  ``train`` (not ``td3x-report --wandb``'s run);
* grouped by Table 2 cell, ``paper_row`` then ``env.id`` (config keys of every run): each panel draws one line per
  cell, the mean over its seeds, with a band of one standard deviation across them;
* two sections of line plots against ``env_step``, the step td3x plots its ``train/*`` and ``eval/*`` metrics
  against (:mod:`td3x.training.loggers`): the returns, and the critics' overestimation bias.

Building needs no server. Saving (:func:`save_workspace`) needs an API key and the network; whatever stops it is
said in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from td3x.rundir.layout import read_yaml_mapping
from td3x.sweeps.wandb_view import SEGMENT_NAME, wandb_runs

X_AXIS = "env_step"  # td3x's define_metric step of train/* and eval/*; W&B's own step counts rows
CELL = ("paper_row", "env.id")  # the runs table's grouping: a Table 2 cell, its row then its env
JOB_TYPE = "train"  # every training run's W&B job type; td3x-report --wandb's run is "report"
BAND = "stddev"  # the spread of a cell's seeds: one standard deviation over trials, the paper's ± (Table 1)
# section -> {metric: panel title}; the metric names are those td3x logs (docs: Reports and metrics)
SECTIONS: dict[str, dict[str, str]] = {
    "Return": {
        "eval/return_mean": "Evaluation return (noise-free episodes)",
        "train/episode_return_mean": "Training episodes' return (with exploration noise)",
    },
    "Overestimation bias": {
        "eval/bias_q1": "Q1(s, a) minus the discounted return that followed",
        "eval/bias_min_q": "min over the critics of Q(s, a) minus the discounted return that followed",
    },
}
LIBRARY = "wandb-workspaces>=0.4.13,<0.5"  # as pyproject.toml's workspace extra pins it


class WorkspaceRefused(Exception):
    """What ``td3x-sweep workspace`` refuses before it contacts W&B; the message is one line."""


class WorkspaceNotSaved(Exception):
    """W&B did not save the workspace; the message is one line saying why."""


@dataclass(frozen=True)
class SweepRuns:
    """The W&B runs of the runs at or below a folder, as a workspace selects them."""

    runs: int  # runs with a W&B run
    without_wandb: int  # runs without one (logging.wandb_mode=disabled)
    groups: tuple[str, ...]  # the W&B groups of those that have one
    ungrouped_ids: tuple[str, ...]  # the W&B run ids of those that have none (single runs)
    projects: tuple[str, ...]  # the W&B projects they logged to

    def summary(self) -> str:
        groups = f"W&B group(s) {', '.join(self.groups)}" if self.groups else "no W&B group"
        ungrouped = f" and {len(self.ungrouped_ids)} run(s) without one" if self.groups and self.ungrouped_ids else ""
        return f"{self.runs} W&B run(s) of {groups}{ungrouped}, grouped by {' and '.join(CELL)}"


def sweep_runs(path: Path) -> SweepRuns:
    """The W&B runs at or below ``path``: their groups, projects, and the ids of those without a group.

    Raises:
        FileNotFoundError: ``path`` holds no run.
        RunFileError: a run's ``config.yaml`` cannot be read.
        WorkspaceRefused: none of its runs has a W&B run.
    """
    runs, without = wandb_runs(path)
    if not runs:
        raise WorkspaceRefused(
            f"{path} holds no W&B run for a workspace to show: its {without} run(s) logged none "
            "(logging.wandb_mode=disabled)"
        )
    groups, ungrouped, projects = set(), set(), set()
    for config_path, segments in runs.items():
        logging = read_yaml_mapping(config_path).get("logging")
        logging = logging if isinstance(logging, dict) else {}
        projects.add(str(logging.get("project", "td3x")))
        if logging.get("group"):
            groups.add(str(logging["group"]))
        else:  # the id of the run's last segment: the one W&B resumes and sync uploads
            match = SEGMENT_NAME.match(segments[-1].name)
            assert match is not None  # run_segments lists only the dirs this pattern names
            ungrouped.add(match[2])
    return SweepRuns(len(runs), without, tuple(sorted(groups)), tuple(sorted(ungrouped)), tuple(sorted(projects)))


def workspace_project(runs: SweepRuns, project: str | None) -> str:
    """``project``, or the one project the runs logged to (``logging.project``: ``wandb sync`` uploads them there).

    Raises:
        WorkspaceRefused: no ``project`` and the runs logged to several.
    """
    if project is not None:
        return project
    if len(runs.projects) > 1:
        raise WorkspaceRefused(
            f"the runs logged to {len(runs.projects)} W&B projects ({', '.join(runs.projects)}): name one with "
            "--project"
        )
    return runs.projects[0]


def library() -> tuple[ModuleType, ModuleType]:
    """W&B's workspaces library: its workspace module and its report panels (a workspace's panels are those).

    Raises:
        WorkspaceRefused: it is not installed (or does not import).
    """
    try:
        import wandb_workspaces.reports.v2 as reports
        import wandb_workspaces.workspaces as workspaces
    except ImportError as error:
        raise WorkspaceRefused(
            f"building a W&B workspace needs W&B's wandb-workspaces library ({error}): pip install '{LIBRARY}' "
            "(td3x's workspace extra)"
        ) from error
    return workspaces, reports


def build_workspace(runs: SweepRuns, entity: str, project: str, name: str) -> Any:
    """The workspace of ``runs`` in W&B project ``entity/project``, named ``name``: a ``wandb_workspaces``
    ``Workspace``, built without contacting W&B.

    Raises:
        WorkspaceRefused: the library is not installed.
    """
    ws, panels = library()
    sections = [
        ws.Section(
            name=section,
            is_open=True,
            layout_settings=ws.SectionLayoutSettings(columns=len(plots), rows=1),
            # a section's own x-axis (W&B's default "Step") would override the workspace's
            panel_settings=ws.SectionPanelSettings(x_axis=X_AXIS),
            panels=[
                panels.LinePlot(title=title, x=X_AXIS, y=[metric], groupby_aggfunc="mean", groupby_rangefunc=BAND)
                for metric, title in plots.items()
            ],
        )
        for section, plots in SECTIONS.items()
    ]
    return ws.Workspace(
        entity=entity,
        project=project,
        name=name,
        sections=sections,
        # max_runs: W&B draws the first 10 runs of the table by default; every run of the folder fits
        settings=ws.WorkspaceSettings(x_axis=X_AXIS, max_runs=runs.runs),
        runset_settings=ws.RunsetSettings(groupby=[ws.Config(key) for key in CELL], filters=_filters(ws, runs)),
    )


def _filters(ws: ModuleType, runs: SweepRuns) -> Any:
    """The runs table's filter: training runs of the folder's groups, or of its ungrouped runs' ids."""
    ours = [ws.Metric("Group").isin(list(runs.groups))] if runs.groups else []
    ours += [ws.Metric("ID").isin(list(runs.ungrouped_ids))] if runs.ungrouped_ids else []
    return ws.And(ws.Metric("JobType") == JOB_TYPE, ours[0] if len(ours) == 1 else ws.Or(*ours))


def workspace_spec(workspace: Any) -> dict[str, Any]:
    """What saving sends W&B (the view's entity, project, name and spec), as the library serialises it."""
    return dict(workspace._spec)  # the library's own serialisation; pinned to 0.4.x, whose format this is


def save_workspace(workspace: Any) -> str:
    """Save ``workspace`` to W&B as a new view of its project: its URL.

    Raises:
        WorkspaceNotSaved: no API key, no network, or W&B refused it.
    """
    try:
        workspace.save()
        return str(workspace.url)
    # W&B's client raises its own errors, its service process's and the server's, of several types: whichever it
    # is, the spec was built and checked before, and the user needs its one line, not a traceback
    except (Exception, KeyboardInterrupt) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else "interrupted"
        raise WorkspaceNotSaved(
            f"W&B did not save the workspace to {workspace.entity}/{workspace.project}: {type(error).__name__}: "
            f"{reason} (saving needs a W&B API key and the network; --dry-run prints the workspace without them)"
        ) from error
