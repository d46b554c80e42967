"""Videos of evaluation episodes: headless OpenGL setup, MP4 recording, and logging to the run's W&B.

A recorded episode is an episode of the evaluation protocol: episode i starts from
``reset(seed=first_seed + i)``, so the video of episode 0 shows the episode whose return ``eval.csv``
lists as ``return_0`` (rendering never changes the physics). Frames stream to ffmpeg one by one
(1000 frames of 480x480 would be 700 MB in memory).

MuJoCo draws offscreen through OpenGL. On a machine without a display, td3x selects OSMesa (software
rendering: Debian's ``libosmesa6``, about 80-130 ms a 480x480 frame on a CPU) when it is installed
and ``MUJOCO_GL`` is unset; with a GPU driver, ``MUJOCO_GL=egl`` renders on the GPU instead.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import dataclasses
import importlib.util
import logging
import os
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from td3x.algo.envs import make_env
from td3x.algo.evaluation_episodes import evaluate
from td3x.algo.function_types import Policy
from td3x.config.extras import install_command
from td3x.config.schema import EnvConfig

log = logging.getLogger(__name__)

VIDEO_DIR = "videos"
WANDB_KEY = "eval/video"
GL_HINT = (
    "on a machine without a display, MuJoCo renders with OSMesa: `apt-get install libosmesa6` "
    "(td3x then sets MUJOCO_GL=osmesa), or set MUJOCO_GL=egl where a GPU driver provides EGL"
)
FFMPEG_HINT = f"MP4 writing needs imageio-ffmpeg: {install_command('video')}"
DEFAULT_FPS = 30  # for envs whose metadata has no render_fps
# the shared library each offscreen backend loads, in the order td3x tries them
GL_LIBRARIES = {"osmesa": "OSMesa", "egl": "EGL"}


class VideoError(RuntimeError):
    """No video: no working OpenGL backend, an env that cannot render, or no MP4 writer."""


@dataclass(frozen=True)
class RecordedEpisode:
    """One evaluation episode written to an MP4 file."""

    path: Path
    seed: int  # the episode's reset seed
    episode_return: float
    length: int  # env steps; the video has length + 1 frames: the reset state, then one per step
    fps: float


def _has_display(environ: Mapping[str, str]) -> bool:
    return bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))


def _load_problem(library: str) -> str | None:
    """Why the shared library ``lib<library>`` does not load, or None when it does."""
    path = ctypes.util.find_library(library)
    if path is None:
        return f"lib{library} not found"
    try:
        ctypes.CDLL(path)
    except OSError as error:
        return str(error)
    return None


def configure_headless_rendering(environ: MutableMapping[str, str] = os.environ) -> str | None:
    """Where no display exists, choose MuJoCo's offscreen backend and SDL's dummy video driver.

    Call it before the first ``import mujoco``, which picks its GL context from ``MUJOCO_GL`` then. Left
    unset, MuJoCo and gymnasium start with GLFW, which needs a display and fails half-way without one.
    OSMesa (the software renderer, verified on these machines) is chosen when libOSMesa loads, else EGL
    when libEGL loads; a backend whose library is missing is never set, since ``import mujoco`` itself
    fails then, and training with it. Values the user set are always kept.

    Args:
        environ: the environment to read and update (the process's own by default).

    Returns:
        The MuJoCo backend in force (``MUJOCO_GL``), or None.
    """
    if _has_display(environ):
        return environ.get("MUJOCO_GL")
    environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame (classic-control frames) probes a display otherwise
    if "MUJOCO_GL" not in environ:
        for backend, library in GL_LIBRARIES.items():
            if _load_problem(library) is None:
                environ["MUJOCO_GL"] = backend
                # PyOpenGL reads this once, at its first import, and must agree with MUJOCO_GL
                environ.setdefault("PYOPENGL_PLATFORM", backend)
                break
    return environ.get("MUJOCO_GL")


def gl_problem(environ: Mapping[str, str] = os.environ) -> str | None:
    """Why MuJoCo cannot render offscreen here, or None when its GL backend's library loads.

    Checked before the first frame: a renderer that fails half-built inside gymnasium prints errors
    from its ``__del__`` until the process ends.
    """
    backend = environ.get("MUJOCO_GL")
    if backend is None:
        return None if _has_display(environ) else f"no offscreen OpenGL library (libOSMesa, libEGL) loads; {GL_HINT}"
    library = GL_LIBRARIES.get(backend)
    problem = None if library is None else _load_problem(library)
    return None if problem is None else f"MUJOCO_GL={backend} cannot load lib{library} ({problem}); {GL_HINT}"


def check_mp4_writer() -> None:
    """Raise :class:`VideoError` naming the package to install when MP4 files cannot be written."""
    if importlib.util.find_spec("imageio_ffmpeg") is None:
        raise VideoError(FFMPEG_HINT)


def check_video_support(env_config: EnvConfig) -> None:
    """Raise :class:`VideoError` saying what to install when videos of this env cannot be made here: a first frame
    is drawn, since what draws it (pygame for classic control, GL for MuJoCo) is loaded only then."""
    check_mp4_writer()
    env = make_render_env(env_config)
    try:
        env.reset(seed=0)
        render_frame(env)
    finally:
        env.close()


def make_render_env(env_config: EnvConfig) -> gym.Env:
    """The evaluation env (same id, kwargs and action rescaling) with ``rgb_array`` rendering."""
    configure_headless_rendering()
    render_config = dataclasses.replace(env_config, kwargs={**env_config.kwargs, "render_mode": "rgb_array"})
    try:
        env = make_env(render_config)
    except Exception as error:  # an env that takes no render_mode, or a missing render dependency
        raise VideoError(f"cannot make {env_config.id} with render_mode='rgb_array': {error}") from error
    problem = gl_problem() if hasattr(env.unwrapped, "mujoco_renderer") else None  # MuJoCo envs draw with GL
    if problem is not None:
        env.close()
        raise VideoError(problem)
    return env


def render_frame(env: gym.Env) -> np.ndarray:
    """The env's current frame (H, W, 3) as uint8, or a :class:`VideoError` saying what to install."""
    try:
        frame = env.render()
    except gym.error.DependencyNotInstalled as error:  # pygame, which draws classic control, is loaded here
        raise VideoError(
            f"cannot render {env.spec.id if env.spec else 'the env'}: {error}; td3x's video extra installs what its "
            f"envs draw with: {install_command('video')}"
        ) from error
    except Exception as error:  # GL context creation fails here, at the first frame
        backend = os.environ.get("MUJOCO_GL", "unset")
        raise VideoError(
            f"cannot render {env.spec.id if env.spec else 'the env'} (MUJOCO_GL={backend}; "
            f"{type(error).__name__}: {error}); {GL_HINT}"
        ) from error
    if not isinstance(frame, np.ndarray) or frame.ndim != 3:
        raise VideoError(f"render() gave {type(frame).__name__}, not an RGB frame")
    return frame


def record_episode(policy: Policy, env: gym.Env, path: Path, seed: int) -> RecordedEpisode:
    """Run one evaluation episode from ``reset(seed=seed)`` and write its frames to ``path`` (MP4).

    Args:
        policy: observation -> action in [-1, 1].
        env: a render env from :func:`make_render_env`.
        path: the MP4 file to write (its folder must exist).
        seed: the episode's reset seed.
    """
    import imageio.v2 as imageio

    fps = float(env.metadata.get("render_fps") or DEFAULT_FPS)
    # libx264's yuv420p needs even sides; a block of 2 keeps every even frame size as it is
    # (imageio's default 16 would rescale e.g. Pendulum's 500x500 frames)
    try:
        writer: Any = imageio.get_writer(path, format="FFMPEG", fps=fps, macro_block_size=2)
        with writer:
            result = evaluate(policy, [env], seed, on_step=lambda: writer.append_data(render_frame(env)))
    except BaseException:
        path.unlink(missing_ok=True)  # a truncated video must not pass for a result
        raise
    return RecordedEpisode(path, seed, float(result.returns[0]), int(result.lengths[0]), fps)


def video_path(directory: Path, step: int, seed: int) -> Path:
    """The MP4 file of the episode from ``reset(seed=seed)`` of the policy at env step ``step``: the same step and
    seed always give the same episode, so the name identifies the video."""
    return directory / f"step{step}_seed{seed}.mp4"


def record_episodes(
    policy: Policy, env_config: EnvConfig, directory: Path, step: int, episodes: int, first_seed: int
) -> list[RecordedEpisode]:
    """Record evaluation episodes 0..episodes-1 to ``directory``, each to its :func:`video_path`.

    Args:
        policy: observation -> action in [-1, 1].
        env_config: the run's env config.
        directory: where the MP4 files go (created if missing).
        step: the env step of the policy, for the file names.
        episodes: how many episodes to record.
        first_seed: the reset seed of episode 0 (the run's eval seed).

    Raises:
        VideoError: no MP4 writer, no OpenGL backend, or an env that cannot render.
    """
    check_mp4_writer()
    directory.mkdir(parents=True, exist_ok=True)
    env = make_render_env(env_config)
    try:  # closed before exit: a live OSMesa context prints an error from __del__ at interpreter shutdown
        return [
            record_episode(policy, env, video_path(directory, step, seed), seed)
            for seed in range(first_seed, first_seed + episodes)
        ]
    finally:
        env.close()


def wandb_media(videos: Sequence[RecordedEpisode]) -> dict[str, Any]:
    """``{"eval/video": [wandb.Video, ...]}``, each captioned with its seed and return."""
    import wandb

    return {
        WANDB_KEY: [
            wandb.Video(str(video.path), caption=f"seed {video.seed}: return {video.episode_return:.1f}", format="mp4")
            for video in videos
        ]
    }


def log_to_run(
    run_dir: Path, identity: dict[str, Any], mode: str, videos: Sequence[RecordedEpisode], step: int
) -> bool:
    """Add ``videos`` at env step ``step`` to the run's W&B run, resumed by id in ``run_dir/wandb``.

    A W&B failure warns and returns False: the MP4 files are already written.

    Args:
        run_dir: the run dir (its ``wandb/`` holds the run).
        identity: the run's W&B id, project, group, name, tags and config, as training gave them
            (:func:`td3x.training.loggers.recorded_run_kwargs`): offline, the new segment then reads as the same run.
        mode: ``offline`` (a new offline-run dir with the same id; ``wandb sync`` adds it to the run) or ``online``.
        videos: the recorded episodes.
        step: the env step of the policy in the videos.
    """
    try:
        import wandb

        run = wandb.init(
            dir=str(run_dir),
            mode=mode,  # type: ignore[arg-type]  # one of the CLI's choices
            resume="allow",
            settings=wandb.Settings(init_timeout=120, quiet=True),
            **identity,
        )
        run.define_metric(WANDB_KEY, step_metric="env_step")
        run.log({**wandb_media(videos), "env_step": step})
        run.finish()
    except Exception as error:
        log.warning("wandb: videos not logged (%s: %s); the MP4 files are in the run dir", type(error).__name__, error)
        return False
    return True


class TrainingVideos:
    """During training, records evaluation episode 0 every ``every`` env steps (step 0 included).

    Videos go to ``<run_dir>/videos/`` and through ``wandb_log`` to the run's W&B run. A run never
    dies for a video: the first failure (no OpenGL backend, no ffmpeg, ...) warns once and turns videos off.
    Recording draws on no random generator of the run, so the run's numbers are the same with or without.

    Args:
        env_config: the run's env config.
        run_dir: the run dir.
        first_seed: the run's eval seed (episode 0 of every evaluation).
        every: env steps between videos (``logging.video_every``); None records none.
        wandb_log: ``RunLoggers.wandb.log`` (metrics dict, env step), guarded by the caller; None for no W&B.
    """

    def __init__(
        self,
        env_config: EnvConfig,
        run_dir: Path,
        first_seed: int,
        every: int | None,
        wandb_log: Callable[[dict[str, Any], int], None] | None = None,
    ) -> None:
        self.env_config, self.directory, self.first_seed = env_config, run_dir / VIDEO_DIR, first_seed
        self.every, self.wandb_log = every, wandb_log
        if every is not None:
            configure_headless_rendering()

    def due(self, step: int) -> bool:
        """Whether ``step`` is a multiple of ``every`` (never once videos are off, or after one failed)."""
        return self.every is not None and step % self.every == 0

    def maybe_record(self, policy: Policy, step: int) -> RecordedEpisode | None:
        """Record one episode when the step is :meth:`due`; returns it, or None."""
        if not self.due(step):
            return None
        try:  # whatever fails (GL, ffmpeg, a full disk, W&B's media), a video is never worth the run
            video = record_episodes(policy, self.env_config, self.directory, step, 1, self.first_seed)[0]
            media = None if self.wandb_log is None else wandb_media([video])
        except Exception as error:
            log.warning(
                "video at env step %d failed (%s: %s); no more videos in this run", step, type(error).__name__, error
            )
            self.every = None
            return None
        if self.wandb_log is not None and media is not None:
            self.wandb_log(media, step)
        return video
