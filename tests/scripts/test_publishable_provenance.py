"""scripts/publishable_provenance.py: run files fit to publish, without the machine's paths or names."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "publishable_provenance.py"
COMMAND = [".venv/bin/td3x-train", "-m", "seed=3000", "hydra.sweep.dir=/scratch/me/runs/study", "run.total_steps=15000"]


def publish(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def write_run(run_dir: Path, command: list[str]) -> None:
    run_dir.mkdir(parents=True)
    provenance = {"git_commit": "0" * 40, "cpu_flags": ["avx2"], "cpu_capability": "AVX2", "command": command}
    (run_dir / "provenance.json").write_text(json.dumps(provenance))
    (run_dir / "summary.json").write_text(json.dumps({"status": "complete", "run_dir": "../runs/study/seed_3000"}))


def test_started_in_makes_the_command_s_absolute_paths_relative_and_nothing_else(tmp_path: Path) -> None:
    write_run(tmp_path / "runs" / "seed_3000", COMMAND)
    finished = publish(str(tmp_path / "runs"), "--started-in", "/scratch/me/td3x")
    assert finished.returncode == 0 and "1 of 1 run dirs rewritten" in finished.stdout, finished.stderr
    provenance = json.loads((tmp_path / "runs" / "seed_3000" / "provenance.json").read_text())
    assert provenance["command"] == [*COMMAND[:3], "hydra.sweep.dir=../runs/study", COMMAND[-1]]
    again = publish(str(tmp_path / "runs"), "--started-in", "/scratch/me/td3x")
    assert "0 of 1 run dirs rewritten" in again.stdout  # already in the published form
    unchanged = publish(str(tmp_path / "runs"))  # without the option, arguments are left as typed
    assert "0 of 1 run dirs rewritten" in unchanged.stdout


def test_a_resumed_run_s_earlier_sittings_are_published_alike(tmp_path: Path) -> None:
    write_run(tmp_path / "runs" / "seed_3000", COMMAND)
    path = tmp_path / "runs" / "seed_3000" / "provenance.json"
    first_sitting = {**json.loads(path.read_text()), "hostname": "node7", "cwd": "/scratch/me/td3x"}
    path.write_text(json.dumps({**json.loads(path.read_text()), "earlier_sittings": [first_sitting]}))
    finished = publish(str(tmp_path / "runs"), "--started-in", "/scratch/me/td3x")
    assert finished.returncode == 0 and "1 of 1 run dirs rewritten" in finished.stdout, finished.stderr
    (sitting,) = json.loads(path.read_text())["earlier_sittings"]
    assert sitting["command"] == [*COMMAND[:3], "hydra.sweep.dir=../runs/study", COMMAND[-1]]
    assert "hostname" not in sitting and "cwd" not in sitting


def test_a_relative_started_in_or_a_missing_folder_is_refused_in_one_line(tmp_path: Path) -> None:
    write_run(tmp_path / "runs" / "seed_3000", COMMAND)
    relative = publish(str(tmp_path / "runs"), "--started-in", "td3x")
    assert relative.returncode != 0 and relative.stderr.strip().splitlines() == [
        "publishable_provenance: --started-in must be an absolute path, not td3x"
    ]
    missing = publish(str(tmp_path / "nowhere"))
    assert missing.returncode != 0 and "not a folder" in missing.stderr and "Traceback" not in missing.stderr
    assert json.loads((tmp_path / "runs" / "seed_3000" / "provenance.json").read_text())["command"] == COMMAND
