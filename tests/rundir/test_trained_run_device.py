"""The device a trained run is loaded on (td3x.rundir.trained_run): one this machine lacks, named or stored in the
run, is refused in one line naming the devices it has, before torch fails on it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from helpers.scripts import exit_code, k_seed_run

from td3x.commands.eval import main
from td3x.config.enums import Device
from td3x.rundir import checkpoint
from td3x.rundir.layout import CHECKPOINT_FILE, PROVENANCE_FILE
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


def trained_on_cuda(k_seed_run: Path, run_dir: Path, run_device: str = "cuda") -> Path:
    """A copy of a seed's run dir whose checkpoint says ``run.device=run_device`` and whose provenance.json says it
    trained on cuda, as a run trained on a GPU machine records it (the networks themselves were trained on the CPU:
    the CPU re-scores its eval.csv)."""
    shutil.copytree(k_seed_run / "seed_1", run_dir)
    parts = checkpoint.load(run_dir / CHECKPOINT_FILE)
    parts.pop("format_version")  # save adds it
    parts["config"]["run"]["device"] = run_device
    checkpoint.save(run_dir / CHECKPOINT_FILE, parts)
    provenance = json.loads((run_dir / PROVENANCE_FILE).read_text())
    assert provenance["device"] == "cpu"  # where the run really trained, recorded
    (run_dir / PROVENANCE_FILE).write_text(json.dumps(provenance | {"device": "cuda"}))
    return run_dir


@pytest.mark.skipif(CUDA, reason="torch sees a CUDA device here: a run trained on one loads on it")
def test_a_run_trained_on_cuda_is_refused_where_torch_sees_none_and_evaluates_on_the_cpu(
    k_seed_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = trained_on_cuda(k_seed_run, tmp_path / "gpu run")  # a space: the advice quotes the path
    assert exit_code(main, [str(run_dir)]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == (
        "",
        f"td3x-eval: error: {run_dir / CHECKPOINT_FILE} was trained with run.device='cuda' and torch sees no CUDA "
        f"device here: evaluate it where one is, or on the CPU: td3x-eval '{run_dir}' --device cpu "
        f"(td3x.load({str(run_dir)!r}, device='cpu') in Python)\n",
    )
    assert load_run(run_dir, "cpu").agent.device == torch.device("cpu")
    assert exit_code(main, [str(run_dir), "--device", "cpu"]) == 0  # the advice, followed
    assert not (run_dir / "eval_step600_seed1001000_n2.json").exists()  # the name of the run's own device's file
    record = json.loads((run_dir / "eval_step600_seed1001000_n2_cpu.json").read_text())  # seed 1's eval seed
    last = (run_dir / "eval.csv").read_text().splitlines()
    row = dict(zip(last[0].split(","), last[-1].split(","), strict=True))
    assert record["device"] == "cpu"
    assert record["returns"] == pytest.approx([float(row["return_0"]), float(row["return_1"])], rel=1e-6)


@pytest.mark.skipif(CUDA, reason="torch sees a CUDA device here: auto resolves to cuda")
def test_a_run_trained_with_device_auto_on_a_gpu_is_evaluated_here_into_a_file_of_its_own(
    k_seed_run: Path, tmp_path: Path
) -> None:
    """run.device=auto says nothing of where a run trained; its provenance.json does (before: auto resolved to cpu
    here, so the CPU's returns went into the file named as the run's own device's)."""
    run_dir = trained_on_cuda(k_seed_run, tmp_path / "auto_run", run_device="auto")
    assert exit_code(main, [str(run_dir)]) == 0  # auto: the CPU here, no refusal
    assert [path.name for path in run_dir.glob("eval_step*.json")] == ["eval_step600_seed1001000_n2_cpu.json"]
    provenance = json.loads((run_dir / PROVENANCE_FILE).read_text())
    (run_dir / PROVENANCE_FILE).write_text(
        json.dumps({key: value for key, value in provenance.items() if key != "device"})
    )
    assert exit_code(main, [str(run_dir)]) == 0  # an older td3x's provenance: run.device resolved here, as before
    assert (run_dir / "eval_step600_seed1001000_n2.json").is_file()


@pytest.mark.skipif(CUDA, reason="torch sees a CUDA device here")
def test_eval_device_cuda_is_refused_in_one_line_where_torch_sees_none(
    k_seed_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = trained_on_cuda(k_seed_run, tmp_path / "gpu_run")
    for given in (k_seed_run / "seed_1", run_dir):  # whatever the run's own run.device
        assert exit_code(main, [str(given), "--device", "cuda"]) == 2
        assert capsys.readouterr() == ("", f"td3x-eval: error: --device cuda is not allowed: use {HERE}\n")
    assert list(run_dir.glob("eval_step*.json")) == []


@pytest.mark.skipif(not CUDA, reason="torch sees no CUDA device here")
def test_cuda_is_allowed_where_torch_sees_it(k_seed_run: Path) -> None:
    assert load_run(k_seed_run / "seed_1", "cuda").agent.device.type == "cuda"
