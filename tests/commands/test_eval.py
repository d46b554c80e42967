"""td3x-eval on real tiny runs: exact re-evaluation, MP4 videos (and their W&B copy), ONNX export, CLI errors,
a sweep dir or a folder of runs refused naming the runs inside."""

from __future__ import annotations

import argparse
import csv
import json
import logging
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import imageio.v3 as iio
import numpy as np
import pytest
from helpers.runs import TINY_TRAINED, train_tiny
from helpers.scripts import exit_code
from helpers.wandb_records import read_segments

from td3x.algo.envs import make_env
from td3x.commands.eval import MAX_EPISODES, episodes_count, main
from td3x.commands.eval import main as eval_main
from td3x.commands.sweep import main as sweep_main
from td3x.config.schema import EnvConfig, TrainConfig
from td3x.rundir import checkpoint
from td3x.rundir.export import ONNX_FILE, sample_observations
from td3x.rundir.layout import CHECKPOINT_FILE
from td3x.rundir.trained_run import load_run
from td3x.training.video import TrainingVideos, configure_headless_rendering, gl_problem

SHORT_HOPPER = ("env=hopper", "+env.kwargs.max_episode_steps=40")  # a few dozen frames per video


def last_eval_row(run_dir: Path) -> dict[str, str]:
    with (run_dir / "eval.csv").open() as file:
        return list(csv.DictReader(file))[-1]


def eval_record(run_dir: Path, step: int, seed: int, episodes: int) -> dict[str, Any]:
    return json.loads((run_dir / f"eval_step{step}_seed{seed}_n{episodes}.json").read_text())


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """td3x-eval in this process: (exit code, stderr); argparse's refusals exit through SystemExit."""
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, capsys.readouterr().err


@pytest.fixture
def renderable() -> None:
    """Skip only where no offscreen OpenGL backend can work (these machines have Debian's libosmesa6)."""
    configure_headless_rendering()
    problem = gl_problem()
    if problem is not None:
        pytest.skip(f"no MuJoCo rendering here: {problem}")


@pytest.mark.parametrize("normalize_obs", [False, True])
def test_checkpoint_reproduces_the_last_evaluation_exactly(
    make_config: Callable[..., TrainConfig], tmp_path: Path, capsys: pytest.CaptureFixture[str], normalize_obs: bool
) -> None:
    run_dir = train_tiny(make_config, tmp_path / "run", f"env.normalize_obs={str(normalize_obs).lower()}")
    assert cli([str(run_dir)], capsys) == (0, "")
    row, record = last_eval_row(run_dir), eval_record(run_dir, 600, 1_000_000, 2)  # seed 0's eval seed
    assert record["returns"] == [float(row["return_0"]), float(row["return_1"])]
    assert (record["return_mean"], record["return_std"]) == (float(row["return_mean"]), float(row["return_std"]))
    assert record["length_mean"] == float(row["length_mean"])
    # the checkpoint file itself; episode 1 of the protocol is the episode that starts from seed 1000001. Alone, it
    # is acted for in batches of one instead of two: the matmuls round differently, in the last bits only
    assert cli([str(run_dir / CHECKPOINT_FILE), "--episodes", "1", "--seed", "1000001"], capsys)[0] == 0
    assert eval_record(run_dir, 600, 1_000_001, 1)["returns"] == [pytest.approx(float(row["return_1"]), rel=1e-6)]


def test_video_is_an_mp4_of_the_evaluation_episode_and_reaches_wandb(
    make_config: Callable[..., TrainConfig], tmp_path: Path, capsys: pytest.CaptureFixture[str], renderable: None
) -> None:
    run_dir = train_tiny(make_config, tmp_path / "run", *SHORT_HOPPER, "logging.wandb_mode=offline")
    code, err = cli([str(run_dir), "--episodes", "1", "--video"], capsys)
    assert code == 0, err
    record = eval_record(run_dir, 600, 1_000_000, 1)
    frames = iio.imread(run_dir / "videos" / "step600_seed1000000.mp4")
    assert frames.shape == (record["lengths"][0] + 1, 480, 480, 3)  # the reset state, then one frame per step
    assert frames.dtype == np.uint8 and frames.std() > 10  # a scene, not a blank frame
    run_id = checkpoint.load(run_dir / CHECKPOINT_FILE)["wandb_run_id"]
    logged = list((run_dir / "wandb").glob(f"offline-run-*-{run_id}/files/media/videos/**/*.mp4"))
    assert len(logged) == 1  # the resumed offline run holds the video; `wandb sync` adds it to the run
    training, videos = read_segments(run_dir)  # the video's segment reads as the run training started
    assert (videos.name, videos.group, videos.tags) == (training.name, training.group, training.tags)
    assert videos.config == training.config and videos.config["paper_row"] == "TD3"


