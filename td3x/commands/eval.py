"""``td3x-eval``: evaluate a trained run's checkpoint, record videos of it, export its actor to ONNX.

    td3x-eval RUN [--episodes N] [--seed S] [--device D] [--video [--video-episodes K]] [--export]

RUN is a run dir (its ``checkpoint.pt`` is used) or a checkpoint file. The agent is rebuilt from the
config stored in the checkpoint, and the evaluation follows the training protocol: with the defaults
(the run's ``run.eval_episodes`` and eval seed, its ``run.num_threads``, same machine) the final
checkpoint scores exactly the last row of the run's ``eval.csv``. Results go to
``eval_step<step>_seed<seed>_n<episodes>.json`` beside the checkpoint (``..._cpu.json`` on another device than the
run's own); training files are never touched.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from td3x import __version__
from td3x.algo.envs import make_env
from td3x.algo.evaluation_episodes import EvalResult
from td3x.commands.common import (
    HelpFormatter,
    OneLineParser,
    Refused,
    add_version_flag,
    int_at_least,
    quiet_on_closed_pipe,
    user_path,
)
from td3x.config.enums import Device
from td3x.host import numerics
from td3x.host.numerics import NumericsError
from td3x.rundir import checkpoint
from td3x.rundir.export import (
    ONNX_FILE,
    ExportError,
    check_export_support,
    deployed_policy,
    export_checked,
    sample_observations,
)
from td3x.rundir.layout import write_json_atomic
from td3x.rundir.trained_run import EVAL_COMMAND, RunError, TrainedRun, device_problem, evaluate_run, load_run
from td3x.training.loggers import recorded_run_kwargs
from td3x.training.video import (
    VIDEO_DIR,
    RecordedEpisode,
    VideoError,
    check_video_support,
    configure_headless_rendering,
    log_to_run,
    record_episodes,
    video_path,
)

PROG = EVAL_COMMAND
CHECK_OBSERVATIONS = 256  # observations on which the ONNX file is checked against torch
# --episodes at most: the episodes run side by side, each in an env of its own (about 1 MB per MuJoCo env), so memory
# grows with N; a thousand is a training seed's own block of start states (td3x.config.schema.EVAL_SEED_STRIDE)
MAX_EPISODES = 1000
VIDEO_EPISODES = 1  # --video-episodes when --video is given alone
WANDB_MODE = "offline"  # --wandb-mode when --video is given alone
VIDEO_OPTIONS = {"video_episodes": "--video-episodes", "wandb_mode": "--wandb-mode"}  # only --video reads them


def evaluation_record(run: TrainedRun, result: EvalResult, first_seed: int, seconds: float) -> dict[str, Any]:
    """What ``eval_*.json`` holds: the protocol, each episode, the mean and population std (as ``eval.csv``)."""
    return {
        "checkpoint": str(run.checkpoint_path),
        "step": run.step,
        "env_id": run.config.env.id,
        "first_seed": first_seed,
        "episodes": len(result.returns),
        "return_mean": float(result.returns.mean()),
        "return_std": float(result.returns.std()),
        "returns": [float(value) for value in result.returns],
        "lengths": [int(value) for value in result.lengths],
        "length_mean": float(result.lengths.mean()),
        "num_threads": run.config.run.num_threads,
        "device": str(run.agent.device),
        "eval_time_s": seconds,
        "td3x_version": __version__,
    }


def print_evaluation(record: dict[str, Any]) -> None:
    print(
        f"{record['env_id']} at env step {record['step']}: return {record['return_mean']:.2f} ± "
        f"{record['return_std']:.2f} over {record['episodes']} episodes (mean length {record['length_mean']:.1f})"
    )
    for i, (value, length) in enumerate(zip(record["returns"], record["lengths"], strict=True)):
        print(f"  episode {i} (seed {record['first_seed'] + i}): return {value:.2f}, length {length}")


def episodes_count(text: str) -> int:
    """``--episodes``' type: an integer in [1, MAX_EPISODES]; argparse names the option in its one-line refusal."""
    value = int_at_least(1)(text)
    if value > MAX_EPISODES:
        raise argparse.ArgumentTypeError(
            f"must be at most {MAX_EPISODES}, got {text!r}: the episodes run side by side, one env each (about 1 MB "
            f"per MuJoCo env); for more, evaluate again from a --seed {MAX_EPISODES} higher"
        )
    return value


def option_problems(args: argparse.Namespace) -> list[str]:
    """What the options cannot mean together, one line each, found before the run is loaded: an option given
    without the option it only works with (it would be silently ignored), more episodes recorded than evaluated,
    a device this machine lacks."""
    problems = []
    if args.video:
        if args.episodes is not None:
            problems += recorded_problems(args.video_episodes or VIDEO_EPISODES, args.episodes, "--episodes {}")
    else:
        problems += [
            f"{flag} {getattr(args, name)} has no effect without --video: add --video, or drop {flag}"
            for name, flag in VIDEO_OPTIONS.items()
            if getattr(args, name) is not None
        ]
    device = None if args.device is None else device_problem(args.device, f"--device {args.device}")
    return problems if device is None else [*problems, device]


