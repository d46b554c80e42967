"""Run dirs of the registered seed study as td3x-train writes them (``report_runs.write_run``'s files, plus the
``seed_study`` choice, ``run.num_seeds``, ``effective_seeds`` and ``provenance.json``'s CPU capability), and the
committed pre-registration with fewer runs per condition, so that tests stay small."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import yaml

from helpers.report_runs import write_run

ROOT = Path(__file__).resolve().parents[2]
REGISTRATION = ROOT / "docs" / "results" / "preregistration.yaml"
SOURCES = ("weights", "env", "warmup", "exploration", "replay", "smoothing")
FIRST = {"all_vary": 3000, "weights": 3100, "warmup": 3200}
START = 50.0  # every run's step-0 return: a run whose final return is below it has collapsed
STEPS, EVAL_EVERY = 15000, 5000
COMMIT = "0123456789abcdef0123456789abcdef01234567"  # the code commit every run's provenance.json records


def small_registration(folder: Path, runs: int) -> Path:
    """The committed pre-registration with ``runs`` runs per condition instead of its computed number."""
    data = yaml.safe_load(REGISTRATION.read_text())
    data["seed_study"]["computed"]["runs_per_condition"] = runs
    path = folder / "preregistration.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def write_condition(
    folder: Path,
    name: str,
    values: np.ndarray,
    runs: int,
    cpu: str = "AVX2",
    finals: np.ndarray | None = None,
    first: int | None = None,
) -> list[Path]:
    """One condition's job: run k (seed ``first`` + k, by default FIRST[name] + k) evaluates START at step 0, then
    ``values[k]`` at 5000 and 10000 and ``finals[k]`` (default ``values[k]``) at 15000, so its registered statistic
    is (2 values[k] + finals[k]) / 3; ``runs`` is the job's run.num_seeds."""
    first = FIRST[name] if first is None else first
    job = folder / "hopper" / "none" / f"+seed_study={name},agent=td3_paper,run.num_seeds={runs},seed={first}"
    finals = values if finals is None else finals
    paths = []
    for k, (value, final) in enumerate(zip(values, finals, strict=True)):
        seed = first + k
        path = write_run(
            job / f"seed_{seed}",
            "Hopper-v5",
            "TD3",
            seed,
            np.array([START, value, value, final]),
            total_steps=STEPS,
            eval_every=EVAL_EVERY,
        )
        config = yaml.safe_load((path / "config.yaml").read_text())
        config["run"]["num_seeds"] = runs
        config["choices"] |= {"seed_study": name, "agent": "td3_paper"}
        pinned = first if name != "all_vary" else seed
        config["effective_seeds"] = {source: seed if source == name else pinned for source in SOURCES}
        (path / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        (path / "provenance.json").write_text(json.dumps({"git_commit": COMMIT, "cpu_capability": cpu}))
        paths.append(path)
    return paths
