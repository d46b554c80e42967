"""run.numerics (td3x.host.numerics): portable mode gives the committed fingerprint's bits whatever instruction sets the
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
from helpers.runs import TINY_SIZES
from helpers.scripts import BIN

from td3x.analysis.reading.runs import Run
from td3x.analysis.sections.compute import MIXED, capability_text
from td3x.config.hydra import from_saved, to_container
from td3x.host.numerics import PORTABLE_CAPABILITY, RECORDED_VARIABLES, RESTARTED_VARIABLE, startup_environment
from td3x.rundir.layout import EVAL_FILE, PROVENANCE_FILE
from td3x.rundir.resume_decision import config_hash

FINGERPRINT = Path(__file__).resolve().parents[1] / "data" / "portable_fingerprint.json"
# a short Pendulum run whose updates go through MKL's sgemm and ATen's vectorised kernels (400 updates): the run the
# fingerprint was made of, spelled out as it was made (the test checks it against the file's overrides)
SHORT_RUN = (
    "run.total_steps=600",
    "run.eval_every=300",
    "env.random_steps=200",
    "agent.hidden_sizes=[32,32]",
    "agent.batch_size=64",
    "run.eval_episodes=2",
    "logging.wandb_mode=disabled",
)
# what chooses kernels from outside: torch's, MKL's and oneDNN's, NumPy's and its OpenBLAS's (and td3x's restart mark)
OUTSIDE_VARIABLES = (*RECORDED_VARIABLES, RESTARTED_VARIABLE)


def console_script(*command: str | Path, **outside: str) -> subprocess.CompletedProcess[str]:
    """A td3x console script in its own process, with ``outside`` set in its environment and the other variables
    that choose kernels unset: it has to pin them itself."""
    env = {key: value for key, value in os.environ.items() if key not in OUTSIDE_VARIABLES} | outside
    finished = subprocess.run([BIN / command[0], *command[1:]], env=env, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr[-2000:]
    return finished


def train_portable(run_dir: Path, **outside: str) -> dict[str, Any]:
    """td3x-train in portable mode (:func:`console_script`); the eval.csv rows without timing columns, and the
    provenance."""
    console_script("td3x-train", "run.numerics=portable", *SHORT_RUN, f"hydra.run.dir={run_dir}", **outside)
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
    assert settings["NPY_DISABLE_CPU_FEATURES"] and settings["OPENBLAS_CORETYPE"] == "Prescott"
    for name, outside in {
        "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
        "default": {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "MKL_CBWR": "AUTO"},
        # NumPy on its AVX2 (x86-64-v3) kernels at most, OpenBLAS on Haswell's with two threads
        "numpy": {"NPY_DISABLE_CPU_FEATURES": "X86_V4", "OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_NUM_THREADS": "2"},
    }.items():
        assert train_portable(tmp_path / name, **outside)["eval"] == fingerprint["eval"], name
    # its config says portable: td3x-eval and td3x-resume restart themselves pinned, and find training's numbers
    console_script("td3x-eval", tmp_path / "plain")
    (evaluation,) = [json.loads(path.read_text()) for path in (tmp_path / "plain").glob("eval_step600_*.json")]
    assert repr(evaluation["return_mean"]) == fingerprint["eval"][-1]["return_mean"]
    assert "already holds a complete run" in console_script("td3x-resume", tmp_path / "plain").stderr


def run_python(code: str, pinned: bool = True) -> subprocess.CompletedProcess[str]:
    """``code`` in a new Python process, started with portable mode's NumPy and OpenBLAS pins unless not ``pinned``."""
    env = {key: value for key, value in os.environ.items() if key not in OUTSIDE_VARIABLES}
    env |= startup_environment() if pinned else {}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.slow
def test_a_process_that_computed_first_or_under_the_other_mode_or_unpinned_refuses_portable() -> None:
    apply_portable = (
        "from td3x.config.enums import Numerics; from td3x.host.numerics import apply; apply(Numerics.portable)"
    )
    computed_first = run_python(f"import torch; torch.ones(2) + 1\n{apply_portable}")
    assert "NumericsError" in computed_first.stderr and "runs AVX" in computed_first.stderr
    unpinned = run_python(apply_portable, pinned=False)  # a user's script: it cannot restart itself
    assert "StartupPinsMissing" in unpinned.stderr and "NPY_DISABLE_CPU_FEATURES=" in unpinned.stderr
    other_mode = run_python(
        "from td3x.config.enums import Numerics; from td3x.host.numerics import apply, effective_settings\n"
        "apply(Numerics.portable); apply(Numerics.portable); print(effective_settings()['mode'])\n"
        "apply(Numerics.native)"
    )
    assert other_mode.stdout.strip() == "portable"  # the same mode twice is fine
    assert "run.numerics=native is not allowed here" in other_mode.stderr


@pytest.mark.slow
def test_td3x_train_refuses_a_mode_its_process_cannot_give_in_one_line(tmp_path: Path) -> None:
    """Under Hydra's basic launcher every job of a sweep shares one process: the second mode's job is refused."""
    jobs = ("run.numerics=native,portable", "run.total_steps=5", "env.random_steps=5", "logging.wandb_mode=disabled")
    command = [BIN / "td3x-train", "-m", *jobs, *TINY_SIZES, f"hydra.sweep.dir={tmp_path}"]  # a 5-step job per mode
    finished = subprocess.run(command, capture_output=True, text=True, timeout=300)
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


def test_every_mode_flushes_denormals_and_a_plain_process_does_not() -> None:
    # 1e-40 is below 2^-126: denormal; on two threads, each computing half (threads started after the mode was set);
    # denormals_flushed (what the benchmarks print) reads the same off one product
    probe = (
        "import torch; from td3x.host.numerics import denormals_flushed; torch.set_num_threads(2); "
        "print(int(torch.full((4_000_000,), 1e-40).mul(1.0).count_nonzero()), denormals_flushed())"
    )
    apply = "from td3x.host import numerics; from td3x.config.enums import Numerics; numerics.apply(Numerics.native); "
    plain = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    applied = subprocess.run([sys.executable, "-c", apply + probe], capture_output=True, text=True, timeout=60)
    assert plain.stdout.split() == ["4000000", "False"], (plain.stdout, plain.stderr)
    assert applied.stdout.split() == ["0", "True"], (applied.stdout, applied.stderr)