def recorded_problems(video_episodes: int, episodes: int, evaluated: str) -> list[str]:
    """``--video-episodes`` more than the episodes evaluated, in one line: a video is one of the evaluation's
    episodes (episode i from reset seed S + i), so there is none to record past the last.

    Args:
        video_episodes: the episodes to record.
        episodes: the episodes evaluated.
        evaluated: what set ``episodes``, a format string of it: ``--episodes {}``, or the run's
            ``run.eval_episodes``.
    """
    if video_episodes <= episodes:
        return []
    return [
        f"--video-episodes {video_episodes} is more than {evaluated.format(episodes)}: --video records the "
        f"evaluation's own episodes; give --video-episodes at most {episodes}, or --episodes at least {video_episodes}"
    ]


def output_problems(run: TrainedRun, result: Path, video_seeds: range | None, export: bool) -> list[str]:
    """Why td3x-eval could not write its outputs, one line each, found before the evaluation runs (a failed write
    would otherwise throw the episodes away): a run dir it cannot write in, a folder where a file goes, a file where
    the videos' folder goes.

    Args:
        run: the loaded run; everything is written in its run dir.
        result: the ``eval_*.json`` file.
        video_seeds: the reset seeds of the episodes to record (``--video``), or None.
        export: whether ``policy.onnx`` is written (``--export``).
    """
    if not os.access(run.run_dir, os.W_OK | os.X_OK):  # a read-only disk counts, for root too
        return [
            f"{run.run_dir} is not writable here (a read-only disk or no write permission): td3x-eval writes its "
            "results beside the checkpoint; copy the run to a dir you can write"
        ]
    problems, files = [], [result]
    if video_seeds is not None:
        videos = run.run_dir / VIDEO_DIR
        if videos.exists() and not videos.is_dir():
            problems.append(f"{videos} is a file, where --video makes the folder of its MP4 files: move it away")
        elif videos.is_dir() and not os.access(videos, os.W_OK | os.X_OK):
            problems.append(f"{videos} is not writable here: --video writes its MP4 files in it")
        else:
            paths = [video_path(videos, run.step, seed) for seed in video_seeds]
            files += paths
            # a video is written in place (the others are renamed into place): an existing one must be writable
            problems += [f"{path} is not writable here: --video rewrites it" for path in paths if _read_only(path)]
    if export:
        files.append(run.run_dir / ONNX_FILE)
    problems += [f"{path} is a folder, where td3x-eval writes a file: move it away" for path in files if path.is_dir()]
    return problems


def _read_only(path: Path) -> bool:
    return path.is_file() and not os.access(path, os.W_OK)


def record_videos(run: TrainedRun, episodes: int, first_seed: int, wandb_mode: str) -> list[RecordedEpisode]:
    """Record evaluation episodes 0..episodes-1 to ``<run dir>/videos/`` and add them to the run's W&B run."""
    videos = record_episodes(
        run.agent.seed_policy(), run.config.env, run.run_dir / VIDEO_DIR, run.step, episodes, first_seed
    )
    for video in videos:
        print(f"video: {video.path} (seed {video.seed}, return {video.episode_return:.2f}, {video.length + 1} frames)")
    if run.wandb_run_id is None or wandb_mode == "disabled":
        print("wandb: not logged (the run has no W&B run)" if run.wandb_run_id is None else "wandb: disabled")
        return videos
    identity = recorded_run_kwargs(run.run_dir, run.config, run.wandb_run_id)
    if log_to_run(run.run_dir, identity, wandb_mode, videos, run.step):
        print(f"wandb: {len(videos)} video(s) logged to run {run.wandb_run_id} ({wandb_mode}) at env step {run.step}")
    return videos


def export_run(run: TrainedRun) -> Path:
    """Write ``policy.onnx`` beside the checkpoint and check it against the torch policy with onnxruntime."""
    env = make_env(run.config.env)
    try:
        policy = deployed_policy(run.agent, env)
        observations = sample_observations(env, CHECK_OBSERVATIONS, seed=run.config.seed)
    finally:
        env.close()
    path = run.run_dir / ONNX_FILE
    metadata = {
        "env_id": run.config.env.id,
        "step": run.step,
        "action_low": policy.low.tolist(),
        "action_high": policy.high.tolist(),
        "normalize_obs": run.config.env.normalize_obs,
        "td3x_version": __version__,
    }
    error = export_checked(policy, path, metadata, observations)
    print(f"onnx: {path} (max |onnxruntime - torch| = {error:.2g} on {len(observations)} observations)")
    return path


