"""What a study shows, written to ``<study dir>/summary/``: the per-trial table (``trials.csv``, ``trials.md``), the
best params with their search score and fresh-seed score (``summary.json``, ``summary.md``), the parameter
importances (``importances.csv``), the optimisation history and each parameter's score against its value
(``history.png``, ``params.png``, and Optuna's interactive ``history.html``, ``params.html``), and the compute used.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import optuna
from matplotlib.axes import Axes
from matplotlib.figure import Figure  # no pyplot: files only, no display, no global state
from matplotlib.ticker import LogLocator, MaxNLocator, NullFormatter, StrMethodFormatter
from optuna.trial import FrozenTrial, TrialState

from td3x.rundir.layout import SUMMARY_FILE, read_json_mapping, run_configs, write_json_atomic
from td3x.tuning.scores import mean_interval
from td3x.tuning.study import RUN_DIR_ATTR, StudySettings

SUMMARY_DIR = "summary"
PANELS_PER_ROW = 3  # params.png: a grid of panels, each wide enough for its tick labels
MAX_TICKS = 4  # x ticks per panel (a log axis: 1, 2 and 5 times each power of ten over up to 1.5 decades)
LOG_TICKS, MAX_LOG_TICK_DECADES = (1.0, 2.0, 5.0), 1.5


def _process_summary(run_dir: Path) -> dict[str, Any] | None:
    """The first seed's ``summary.json`` (a K-seeds process's seeds share its steps, wall and CPU time)."""
    configs = run_configs(run_dir)
    path = configs[0].parent / SUMMARY_FILE if configs else None
    return read_json_mapping(path) if path is not None and path.is_file() else None


def trial_rows(study: optuna.Study, study_dir: Path, num_seeds: int) -> list[dict[str, Any]]:
    """One row per trial: number, state, score, its params, seeds, the step it was pruned at, wall and CPU time, run
    dir."""
    rows = []
    for trial in study.get_trials(deepcopy=False):
        run_dir = study_dir / trial.user_attrs.get(RUN_DIR_ATTR, f"trial_{trial.number}")
        summary = _process_summary(run_dir) or {}
        pruned = trial.state is TrialState.PRUNED
        rows.append(
            {
                "trial": trial.number,
                "state": trial.state.name.lower(),
                "score": trial.value,
                **{key: trial.params.get(key) for key in sorted(trial.distributions)},
                "seeds": num_seeds,
                "pruned_at_step": trial.last_step if pruned else None,
                "steps": summary.get("steps"),
                "wall_time_s": summary.get("wall_time_s"),
                "cpu_time_s": summary.get("cpu_time_s"),  # None: a run (or a resume) of an older td3x
                "run_dir": run_dir.name if run_dir.is_dir() else None,  # none: refused before training
                "failure": trial.user_attrs.get("failure"),
            }
        )
    return rows


def markdown_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no trials)"
    columns = list(rows[0])

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return "" if math.isnan(value) else f"{value:.4g}"
        return "" if value is None else str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    return "\n".join([*lines, *("| " + " | ".join(cell(row[c]) for c in columns) + " |" for row in rows)])


def importances(study: optuna.Study) -> dict[str, float] | None:
    """PED-ANOVA importances of the params over the complete trials (Optuna's, with numpy only; deterministic):
    how much each param's distribution among the best 10% of trials differs from its distribution among all;
    None with fewer than two complete trials or one param."""
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    if len(complete) < 2 or len(complete[0].params) < 2:
        return None
    evaluator = optuna.importance.PedAnovaImportanceEvaluator()
    return dict(optuna.importance.get_param_importances(study, evaluator=evaluator))


def scored(trials: list[FrozenTrial], state: TrialState) -> list[tuple[FrozenTrial, float]]:
    """The trials in ``state`` that have a score (a pruned trial's is its last running score), with it."""
    found = []
    for trial in trials:
        if trial.state is state and trial.value is not None:
            found.append((trial, trial.value))
    return found


def plot_history(trials: list[FrozenTrial], path: Path, metric: str) -> None:
    """Each finished trial's score in trial order (pruned ones at their last running score), the best so far."""
    figure = Figure(figsize=(8, 4), layout="constrained")
    axes = figure.subplots()
    best, best_line = -math.inf, []
    for trial in trials:
        if trial.state is TrialState.COMPLETE and trial.value is not None:
            best = max(best, trial.value)
        best_line.append(best if best > -math.inf else math.nan)
    for state, marker in ((TrialState.COMPLETE, "o"), (TrialState.PRUNED, "x")):
        shown = scored(trials, state)
        axes.scatter([t.number for t, _ in shown], [v for _, v in shown], marker=marker, label=state.name.lower())
    axes.plot([t.number for t in trials], best_line, color="black", drawstyle="steps-post", label="best so far")
    axes.set(xlabel="trial", ylabel=metric, title="optimisation history")
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, borderaxespad=0.0)
    figure.savefig(path, dpi=100)


def plot_params(trials: list[FrozenTrial], path: Path, metric: str) -> None:
    """One panel per param: each finished trial's score against the value it drew (log axis for log ranges)."""
    figure = params_figure(trials, metric)
    if figure is not None:
        figure.savefig(path, dpi=100)


def params_figure(trials: list[FrozenTrial], metric: str) -> Figure | None:
    """``plot_params``' figure: a grid of ``PANELS_PER_ROW`` panels a row, one legend above; None with no params."""
    names = sorted({name for trial in trials for name in trial.distributions})
    if not names:
        return None
    columns = min(len(names), PANELS_PER_ROW)
    rows = math.ceil(len(names) / columns)
    figure = Figure(figsize=(3.8 * columns, 3.2 * rows), layout="constrained")
    panels = figure.subplots(rows, columns, squeeze=False, sharey=True).flatten()
    for axes, name in zip(panels, names, strict=False):
        for state, marker in ((TrialState.COMPLETE, "o"), (TrialState.PRUNED, "x")):
            shown = [(t, v) for t, v in scored(trials, state) if name in t.params]
            axes.scatter(
                [str(t.params[name]) if _categorical(t, name) else t.params[name] for t, _ in shown],
                [v for _, v in shown],
                marker=marker,
                label=state.name.lower(),
            )
        distribution = next(t.distributions[name] for t in trials if name in t.distributions)
        _param_axis(axes, log=getattr(distribution, "log", False))
        axes.set(xlabel=name)
    for axes in panels[len(names) :]:
        axes.set_visible(False)
    for axes in panels[::columns]:
        axes.set(ylabel=metric)
    figure.legend(*panels[0].get_legend_handles_labels(), loc="outside upper right", ncols=2, frameon=False)
    return figure


def _param_axis(axes: Axes, log: bool) -> None:
    """At most about ``MAX_TICKS`` plain-number labels, tilted, so that neighbours never touch."""
    if log:
        axes.set_xscale("log")
        low, high = axes.get_xlim()
        decades = math.log10(high / low)
        if decades < 1:  # matplotlib's log ticks would label every multiple of 10^k there: 2, 3, ... 9 x 10^-4
            axes.xaxis.set_major_locator(MaxNLocator(MAX_TICKS))
        else:
            subs = LOG_TICKS if decades <= MAX_LOG_TICK_DECADES else (1.0,)
            axes.xaxis.set_major_locator(LogLocator(subs=subs, numticks=MAX_TICKS + 1))
        axes.xaxis.set_minor_formatter(NullFormatter())
        axes.xaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
    elif not axes.xaxis.units:  # a categorical param's axis keeps one tick per value
        axes.xaxis.set_major_locator(MaxNLocator(MAX_TICKS))
    axes.tick_params(axis="x", labelrotation=30)


def _categorical(trial: FrozenTrial, name: str) -> bool:
    return isinstance(trial.distributions[name], optuna.distributions.CategoricalDistribution)


def _write_html(study: optuna.Study, out: Path) -> None:
    """Optuna's interactive plots (plotly; the page loads plotly.js from its CDN)."""
    finished = [t for t in study.get_trials(deepcopy=False) if t.state in (TrialState.COMPLETE, TrialState.PRUNED)]
    if not any(t.state is TrialState.COMPLETE for t in finished):
        return
    optuna.visualization.plot_optimization_history(study).write_html(out / "history.html", include_plotlyjs="cdn")
    optuna.visualization.plot_slice(study).write_html(out / "params.html", include_plotlyjs="cdn")


def compute_used(rows: list[dict[str, Any]], fresh: dict[str, Any] | None, num_seeds: int) -> dict[str, Any]:
    """Env steps, process wall time and CPU time spent: every trial (pruned ones up to their stop) and the fresh
    seeds. A CPU time is the sum over the processes that counted it, None when one that ran did not (a trial of an
    older td3x): the wall time grows with whatever else shares the machine, the CPU time does not."""
    walls = [row["wall_time_s"] for row in rows if row["wall_time_s"] is not None]
    cpus = [row["cpu_time_s"] for row in rows if row["wall_time_s"] is not None]
    steps = [row["steps"] * num_seeds for row in rows if row["steps"] is not None]
    return {
        "trial_env_steps": int(sum(steps)),
        "trial_wall_time_s": float(sum(walls)),
        "trial_cpu_time_s": None if None in cpus else float(sum(cpus)),
        "fresh_wall_time_s": None if fresh is None else fresh["wall_time_s"],
        "fresh_cpu_time_s": None if fresh is None else fresh["cpu_time_s"],
    }


def write_summary(
    study: optuna.Study, study_dir: Path, settings: StudySettings, fresh: dict[str, Any] | None, num_seeds: int
) -> dict[str, Any]:
    """Write ``summary/`` and return ``summary.json``'s content."""
    out = study_dir / SUMMARY_DIR
    out.mkdir(exist_ok=True)
    rows = trial_rows(study, study_dir, num_seeds)
    with (out / "trials.csv").open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]) if rows else ["trial"])
        writer.writeheader()
        writer.writerows(rows)
    (out / "trials.md").write_text(markdown_table(rows) + "\n")
    found = importances(study)
    if found is not None:
        with (out / "importances.csv").open("w", newline="") as file:
            csv.writer(file).writerows([("param", "importance"), *found.items()])
    trials = study.get_trials(deepcopy=False)
    plot_history(trials, out / "history.png", settings.metric)
    plot_params(trials, out / "params.png", settings.metric)
    _write_html(study, out)
    fresh_part = None
    if fresh is not None:
        mean, low, high = mean_interval(fresh["scores"])
        process = _process_summary(study_dir / fresh["run_dir"]) or {}
        times = {key: process.get(key) for key in ("wall_time_s", "cpu_time_s")}
        fresh_part = {**fresh, "score": mean, "interval95": [low, high], **times}
    best = study.best_trial if any(row["state"] == "complete" for row in rows) else None
    states = [row["state"] for row in rows]
    summary = {
        "study": settings.name,
        "metric": settings.metric,
        "trials": {state: states.count(state) for state in ("complete", "pruned", "fail", "running")},
        "best_trial": None if best is None else best.number,
        "best_params": None if best is None else best.params,
        "search_score": None if best is None else best.value,
        "search_seeds": num_seeds,
        "fresh": fresh_part,
        "importances": found,
        "compute": compute_used(rows, fresh_part, num_seeds),
    }
    write_json_atomic(out / "summary.json", summary)
    (out / "summary.md").write_text(summary_markdown(summary, rows))
    return summary


