"""td3x-sweep, td3x-eval and td3x-report as command lines: help with defaults, --version, the report's default
output dir, plotly.js modes, the step-0 mark, plots left out, the fidelity count, and folders that are not runs."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_evaluate import train_tiny
from test_report import REPS, curve, write_run

from td3x import __version__
from td3x.analysis import Settings, build_report, write_report
from td3x.analysis import cli as report_cli
from td3x.analysis.fidelity import authors_band
from td3x.analysis.paper import authors_curves
from td3x.analysis.tables import SHORT_NOTE, STEP0_MARK, STEP0_NOTE
from td3x.cli import VERSION_LINE
from td3x.config import TrainConfig
from td3x.evaluate import build_parser as eval_parser
from td3x.evaluate import main as eval_main
from td3x.sweep import build_parser as sweep_parser
from td3x.sweep import main as sweep_main

MAINS: dict[str, Callable[[list[str]], int | None]] = {
    "td3x-report": report_cli.main,
    "td3x-eval": eval_main,
    "td3x-sweep": sweep_main,
}


def exit_code(main: Callable[[list[str]], int | None], argv: list[str]) -> int:
    """Run a console script's main in this process: its exit code, returned or raised as SystemExit."""
    try:
        returned = main(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return returned or 0


def parsers_of(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """A parser and its subcommands' parsers."""
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [parser, *(sub for action in subparsers for sub in action.choices.values())]


# ---------------------------------------------------------------------------------------------------- help, version
@pytest.mark.parametrize("build", [report_cli.build_parser, eval_parser, sweep_parser], ids=list(MAINS))
def test_every_argument_has_help_that_gives_its_default(build: Callable[[], argparse.ArgumentParser]) -> None:
    for parser in parsers_of(build()):
        formatter = parser._get_formatter()
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._VersionAction | argparse._SubParsersAction):
                continue
            assert action.help, f"{parser.prog} {action.dest} has no help"
            if not action.required:  # a required argument has no default to show
                assert "default" in str(formatter._get_help_string(action)), f"{parser.prog} {action.dest}"
        parser.format_help()  # every %(default)s expands


@pytest.mark.parametrize("prog", list(MAINS))
def test_version_prints_td3x_and_its_version(prog: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(MAINS[prog], ["--version"]) == 0
    assert capsys.readouterr().out == f"td3x {__version__}\n" == VERSION_LINE + "\n"


def test_sweep_help_says_which_subcommands_train(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(sweep_main, ["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "rerun trains: launch a sweep again" in text and "recheck trains briefly" in text
    assert "list print every job" in text and "runs and creates nothing" in text
    assert "without running" not in text  # the old description said the whole command ran nothing


# ---------------------------------------------------------------------------------------------------- the report
@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Pendulum TD3, 2 seeds of 8 evaluations with all-NaN bias columns (as Pendulum logs them); Hopper TD3 and
    TD3 - CDQ, 2 seeds of 12 evaluations."""
    root = tmp_path_factory.mktemp("cli") / "runs"
    nan_bias = {"bias_q1": np.full(8, np.nan), "bias_min_q": np.full(8, np.nan)}
    for seed in range(2):
        write_run(root / f"pendulum/{seed}", "Pendulum-v1", "TD3", seed, curve(-1000, seed, n=8), extra=nan_bias)
        write_run(root / f"hopper/td3/{seed}", "Hopper-v5", "TD3", seed, curve(1000, seed))
        write_run(root / f"hopper/cdq/{seed}", "Hopper-v5", "TD3 - CDQ", seed, curve(800, seed))
    return root


def test_report_without_out_writes_below_outputs_and_says_where(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert report_cli.main([str(runs), "--reps", str(REPS), "--plotly", "none"]) == 0
    captured = capsys.readouterr()
    (out,) = (tmp_path / "outputs" / "reports").iterdir()
    assert captured.err.strip() == f"report written to {out.relative_to(tmp_path)}"
    assert (out / "report.md").read_text() + "\n" == captured.out


def test_step0_mark_on_short_runs_and_its_note_under_the_table(runs: Path, tmp_path: Path) -> None:
    written = write_report(build_report([runs], Settings(reps=REPS)), tmp_path, "none")
    table2 = written.frames["table2"]
    assert STEP0_MARK in table2.loc["TD3", "Pendulum-v1"]  # 8 evaluations: the last 10 include step 0
    assert STEP0_MARK not in table2.loc["TD3", "Hopper-v5"]  # 12 evaluations
    section = written.markdown.split("## Table 2 layout")[1].split("\n## ")[0]
    assert section.rstrip().endswith(f"{STEP0_NOTE}\n\n{SHORT_NOTE}")  # one note per mark the table uses
    assert "## Table 1" in written.markdown and STEP0_NOTE not in written.markdown.split("## Table 1")[1]
    assert r"$^\dagger$" in (tmp_path / "table2.tex").read_text()
    cells = pd.read_csv(tmp_path / "cells.csv").set_index(["row", "env"])
    assert cells.loc[("TD3", "Pendulum-v1"), "last10_has_step0"]
    assert not cells.loc[("TD3", "Hopper-v5"), "last10_has_step0"]


def test_plot_without_data_is_not_written_and_the_report_says_why(runs: Path, tmp_path: Path) -> None:
    written = write_report(build_report([runs], Settings(reps=REPS)), tmp_path, "none")
    assert not list((tmp_path / "plots").glob("bias_*"))
    (line,) = [line for line in written.markdown.splitlines() if "bias_Pendulum-v1" in line]
    assert line.startswith("`plots/bias_Pendulum-v1` is not drawn because every bias value is NaN")
    assert written.not_drawn == [line]
    assert (tmp_path / "plots" / "curves_Pendulum-v1.png").exists()


@pytest.mark.parametrize(
    ("mode", "pages", "shared_copy", "in_page"),
    [
        ("directory", True, True, 'src="plotly.min.js"'),
        ("cdn", True, False, "https://cdn.plot.ly/plotly-"),
        ("inline", True, False, "plotly.js v"),
        ("none", False, False, ""),
    ],
)
def test_plotly_modes(runs: Path, tmp_path: Path, mode: str, pages: bool, shared_copy: bool, in_page: str) -> None:
    write_report(build_report([runs / "hopper"], Settings(reps=REPS)), tmp_path, mode)
    plots = tmp_path / "plots"
    assert (plots / "plotly.min.js").exists() == shared_copy
    page = plots / "curves_Hopper-v5.html"
    assert page.exists() == pages and (plots / "curves_Hopper-v5.png").exists()
    if pages:
        assert in_page in page.read_text()
        assert page.stat().st_size > 3_000_000 if mode == "inline" else page.stat().st_size < 100_000


# ---------------------------------------------------------------------------------------------------- fidelity
# Hopper's authors' curves at steps 0, 5000, ..., 50000 (k = 0..10): our points at mean + z·std, z known.
# Seed 0: 7 of 11 inside (|z| <= 2); seed 1: 2 of 11. Points at 2500, 7500, ... (the authors have none) lie far
# outside and must not count.
Z = {0: [0, 1.5, -1.5, 2.5, -2.5, 1.9, -3, 0.5, 10, -1, 1.99], 1: [0, -1.9, *[3] * 9]}


def test_fidelity_counts_points_within_the_authors_mean_plus_minus_2_std(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    band, curves = authors_band("Hopper-v5"), authors_curves("Hopper-v5")
    assert band is not None and curves is not None
    theirs = curves[:, :11]
    mean, spread = band.mean[:11], (band.high[:11] - band.mean[:11]) / 2  # one std
    for seed, z in Z.items():
        returns = np.full(21, 1e6)  # every 2500 steps, 0..50000
        returns[::2] = mean + np.array(z) * spread
        write_run(tmp_path / f"runs/td3/{seed}", "Hopper-v5", "TD3", seed, returns, eval_every=2500)
        write_run(tmp_path / f"runs/cdq/{seed}", "Hopper-v5", "TD3 - CDQ", seed, returns, eval_every=2500)
    write_run(tmp_path / "runs/pendulum", "Pendulum-v1", "TD3", 0, curve(-1000, 0))  # no authors' curves
    out = tmp_path / "out"
    assert report_cli.main([str(tmp_path / "runs"), "--out", str(out), "--reps", str(REPS), "--plotly", "cdn"]) == 0
    markdown = capsys.readouterr().out
    fidelity = pd.read_csv(out / "fidelity.csv")
    assert list(fidelity["row"]) == ["TD3", "TD3 - CDQ"]  # every row on an env with the authors' curves
    fidelity = fidelity[fidelity["row"] == "TD3"]
    # at the first shared step (0) both seeds lie on the authors' mean; at the last (50000, k = 10) at z = 1.99 and 3
    ends = {
        "first": (np.full(2, mean[0]), theirs[:, 0]),
        "last": (mean[10] + np.array([1.99, 3.0]) * spread[10], theirs[:, 10]),
    }
    texts = {}
    for end, (ours, authors) in ends.items():
        assert fidelity.pop(f"ours_{end}_mean").item() == pytest.approx(ours.mean())
        assert fidelity.pop(f"ours_{end}_min").item() == pytest.approx(ours.min())
        assert fidelity.pop(f"ours_{end}_max").item() == pytest.approx(ours.max())
        assert fidelity.pop(f"authors_{end}_mean").item() == pytest.approx(authors.mean())
        assert fidelity.pop(f"authors_{end}_std").item() == pytest.approx(authors.std())
        texts[f"ours at {end}_step: mean [min, max]"] = f"{ours.mean():.2f} [{ours.min():.2f}, {ours.max():.2f}]"
        texts[f"authors' at {end}_step: mean ± std"] = f"{authors.mean():.2f} ± {authors.std():.2f}"
    expected = {
        "row": "TD3",
        "env": "Hopper-v5",
        "authors_env": "Hopper-v1",
        "seeds": 2,
        "steps": 11,
        "first_step": 0,
        "last_step": 50000,
        "within": 9,
        "points": 22,
        "within mean ± 2 std": "9 of 22",
        **texts,
    }
    [record] = fidelity.to_dict("records")
    assert {name: record[name] for name in expected} == expected  # the test's columns: tests/test_fidelity.py
    section = markdown.split("## Fidelity to the authors' TD3 curves")[1].split("\n## ")[0]
    assert "| TD3 | Hopper-v5 | Hopper-v1 | 2 | 11 | 50000 | 9 of 22 |" in section and "gym v1" in section
    assert "| TD3 | Hopper-v5 | 0 | {} | {} | 50000 | {} | {} |".format(*texts.values()) in section
    page = (out / "plots" / "curves_Hopper-v5.html").read_text()
    assert "9 of 22 points within their mean \\u00b1 2 std" in page  # plotly's JSON
    assert "authors' TD3 (Hopper-v1, gym v1" in page


# ---------------------------------------------------------------------------------------------------- not a run dir
def test_eval_on_a_folder_of_runs_and_status_on_run_dirs(
    make_config: Callable[..., TrainConfig], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    process = train_tiny(make_config, tmp_path / "sweep" / "job", "run.num_seeds=2")  # seed_0/, seed_1/ inside
    (tmp_path / "sweep" / "multirun.yaml").write_text("hydra: {}\n")
    assert exit_code(eval_main, [str(tmp_path / "sweep")]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"td3x-eval: error: {tmp_path / 'sweep'} is a sweep dir: pick one of the 2 runs inside, e.g. td3x-eval "
        f"{process / 'seed_0'} ({process / 'seed_0'}, {process / 'seed_1'})\n"
    )
    assert exit_code(eval_main, [str(tmp_path)]) == 2
    assert f"{tmp_path} is a folder of runs, not a run dir: pick one of the 2 runs inside" in capsys.readouterr().err
    assert exit_code(sweep_main, ["status", str(process)]) == 0  # the K-seeds process dir: one run per seed
    assert "2 complete, 0 running, 0 stale, 0 failed, 0 not started" in capsys.readouterr().out
    assert exit_code(sweep_main, ["status", str(process / "seed_1")]) == 0  # a single run dir
    assert "steps: 600/600 (100.0%)" in capsys.readouterr().out
    assert exit_code(sweep_main, ["status", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"td3x-sweep: {tmp_path} is not a sweep dir: it has no multirun.yaml\n"