# ---------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        description="Evaluate a trained run's checkpoint as training did, record videos of it, export its actor.",
        formatter_class=HelpFormatter,
    )
    add_version_flag(parser)
    parser.add_argument(
        "run",
        type=user_path,
        help="a run dir (its checkpoint.pt), a seed_<k> dir of a K-seeds run, or a checkpoint file",
    )
    parser.add_argument(
        "--episodes",
        type=episodes_count,
        metavar="N",
        help=f"evaluation episodes, at most {MAX_EPISODES}: they run side by side, one env each (about 1 MB per MuJoCo "
        f"env); for more, evaluate again from a --seed {MAX_EPISODES} higher (default: the run's run.eval_episodes)",
    )
    parser.add_argument(
        "--seed", type=int_at_least(0), metavar="S", help="reset seed of episode 0 (default: the run's eval seed)"
    )
    parser.add_argument(
        "--device",
        choices=[device.value for device in Device],
        help="where the agent acts: auto (cuda where torch sees a CUDA device, else cpu), cpu or cuda; cpu evaluates "
        "a run trained with run.device=cuda on a machine without one (default: the run's run.device, which "
        "reproduces the run's eval.csv)",
    )
    parser.add_argument("--video", action="store_true", help="record evaluation episodes to <run>/videos/*.mp4")
    # None when not given: refused without --video, which alone reads them
    parser.add_argument(
        "--video-episodes",
        type=int_at_least(1),
        metavar="K",
        help=f"episodes to record, with --video: the first K of the evaluation's episodes, so at most --episodes "
        f"(default: {VIDEO_EPISODES})",
    )
    parser.add_argument(
        "--wandb-mode",
        choices=("offline", "online", "disabled"),
        help=f"how videos reach the run's W&B run, with --video (default: {WANDB_MODE}; offline: `wandb sync` "
        "uploads them later)",
    )
    parser.add_argument("--export", action="store_true", help=f"write the actor to <run>/{ONNX_FILE} (onnxruntime)")
    return parser


def run_command(args: argparse.Namespace) -> None:
    """Evaluate, then record and export as asked; raises the errors that ``main`` prints.

    Everything that can be checked is checked before the evaluation, not after it: the options, what videos and
    export need, and every path written.
    """
    problems = option_problems(args)
    if problems:
        raise Refused(problems)
    if args.export:
        check_export_support()
    run = load_run(args.run, args.device)
    episodes = args.episodes or run.config.run.eval_episodes
    first_seed = run.config.eval_seed if args.seed is None else args.seed
    video_episodes = args.video_episodes or VIDEO_EPISODES
    if args.video and args.episodes is None:  # the run's own number of episodes, known once it is loaded
        evaluated = "the run's run.eval_episodes={}, evaluated without --episodes"
        problems = recorded_problems(video_episodes, episodes, evaluated)
        if problems:
            raise Refused(problems)
    # on another device than the run's own the returns may differ in their last bits: a file of its own, never over
    # the run's own device's
    device = f"_{run.agent.device.type}" if run.agent.device.type != run.trained_on else ""
    path = run.run_dir / f"eval_step{run.step}_seed{first_seed}_n{episodes}{device}.json"
    video_seeds = range(first_seed, first_seed + video_episodes) if args.video else None
    problems = output_problems(run, path, video_seeds, args.export)
    if problems:
        raise Refused(problems)
    if args.video:
        check_video_support(run.config.env)
    started = time.perf_counter()
    result = evaluate_run(run, episodes, first_seed)
    record = evaluation_record(run, result, first_seed, time.perf_counter() - started)
    print_evaluation(record)
    write_json_atomic(path, record)
    print(f"wrote {path}")
    if args.video:
        record_videos(run, video_episodes, first_seed, args.wandb_mode or WANDB_MODE)
    if args.export:
        export_run(run)


@quiet_on_closed_pipe
def main(argv: Sequence[str] | None = None) -> int:
    """Console script ``td3x-eval``; returns the exit code (2: bad input; 1: no video, export or file possible)."""
    args = build_parser().parse_args(argv)
    configure_headless_rendering()  # before anything imports mujoco, which picks its GL context at import
    numerics.allow_restart()  # a portable run's policy is evaluated in a process restarted pinned (td3x.host.numerics)
    try:
        run_command(args)
    except (Refused, RunError, checkpoint.CheckpointError, NumericsError, VideoError, ExportError, OSError) as error:
        if isinstance(error, NumericsError):
            numerics.restart_if_pins_missing(error)  # before anything was written
        problems = error.problems if isinstance(error, Refused) else [str(error)]
        for problem in problems:
            message = " ".join(problem.split())  # one line, whatever the underlying library wrote
            print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2 if isinstance(error, Refused | RunError | checkpoint.CheckpointError | NumericsError) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
