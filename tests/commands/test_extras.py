"""A command of the README or the docs that needs one of td3x's extras, run where the extra is not installed: one
line naming the extra's install command (a launcher plugin, what videos are drawn and written with, ONNX), exit 2
for a config, 1 for td3x-eval's output, and nothing written. The packages are made absent in a subprocess
(helpers.not_installed), not by replacing td3x's code."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest
from helpers.not_installed import run_without
from helpers.runs import TINY_COMMAND_LINE
from hydra.core.global_hydra import GlobalHydra

import td3x
from td3x.config.extras import PLUGIN_OPTIONS
from td3x.sweeps.multirun import composing

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def installed_by(extra: str | None) -> list[str]:
    """The requirement lines of one of td3x's extras (None: td3x's own dependencies)."""
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    return project["dependencies"] if extra is None else project["optional-dependencies"][extra]


def test_each_plugin_option_is_its_plugins_and_its_extra_installs_it() -> None:
    with composing():
        loader = GlobalHydra.instance().config_loader()
        installed = {f"hydra/launcher/{name}" for name in loader.get_group_options("hydra/launcher")}
    assert set(PLUGIN_OPTIONS) <= installed  # the test extra installs every extra
    for option, (plugin, extra) in PLUGIN_OPTIONS.items():
        assert any(line.startswith(plugin) for line in installed_by(extra)), (option, extra)


@pytest.mark.parametrize(
    ("command", "plugin", "line"),
    [
        (
            ("td3x.commands.train", "+experiment=table2_slurm", "hydra.launcher.partition=cpu"),  # the README's
            "hydra_submitit_launcher",
            "config error: hydra/launcher=submitit_slurm comes with Hydra's hydra-submitit-launcher plugin, not "
            'installed here (td3x\'s launchers extra): pip install -e ".[launchers]"; installed options of '
            "hydra/launcher: basic, joblib, ray, ray_aws",
        ),
        (
            ("td3x.commands.sweep", "list", "+experiment=table2_slurm"),  # docs: Sweeps
            "hydra_submitit_launcher",
            "td3x-sweep: hydra/launcher=submitit_slurm comes with Hydra's hydra-submitit-launcher plugin, not "
            'installed here (td3x\'s launchers extra): pip install -e ".[launchers]"; installed options of '
            "hydra/launcher: basic, joblib, ray, ray_aws",
        ),
        (
            ("td3x.commands.train", "-m", "env=hopper", "ablation=none,no_twin", "seed=0,1", "hydra/launcher=ray"),
            "hydra_ray_launcher",
            "config error: hydra/launcher=ray comes with Hydra's hydra-ray-launcher plugin, not installed here "
            '(td3x\'s ray extra): pip install -e ".[ray]"; installed options of hydra/launcher: basic, joblib, '
            "submitit_local, submitit_slurm",
        ),
    ],
)
def test_a_launcher_without_its_plugin_names_the_extra(
    command: tuple[str, ...], plugin: str, line: str, tmp_path: Path
) -> None:
    """Before: ``In 'hydra/config': Could not find 'hydra/launcher/submitit_slurm' Available options in
    'hydra/launcher': basic joblib``, no word of the extra."""
    result = run_without(*command, cwd=tmp_path, plugins=[plugin])
    assert (result.returncode, result.stderr.splitlines()) == (2, [line])
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Pendulum run, trained once; each test evaluates a copy of it."""
    run_dir = tmp_path_factory.mktemp("extras") / "run"
    config = td3x.compose(list(TINY_COMMAND_LINE))
    assert td3x.train(config, run_dir)["steps"] == 300
    return run_dir


@pytest.mark.parametrize(
    ("option", "modules", "line"),
    [
        (  # Pendulum's frames are drawn by pygame (gymnasium's classic-control extra, in td3x's video extra)
            "--video",
            ["pygame"],
            "td3x-eval: error: cannot render Pendulum-v1: pygame is not installed, run `pip install "
            '"gymnasium[classic_control]"`; td3x\'s video extra installs what its envs draw with: '
            'pip install -e ".[video]"',
        ),
        (
            "--video",
            ["imageio_ffmpeg"],
            'td3x-eval: error: MP4 writing needs imageio-ffmpeg: pip install -e ".[video]"',
        ),
        ("--export", ["onnx"], 'td3x-eval: error: ONNX export needs onnx: pip install -e ".[export]"'),
    ],
)
def test_videos_and_export_without_their_packages_name_the_extra_before_any_episode(
    option: str, modules: list[str], line: str, trained: Path, tmp_path: Path
) -> None:
    """Before: ``pip install 'td3x[video]'`` (td3x is installed from its checkout), and a missing pygame found only
    at the first frame, after the evaluation had written its result and made videos/."""
    run_dir = Path(shutil.copytree(trained, tmp_path / "run"))
    before = sorted(run_dir.rglob("*"))
    result = run_without("td3x.commands.eval", run_dir, option, cwd=tmp_path, modules=modules)
    assert (result.returncode, result.stderr.splitlines()) == (1, [line])
    assert sorted(run_dir.rglob("*")) == before
