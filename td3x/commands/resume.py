"""``td3x-resume RUN_DIR [KEY=VALUE ...]``: relaunch a run in place from the config it stored, without Hydra.

The same decisions as ``td3x-train`` (:mod:`td3x.rundir.resume_decision`: resume, extend, nothing to do, or refuse), no
overrides to retype and no run-dir path to quote. Only keys that never change what is learned may be given
(:data:`RESUME_KEYS`), and the device it goes on on (a run trained on a GPU goes on on a CPU-only machine).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from td3x.commands.common import (
    HelpFormatter,
    OneLineParser,
    add_version_flag,
    exit_with,
    log_to,
    quiet_on_closed_pipe,
    resume_command,
    user_path,
)
from td3x.commands.train_and_report import run_and_report
from td3x.config.enums import ResumeMode
from td3x.config.hydra import from_saved
from td3x.config.inert import RESUME_INERT, RESUME_MOVABLE, is_inert
from td3x.config.overrides import override_problems
from td3x.config.schema import ConfigError, TrainConfig
from td3x.host import numerics
from td3x.rundir.layout import (
    CONFIG_FILE,
    HYDRA_DIR,
    RUN_LOG,
    RunFileError,
    read_yaml_mapping,
    run_configs,
    seed_dir_name,
)
from td3x.rundir.lock import ResumeError
from td3x.rundir.state import stored_config_problems

# what td3x-resume may change: the keys that never change what is learned, but run.resume (continuing is what is
# asked: a run started with run.resume=never is resumed too), and the device it goes on on
RESUME_KEYS = (*(key for key in RESUME_INERT if key != "run.resume"), *RESUME_MOVABLE)


def stored_run(run_dir: Path) -> tuple[Path, dict[str, Any]]:
    """The dir to train in and its stored config (``config.yaml``, with ``choices``): a run dir or a sweep job
    as it is; a K-seeds process dir through its first seed's config; a ``seed_<k>`` dir of such a process
    through its process dir, which holds the process's checkpoint.

    Raises:
        ResumeError: no td3x run there.
        RunFileError: its ``config.yaml`` is corrupt or not a mapping.
    """
    if not run_dir.is_dir():
        kind = "is a file" if run_dir.exists() else "does not exist"
        raise ResumeError(
            f"{run_dir} {kind}: td3x-resume takes a run dir (the one holding {CONFIG_FILE}, or seed_<k>/)"
        )
    if run_dir.name == HYDRA_DIR:  # its config.yaml is Hydra's copy: resuming "there" would train a new run in it
        raise ResumeError(
            f"{run_dir} is Hydra's record of how a run was composed, not a run dir: td3x-resume {run_dir.parent}"
        )
    configs = run_configs(run_dir)
    if not configs:
        raise ResumeError(f"{run_dir} holds no td3x run (no {CONFIG_FILE}, no seed_<k>/{CONFIG_FILE})")
    saved = read_yaml_mapping(configs[0])  # a K-seeds process's config is its first seed's
    run = saved.get("run")
    num_seeds = run.get("num_seeds", 1) if isinstance(run, dict) else 1
    seed = saved.get("seed")
    if isinstance(num_seeds, int) and num_seeds > 1 and isinstance(seed, int) and run_dir.name == seed_dir_name(seed):
        return stored_run(run_dir.parent)  # one seed of a K-seeds process: the process resumes as a whole
    return run_dir, saved


def resume_overrides(saved: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """``saved`` with ``KEY=VALUE`` overrides of :data:`RESUME_KEYS` applied; raises ResumeError naming any
    other key (it would change what is learned: train a new run instead), and ConfigError for a value of the wrong
    type, one line each as ``td3x-train`` words it."""
    for line in overrides:
        key = line.partition("=")[0]
        if "=" not in line or not is_inert(key, RESUME_KEYS):
            raise ResumeError(
                f"{line!r} is not allowed: td3x-resume takes KEY=VALUE for {', '.join(RESUME_KEYS)} only "
                "(other keys change what is learned: start a new run)"
            )
    problems = override_problems(overrides)  # each value against its key's type, named as the user's
    if problems:
        raise ConfigError(problems)
    merged = OmegaConf.merge(OmegaConf.create(saved), OmegaConf.from_dotlist(overrides))
    container = OmegaConf.to_container(merged)
    assert isinstance(container, dict)
    return {str(key): value for key, value in container.items()}


def missing_device_problem(run_dir: Path, config: TrainConfig, overrides: list[str]) -> str | None:
    """The run's stored ``run.device`` when this machine lacks it (a run trained on a GPU, resumed on a CPU-only
    machine), with the command that continues it here; None when it has it, or when the command line chose the
    device (td3x-train's check names the user's own value)."""
    if any(line.startswith("run.device=") for line in overrides) or config.run.device.available():
        return None
    return (
        f"{run_dir} was trained with run.device={config.run.device.value!r} and torch sees no CUDA device here: "
        f"resume it where one is, or go on on this machine's CPU (its numbers from there on are the CPU's, not an "
        f"uninterrupted run's): {resume_command(run_dir)} run.device=cpu"
    )


@quiet_on_closed_pipe
def main(argv: list[str] | None = None) -> None:
    """Console script ``td3x-resume RUN_DIR [KEY=VALUE ...]``: continue a run in place from its stored config."""
    parser = OneLineParser(
        prog="td3x-resume",
        takes_overrides=True,
        description="Continue a td3x run in place from its own stored config and last checkpoint: a run dir, a "
        "sweep job's dir (no quoting needed) or a K-seeds process dir. A finished run says so and exits 0.",
        formatter_class=HelpFormatter,
    )
    add_version_flag(parser)
    parser.add_argument("run_dir", type=user_path, help="the run's dir (the one holding config.yaml, or seed_<k>/)")
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help=f"changes that keep what is learned: {', '.join(RESUME_KEYS)}; a larger run.total_steps extends a "
        "run whose final checkpoint kept its buffer (run.keep_buffer=true); run.device=cpu goes on on the CPU (a run "
        "trained on a GPU, on a machine without one: its numbers from there on are the CPU's)",
    )
    args = parser.parse_args(argv)
    numerics.allow_restart()  # a portable run restarts pinned (td3x.host.numerics)
    try:
        run_dir, saved = stored_run(args.run_dir)
        choices = saved.get("choices") or {}
        problems = stored_config_problems(run_configs(run_dir)[0], saved)  # the file's, before the user's values
        if problems:
            raise ConfigError(problems)
        config = from_saved(resume_overrides(saved, args.overrides))  # the stored config passed: the user's values
        config.run.resume = ResumeMode.auto  # a run started with run.resume=never too: continuing is what is asked
        device_problem = missing_device_problem(run_dir, config, args.overrides)
        if device_problem is not None:
            raise ResumeError(device_problem)
    except (ResumeError, ConfigError, RunFileError) as error:
        exit_with("resume error", getattr(error, "problems", [str(error)]))
    log_to(run_dir / RUN_LOG)
    if run_and_report(config, run_dir, choices) is None:
        sys.exit(1)


if __name__ == "__main__":
    main()
