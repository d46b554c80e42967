"""Paths a user may give any td3x tool (issue 62, item 10): a valid dir name that Hydra's override grammar refuses
bare (a space with ``=``, a comma, non-ASCII letters) works as typed; a ``~`` is the home dir for every tool, as for
Hydra, pandas and W&B under it, and no folder named ``~`` appears; a study's journal cut mid-record by a crash is
resumed with one warning; a reader that closes a tool's output early (``| head -1``) gets no traceback. Every
command runs as a user runs it: the console script, in a temporary working dir, with HOME pointing into it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from importlib import import_module
from pathlib import Path

import pytest
import yaml
from helpers.runs import TINY_COMMAND_LINE
from hydra.core.override_parser.overrides_parser import OverridesParser

from td3x.commands.common import CLOSED_PIPE_EXIT
from td3x.config.overrides import hydra_quoted, hydra_text

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent
ODD = "é a=b,c"  # a valid dir name: Hydra's grammar refuses é and = bare, and reads a comma as a sweep


def cli(command: str, *arguments: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A console script run from ``cwd`` with HOME at ``cwd/home``, W&B settings of the caller's environment left
    out."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}
    environment["HOME"] = str(cwd / "home")
    (cwd / "home").mkdir(exist_ok=True)
    return subprocess.run(
        [str(BIN / command), *map(str, arguments)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=environment,
    )


def assert_clean(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "mismatched input" not in result.stderr


# ---------------------------------------------------------------------- names Hydra's grammar refuses bare
class TestDirNamesHydraRefusesBare:
    def test_quoting_reads_back_any_text(self) -> None:
        parser = OverridesParser.create()
        for text in ("my runs/a=b", "runs/é", "a,b", "[x]", "it's", "a\\b", "a\\", "a\\'b", "${now:%H}/x"):
            assert parser.parse_override(f"k={hydra_quoted(text)}").value() == text
        # a name Hydra takes bare stays bare: a study relaunched compares its overrides with the recorded ones
        assert [hydra_text(name) for name in ("pendulum", "x y", "1", "é", "a,b")] == [
            "pendulum",
            "x y",
            "1",
            "'é'",
            "'a,b'",
        ]

    @pytest.mark.slow
    def test_train_resume_status_of_a_run_dir(self, tmp_path: Path) -> None:
        run_dir = f"my runs/{ODD}"
        assert_clean(cli("td3x-train", *TINY_COMMAND_LINE, f"hydra.run.dir={run_dir}", cwd=tmp_path))
        assert (tmp_path / run_dir / "config.yaml").is_file()
        resumed = cli("td3x-resume", run_dir, cwd=tmp_path)
        assert_clean(resumed)
        assert "already holds a complete run" in resumed.stderr
        status = cli("td3x-sweep", "status", "my runs", cwd=tmp_path)
        assert_clean(status)
        assert "1 complete" in status.stdout

    @pytest.mark.slow
    def test_a_multirun_sweep_dir_then_status_and_rerun(self, tmp_path: Path) -> None:
        sweep = f"sweeps/{ODD}"
        assert_clean(cli("td3x-train", "-m", *TINY_COMMAND_LINE, "seed=0", f"hydra.sweep.dir={sweep}", cwd=tmp_path))
        status = cli("td3x-sweep", "status", sweep, cwd=tmp_path)
        assert_clean(status)
        assert "1 complete" in status.stdout
        assert_clean(cli("td3x-sweep", "rerun", sweep, cwd=tmp_path))


@pytest.fixture(scope="module")
def odd_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-trial study in a dir Hydra's grammar refuses bare (before: refused, as its W&B group)."""
    cwd = tmp_path_factory.mktemp("study")
    result = cli("td3x-tune", ODD, *TINY_COMMAND_LINE, "--trials", "1", "--fresh-seeds", "0", cwd=cwd)
    assert_clean(result)
    return cwd / ODD


@pytest.mark.slow
def test_td3x_tune_takes_a_study_dir_hydra_refuses_bare(odd_study: Path) -> None:
    assert (odd_study / "summary" / "summary.json").is_file()
    config = yaml.safe_load((odd_study / "trial_0" / "config.yaml").read_text())
    assert config["logging"]["group"] == ODD  # the study's W&B group is its dir's name


