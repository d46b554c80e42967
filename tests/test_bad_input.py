"""Bad input to every tool (issue 29, item 3): each console script refuses with one line naming the file, key or
value and a non-zero exit (the API: a td3x exception), never a traceback, and changes nothing it was pointed at.
One class per kind of bad input, several cases each."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers.runs import TINY_COMMAND_LINE

import td3x
import td3x.commands.eval
import td3x.commands.report
import td3x.commands.resume
import td3x.commands.sweep
import td3x.commands.tune
from td3x.config.overrides import override_problems
from td3x.config.schema import ConfigError
from td3x.rundir.checkpoint import CheckpointError

MAINS = {
    "td3x-sweep": td3x.commands.sweep.main,
    "td3x-eval": td3x.commands.eval.main,
    "td3x-report": td3x.commands.report.main,
    "td3x-resume": td3x.commands.resume.main,
    "td3x-tune": td3x.commands.tune.main,
}
CLI_MODULES = {
    "td3x-train": "td3x.commands.train",
    "td3x-resume": "td3x.commands.resume",
    "td3x-eval": "td3x.commands.eval",
    "td3x-sweep": "td3x.commands.sweep",
    "td3x-report": "td3x.commands.report",
}


def cli(command: str, *arguments: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A console script as a subprocess, run from ``cwd``, W&B settings of the caller's environment left out."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}
    return subprocess.run(
        [sys.executable, "-m", CLI_MODULES[command], *map(str, arguments)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=environment,
    )


def snapshot(path: Path) -> dict[str, bytes]:
    """Every file at or below ``path`` with its bytes: what a refusal must leave as it was."""
    if path.is_file():
        return {path.name: path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def assert_refused(result: subprocess.CompletedProcess[str], code: int, *lines: str) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == code, result.stderr
    assert result.stderr.splitlines() == list(lines)


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny finished run dir (seconds), shared by the module's tests: copy it before changing it."""
    cwd = tmp_path_factory.mktemp("trained")
    result = cli("td3x-train", *TINY_COMMAND_LINE, "hydra.run.dir=run", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return cwd / "run"


def copy_of(run: Path, where: Path) -> Path:
    shutil.copytree(run, where)
    return where


# ---------------------------------------------------------------------- values of the wrong type
class TestWrongTypeValues:
    """A value the key's type cannot take gets td3x's line and exit 2, like an out-of-range value: from td3x-train,
    td3x-sweep list/status/rerun (checked exactly as td3x-train checks them) and td3x.compose."""

    CASES = (
        ("agent.tau=fast", "config error: agent.tau='fast' is not allowed: expected a float"),
        (
            "run.total_steps=1e3",
            "config error: run.total_steps='1e3' is not allowed: expected an integer; write run.total_steps=1000",
        ),
        ("seed=0,1,x", "config error: seed='x' is not allowed: expected an integer"),
        (
            "noise.kind=pink",
            "config error: noise.kind='pink' is not allowed: expected one of gaussian, ornstein_uhlenbeck, none",
        ),
        (
            "agent.update_start=soon",
            "config error: agent.update_start='soon' is not allowed: expected an integer or null",
        ),
        (
            "agent.hidden_sizes=[64,x]",
            "config error: agent.hidden_sizes='[64,x]' is not allowed: expected a list of integers",
        ),
    )

    def test_td3x_train_refuses_each_in_one_line_and_creates_nothing(self, tmp_path: Path) -> None:
        for override, line in self.CASES:
            arguments = ["-m", override] if "," in override else [override]
            assert_refused(cli("td3x-train", *arguments, cwd=tmp_path), 2, line)
        assert list(tmp_path.iterdir()) == []

    def test_valid_sweeps_pass(self) -> None:
        sweeps = ["seed=0,1", "seed=range(0,3)", "agent.tau=0.1,0.2", "agent.tau=interval(0,1)", "agent.tau=1"]
        assert override_problems([*sweeps, "agent.update_start=null", "run.total_steps=${run.eval_every}"]) == []

    def test_td3x_sweep_list_checks_as_td3x_train(self, tmp_path: Path) -> None:
        cases = [
            *self.CASES[:3],
            ("agent.taux=1", "config error: agent.taux is not a td3x key; did you mean agent.tau?"),
            (
                "+experiment=tabel2",
                "config error: experiment=tabel2 is not an option of experiment: choose one of reference_bias, "
                "reference_td3, reference_td3_2018, seed_study, smoke_slurm, table1, table2, table2_slurm, "
                "table2_smoke; "
                "did you mean table2?",
            ),
        ]
        for override, line in cases:
            assert_refused(cli("td3x-sweep", "list", override, cwd=tmp_path), 2, line)
        listed = cli("td3x-sweep", "list", "seed=0,1", "agent.tau=0.1,0.2", cwd=tmp_path)
        assert listed.returncode == 0 and "4 jobs, 4 runs" in listed.stdout
        assert list(tmp_path.iterdir()) == []

    def test_td3x_sweep_status_and_rerun_check_the_recorded_overrides(self, tmp_path: Path) -> None:
        sweep = tmp_path / "sweep"
        sweep.mkdir()
        (sweep / "multirun.yaml").write_text(
            f"hydra:\n  overrides:\n    task: [agent.tau=fast, seed=0]\n    hydra: [hydra.mode=MULTIRUN]\n"
            f"  runtime:\n    cwd: {tmp_path}\n"
        )
        before = snapshot(tmp_path)
        for command in ("status", "rerun"):
            line = "config error: agent.tau='fast' is not allowed: expected a float"
            assert_refused(cli("td3x-sweep", command, sweep, cwd=tmp_path), 2, line)
        assert snapshot(tmp_path) == before

    def test_compose_raises_config_error(self) -> None:
        with pytest.raises(ConfigError) as refused:
            td3x.compose(["agent.tau=fast", "run.total_steps=1e3"])
        assert refused.value.problems == [
            "agent.tau='fast' is not allowed: expected a float",
            "run.total_steps='1e3' is not allowed: expected an integer; write run.total_steps=1000",
        ]


# ---------------------------------------------------------------------- habits from other tools: the fix in one line
class TestMistakesGetTheFix:
    """A mistake that is a habit (a near key, a list without brackets, a float for an integer, a ``--flag value``)
    is refused in one line that gives the spelling td3x takes, exit 2, before anything is created."""

    TRAIN = (
        (["seeds=3"], "config error: seeds=3 is not allowed: seeds holds keys, not a value; did you mean seed=3?"),
        (
            ["agent.hidden_sizes=400,300"],
            "config error: agent.hidden_sizes=400,300 is not allowed: a list is written in brackets: "
            "agent.hidden_sizes=[400,300]",
        ),
        (
            ["-m", "agent.hidden_sizes=400,300"],
            "config error: agent.hidden_sizes=400,300 is not allowed: a list is written in brackets: "
            "agent.hidden_sizes=[400,300]",
        ),
        (
            ["run.total_steps=5e4"],
            "config error: run.total_steps='5e4' is not allowed: expected an integer; write run.total_steps=50000",
        ),
        (
            ["--total_steps", "3000"],
            "td3x-train: error: --total_steps is not an option: keys are set as KEY=VALUE, without dashes; write "
            "run.total_steps=3000 (see td3x-train --help)",
        ),
        (
            ["env=hopper", "--seed=3"],
            "td3x-train: error: --seed is not an option: keys are set as KEY=VALUE, without dashes; write seed=3 "
            "(see td3x-train --help)",
        ),
        (
            ["--multirum", "seed=0,1"],
            "td3x-train: error: --multirum is not an option; did you mean --multirun? (see td3x-train --help)",
        ),
    )

    def test_td3x_train(self, tmp_path: Path) -> None:
        for arguments, line in self.TRAIN:
            assert_refused(cli("td3x-train", *arguments, cwd=tmp_path), 2, line)
        assert list(tmp_path.iterdir()) == []

    FLAGS = (
        (
            ("td3x-sweep", "list", "--total_steps", "3000"),
            "td3x-sweep list: error: --total_steps is not an option: keys are set as KEY=VALUE, without dashes; "
            "write run.total_steps=3000 (see td3x-sweep list --help)",
        ),
        (
            ("td3x-sweep", "recheck", "sweep", "--stpes", "500"),
            "td3x-sweep recheck: error: --stpes is not an option; did you mean --steps? "
            "(see td3x-sweep recheck --help)",
        ),
        (
            ("td3x-sweep", "status", "sweep", "--steps", "500"),
            "td3x-sweep status: error: --steps is not an option: the options are -h, --help (see td3x-sweep status "
            "--help)",
        ),
        (
            ("td3x-eval", "run", "--episdoes", "3"),
            "td3x-eval: error: --episdoes is not an option; did you mean --episodes? (see td3x-eval --help)",
        ),
        (
            ("td3x-report", "runs", "--rpes", "100"),
            "td3x-report: error: --rpes is not an option; did you mean --reps? (see td3x-report --help)",
        ),
        (
            ("td3x-resume", "run", "--total-steps", "3000"),
            "td3x-resume: error: --total-steps is not an option: keys are set as KEY=VALUE, without dashes; write "
            "run.total_steps=3000 (see td3x-resume --help)",
        ),
        (
            ("td3x-tune", "study", "--trails", "5"),
            "td3x-tune: error: --trails is not an option; did you mean --trials? (see td3x-tune --help)",
        ),
        (
            ("td3x-tune", "study", "--trial", "5"),  # a prefix: argparse would read it as --trials
            "td3x-tune: error: --trial is not an option; did you mean --trials? (see td3x-tune --help)",
        ),
        (
            ("td3x-report", "runs", "--ou", "report"),
            "td3x-report: error: --ou is not an option; did you mean --out? (see td3x-report --help)",
        ),
        (
            ("td3x-tune", "study", "run.num_seeds=2", "--eval_every", "500"),
            "td3x-tune: error: --eval_every is not an option: keys are set as KEY=VALUE, without dashes; write "
            "run.eval_every=500 (see td3x-tune --help)",
        ),
    )

    def test_every_console_script_names_an_unknown_flag_and_the_right_spelling(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(tmp_path)
        for (command, *arguments), line in self.FLAGS:
            with pytest.raises(SystemExit) as exit_:
                MAINS[command](arguments)
            assert exit_.value.code == 2
            assert capsys.readouterr().err.splitlines() == [line]
        assert list(tmp_path.iterdir()) == []

    def test_report_names_the_one_value_out_of_range(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(tmp_path)
        cases = [
            (["runs", "--reps", "0"], "td3x-report: error: --reps 0: must be >= 1 (see td3x-report --help)"),
            (["runs", "--at-step", "-5"], "td3x-report: error: --at-step -5: must be >= 0 (see td3x-report --help)"),
        ]
        for arguments, line in cases:
            with pytest.raises(SystemExit) as exit_:
                MAINS["td3x-report"](arguments)
            assert exit_.value.code == 2
            assert capsys.readouterr().err.splitlines() == [line]
        assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------- non-finite observations
@pytest.mark.slow
class TestNonFiniteObservations:
    """Policy.predict refuses NaN and infinite observations, naming the entries (one observation) or the rows (a
    batch), instead of returning NaN actions."""

    def test_predict_names_the_entries_or_rows(self, trained_run: Path) -> None:
        policy = td3x.load(trained_run)
        good = np.array([1.0, 0.0, 0.5])
        assert np.isfinite(policy.predict(good)).all()
        cases = [
            ([1.0, math.nan, 0.5], r"entries \[1\] hold nan"),
            ([math.inf, 0.0, -math.inf], r"entries \[0, 2\] hold -inf, inf"),
            ([good, [math.nan, 0.0, 0.0], good, [0.0, math.inf, 0.0]], r"rows \[1, 3\] hold inf, nan"),
            ([1e39, 0.0, 0.0], r"entries \[0\] hold inf \(a float32 beyond ±3.4e38 is inf\)"),
        ]
        for obs, message in cases:
            with pytest.raises(ValueError, match=f"^predict takes finite observations: {message}"):
                policy.predict(np.array(obs))


# ---------------------------------------------------------------------- malformed or corrupt run-dir files
@pytest.mark.slow
class TestCorruptRunFiles:
    """A malformed config.yaml, summary.json, eval.csv, multirun.yaml or checkpoint.pt: one line naming the file
    and what is wrong, a non-zero exit, nothing changed; td3x-report names and skips a broken run, reports the rest."""

    BAD_YAML = ("run: [unclosed\n  : :", "is not valid YAML: expected ',' or ']', but got ':' at line 2, column 3")
    LIST_YAML = ("- a list\n", "does not hold a mapping of keys (it holds list)")

    def test_td3x_resume(self, trained_run: Path, tmp_path: Path) -> None:
        for name, (text, problem) in {"yaml": self.BAD_YAML, "list": self.LIST_YAML}.items():
            run = copy_of(trained_run, tmp_path / name)
            (run / "config.yaml").write_text(text)
            before = snapshot(run)
            assert_refused(cli("td3x-resume", run, cwd=tmp_path), 2, f"resume error: {run}/config.yaml {problem}")
            assert snapshot(run) == before
        run = copy_of(trained_run, tmp_path / "typed")
        config = run / "config.yaml"
        config.write_text(config.read_text().replace("total_steps: 300", "total_steps: fast"))
        before = snapshot(run)
        result = cli("td3x-resume", run, cwd=tmp_path)
        assert_refused(result, 2, *result.stderr.splitlines()[:1])
        assert result.stderr.startswith(f"resume error: {config}: the stored config does not fit this td3x: ")
        assert "'fast'" in result.stderr and snapshot(run) == before

    def test_td3x_resume_blames_the_command_line_or_the_file_and_refuses_hydra_s_record(
        self, trained_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A bad value on the command line is the user's (before: "run/config.yaml: ..." for a range, OmegaConf's
        raw text for a type); a bad value in the file is the file's; ``RUN/.hydra`` is not a run dir (before: a new
        run trained inside it)."""
        run = copy_of(trained_run, tmp_path / "run")
        config = run / "config.yaml"
        cases = [
            ([run, "run.checkpoint_every=-5"], "run.checkpoint_every=-5 is not allowed: must be an integer >= 1"),
            ([run, "run.checkpoint_every=abc"], "run.checkpoint_every='abc' is not allowed: expected an integer"),
            (
                [run, "run.log_every=1e3"],
                "run.log_every='1e3' is not allowed: expected an integer; write run.log_every=1000",
            ),
            (
                [run / ".hydra"],
                f"{run}/.hydra is Hydra's record of how a run was composed, not a run dir: td3x-resume {run}",
            ),
        ]
        before = snapshot(run)
        for arguments, line in cases:
            with pytest.raises(SystemExit) as exit_:
                MAINS["td3x-resume"]([str(argument) for argument in arguments])
            assert (exit_.value.code, capsys.readouterr().err.splitlines()) == (2, [f"resume error: {line}"])
        assert snapshot(run) == before
        config.write_text(config.read_text().replace("tau: 0.005", "tau: 5.0"))
        with pytest.raises(SystemExit):
            MAINS["td3x-resume"]([str(run), "run.checkpoint_every=-5"])
        assert capsys.readouterr().err.splitlines() == [
            f"resume error: {config}: agent.tau=5.0 is not allowed: must be in (0, 1]"  # the file's, found first
        ]

    def test_a_corrupt_checkpoint_to_resume_eval_and_load(self, trained_run: Path, tmp_path: Path) -> None:
        run = copy_of(trained_run, tmp_path / "run")
        checkpoint = run / "checkpoint.pt"
        checkpoint.write_bytes(checkpoint.read_bytes()[:100])
        before = snapshot(run)
        prefix = f"checkpoint {checkpoint} is truncated or corrupt: "
        for command, label in (("td3x-resume", "resume error: "), ("td3x-eval", "td3x-eval: error: ")):
            result = cli(command, run, cwd=tmp_path)
            assert_refused(result, 2, *result.stderr.splitlines()[:1])
            assert result.stderr.startswith(label + prefix)
        with pytest.raises(CheckpointError, match="truncated or corrupt"):
            td3x.load(run)
        assert snapshot(run) == before

    def test_load_and_eval_read_the_config_from_the_checkpoint(self, trained_run: Path, tmp_path: Path) -> None:
        """A corrupt config.yaml does not matter to them: the checkpoint holds the config it was trained with."""
        run = copy_of(trained_run, tmp_path / "run")
        (run / "config.yaml").write_text(self.BAD_YAML[0])
        assert td3x.load(run).step == 300

    def test_td3x_sweep_status(self, trained_run: Path, tmp_path: Path) -> None:
        """A broken run file is the run's problem: status lists the run as failed, unreadable, naming the file, and
        goes on (exit 1, as for any failed run); a broken multirun.yaml is the sweep's: refused, exit 2."""
        cases = {
            "config.yaml": self.BAD_YAML[1],
            "summary.json": "is not valid JSON: Expecting value at line 1, column 12",
            "eval.csv": "has 'abc' in its return_mean column, not a number",  # every row checked, as the report does
        }
        texts = {
            "config.yaml": self.BAD_YAML[0],
            "summary.json": '{"status": ',
            "eval.csv": "step,return_mean\n0,abc\n",
        }
        for name, problem in cases.items():
            run = copy_of(trained_run, tmp_path / name)
            (run / name).write_text(texts[name])
            before = snapshot(run)
            result = cli("td3x-sweep", "status", run, cwd=tmp_path)
            assert result.returncode == 1 and result.stderr == "" and "1 failed" in result.stdout
            assert f"failed   {run}: unreadable: {run}/{name} {problem}" in result.stdout.splitlines()
            assert snapshot(run) == before
        run = copy_of(trained_run, tmp_path / "short")  # a complete run's eval.csv must reach run.total_steps
        (run / "eval.csv").write_text("step,return_mean\n0,1.5\n")
        result = cli("td3x-sweep", "status", run, cwd=tmp_path)
        assert result.returncode == 1 and "eval.csv ends at step 0, not at run.total_steps=300" in result.stdout
        run = copy_of(trained_run, tmp_path / "no_status")
        (run / "summary.json").write_text('{"steps": 300}')
        result = cli("td3x-sweep", "status", run, cwd=tmp_path)
        line = (
            f"failed   {run}: unreadable: {run}/summary.json is not a td3x summary: it lacks a status or a steps count"
        )
        assert result.returncode == 1 and line in result.stdout.splitlines()
        sweep = tmp_path / "sweep"
        sweep.mkdir()
        (sweep / "multirun.yaml").write_text("hydra: {}\n")
        line = f"td3x-sweep: {sweep}/multirun.yaml is not Hydra's record of a sweep: it lacks hydra.overrides or "
        assert_refused(cli("td3x-sweep", "status", sweep, cwd=tmp_path), 2, line + "hydra.runtime")

    def test_td3x_report_names_and_skips_broken_runs(self, trained_run: Path, tmp_path: Path) -> None:
        runs = tmp_path / "runs"
        copy_of(trained_run, runs / "good")
        broken = {
            "csv": (
                "eval.csv",
                "step,return_mean\n0,-1.5\n150,abc\n",
                "has 'abc' in its return_mean column, not a number",
            ),
            "columns": ("eval.csv", "x,y\n1,2\n", "lacks the step and return_mean columns"),
            "repeated": (  # the same evaluation logged twice would count twice in a statistic
                "eval.csv",
                "step,return_mean\n0,-1.5\n150,2.0\n150,2.0\n300,2.5\n",
                "has step 150 on line 4 after step 150 on line 3: its steps must increase",
            ),
            "cut": (  # a write stopped mid-line: -1258.94 cut to -12 (before: averaged as -12)
                "eval.csv",
                "step,return_mean,wall\n0,-1.5,0.1\n150,-1258.94,0.2\n300,-12",
                "line 4 is cut short (2 of the header's 3 fields, no newline): a write stopped mid-line, so its last "
                "value may be cut too",
            ),
            "json": ("summary.json", '{"status": ', "is not valid JSON: Expecting value at line 1, column 12"),
            "list": ("summary.json", "[]", "does not hold a JSON object (it holds list)"),
        }
        for name, (file, text, _) in broken.items():
            (copy_of(trained_run, runs / name) / file).write_text(text)
        (copy_of(trained_run, runs / "yaml") / "config.yaml").write_text(self.BAD_YAML[0])
        before = snapshot(runs)
        result = cli("td3x-report", "runs", "--out", "report", "--plotly", "none", "--reps", "100", cwd=tmp_path)
        assert result.returncode == 0 and "Traceback" not in result.stderr
        expected = [
            *(
                f"WARNING td3x.analysis.reading.runs: runs/{name}/{file} {problem}; the run is left out of the averages"
                for name, (file, _, problem) in broken.items()
            ),
            f"WARNING td3x.analysis.reading.runs: runs/yaml/config.yaml {self.BAD_YAML[1]}; the run dir is skipped",
            "report written to report",
        ]
        assert sorted(result.stderr.splitlines()) == sorted(expected)
        not_averaged = (tmp_path / "report" / "not_averaged.csv").read_text()
        assert all(f"(runs/{name})" in not_averaged for name in broken) and "(runs/good)" not in not_averaged
        assert "runs/good" in (tmp_path / "report" / "runs.csv").read_text()
        assert snapshot(runs) == before


    def test_status_and_report_count_the_same_runs_complete(self, trained_run: Path, tmp_path: Path) -> None:
        """docs/resume.md: td3x-report averages exactly the runs td3x-sweep status counts complete, in a folder of
        hand-edited and partial runs (before: a metrics.jsonl cut mid-line was complete to status, left out by the
        report)."""
        runs = tmp_path / "runs"
        copy_of(trained_run, runs / "good")
        only_config = runs / "only_config"
        only_config.mkdir(parents=True)
        shutil.copy(trained_run / "config.yaml", only_config)
        (copy_of(trained_run, runs / "summary_list") / "summary.json").write_text("[]")
        with (copy_of(trained_run, runs / "metrics_cut") / "metrics.jsonl").open("a") as metrics:
            metrics.write('{"step": 300, "actor_grad_n')
        with (copy_of(trained_run, runs / "provenance_cut") / "provenance.json").open("r+") as provenance:
            provenance.truncate(10)
        status = cli("td3x-sweep", "status", "runs", cwd=tmp_path)
        report = cli("td3x-report", "runs", "--out", "report", "--plotly", "none", "--reps", "100", cwd=tmp_path)
        assert "Traceback" not in status.stderr + report.stderr and report.returncode == 0
        assert "1 complete, 0 running, 0 stopped, 0 stale, 3 failed, 1 not started" in status.stdout
        assert "5 run dirs under runs: 1 averaged into 1 cells, 4 not averaged" in report.stdout


# ---------------------------------------------------------------------- a path of the wrong kind
class TestWrongKindOfPath:
    """A file where a dir goes, or a missing path, for every path argument: one line, exit 2, nothing created."""

    def test_each_command(self, tmp_path: Path) -> None:
        (tmp_path / "afile").write_text("not a dir\n")
        cases = [
            (("td3x-report", tmp_path, "--out", "afile"), "report error: --out afile is a file, not a directory"),
            (
                ("td3x-report", tmp_path, "--out", "afile/report"),
                "report error: --out afile/report lies below afile, which is a file, not a directory",
            ),
            (
                ("td3x-report", "afile"),
                "report error: afile is a file: td3x-report takes run dirs, sweep dirs or folders above them",
            ),
            (("td3x-report", "nowhere"), "report error: no such file or directory: nowhere"),
            (("td3x-eval", "nowhere"), "td3x-eval: error: no run dir or checkpoint file at nowhere"),
            (
                ("td3x-resume", "afile"),
                "resume error: afile is a file: td3x-resume takes a run dir (the one holding config.yaml, or "
                "seed_<k>/)",
            ),
            (
                ("td3x-resume", "nowhere"),
                "resume error: nowhere does not exist: td3x-resume takes a run dir (the one holding config.yaml, or "
                "seed_<k>/)",
            ),
            (
                ("td3x-sweep", "status", "afile"),
                "td3x-sweep: afile is a file: td3x-sweep status takes a sweep dir, a run dir, a K-seeds dir or a "
                "folder of runs",
            ),
            (
                ("td3x-sweep", "status", "nowhere"),
                "td3x-sweep: nowhere does not exist: td3x-sweep status takes a sweep dir, a run dir, a K-seeds dir or "
                "a folder of runs",
            ),
            (("td3x-sweep", "rerun", "afile"), "td3x-sweep: afile is a file: td3x-sweep rerun takes a sweep dir"),
            (
                ("td3x-train", *TINY_COMMAND_LINE, "hydra.run.dir=afile"),
                "config error: hydra.run.dir=afile is a file, not a directory: name a dir (it is created if missing)",
            ),
            (
                ("td3x-train", "-m", *TINY_COMMAND_LINE, "hydra.sweep.dir=afile/sweep"),
                "config error: hydra.sweep.dir=afile/sweep lies below afile, which is a file, not a directory: name a "
                "dir (it is created if missing)",
            ),
            (
                ("td3x-train", *TINY_COMMAND_LINE, "hydra.run.dir=/proc/td3x-run"),
                "config error: /proc/td3x-run (the run's dir) is not writable here (/proc, where it would be made): "
                "choose a dir you can write",
            ),
        ]
        for (command, *arguments), line in cases:
            assert_refused(cli(str(command), *arguments, cwd=tmp_path), 2, line)
            assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
            assert (tmp_path / "afile").read_text() == "not a dir\n"

    def test_eval_of_a_file_that_is_no_checkpoint(self, tmp_path: Path) -> None:
        (tmp_path / "notes.txt").write_text("not a checkpoint\n")
        result = cli("td3x-eval", "notes.txt", cwd=tmp_path)
        assert_refused(result, 2, *result.stderr.splitlines()[:1])
        assert result.stderr.startswith("td3x-eval: error: checkpoint notes.txt is truncated or corrupt: ")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
