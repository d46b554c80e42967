"""The real ``td3x-train`` entrypoint as a subprocess: Hydra composition, run-dir files, offline W&B files read
back, multirun, refused configs and a broken W&B (marked slow: seconds to a couple of minutes each); unknown keys
and options refused in one line with the closest match, before anything is created; td3x's own --help."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from helpers.read_only import read_only_dir
from helpers.runs import TINY_COMMAND_LINE, TINY_SIZES
from helpers.scripts import BIN
from helpers.wandb_records import find_run_files, read_run

import td3x
from td3x.commands.train import help_text, main
from td3x.config.schema import ConfigError

RUN_FILES = {"config.yaml", "eval.csv", "metrics.jsonl", "summary.json", "provenance.json", "checkpoint.pt", "wandb"}


def train(*overrides: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}
    return subprocess.run(
        [sys.executable, "-m", "td3x.commands.train", *overrides],
        capture_output=True,
        text=True,
        timeout=900,
        env={**environment, **(env or {})},
    )


def eval_steps(run_dir: Path) -> list[int]:
    with (run_dir / "eval.csv").open() as file:
        return [int(row["step"]) for row in csv.DictReader(file)]


@pytest.mark.slow
def test_hopper_paper_preset_with_an_ablation_writes_every_run_file(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = train(
        "env=hopper",
        "agent=td3_paper",
        "ablation=no_delay",
        "seed=3",
        "run.total_steps=1500",
        "run.eval_every=500",
        "run.eval_episodes=2",
        "run.log_every=500",
        f"hydra.run.dir={run_dir}",
    )
    assert result.returncode == 0, result.stderr
    assert {path.name for path in run_dir.iterdir()} >= RUN_FILES
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert config["choices"] == {"env": "hopper", "agent": "td3_paper", "noise": "gaussian", "ablation": "no_delay"}
    assert (config["paper_row"], config["agent"]["policy_delay"], config["agent"]["hidden_sizes"], config["seed"]) == (
        "TD3 - DP",
        1,
        [400, 300],
        3,
    )
    assert config["logging"]["wandb_mode"] == "offline"  # resolved, not the ${oc.env:...} interpolation
    assert eval_steps(run_dir) == [0, 500, 1000, 1500]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "complete" and summary["steps"] == 1500 and summary["updates"] == 500

    (wandb_file,) = find_run_files(run_dir)
    wandb_run = read_run(wandb_file)
    assert wandb_run.exit_code == 0 and wandb_run.project == "td3x" and wandb_run.job_type == "train"
    assert wandb_run.name == "hopper-td3_paper-TD3 - DP-s3"
    assert {"Hopper-v5", "td3_paper", "TD3 - DP", "seed3"} <= set(wandb_run.tags)
    assert wandb_run.config["agent"]["policy_delay"] == 1 and wandb_run.config["choices"]["ablation"] == "no_delay"
    eval_rows = [row for row in wandb_run.history if "eval/return_mean" in row]
    assert [row["env_step"] for row in eval_rows] == [0, 500, 1000, 1500]
    assert any(
        metric.get("glob_name") == "eval/*" and metric.get("step_metric") == "env_step" for metric in wandb_run.metrics
    )
    assert wandb_run.summary["last10_return"] == pytest.approx(summary["last10_return"])


@pytest.mark.slow
def test_multirun_gives_each_job_its_own_dir_and_wandb_run_in_the_sweeps_group(tmp_path: Path) -> None:
    result = train(
        "-m",
        "seed=0,1",
        "run.total_steps=400",
        "run.eval_every=200",
        "env.random_steps=300",
        *TINY_SIZES,
        f"hydra.sweep.dir={tmp_path}",
    )
    assert result.returncode == 0, result.stderr
    job_dirs = sorted(path.parent for path in tmp_path.glob("pendulum/none/*/summary.json"))
    assert [path.name.split("seed=")[1] for path in job_dirs] == ["0", "1"]
    run_ids = set()
    for job_dir in job_dirs:
        assert {path.name for path in job_dir.iterdir()} >= RUN_FILES
        assert json.loads((job_dir / "summary.json").read_text())["status"] == "complete"
        (wandb_file,) = find_run_files(job_dir)
        wandb_run = read_run(wandb_file)
        run_ids.add(wandb_run.run_id)
        assert wandb_run.group == tmp_path.name  # logging.group unset: the sweep dir's name
    assert len(run_ids) == 2  # wandb.finish() between jobs: never one run for the whole sweep


NO_UPDATE = (
    "run.total_steps=300 makes no update: updates start at env step 300 (max(env.random_steps=300, "
    "agent.batch_size=32)), so every evaluation is of the untrained policy, whatever the agent or ablation; train "
    "more than 300 steps for the agent to learn"
)


@pytest.mark.slow
def test_a_run_too_short_to_update_warns_at_its_start_and_in_the_line_its_multirun_ends_with(tmp_path: Path) -> None:
    result = train(
        "-m",
        "run.total_steps=300,400",
        "run.eval_every=100",
        "env.random_steps=300",
        *TINY_SIZES,
        f"hydra.sweep.dir={tmp_path}",
    )
    assert result.returncode == 0, result.stderr
    idle, learning = (next(tmp_path.glob(f"pendulum/none/*run.total_steps={steps}")) for steps in (300, 400))
    warning = f"[td3x.training.run][WARNING] - {idle}: {NO_UPDATE}"
    assert (result.stdout + result.stderr).count(warning) == 1  # on the console
    assert (idle / "train.log").read_text().count(warning) == 1
    assert "makes no update" not in (learning / "train.log").read_text()
    assert len({line.split(",")[1] for line in (idle / "eval.csv").read_text().splitlines()[1:]}) == 1  # untrained
    assert json.loads((idle / "summary.json").read_text())["updates"] == 0
    assert result.stdout.splitlines()[-1] == (
        f"multirun: 2 jobs (2 runs): 2 complete; sweep dir {tmp_path}; 1 of 2 jobs made no update (their train.log "
        "says why): untrained policies' returns"
    )


@pytest.mark.slow
def test_bad_config_prints_one_line_per_problem_and_leaves_nothing(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = train("agent.tau=1.5", "agent.policy_delay=0", "run.eval_seed=-1", f"hydra.run.dir={run_dir}")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines == [
        "config error: agent.tau=1.5 is not allowed: must be in (0, 1]",
        "config error: agent.policy_delay=0 is not allowed: must be an integer >= 1",
        "config error: run.eval_seed=-1 is not allowed: must be null or an integer >= 0",  # else Gymnasium, later
    ]
    assert not run_dir.exists()


@pytest.mark.slow
def test_unknown_env_is_refused_with_close_matches(tmp_path: Path) -> None:
    result = train("env.id=Hoper-v5", f"hydra.run.dir={tmp_path / 'run'}")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert (
        "config error: env.id='Hoper-v5' is not allowed: not a registered Gymnasium env; did you mean Hopper-v5"
        in result.stderr
    )
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_hydra_composition_errors_name_the_key(tmp_path: Path) -> None:
    result = train("agent.tau=fast", f"hydra.run.dir={tmp_path / 'run'}")
    assert result.returncode != 0 and "agent.tau" in result.stderr and "Traceback" not in result.stderr
    result = train("ablation=no_twn", f"hydra.run.dir={tmp_path / 'run'}")
    assert result.returncode != 0 and "no_twin" in result.stderr  # Hydra lists the available options


def test_a_refused_job_in_a_multirun_is_named_before_any_job_starts(tmp_path: Path) -> None:
    sweep_dir = tmp_path / "sweep"
    result = train("-m", "agent.tau=0.5,1.5", "run.total_steps=300", *TINY_SIZES, f"hydra.sweep.dir={sweep_dir}")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"config error: job 1 ({sweep_dir}/pendulum/none/agent.batch_size=32,agent.hidden_sizes=[16,16],agent.tau=1.5,"
        "run.eval_episodes=1,run.total_steps=300): "
        "agent.tau=1.5 is not allowed: must be in (0, 1]"
    ]
    assert not sweep_dir.exists()  # job 0, whose config is fine, did not start either


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    with read_only_dir(tmp_path / "read_only") as path:
        yield path


def test_a_sweep_on_a_read_only_disk_is_refused_before_any_job_starts(read_only: Path) -> None:
    result = train("-m", "seed=0,1", "run.total_steps=300", *TINY_SIZES, f"hydra.sweep.dir={read_only}/sweep")
    assert (result.returncode, result.stderr.splitlines()) == (
        2,
        [
            f"config error: {read_only}/sweep/pendulum/none (the sweep's dir) is not writable here ({read_only}, "
            "where it would be made): choose a dir you can write"
        ],
    )


@pytest.mark.slow
def test_training_survives_a_broken_wandb(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "wandb").write_text("a file where W&B wants its directory")
    result = train(
        "run.total_steps=400", "run.eval_every=200", "env.random_steps=300", *TINY_SIZES, f"hydra.run.dir={run_dir}"
    )
    assert result.returncode == 0, result.stderr
    assert (result.stdout + result.stderr).count("wandb start failed") == 1
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "complete"
    assert eval_steps(run_dir) == [0, 200, 400]


@pytest.mark.slow
def test_readme_demo_learns_pendulum(tmp_path: Path) -> None:
    """The README's first command ends in a bare ``td3x-train``: TD3 solves Pendulum-v1 (final eval return above
    -250) in its 15k steps, says what runs in its first line, and shows an ETA as it goes."""
    run_dir = tmp_path / "run"
    result = train(f"hydra.run.dir={run_dir}", env={"WANDB_MODE": "disabled"})  # the run dir only: nothing to tune
    assert result.returncode == 0, result.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["steps"] == 15000 and summary["final_return"] > -250, summary
    output = result.stdout + result.stderr  # Hydra logs to stdout
    assert "training Pendulum-v1 | agent td3 | row TD3 | 15000 steps | seed 0" in output
    assert "ETA" in output and len(eval_steps(run_dir)) == 16  # every 1000 steps, and step 0


def train_main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """``td3x-train ARGV`` in this process: its exit code and stderr."""
    monkeypatch.setattr(sys, "argv", ["td3x-train", *argv])
    try:
        main()
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, capsys.readouterr().err


# ---------------------------------------------------------------------- strict keys and options
@pytest.mark.parametrize(
    ("override", "line"),
    [
        ("+agent.polcy_delay=3", "agent.polcy_delay is not a td3x key; did you mean agent.policy_delay?"),
        ("++run.totl_steps=9", "run.totl_steps is not a td3x key; did you mean run.total_steps?"),
        ("+seeed=1", "seeed is not a td3x key; did you mean seed?"),
        ("agent.polcy_delay=3", "agent.polcy_delay is not a td3x key; did you mean agent.policy_delay?"),
        ("+logging.projekt=x", "logging.projekt is not a td3x key; did you mean logging.project?"),
        ("experiment=table2", "experiment=table2 needs a +: +experiment=table2 (experiment has no default to change)"),
        (
            "env=hoper",
            "env=hoper is not an option of env: choose one of ant, halfcheetah, hopper, "
            "inverted_double_pendulum, inverted_pendulum, pendulum, reacher, walker2d; did you mean hopper?",
        ),
    ],
)
def test_unknown_keys_and_options_are_refused_in_one_line_with_the_closest_match(
    override: str, line: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    code, stderr = train_main(monkeypatch, capsys, override, "run.total_steps=10")
    assert (code, stderr.splitlines()) == (2, [f"config error: {line}"])
    assert list(tmp_path.iterdir()) == []  # nothing created
    with pytest.raises(ConfigError) as refused:  # the Python API refuses it the same way
        td3x.compose([override])
    assert refused.value.problems == [line]


@pytest.mark.parametrize(
    ("override", "line"),
    [
        ("run.total_steps=-5", "run.total_steps=-5 is not allowed: must be an integer >= 1"),
        ("seed=4294967296", "seed=4294967296 is not allowed: must be an integer in [0, 4294967295]"),
        (
            "~seed",
            "~seed is not allowed: td3x's keys and groups cannot be deleted; set a value instead (seed=...), "
            "or leave out the override for the default",
        ),
        (
            "~env",
            "~env is not allowed: td3x's keys and groups cannot be deleted; set a value instead (env=...), "
            "or leave out the override for the default",
        ),
        ("run.total_steps=${oops}", "run.total_steps: Interpolation key 'oops' not found"),
        (
            "logging.group=${oc.env:TD3X_UNSET_VARIABLE}",
            "logging.group: KeyError raised while resolving interpolation: "
            "\"Environment variable 'TD3X_UNSET_VARIABLE' not found\"",
        ),
        ("agent.hidden_sizes=[32", "agent.hidden_sizes=[32: no viable alternative at input '[32'"),
    ],
)
def test_values_only_the_composed_config_shows_wrong_are_refused_before_any_dir_is_made(
    override: str, line: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Range checks, deletions, interpolations and syntax: one line and exit code 2, and no outputs/ left behind
    (Hydra would make the run dir before td3x sees the config)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TD3X_UNSET_VARIABLE", raising=False)
    code, stderr = train_main(monkeypatch, capsys, override)
    assert (code, stderr.splitlines()) == (2, [f"config error: {line}"])
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ConfigError) as refused:
        td3x.compose([override])
    assert refused.value.problems == [line]


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ("seed=0,1", "ablation=none,no_twin"),  # before: Hydra's five lines and exit code 1
            "seed=0,1 and ablation=none,no_twin give several values, and without -m td3x-train trains one run: add "
            "-m for a job per value: td3x-train -m seed=0,1 ablation=none,no_twin",
        ),
        (
            ("env=hopper", "seed=range(0,3)"),
            "seed=range(0,3) gives several values, and without -m td3x-train trains one run: add -m for a job per "
            "value: td3x-train -m env=hopper 'seed=range(0,3)'",
        ),
        # before: "config error:  is not a td3x key" (the shell splits ``env = hopper`` into three words)
        (("env", "=", "hopper"), "'env = hopper' has spaces around '=': write env=hopper (see td3x-train --help)"),
        (
            ("agent.tau=", "0.01", "seed=1"),
            "'agent.tau= 0.01' has spaces around '=': write agent.tau=0.01 (see td3x-train --help)",
        ),
        (("seed", "=3"), "'seed =3' has spaces around '=': write seed=3 (see td3x-train --help)"),
        (
            ("=", "hopper"),
            "'= hopper' names no key: an override is KEY=VALUE, without spaces (e.g. env=hopper) "
            "(see td3x-train --help)",
        ),
    ],
)
def test_a_command_line_hydra_would_misread_is_one_line_with_the_command_meant(
    argv: tuple[str, ...],
    line: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert train_main(monkeypatch, capsys, *argv) == (2, f"td3x-train: error: {line}\n")
    assert list(tmp_path.iterdir()) == []


def test_an_experiment_that_sweeps_needs_no_m(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An experiment sets Hydra's multirun mode: its command line's sweeps are a multirun's, not refused for -m."""
    monkeypatch.chdir(tmp_path)
    code, stderr = train_main(
        monkeypatch, capsys, "+experiment=table2_smoke", "env=pendulum", "seed=0,1", "agent.tau=5"
    )
    assert code == 2 and "-m" not in stderr and stderr.startswith("config error: job 0 (")
    assert list(tmp_path.iterdir()) == []


