"""What a newcomer meets first: the bare demo's budget, strict keys and options (one line, the closest match,
exit 2, nothing created), --help and --version, the Python API (load + predict == td3x-eval), td3x-resume of a
SIGKILLed sweep job and of a K-seeds process."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import gymnasium as gym
import pytest
import yaml

import td3x
from td3x import evaluate, resume
from td3x.config import ConfigError
from td3x.entrypoint import help_text, main
from td3x.run_dir import is_timing_column

BIN = Path(sys.executable).parent
TINY = ("agent.hidden_sizes=[32,32]", "agent.batch_size=64", "run.eval_episodes=2", "logging.wandb_mode=disabled")


def train_main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """``td3x-train ARGV`` in this process: its exit code and stderr."""
    monkeypatch.setattr(sys, "argv", ["td3x-train", *argv])
    try:
        main()
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, capsys.readouterr().err


# ---------------------------------------------------------------------- the bare demo's budget
def test_bare_default_is_the_pendulum_demo_and_env_options_carry_their_budget() -> None:
    bare = td3x.compose()
    assert (bare.env.id, bare.run.total_steps, bare.run.eval_every, bare.paper_row) == (
        "Pendulum-v1",
        15000,
        1000,
        "TD3",
    )
    hopper = td3x.compose(["env=hopper"])
    assert (hopper.run.total_steps, hopper.run.eval_every) == (1_000_000, 5000)  # the paper's budget
    assert td3x.compose(["env=hopper", "run.total_steps=5000"]).run.total_steps == 5000  # the command line wins
    smoke = td3x.compose(["env=hopper", "+experiment=table2_smoke"])  # an experiment keeps its numbers
    assert (smoke.run.total_steps, smoke.run.eval_every) == (1000, 500)


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


def test_a_key_added_past_the_command_line_check_is_refused_too(compose_cfg) -> None:  # type: ignore[no-untyped-def]
    """``to_typed`` refuses any key the schema lacks, at any depth (Hydra lets ``+`` add it to a typed node and
    ``OmegaConf.to_object`` would drop it silently), while ``env.kwargs`` stays free-form for gymnasium.make."""
    with pytest.raises(ConfigError) as refused:
        td3x.config.to_typed(compose_cfg("+agent.polcy_delay=3", "+run.totl_steps=9"))
    assert refused.value.problems == [
        "agent.polcy_delay is not a td3x key; did you mean agent.policy_delay?",
        "run.totl_steps is not a td3x key; did you mean run.total_steps?",
    ]
    config = td3x.config.to_typed(compose_cfg("+env.kwargs.max_episode_steps=50", "+env.kwargs.g=9.81"))
    assert config.env.kwargs == {"max_episode_steps": 50, "g": 9.81}


def test_the_real_console_script_refuses_a_typo_before_creating_anything(tmp_path: Path) -> None:
    result = subprocess.run(
        [BIN / "td3x-train", "+agent.polcy_delay=3"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "config error: agent.polcy_delay is not a td3x key; did you mean agent.policy_delay?"
    ]
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------- help and version
@pytest.mark.parametrize("script", ["td3x-train", "td3x-resume", "td3x-sweep", "td3x-eval", "td3x-report"])
def test_every_cli_prints_td3x_version(
    script: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each installed console script's own entry point, called as the script calls it (argv from sys.argv)."""
    (entry_point,) = metadata.entry_points(group="console_scripts", name=script)
    monkeypatch.setattr(sys, "argv", [script, "--version"])
    try:
        entry_point.load()()
    except SystemExit as exit_:  # argparse's version action exits 0
        assert not exit_.code
    assert capsys.readouterr().out.strip() == f"td3x {td3x.__version__}"


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


