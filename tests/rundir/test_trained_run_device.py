"""The device a trained run is loaded on (td3x.rundir.trained_run): one this machine lacks, named or stored in the
run, is refused in one line naming the devices it has, before torch fails on it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from helpers.scripts import exit_code, k_seed_run

from td3x.commands.eval import main
from td3x.config.enums import Device
from td3x.rundir import checkpoint
from td3x.rundir.layout import CHECKPOINT_FILE
from td3x.rundir.trained_run import RunError, load_run

__all__ = ["k_seed_run"]  # a fixture, imported so that this module's tests can use it

CUDA = torch.cuda.is_available()
HERE = "auto, cpu or cuda" if CUDA else "auto or cpu (cuda: torch sees no CUDA device here)"


@pytest.mark.parametrize(
    "device",
    [
        "GPU",
        "CPU",
        pytest.param("cuda", marks=pytest.mark.skipif(CUDA, reason="torch sees a CUDA device here")),
        pytest.param(Device.cuda, marks=pytest.mark.skipif(CUDA, reason="torch sees a CUDA device here")),
    ],
)
def test_a_device_this_machine_lacks_is_refused_naming_those_it_has(k_seed_run: Path, device: Device | str) -> None:
    named = device.value if isinstance(device, Device) else device
    with pytest.raises(RunError) as refused:
        load_run(k_seed_run / "seed_1", device)
    assert str(refused.value) == f"device={named!r} is not allowed: use {HERE}"


@pytest.mark.skipif(CUDA, reason="torch sees a CUDA device here: a run trained on one loads on it")
def test_a_run_trained_on_cuda_is_refused_where_torch_sees_none_and_loads_on_the_cpu(
    k_seed_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = Path(shutil.copytree(k_seed_run / "seed_1", tmp_path / "gpu_run"))
    parts = checkpoint.load(run_dir / CHECKPOINT_FILE)
    parts.pop("format_version")  # save adds it
    parts["config"]["run"]["device"] = "cuda"  # as a run trained on a GPU machine records it
    checkpoint.save(run_dir / CHECKPOINT_FILE, parts)
    assert exit_code(main, [str(run_dir)]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == (
        "",
        f"td3x-eval: error: {run_dir / CHECKPOINT_FILE} was trained with run.device='cuda' and torch sees no CUDA "
        f"device here: evaluate it where one is, or load it with td3x.load('{run_dir}', device='cpu')\n",
    )
    assert load_run(run_dir, "cpu").agent.device == torch.device("cpu")


@pytest.mark.skipif(not CUDA, reason="torch sees no CUDA device here")
def test_cuda_is_allowed_where_torch_sees_it(k_seed_run: Path) -> None:
    assert load_run(k_seed_run / "seed_1", "cuda").agent.device.type == "cuda"
