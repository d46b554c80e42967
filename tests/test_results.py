"""docs/results: td3x's own reference runs, the report made from them, and the results page that quotes it.

No number there is typed by hand: ``td3x-report docs/results/runs --out docs/results/report --plotly none`` made
the report from the committed run files, this test makes it again and compares every table byte for byte, and
every table on the results page must be a table of that report.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from td3x.analysis.cli import main as report_main

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
RUNS, REPORT, PAGE = RESULTS / "runs", RESULTS / "report", RESULTS / "index.md"
REPORT_COMMAND = ["docs/results/runs", "--out", "docs/results/report", "--plotly", "none"]  # run from the root
RUN_FILES = {"config.yaml", "eval.csv", "summary.json", "metrics.jsonl", "provenance.json"}
STEPS = 100_000
SEEDS, FIVE_SEEDS = [0, 1, 2], [0, 1, 2, 3, 4]
TABLE2_ENVS = ("HalfCheetah-v5", "Hopper-v5", "Walker2d-v5", "Ant-v5")
SMALLER_ENVS = ("InvertedPendulum-v5", "InvertedDoublePendulum-v5", "Reacher-v5")  # the authors' other curves
# (logging.group, env, Table 2 row) -> the agent preset and seeds the experiment of that name trains (conf/experiment/;
# AHE + CDQ with `ablation=ahe_twin run.num_seeds=5` on the command line)
SB3 = "sb3_reference"  # scripts/sb3_reference.py's runs: no experiment, no W&B group
EXPERIMENTS = {
    **{("reference_td3", env, "TD3"): ("td3_paper", FIVE_SEEDS) for env in TABLE2_ENVS},
    **{("reference_td3", env, "TD3"): ("td3_paper", SEEDS) for env in SMALLER_ENVS},
    **{(SB3, env, "SB3 TD3"): ("td3_paper", SEEDS) for env in ("HalfCheetah-v5", "Hopper-v5", "Ant-v5")},
    **{("reference_bias", env, "AHE"): ("td3_paper", FIVE_SEEDS) for env in ("Hopper-v5", "Walker2d-v5")},
    **{("reference_bias", env, "AHE + CDQ"): ("td3_paper", FIVE_SEEDS) for env in ("Hopper-v5", "Walker2d-v5")},
    ("reference_td3_2018", "HalfCheetah-v5", "TD3"): ("td3_2018", SEEDS),
}


def committed_runs() -> dict[Path, dict[str, object]]:
    """Every run dir under docs/results/runs, with its config."""
    return {path.parent: yaml.safe_load(path.read_text()) for path in sorted(RUNS.rglob("config.yaml"))}


def experiment_of(config: dict[str, object]) -> str:
    """The experiment that trained a run (its W&B group is the experiment's name), or SB3 for the peer runs."""
    choices = config["choices"]
    if choices.get("learner") == "sb3":  # type: ignore[attr-defined]
        return SB3
    assert config["logging"]["group"] == choices["experiment"]  # type: ignore[index]
    return str(choices["experiment"])  # type: ignore[index]


def test_every_reference_experiment_is_committed_complete_with_its_files_only() -> None:
    runs = committed_runs()
    found: dict[tuple[str, str, str], list[int]] = {}
    for path, config in runs.items():
        assert {file.name for file in path.iterdir()} == RUN_FILES, path  # no checkpoint, no wandb dir
        summary = json.loads((path / "summary.json").read_text())
        assert (summary["status"], summary["steps"]) == ("complete", STEPS), path
        assert pd.read_csv(path / "eval.csv")["step"].iloc[-1] == STEPS
        key = (experiment_of(config), config["env"]["id"], config["paper_row"])  # type: ignore[index]
        assert config["choices"]["agent"] == EXPERIMENTS[key][0], path  # type: ignore[index]
        found.setdefault(key, []).append(int(config["seed"]))  # type: ignore[call-overload]
    expected = {key: seeds for key, (_, seeds) in EXPERIMENTS.items()}
    assert {key: sorted(seeds) for key, seeds in found.items()} == expected


@pytest.mark.slow
def test_the_committed_report_is_what_td3x_report_makes_of_the_committed_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "report"
    assert report_main([*REPORT_COMMAND[:1], "--out", str(out), *REPORT_COMMAND[3:]]) == 0
    committed = sorted(path.relative_to(REPORT) for path in REPORT.rglob("*") if path.is_file())
    regenerated = sorted(path.relative_to(out) for path in out.rglob("*") if path.is_file())
    assert committed == regenerated
    tables = [path for path in committed if path.suffix in {".csv", ".tex", ".md"}]
    assert {path.name for path in tables} >= {"table2.csv", "fidelity.csv", "bias.csv", "compute.csv", "report.md"}
    for path in tables:
        assert (out / path).read_bytes() == (REPORT / path).read_bytes(), f"{path} differs: regenerate the report"


def test_the_results_page_quotes_the_report_s_tables_and_plots() -> None:
    page, report = PAGE.read_text(), (REPORT / "report.md").read_text()
    table_lines = [line for line in page.splitlines() if line.startswith("|")]
    assert len(table_lines) > 10
    missing = [line for line in table_lines if line not in report.splitlines()]
    assert missing == [], "every table row on the results page is a row of report.md"
    images = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", page)
    assert images and all((RESULTS / image).is_file() for image in images)
    assert " ".join(REPORT_COMMAND) in page


def test_the_results_page_states_every_fidelity_outcome_of_the_report() -> None:
    """The fidelity test's primary table is on the page whole: every row and env, whatever its outcome."""
    page = PAGE.read_text().splitlines()
    fidelity = pd.read_csv(REPORT / "fidelity.csv")
    assert len(fidelity) == 15 and set(fidelity["outcome"]) == {"differs", "no difference detected"}
    for row, env, outcome in fidelity[["row", "env", "outcome"]].itertuples(index=False):
        lines = [line for line in page if line.startswith(f"| {row} | {env} | ") and line.endswith(f" | {outcome} |")]
        assert len(lines) == 1, (row, env)


@pytest.mark.parametrize(("page", "at_least"), [(PAGE, 10), (ROOT / "docs" / "protocol.md", 2)])
def test_the_numbers_that_pages_quote_from_the_results_are_the_report_s(page: Path, at_least: int) -> None:
    """Each figure written into a sentence (a return, a bias, a p-value, a count "k of n") is in report.md."""
    text, report = page.read_text().replace("−", "-"), (REPORT / "report.md").read_text()
    prose = "\n".join(line for line in text.splitlines() if not line.startswith("|"))
    quoted = re.findall(r"[+-]?\d+\.\d{2,}\b|\b\d+ of \d+\b", prose)
    assert len(quoted) >= at_least
    assert [number for number in quoted if number.lstrip("+") not in report] == []


# an absolute path of a POSIX, macOS or Windows machine, or the keys that named the machine, inside a file's text
MACHINE_TRACES = re.compile(
    r"""(^|[\s"'`(=\[])(/(home|root|work|tmp|Users|var|opt|mnt)/|[A-Z]:\\\\)"""  # an absolute path
    r"""|"(hostname|cwd|pid)":"""  # provenance keys that named the machine
)


def test_nothing_under_docs_names_the_machine_it_was_made_on() -> None:
    """Published files carry no absolute path, user or host name: provenance.json and summary.json record paths
    relative to the run dir or the working dir, and the command as typed."""
    leaks = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}"
        for path in sorted((ROOT / "docs").rglob("*"))
        if path.is_file() and path.suffix in {".md", ".json", ".yaml", ".csv", ".jsonl", ".tex", ".py", ".css"}
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if MACHINE_TRACES.search(line)
    ]
    assert not leaks, "\n".join(leaks)


def test_committed_provenance_says_which_cpu_capability_it_ran_on_or_that_it_was_not_recorded() -> None:
    for run_dir in committed_runs():
        provenance = json.loads((run_dir / "provenance.json").read_text())
        assert "cpu_capability" in provenance and "cpu_flags" in provenance, run_dir