# ---------------------------------------------------------------------- ~ is the home dir
@pytest.mark.slow
class TestHomeDir:
    def test_every_tool_reads_a_quoted_tilde_as_home(self, tmp_path: Path) -> None:
        home = tmp_path / "home"
        # before: a ./~ folder
        assert_clean(cli("td3x-train", *TINY_COMMAND_LINE, "hydra.run.dir=~/runs/a", cwd=tmp_path))
        assert (home / "runs" / "a" / "config.yaml").is_file()
        for command, *arguments in (
            ("td3x-resume", "~/runs/a"),
            ("td3x-sweep", "status", "~/runs"),
            ("td3x-report", "~/runs", "--out=~/report", "--plotly", "none", "--reps", "50"),  # before: half in ~
        ):
            assert_clean(cli(command, *arguments, cwd=tmp_path))
        assert (home / "report" / "report.md").is_file()
        listed = cli("td3x-sweep", "list", *TINY_COMMAND_LINE, "seed=0,1", "hydra.sweep.dir=~/sweep", cwd=tmp_path)
        assert_clean(listed)
        assert listed.stdout.count(f"{home}/sweep/") == 2
        assert sorted(path.name for path in tmp_path.iterdir()) == ["home"]

    def test_a_tilde_that_cannot_be_expanded_is_one_line(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        nobody = "~td3x_no_such_user"
        cases = [
            (
                ("td3x-train", *TINY_COMMAND_LINE, f"hydra.run.dir={nobody}/run"),
                f"config error: hydra.run.dir={nobody}/run: {nobody} is no user's home dir on this machine: write "
                "the dir's full path",
            ),
            (
                ("td3x-resume", f"{nobody}/run"),
                f"td3x-resume: error: argument run_dir: {nobody}/run: {nobody} is no user's home dir on this machine: "
                "write the dir's full path (see td3x-resume --help)",
            ),
        ]
        monkeypatch.setenv("TD3X_TEST_TILDE", "~/run")  # a ~ only composition reveals, as from a config file
        cases.append(
            (
                ("td3x-train", *TINY_COMMAND_LINE, "hydra.run.dir=${oc.env:TD3X_TEST_TILDE}"),
                "config error: hydra.run.dir=~/run starts with ~, which Hydra does not expand (it would make a "
                "folder named ~ here): write the home dir's path, or ${oc.env:HOME} in a config file",
            )
        )
        for arguments, line in cases:
            result = cli(*arguments, cwd=tmp_path)
            assert (result.returncode, result.stderr.splitlines()) == (2, [line])
        assert sorted(path.name for path in tmp_path.iterdir()) == ["home"]


# ---------------------------------------------------------------------- a journal cut mid-record
@pytest.mark.slow
class TestCutJournal:
    def test_a_cut_last_record_is_dropped_with_one_warning_and_the_study_goes_on(
        self, odd_study: Path, tmp_path: Path
    ) -> None:
        study = shutil.copytree(odd_study, tmp_path / ODD)
        journal = study / "study.journal"
        whole = journal.read_bytes().count(b"\n")
        journal.write_bytes(journal.read_bytes()[:-20])  # the last record's write stopped by a crash
        result = cli("td3x-tune", ODD, *TINY_COMMAND_LINE, "--trials", "2", "--fresh-seeds", "0", cwd=tmp_path)
        assert_clean(result)  # before: Optuna appended onto the cut record, and a JSONDecodeError traceback
        warnings = [line for line in result.stderr.splitlines() if "WARNING" in line]
        assert len(warnings) == 1
        assert warnings[0].endswith(
            f"{ODD}/study.journal line {whole} was cut mid-record (no newline: a write stopped by a crash): "
            f"dropped; the study goes on from the {whole - 1} whole records before it"
        )
        assert all(isinstance(json.loads(line), dict) for line in journal.read_text().splitlines())
        assert json.loads((study / "summary" / "summary.json").read_text())["trials"]["complete"] == 2

    def test_a_damaged_record_before_the_last_is_one_line_and_exit_2(self, odd_study: Path, tmp_path: Path) -> None:
        study = shutil.copytree(odd_study, tmp_path / ODD)
        journal = study / "study.journal"
        lines = journal.read_text().splitlines(keepends=True)
        journal.write_text("".join([*lines[:3], lines[3][:30] + "\n", *lines[4:]]))
        before = journal.read_bytes()
        result = cli("td3x-tune", ODD, *TINY_COMMAND_LINE, "--trials", "2", "--fresh-seeds", "0", cwd=tmp_path)
        assert (result.returncode, result.stderr.splitlines()) == (
            2,
            [
                f"td3x-tune: {ODD}/study.journal line 4 is not an Optuna journal record (a JSON object): restore "
                "the file, or start a new study dir"
            ],
        )
        assert journal.read_bytes() == before


# ---------------------------------------------------------------------- a reader that goes away
class TestClosedPipe:
    @pytest.mark.slow
    @pytest.mark.parametrize("command", ["list", "status"])
    def test_td3x_sweep_into_a_reader_gone_exits_quietly(self, odd_study: Path, tmp_path: Path, command: str) -> None:
        """The reader closes before td3x-sweep writes (``| head -1`` once it has its line): every write fails
        (before: a BrokenPipeError traceback, or Python's "Exception ignored" lines at exit)."""
        arguments = ["list", "seed=0,1"] if command == "list" else ["status", str(odd_study)]
        process = subprocess.Popen(
            [str(BIN / "td3x-sweep"), *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path
        )
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        stderr = process.stderr.read().decode()
        assert (process.wait(timeout=300), stderr) == (CLOSED_PIPE_EXIT, "")

    @pytest.mark.slow
    def test_td3x_report_into_a_reader_gone_exits_quietly_its_files_complete(
        self, odd_study: Path, tmp_path: Path
    ) -> None:
        """Before: one line, "stdout cannot be written: Broken pipe", and exit 1, as for a full disk."""
        out = tmp_path / "report"
        process = subprocess.Popen(
            [str(BIN / "td3x-report"), str(odd_study), "--out", str(out), "--plotly", "none", "--reps", "50"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=tmp_path,
        )
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        stderr = process.stderr.read().decode()
        assert (process.wait(timeout=300), stderr) == (CLOSED_PIPE_EXIT, "")
        assert (out / "report.md").is_file()

    def test_every_console_script_is_guarded(self) -> None:
        scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
        for name, target in scripts.items():
            module, _, function = target.partition(":")
            main = getattr(import_module(module), function)
            assert main.__code__.co_name == "guarded", f"{name}: {target} is not wrapped by quiet_on_closed_pipe"