# ---------------------------------------------------------------------- the Python API
@pytest.fixture(scope="module")
def k_seed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short Pendulum run of two seeds side by side, trained through td3x.train."""
    run_dir = tmp_path_factory.mktemp("api") / "run"
    config = td3x.compose(
        ["run.total_steps=600", "run.eval_every=300", "env.random_steps=300", "run.num_seeds=2", *TINY]
    )
    summary = td3x.train(config, str(run_dir))
    assert summary["steps"] == 600 and len(summary["seeds"]) == 2
    return run_dir


def test_load_and_predict_act_in_env_units_and_score_what_td3x_eval_reports(
    k_seed_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = td3x.load(str(k_seed_run / "seed_1"))  # a str, and one seed of a K-seeds run
    assert (policy.env_id, policy.step, policy.config.seed) == ("Pendulum-v1", 600, 1)
    assert policy.predict([0.0, 1.0, 0.0]).shape == (1,)
    batch = policy.predict(gym.make("Pendulum-v1").observation_space.sample()[None].repeat(4, axis=0))
    assert batch.shape == (4, 1) and abs(batch).max() <= 2.0  # Pendulum's torque is in [-2, 2]
    with pytest.raises(ValueError, match="obs_dim=3"):
        policy.predict([0.0, 1.0])

    env, episode_return, done = gym.make(policy.env_id), 0.0, False
    obs, _ = env.reset(seed=777)
    while not done:
        obs, reward, terminated, truncated, _ = env.step(policy.predict(obs))
        episode_return, done = episode_return + float(reward), terminated or truncated
    assert evaluate.main([str(k_seed_run / "seed_1"), "--episodes", "1", "--seed", "777"]) == 0
    capsys.readouterr()
    record = json.loads((k_seed_run / "seed_1" / "eval_step600_seed777_n1.json").read_text())
    assert episode_return == pytest.approx(record["returns"][0], abs=1e-9)


def test_td3x_resume_finds_a_k_seeds_process_from_its_dir_or_a_seed_dir(k_seed_run: Path) -> None:
    for given in (k_seed_run, k_seed_run / "seed_1"):
        run_dir, saved = resume.stored_run(given)
        assert run_dir == k_seed_run and saved["seed"] == 0 and saved["run"]["num_seeds"] == 2
    with pytest.raises(resume.ResumeError, match=r"agent\.tau=0\.1"):
        resume.resume_overrides(saved, ["agent.tau=0.1"])
    assert resume.resume_overrides(saved, ["run.total_steps=900"])["run"]["total_steps"] == 900
    with pytest.raises(resume.ResumeError, match=r"^run\.total_steps=abc: Value 'abc'"):  # the user's value, named
        resume.resume_overrides(saved, ["run.total_steps=abc"])


def test_td3x_resume_continues_a_run_started_with_resume_never(tmp_path: Path) -> None:
    """``run.resume=never`` guards a launch against an existing dir; td3x-resume is asked to continue it."""
    overrides = ["run.total_steps=300", "run.eval_every=300", "env.random_steps=200", "run.resume=never", *TINY]
    td3x.train(td3x.compose(overrides), tmp_path)
    with pytest.raises(resume.ResumeError, match=r"run\.resume=never"):  # td3x-train's guard holds
        td3x.train(td3x.compose(overrides), tmp_path)
    resume.main([str(tmp_path)])  # finished: says so and returns, where the same guard would exit 2
    assert json.loads((tmp_path / "summary.json").read_text())["status"] == "complete"


# ---------------------------------------------------------------------- td3x-resume, end to end
SWEEP = (
    "-m",
    "run.total_steps=1800",
    "run.eval_every=300",
    "run.checkpoint_every=300",
    "env.random_steps=300",
    "seed=0",
)


def environment() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}, "WANDB_MODE": "disabled"}


def eval_rows(run_dir: Path) -> list[dict[str, str]]:
    with (run_dir / "eval.csv").open() as file:
        return [{k: v for k, v in row.items() if not is_timing_column(k)} for row in csv.DictReader(file)]


@pytest.mark.slow
def test_td3x_resume_of_a_sigkilled_sweep_job_equals_the_job_uninterrupted(tmp_path: Path) -> None:
    def sweep_command(sweep_dir: Path) -> list[str]:
        return [str(BIN / "td3x-train"), *SWEEP, *TINY[:3], f"hydra.sweep.dir={sweep_dir}"]

    straight = subprocess.run(sweep_command(tmp_path / "straight"), env=environment(), capture_output=True, timeout=600)
    assert straight.returncode == 0, straight.stderr
    (job,) = (tmp_path / "straight").glob("pendulum/none/*")
    assert "=" in job.name and "," in job.name  # the name a shell would need quoted as a Hydra override

    process = subprocess.Popen(sweep_command(tmp_path / "killed"), env=environment(), stderr=subprocess.DEVNULL)
    killed_job = tmp_path / "killed" / "pendulum" / "none" / job.name
    deadline = time.monotonic() + 300
    while not (killed_job / "checkpoint.pt").exists():
        assert process.poll() is None and time.monotonic() < deadline, "the job ended before its first checkpoint"
        time.sleep(0.05)
    # halfway through the rest (steps 300 to 1800), as long as the uninterrupted job took for it: never after the end
    time.sleep(0.5 * json.loads((job / "summary.json").read_text())["wall_time_s"] * (1800 - 300) / 1800)
    process.kill()
    process.wait()
    assert json.loads((killed_job / "summary.json").read_text())["status"] == "running"

    resumed = subprocess.run(
        [BIN / "td3x-resume", killed_job], env=environment(), capture_output=True, text=True, timeout=600
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" in resumed.stderr and "done: final eval return" in resumed.stderr
    assert eval_rows(killed_job) == eval_rows(job)
    assert yaml.safe_load((killed_job / "config.yaml").read_text()) == yaml.safe_load((job / "config.yaml").read_text())
    again = subprocess.run([BIN / "td3x-resume", killed_job], env=environment(), capture_output=True, text=True)
    assert again.returncode == 0 and "already holds a complete run" in again.stderr
