"""td3x-sweep workspace (td3x.sweeps.wandb_workspace): a saved W&B workspace for a sweep's synced runs, checked
without a W&B server.

A real two-row sweep through td3x-train, with offline W&B: the workspace ``--dry-run`` prints is read against what
the runs' own W&B logs hold (read back from their ``run-<id>.wandb``): every metric a panel plots and the x-axis it
plots against were logged by every run, the runs table's grouping keys are config keys of every run that put the two
rows in two cells, and its filter keeps both runs. W&B's workspaces library reads the printed spec back as it reads
a saved one. Without an API key, or without the network, saving fails in one line; bad input is refused in one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from helpers.runs import TINY_SIZES
from helpers.scripts import BIN, exit_code
from helpers.sweeps import free_port
from helpers.wandb_records import WandbRun, read_segments, segment

from td3x.commands.sweep import main as sweep_main
from td3x.sweeps.multirun import runs_below
from td3x.sweeps.wandb_workspace import LIBRARY, SECTIONS, X_AXIS

REPO = Path(__file__).resolve().parents[2]

SWEEP = (
    "-m",
    "ablation=none,no_twin",
    "run.total_steps=2000",  # two rows of training metrics (run.log_every=1000), three evaluations
    "run.eval_every=1000",
    *TINY_SIZES,
    "logging.wandb_mode=offline",
)
PLOTTED = {metric for plots in SECTIONS.values() for metric in plots}


def environment(**settings: str) -> dict[str, str]:
    """This process's environment without the machine's W&B settings, plus ``settings``."""
    return {**{key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}, **settings}


def dry_run(capsys: pytest.CaptureFixture[str], path: Path, *options: str) -> dict[str, Any]:
    """The workspace ``td3x-sweep workspace --dry-run`` prints: what saving would send W&B."""
    assert exit_code(sweep_main, ["workspace", str(path), "--entity", "someone", "--dry-run", *options]) == 0
    return dict(json.loads(capsys.readouterr().out))


def runset(spec: dict[str, Any]) -> dict[str, Any]:
    (only,) = spec["spec"]["section"]["runSets"]
    return dict(only)


def panels(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [panel for section in spec["spec"]["section"]["panelBankConfig"]["sections"] for panel in section["panels"]]


def config_value(config: dict[str, Any], backend_key: str) -> Any:
    """A run's config value at a runs-table key as W&B stores it (``env.value.id``: W&B wraps each top-level config
    key's value in ``{"value": ...}``; the run's own log holds it unwrapped)."""
    value: Any = config
    for part in backend_key.split("."):
        if part != "value":
            value = value[part]
    return value


def leaves(filters: dict[str, Any]) -> list[dict[str, Any]]:
    """The conditions of a W&B runs filter (its ``filterV2`` tree), at any depth."""
    found = []
    for item in filters["filters"]:
        found += leaves(item) if "filters" in item else [item]
    return found


def selects(filters: dict[str, Any], run: WandbRun) -> bool:
    """Whether a ``filterV2`` tree of ``=`` and ``IN`` conditions on a run's job type, group and id keeps ``run``:
    W&B joins each item to those before it with its ``connector`` (AND, or OR), left to right."""
    fields = {"jobType": run.job_type, "group": run.group, "name": run.run_id}
    kept = True
    for number, item in enumerate(filters["filters"]):
        if "filters" in item:
            this = selects(item, run)
        else:
            value = fields[item["key"]["name"]]
            this = value in item["value"] if item["op"] == "IN" else value == item["value"]
        kept = this if number == 0 else (kept or this) if item.get("connector") == "OR" else (kept and this)
    return kept


# ---------------------------------------------------------------------- a real sweep, offline W&B (slow)
@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Rows TD3 and TD3 - CDQ on Pendulum, one seed each, as a user launches them."""
    sweep_dir = tmp_path_factory.mktemp("workspace") / "sweep"
    done = subprocess.run(
        [BIN / "td3x-train", *SWEEP, f"hydra.sweep.dir={sweep_dir}"],
        capture_output=True,
        text=True,
        timeout=600,
        env=environment(),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return sweep_dir


@pytest.fixture(scope="module")
def logged(sweep: Path) -> list[WandbRun]:
    """Each run's W&B run, from its own offline log."""
    runs = [read_segments(config.parent) for config in runs_below(sweep)]
    assert [len(segments) for segments in runs] == [1, 1]
    return [segments[0] for segments in runs]


@pytest.mark.slow
def test_every_panel_plots_metrics_every_run_logged_against_the_step_they_are_logged_at(
    sweep: Path, logged: list[WandbRun], capsys: pytest.CaptureFixture[str]
) -> None:
    spec = dry_run(capsys, sweep)
    plotted = [panel["config"] for panel in panels(spec)]
    metrics = {metric for config in plotted for metric in config["metrics"]}
    assert metrics == PLOTTED and {"eval/return_mean", "eval/bias_q1", "eval/bias_min_q"} <= metrics
    for run in logged:
        history = set().union(*run.history)
        assert metrics <= history, metrics - history
        assert X_AXIS in history and all(config["xAxis"] == X_AXIS for config in plotted)
        # td3x declared env_step the step of train/* and eval/*: W&B plots them against it
        declared = {metric.get("glob_name"): metric.get("step_metric") for metric in run.metrics}
        assert declared["train/*"] == declared["eval/*"] == X_AXIS
    section = spec["spec"]["section"]
    assert section["settings"]["xAxis"] == X_AXIS and section["settings"]["maxRuns"] == 2
    assert {s["localPanelSettings"]["xAxis"] for s in section["panelBankConfig"]["sections"]} == {X_AXIS}
    assert all((config["groupAgg"], config["groupArea"]) == ("mean", "stddev") for config in plotted)


@pytest.mark.slow
def test_the_runs_are_grouped_by_row_and_env_and_the_filter_keeps_this_sweeps_training_runs(
    sweep: Path, logged: list[WandbRun], capsys: pytest.CaptureFixture[str]
) -> None:
    spec = dry_run(capsys, sweep)
    assert (spec["entity"], spec["project"], spec["displayName"]) == ("someone", "td3x", "td3x sweep")
    grouping = runset(spec)["grouping"]
    assert grouping == [{"section": "config", "name": "paper_row.value"}, {"section": "config", "name": "env.value.id"}]
    cells = {tuple(config_value(run.config, key["name"]) for key in grouping) for run in logged}
    assert cells == {("TD3", "Pendulum-v1"), ("TD3 - CDQ", "Pendulum-v1")}

    filters = runset(spec)["filters"]
    assert all(selects(filters, run) for run in logged)
    assert {(leaf["key"]["name"], leaf["op"]) for leaf in leaves(filters)} == {("jobType", "="), ("group", "IN")}
    assert {run.group for run in logged} == {"sweep"} and {run.job_type for run in logged} == {"train"}
    report = WandbRun(run_id="r", group="sweep", job_type="report")  # td3x-report --wandb's run of the same group
    assert not selects(filters, report)
    assert not selects(filters, WandbRun(run_id="x", group="another sweep", job_type="train"))

    named = dry_run(capsys, sweep, "--project", "elsewhere", "--name", "Table 2")
    assert (named["project"], named["displayName"]) == ("elsewhere", "Table 2")


# ---------------------------------------------------------------------- run dirs as td3x writes them (fast)
def fake_run(run_dir: Path, segment_name: str | None, group: str | None = "table2", project: str = "td3x") -> Path:
    """A run dir's config.yaml (the keys the workspace reads) and, unless ``segment_name`` is None, its W&B segment."""
    run_dir.mkdir(parents=True)
    config = {
        "env": {"id": "Hopper-v5"},
        "seed": 0,
        "paper_row": "TD3",
        "logging": {"group": group, "project": project},
    }
    (run_dir / "config.yaml").write_text(json.dumps(config))  # YAML reads JSON
    if segment_name is not None:
        segment(run_dir, segment_name)
    return run_dir


def test_runs_without_a_group_are_kept_by_their_wandb_run_id_and_wandbs_library_reads_the_spec_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from wandb_workspaces.workspaces import Workspace, internal

    fake_run(tmp_path / "runs" / "a", "offline-run-20261101_130000-grouped1")
    single = fake_run(tmp_path / "runs" / "b", "offline-run-20261101_130000-single01", group=None)
    segment(single, "offline-run-20261102_090000-single01")  # a resumed run: two segments, one id
    spec = dry_run(capsys, tmp_path / "runs")
    members = {
        run_id: selects(runset(spec)["filters"], WandbRun(run_id=run_id, group=group, job_type="train"))
        for run_id, group in (("grouped1", "table2"), ("single01", ""), ("other001", ""))
    }
    assert members == {"grouped1": True, "single01": True, "other001": False}

    # as W&B's library reads a saved workspace from the server: the same runs, grouping and panels
    view = internal.View(
        entity=spec["entity"],
        project=spec["project"],
        display_name=spec["displayName"],
        name="nw-read-v",
        id="",
        spec=internal.WorkspaceViewspec.model_validate_json(json.dumps(spec["spec"])),
    )
    read = Workspace._from_model(view)
    assert str(read.runset_settings.filters) == (
        "Metric(\"JobType\") == 'train' and (Metric(\"Group\") in ['table2'] or Metric(\"ID\") in ['single01'])"
    )
    assert [key.name for key in read.runset_settings.groupby] == ["paper_row", "env.id"]
    assert {section.name: [panel.y[0].name for panel in section.panels] for section in read.sections} == {
        section: list(plots) for section, plots in SECTIONS.items()
    }


def refusal(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = exit_code(sweep_main, ["workspace", *argv])
    captured = capsys.readouterr()
    assert captured.out == ""
    return code, captured.err


def test_bad_input_is_refused_in_one_line_before_w_and_b_is_contacted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    fake_run(tmp_path / "disabled" / "run", None)
    fake_run(tmp_path / "two" / "a", "offline-run-20261101_130000-aaaaaaa1", project="td3x")
    fake_run(tmp_path / "two" / "b", "offline-run-20261101_130000-bbbbbbb1", project="mine")
    cases = {
        "does not exist": (tmp_path / "gone",),
        "holds no run": (empty,),
        "no W&B run": (tmp_path / "disabled",),
        "several projects": (tmp_path / "two",),
    }
    expected = {
        "does not exist": f"{tmp_path / 'gone'} does not exist: td3x-sweep workspace takes a sweep dir, a run dir, "
        "a K-seeds dir or a folder of runs",
        "holds no run": f"{empty} holds no run: not a sweep dir, a run dir or a folder of runs",
        "no W&B run": f"{tmp_path / 'disabled'} holds no W&B run for a workspace to show: its 1 run(s) logged none "
        "(logging.wandb_mode=disabled)",
        "several projects": "the runs logged to 2 W&B projects (mine, td3x): name one with --project",
    }
    for case, argv in cases.items():
        assert refusal(capsys, *map(str, argv), "--entity", "someone") == (2, f"td3x-sweep: {expected[case]}\n")
    assert dry_run(capsys, tmp_path / "two", "--project", "mine")["project"] == "mine"

    code, err = refusal(capsys, str(tmp_path / "two"))  # no --entity: argparse's one line
    assert code == 2 and err.count("\n") == 1 and "--entity" in err

    # without the workspace extra
    for module in ("wandb_workspaces", "wandb_workspaces.workspaces", "wandb_workspaces.reports.v2"):
        monkeypatch.setitem(sys.modules, module, None)
    code, err = refusal(capsys, str(tmp_path / "two"), "--entity", "someone", "--project", "td3x")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("td3x-sweep: building a W&B workspace needs W&B's wandb-workspaces library (")
    assert err.endswith(f"): pip install '{LIBRARY}' (td3x's workspace extra)\n")
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["workspace"] == [LIBRARY]  # the line names what the extra installs


def save(folder: Path, home: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    """``td3x-sweep workspace`` as a user runs it, saving, with a home of its own (no W&B login of this machine's:
    W&B reads its key from the home's .netrc unless NETRC names another) and no terminal (W&B would ask for a key
    in one)."""
    env = {key: value for key, value in environment(HOME=str(home), **settings).items() if key != "NETRC"}
    return subprocess.run(
        [BIN / "td3x-sweep", "workspace", str(folder), "--entity", "someone"],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def test_saving_without_an_api_key_fails_in_one_line(tmp_path: Path) -> None:
    fake_run(tmp_path / "runs" / "a", "offline-run-20261101_130000-aaaaaaa1")
    done = save(tmp_path / "runs", tmp_path / "home")
    assert done.returncode == 1
    assert done.stdout == (
        "workspace 'td3x runs' of someone/td3x: 1 W&B run(s) of W&B group(s) table2, grouped by paper_row and env.id\n"
    )
    # W&B's own reason between td3x's words (wandb 0.31: "No API key configured. Use `wandb login` to log in.")
    assert done.stderr.startswith("td3x-sweep: W&B did not save the workspace to someone/td3x: UsageError: ")
    assert "API key" in done.stderr and done.stderr.count("\n") == 1
    assert done.stderr.endswith(
        " (saving needs a W&B API key and the network; --dry-run prints the workspace without them)\n"
    )


@pytest.mark.slow
def test_saving_without_the_network_fails_in_one_line(tmp_path: Path) -> None:
    """A key, and a W&B server address where nothing listens (W&B gives up after about 20 s)."""
    fake_run(tmp_path / "runs" / "a", "offline-run-20261101_130000-aaaaaaa1")
    done = save(
        tmp_path / "runs", tmp_path / "home", WANDB_API_KEY="0" * 40, WANDB_BASE_URL=f"http://127.0.0.1:{free_port()}"
    )
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("td3x-sweep: W&B did not save the workspace to someone/td3x: ")
    assert "Traceback" not in done.stderr
