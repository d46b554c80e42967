"""run.numerics (td3x.numerics): portable mode gives the committed fingerprint's bits whatever instruction sets the
process is told to use from outside; a process that computed under one mode refuses the other; the setting is
recorded in provenance.json and left out of the resume hash while native.

The fingerprint (tests/data/portable_fingerprint.json) was made once, on the CPU it names; where this test fails on
another machine, the mode is mended, not the fingerprint.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.run_files import without_timing
from helpers.scripts import BIN, TINY

from td3x.analysis.compute import MIXED, capability_text
from td3x.analysis.runs import Run
from td3x.config import from_saved, to_container
from td3x.numerics import PORTABLE_CAPABILITY
from td3x.resume_plan import config_hash
from td3x.run_dir import EVAL_FILE, PROVENANCE_FILE

FINGERPRINT = Path(__file__).resolve().parent / "data" / "portable_fingerprint.json"
# a short Pendulum run whose updates go through MKL's sgemm and ATen's vectorised kernels (400 updates)
SHORT_RUN = ("run.total_steps=600", "run.eval_every=300", "env.random_steps=200", *TINY)
OUTSIDE_VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA")


def train_portable(run_dir: Path, **outside: str) -> dict[str, Any]:
    """td3x-train in portable mode, in its own process, with ``outside`` set in its environment (and the other
    variables that choose kernels unset); the eval.csv rows without timing columns, and the provenance."""
    env = {key: value for key, value in os.environ.items() if key not in OUTSIDE_VARIABLES} | outside
    command = [BIN / "td3x-train", "run.numerics=portable", *SHORT_RUN, f"hydra.run.dir={run_dir}"]
    finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr[-2000:]
    return {
        "eval": without_timing(run_dir / EVAL_FILE),
        "provenance": json.loads((run_dir / PROVENANCE_FILE).read_text()),
    }


@pytest.mark.slow
def test_portable_mode_gives_the_committed_fingerprint_whatever_instruction_sets_are_set_from_outside(
    tmp_path: Path,
) -> None:
    fingerprint = json.loads(FINGERPRINT.read_text())
    assert fingerprint["overrides"] == ["run.numerics=portable", *SHORT_RUN]  # the run the fingerprint is of
    plain = train_portable(tmp_path / "plain")
    assert plain["eval"] == fingerprint["eval"], f"portable bits differ from those made on {fingerprint['made_on']}"
    settings = plain["provenance"]["numerics"]
    assert settings["mode"] == "portable" and settings["MKL_CBWR"] == "COMPATIBLE"
    assert plain["provenance"]["cpu_capability"] == PORTABLE_CAPABILITY
    for name, outside in {
        "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
        "default": {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "MKL_CBWR": "AUTO"},
    }.items():
        assert train_portable(tmp_path / name, **outside)["eval"] == fingerprint["eval"], name


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_a_process_that_computed_first_or_under_the_other_mode_refuses_portable() -> None:
    computed_first = run_python(
        "import torch; torch.ones(2) + 1\n"
        "from td3x.config import Numerics; from td3x.numerics import apply; apply(Numerics.portable)"
    )
    assert "NumericsError" in computed_first.stderr and "runs AVX" in computed_first.stderr
    other_mode = run_python(
        "from td3x.config import Numerics; from td3x.numerics import apply, effective_settings\n"
        "apply(Numerics.portable); apply(Numerics.portable); print(effective_settings()['mode'])\n"
        "apply(Numerics.native)"
    )
    assert other_mode.stdout.strip() == "portable"  # the same mode twice is fine
    assert "run.numerics=native is not allowed here" in other_mode.stderr


@pytest.mark.slow
def test_td3x_train_refuses_a_mode_its_process_cannot_give_in_one_line(tmp_path: Path) -> None:
    """Under Hydra's basic launcher every job of a sweep shares one process: the second mode's job is refused."""
    command = [BIN / "td3x-train", "-m", "run.numerics=native,portable", "run.total_steps=5", "env.random_steps=5"]
    finished = subprocess.run(
        [*command, *TINY, f"hydra.sweep.dir={tmp_path}"], capture_output=True, text=True, timeout=300
    )
    assert "run.numerics=portable is not allowed here" in finished.stderr


def test_native_is_left_out_of_the_resume_hash_and_portable_is_not() -> None:
    default_config = to_container(from_saved({}))
    without_key = {**default_config, "run": {k: v for k, v in default_config["run"].items() if k != "numerics"}}
    assert config_hash(default_config) == config_hash(without_key)  # a run trained before the key resumes
    portable = {**default_config, "run": {**default_config["run"], "numerics": "portable"}}
    assert config_hash(portable) != config_hash(default_config)


def test_the_compute_table_marks_a_cell_of_native_and_portable_runs_mixed(tmp_path: Path) -> None:
    def run(numerics: dict[str, Any] | None) -> Run:
        provenance = {"cpu_capability": "AVX512", **({"numerics": numerics} if numerics else {})}
        return Run(tmp_path, {}, None, None, None, provenance)

    older, native, portable = run(None), run({"mode": "native"}), run({"mode": "portable"})
    assert capability_text((older, native)) == "AVX512"  # native numerics are what every earlier run had
    assert capability_text((portable, portable)) == "portable"
    assert capability_text((native, portable)) == f"{MIXED} AVX512, portable"