def test_an_empty_run_dir_is_refused_not_the_working_dir_trained_in(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    code, stderr = train_main(monkeypatch, capsys, "hydra.run.dir=", "run.total_steps=10")
    assert (code, stderr.splitlines()) == (
        2,
        ["config error: hydra.run.dir= is empty: name a dir (it is created if missing)"],
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("argv", "lines"),
    [
        (("--cfg", "job", "agent.tau=3"), ["config error: agent.tau=3.0 is not allowed: must be in (0, 1]"]),
        (
            ("-c", "all", "env.id=Hoper-v5"),
            [
                "config error: env.id='Hoper-v5' is not allowed: not a registered Gymnasium env; did you mean "
                "Hopper-v5, Hopper-v4, Hopper-v3?"
            ],
        ),
        (
            ("--cfg", "job", "-m", "seed=0,1"),
            [
                "td3x-train: error: -m and --cfg cannot be given together: Hydra runs one of --run, --multirun, "
                "--cfg, --info, --shell-completion (see td3x-train --help)"
            ],
        ),
    ],
)
def test_printing_the_config_checks_it_as_training_would(
    argv: tuple[str, ...],
    lines: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """``--cfg job`` prints what a run would train: a config td3x would refuse is refused (before: printed, exit 0),
    and two of Hydra's modes at once are one line (before: Hydra's ValueError traceback)."""
    monkeypatch.chdir(tmp_path)
    assert train_main(monkeypatch, capsys, *argv) == (2, "\n".join(lines) + "\n")
    assert list(tmp_path.iterdir()) == []
    # what this machine can run is not checked: a config may be printed here to train on a GPU node
    assert train_main(monkeypatch, capsys, "--cfg", "job", "agent.tau=0.5", "run.device=cuda") == (0, "")


def test_the_real_console_script_refuses_a_typo_before_creating_anything(tmp_path: Path) -> None:
    result = subprocess.run(
        [BIN / "td3x-train", "+agent.polcy_delay=3"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "config error: agent.polcy_delay is not a td3x key; did you mean agent.policy_delay?"
    ]
    assert list(tmp_path.iterdir()) == []


def test_train_help_is_td3x_own(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    text = help_text()
    assert "Hydra" not in text.splitlines()[0] and "schema" not in text
    for expected in (
        "(default: pendulum)",
        "no_twin",
        "td3_paper",
        "table2",
        "run.total_steps",
        "td3x-resume",
    ):
        assert expected in text
    assert train_main(monkeypatch, capsys, "--help")[0] == 0


def test_the_module_path_before_the_folders_still_starts_td3x_train(tmp_path: Path) -> None:
    """``python -m td3x.entrypoint``, which jobs queued before the modules moved into folders run, is td3x-train."""
    result = subprocess.run(
        [sys.executable, "-m", "td3x.entrypoint", "--help"], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert result.returncode == 0 and result.stdout.startswith("td3x-train "), result.stderr
    assert "Usage: td3x-train" in result.stdout


# ---------------------------------------------------------------------- one pass over a command line (issue 60)
# td3x-train ARGV under cProfile, in a process of its own (Hydra configures its logging): its exit code and how often
# each pass ran, the real functions counted by their code, nothing replaced
COUNT_PASSES = """
import cProfile, json, pstats, sys
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from td3x.commands.train import main
from td3x.config.overrides import override_problems
from td3x.config.schema import TrainConfig
from td3x.training.machine_checks import check_runtime

passes = {
    "override text checks": override_problems,
    "compositions": ConfigLoaderImpl.load_configuration,  # Hydra's, however started: td3x's checks, Hydra's run
    "range checks": TrainConfig.problems,
    "machine checks": check_runtime,
}
sys.argv = ["td3x-train", *sys.argv[1:]]
profile = cProfile.Profile()
try:
    profile.runcall(main)
    code = 0
except SystemExit as exit_:
    code = int(exit_.code or 0)
calls = {key: counts[1] for key, counts in pstats.Stats(profile).stats.items()}
where = {label: (f.__code__.co_filename, f.__code__.co_firstlineno, f.__code__.co_name) for label, f in passes.items()}
print(json.dumps({"code": code, **{label: calls.get(key, 0) for label, key in where.items()}}))
"""


def counted_passes(*argv: str, cwd: Path) -> dict[str, int]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}
    result = subprocess.run(
        [sys.executable, "-c", COUNT_PASSES, *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=300,
    )
    return json.loads(result.stdout.splitlines()[-1])


def test_a_run_is_checked_and_composed_once(tmp_path: Path) -> None:
    """Before: the override text checked twice, the config composed four times (td3x's sweep config and job, Hydra's
    mode and run), range-checked three times, the machine checked twice. The run dir (a timestamp here) is the one
    the checks named."""
    passes = counted_passes(*TINY_COMMAND_LINE, cwd=tmp_path)
    assert passes == {"code": 0, "override text checks": 1, "compositions": 1, "range checks": 1, "machine checks": 1}
    (run_dir,) = (tmp_path / "outputs" / "runs").iterdir()
    assert {"config.yaml", "eval.csv", "summary.json", ".hydra", "train.log"} <= {p.name for p in run_dir.iterdir()}


def test_a_refused_run_is_checked_once_and_leaves_nothing(tmp_path: Path) -> None:
    passes = counted_passes("agent.tau=5", cwd=tmp_path)
    assert passes == {"code": 2, "override text checks": 1, "compositions": 1, "range checks": 1, "machine checks": 0}
    assert list(tmp_path.iterdir()) == []
    passes = counted_passes("-m", "agent.tau=0.5,5", cwd=tmp_path)  # a multirun's text: once too
    assert (passes["code"], passes["override text checks"]) == (2, 1)


@pytest.mark.slow
def test_a_single_run_is_the_run_hydra_itself_would_make(tmp_path: Path) -> None:
    """td3x starts a single run through Hydra's run_job with the config it checked; ``--config-name train`` (the
    same config) takes Hydra's own ``@hydra.main`` path: the same .hydra/ files (but the dir), the same eval.csv (but
    the timing columns), and a callback of ``hydra.callbacks`` called alike."""
    callback = "+hydra.callbacks.log_return._target_=hydra.experimental.callbacks.LogJobReturnCallback"
    runs = {
        path: train(*extra, *TINY_COMMAND_LINE, callback, f"hydra.run.dir={tmp_path / path}")
        for path, extra in (("td3x", ()), ("hydra", ("--config-name", "train")))
    }
    assert all(result.returncode == 0 for result in runs.values()), [r.stderr for r in runs.values()]
    for name in ("config.yaml", "overrides.yaml", "hydra.yaml"):
        ours, hydras = (
            (tmp_path / path / ".hydra" / name).read_text().replace(str(tmp_path / path), "DIR") for path in runs
        )
        assert ours == hydras, name
    untimed = [
        [{k: v for k, v in row.items() if "time" not in k and "sps" not in k} for row in csv.DictReader(file)]
        for file in ((tmp_path / path / "eval.csv").open() for path in runs)
    ]
    assert untimed[0] == untimed[1] and len(untimed[0]) == 3
    assert all("Succeeded with return value" in (tmp_path / path / "train.log").read_text() for path in runs)