def _cpu(seconds: float | None) -> str:
    """The CPU time beside a wall time, when it was counted."""
    return "" if seconds is None else f" ({seconds:.0f} s of CPU time)"


def summary_markdown(summary: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """The study in a page: the choice, its two scores, the compute, the importances and the trial table."""
    fresh = summary["fresh"]
    lines = [f"# Study {summary['study']}", "", f"Metric: `{summary['metric']}` (mean over each trial's seeds).", ""]
    counts = ", ".join(f"{n} {state}" for state, n in summary["trials"].items() if n)
    lines.append(f"Trials: {counts}.")
    if summary["best_trial"] is not None:
        lines += ["", f"Best trial: {summary['best_trial']}, params {summary['best_params']}.", ""]
        lines.append(
            f"- search score: {summary['search_score']:.2f} ({summary['search_seeds']} seeds; the best of "
            f"{summary['trials']['complete']} trials, so biased upward)"
        )
    if fresh is not None:
        low, high = fresh["interval95"]
        lines.append(
            f"- fresh-seed score: {fresh['score']:.2f}, 95% t-interval [{low:.2f}, {high:.2f}] "
            f"(seeds {fresh['seeds'][0]}-{fresh['seeds'][-1]}, none used by the search)"
        )
    compute = summary["compute"]
    trials = f"{compute['trial_wall_time_s']:.0f} s of training in trials{_cpu(compute['trial_cpu_time_s'])}"
    fresh_seeds = compute["fresh_wall_time_s"]
    on_fresh = "" if fresh_seeds is None else f", {fresh_seeds:.0f} s on fresh seeds{_cpu(compute['fresh_cpu_time_s'])}"
    lines += ["", f"Compute: {compute['trial_env_steps']} env steps and {trials}{on_fresh}."]
    if summary["importances"]:
        lines += [
            "",
            "Importances (PED-ANOVA): " + ", ".join(f"{k} {v:.2f}" for k, v in summary["importances"].items()),
        ]
    return "\n".join([*lines, "", "## Trials", "", markdown_table(rows), ""])