def test_training_videos_record_every_n_steps_and_never_stop_the_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, renderable: None
) -> None:
    env_config = EnvConfig(id="Hopper-v5", kwargs={"max_episode_steps": 20})
    logged: list[tuple[dict[str, Any], int]] = []
    videos = TrainingVideos(
        env_config, tmp_path, 100, every=300, wandb_log=lambda media, step: logged.append((media, step))
    )
    zero_policy = lambda obs: np.zeros(3, dtype=np.float32)  # noqa: E731
    assert videos.maybe_record(zero_policy, 150) is None  # not a multiple of every
    video = videos.maybe_record(zero_policy, 300)
    assert video is not None and video.path == tmp_path / "videos" / "step300_seed100.mp4" and video.path.is_file()
    assert [step for _, step in logged] == [300] and len(logged[0][0]["eval/video"]) == 1

    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "videos").write_text("a file where the videos folder should be")
    failing = TrainingVideos(env_config, blocked, 100, every=300)
    with caplog.at_level(logging.WARNING, logger="td3x.training.video"):
        assert failing.maybe_record(zero_policy, 0) is None
    assert "no more videos in this run" in caplog.text
    assert failing.maybe_record(zero_policy, 300) is None and failing.every is None


def test_exported_policy_runs_with_onnxruntime_alone(
    make_config: Callable[..., TrainConfig], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Pendulum's bounds are ±2 and normalised observations put the normaliser in the graph: both must be baked in
    run_dir = train_tiny(make_config, tmp_path / "run", "env.normalize_obs=true")
    assert cli([str(run_dir), "--episodes", "1", "--export"], capsys) == (0, "")
    trained = load_run(run_dir)
    env = make_env(trained.config.env)
    assert isinstance(env, gym.wrappers.RescaleAction)
    obs = sample_observations(env, 64, seed=3) * 3.0  # beyond the normaliser's clip too
    policy = trained.agent.seed_policy()
    expected = np.stack([env.action(policy(o)) for o in obs])  # what the env receives in training
    env.close()
    np.save(tmp_path / "obs.npy", obs)
    np.save(tmp_path / "expected.npy", expected)
    script = textwrap.dedent(
        f"""
        import json, sys
        import numpy as np
        import onnxruntime
        session = onnxruntime.InferenceSession({str(run_dir / ONNX_FILE)!r})
        obs, expected = np.load("obs.npy"), np.load("expected.npy")
        np.testing.assert_allclose(session.run(["action"], {{"obs": obs}})[0], expected, rtol=0, atol=1e-5)
        one = session.run(["action"], {{"obs": obs[:1]}})[0]
        np.testing.assert_allclose(one, expected[:1], rtol=0, atol=1e-5)
        assert json.loads(session.get_modelmeta().custom_metadata_map["env_id"]) == "Pendulum-v1"
        assert "torch" not in sys.modules and "td3x" not in sys.modules, "deployment must need neither"
        """
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["{tmp}/missing"], "no run dir or checkpoint file at"),
        (["{tmp}/empty"], "no checkpoint at"),
        (["{tmp}/corrupt/checkpoint.pt"], "truncated or corrupt"),
        (["{tmp}/empty", "--episodes", "0"], "argument --episodes: must be an integer >= 1, got '0'"),
        (["{tmp}/empty", "--episodes", "1001"], "argument --episodes: must be at most 1000, got '1001': the episodes"),
        (["{tmp}/empty", "--seed", "-1"], "argument --seed: must be an integer >= 0"),
        (["{tmp}/empty", "--device", "gpu"], "argument --device: invalid choice: 'gpu' (choose from 'auto', 'cpu'"),
        (["{tmp}/empty", "--frames"], "--frames is not an option: the options are -h, --help, --version, --episodes"),
        (["{tmp}/empty", "--episdoes", "3"], "--episdoes is not an option; did you mean --episodes?"),
        ([], "the following arguments are required: run"),
    ],
)
def test_cli_errors_are_one_line_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "corrupt").mkdir()
    (tmp_path / "corrupt" / "checkpoint.pt").write_bytes(b"\x80\x02 not a checkpoint")
    code, err = cli([arg.format(tmp=tmp_path) for arg in argv], capsys)
    assert code == 2
    assert err.startswith("td3x-eval: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_episodes_are_bounded_by_the_memory_of_their_envs() -> None:
    """The episodes run side by side, an env each: a thousand Hopper envs take about a GB; more is refused."""
    assert episodes_count(str(MAX_EPISODES)) == MAX_EPISODES == 1000
    with pytest.raises(argparse.ArgumentTypeError, match="about 1 MB per MuJoCo env"):
        episodes_count(str(MAX_EPISODES + 1))


def test_module_entrypoint_fails_in_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "td3x.commands.eval", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr == f"td3x-eval: error: no run dir or checkpoint file at {tmp_path / 'missing'}\n"


def test_headless_rendering_setup_keeps_what_the_user_set() -> None:
    chosen: dict[str, str] = {}
    backend = configure_headless_rendering(chosen)  # no display: OSMesa, else EGL, when its library loads
    assert chosen.get("SDL_VIDEODRIVER") == "dummy"
    assert chosen.get("PYOPENGL_PLATFORM") == backend and backend in ("osmesa", "egl", None)
    user = {"MUJOCO_GL": "egl"}
    assert configure_headless_rendering(user) == "egl" and "PYOPENGL_PLATFORM" not in user
    with_display = {"DISPLAY": ":0"}
    assert configure_headless_rendering(with_display) is None and with_display == {"DISPLAY": ":0"}
    problem = gl_problem({})  # no display and no backend at all
    assert problem is not None and "apt-get install libosmesa6" in problem


@pytest.mark.slow  # two short Hopper runs, one with three videos
def test_videos_during_training_reach_wandb_and_never_change_the_numbers(
    make_config: Callable[..., TrainConfig], tmp_path: Path, renderable: None
) -> None:
    """``logging.video_every`` in a real run: each video is an MP4 in the run dir and a media file of its offline
    W&B run, logged at its env step; rendering uses its own env, so eval.csv equals the run without videos."""
    from helpers.run_files import without_timing
    from helpers.wandb_records import find_run_files, read_run

    offline = (*SHORT_HOPPER, "logging.wandb_mode=offline")
    filmed = train_tiny(make_config, tmp_path / "filmed", *offline, "logging.video_every=300")
    plain = train_tiny(make_config, tmp_path / "plain", *offline)
    assert without_timing(filmed / "eval.csv") == without_timing(plain / "eval.csv")
    assert without_timing(filmed / "metrics.jsonl") == without_timing(plain / "metrics.jsonl")
    first_seed = make_config(*TINY_TRAINED).eval_seed  # evaluation episode 0's reset seed
    assert sorted(path.name for path in (filmed / "videos").glob("*.mp4")) == [
        f"step{step}_seed{first_seed}.mp4" for step in (0, 300, 600)
    ]
    assert not (plain / "videos").exists()
    (wandb_file,) = find_run_files(filmed)
    media = list(wandb_file.parent.glob("files/media/videos/**/*.mp4"))
    assert len(media) == 3
    logged = [row for row in read_run(wandb_file).history if any(key.startswith("eval/video") for key in row)]
    assert [row["env_step"] for row in logged] == [0, 300, 600]


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
    assert "2 complete, 0 running, 0 stopped, 0 stale, 0 failed, 0 not started" in capsys.readouterr().out
    assert exit_code(sweep_main, ["status", str(process / "seed_1")]) == 0  # a single run dir
    assert "steps: 600/600 (100.0%)" in capsys.readouterr().out
    assert exit_code(sweep_main, ["status", str(tmp_path)]) == 0  # a folder of runs, as td3x-report takes
    assert "2 complete, 0 running, 0 stopped, 0 stale, 0 failed, 0 not started" in capsys.readouterr().out
