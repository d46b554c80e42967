"""docs/results: td3x's own reference runs and its Hopper seed study, the reports made from them, and the pages
that quote them.

No number there is typed by hand: ``td3x-report docs/results/runs --out docs/results/report --plotly none
--coverage docs/results/aggregate_coverage.csv`` with the peer bounds the pre-registration fixed (``PUBLISHED`` has
each report's command) made the report from the committed run files and the committed coverage table of
scripts/aggregate_coverage.py (and the same for ``docs/results/seed_study`` and each registered study, with its
registration file), this test makes each again and compares every table byte for byte, and every table on a
results page must be a table of its report.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from td3x.analysis.comparisons.schema import read_registration
from td3x.analysis.comparisons.sides import Found, find_side_runs
from td3x.analysis.reading.runs import Run, find_runs
from td3x.commands.report import main as report_main
from td3x.rundir.layout import is_timing_column

pytestmark = pytest.mark.results  # every test here checks docs/results (pyproject.toml's markers)
ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
_GLANCE = importlib.util.spec_from_file_location("glance", RESULTS / "glance.py")
assert _GLANCE is not None and _GLANCE.loader is not None
glance = importlib.util.module_from_spec(_GLANCE)
_GLANCE.loader.exec_module(glance)  # docs/results/glance.py: the results page's glance table
RUNS, REPORT, PAGE = RESULTS / "runs", RESULTS / "report", RESULTS / "index.md"
COVERAGE = ["--coverage", "docs/results/aggregate_coverage.csv"]  # the aggregates' measured coverage
# the peer row (Stable-Baselines3's TD3, scripts/sb3_reference.py's runs), the peer tests' bounds the pre-registration
# fixed (its peer.computed.<env>.bound), and its post-hoc rule elsewhere
PEER = ["--peer", "SB3 TD3"]
PEER_BOUNDS = [
    *PEER,
    *("--peer-bound", "HalfCheetah-v5=645", "--peer-bound", "Hopper-v5=88", "--peer-bound", "Walker2d-v5=91"),
    *("--peer-bound-of", "ours"),
]


def report_command(runs: str, report: str, *options: str) -> list[str]:
    """td3x-report's command line (from the repository root) that makes a published report from its runs: a
    registered study's with ``--registration`` and its file (docs: Registered comparisons)."""
    return [runs, "--out", report, "--plotly", "none", *COVERAGE, *options]


REPORT_COMMAND = report_command("docs/results/runs", "docs/results/report", *PEER_BOUNDS)
RUN_FILES = {"config.yaml", "eval.csv", "summary.json", "metrics.jsonl", "provenance.json"}
# the seed study (+experiment=seed_study env=hopper agent=td3_paper run.total_steps=15000): its own runs, report, page
STUDY = RESULTS / "seed_study"
STUDY_RUNS, STUDY_REPORT, STUDY_PAGE = STUDY / "runs", STUDY / "report", STUDY / "index.md"
STUDY_COMMAND = report_command("docs/results/seed_study/runs", "docs/results/seed_study/report")
# the registered seed study (docs/results/preregistration.yaml, seed_study): its complete conditions' runs, its report
REGISTERED_STUDY = RESULTS / "seed_study_registered"
REGISTERED_STUDY_COMMAND = report_command(
    "docs/results/seed_study_registered/runs", "docs/results/seed_study_registered/report",
    "--registration",
    "docs/results/seed_study_registered/registration.yaml",
)
# the registered peer comparison (docs/results/preregistration.yaml, peer): each side's complete runs, their report
REGISTERED_PEER = RESULTS / "peer_registered"
REGISTERED_PEER_COMMAND = report_command(
    "docs/results/peer_registered/runs", "docs/results/peer_registered/report",
    "--registration",
    "docs/results/peer_registered/registration.yaml",
    *PEER,
)
# the stalled-actors amendments (docs/results/preregistration.yaml, stalled_actors and its control): their runs, report
STALLED = RESULTS / "stalled_actors"
STALLED_COMMAND = report_command(
    "docs/results/stalled_actors/runs",
    "docs/results/stalled_actors/report",
    "--registration",
    "docs/results/stalled_actors/registration.yaml",
)
# the paper's horizon (docs/results/preregistration.yaml, paper_horizon): five 1M-step HalfCheetah-v5 runs, report
HORIZON = RESULTS / "horizon"
HORIZON_COMMAND = report_command(
    "docs/results/horizon/runs",
    "docs/results/horizon/report",
    "--registration",
    "docs/results/horizon/registration.yaml",
)
STUDY_STEPS, STUDY_N = 15_000, 5
SOURCES = ("weights", "env", "warmup", "exploration", "replay", "smoothing")  # conditions that vary one source
# (runs dir, report dir, page, the report's command, tables the report must have)
PUBLISHED = {
    "reference": (RUNS, REPORT, PAGE, REPORT_COMMAND, {"table2.csv", "fidelity.csv", "bias.csv", "compute.csv"}),
    "seed_study": (STUDY_RUNS, STUDY_REPORT, STUDY_PAGE, STUDY_COMMAND, {"seed_sources.csv", "seed_sources_runs.csv"}),
    "seed_study_registered": (
        REGISTERED_STUDY / "runs",
        REGISTERED_STUDY / "report",
        REGISTERED_STUDY / "index.md",
        REGISTERED_STUDY_COMMAND,
        {"registration.csv", "registration_sides.csv", "seed_study.csv"},
    ),
    "peer_registered": (
        REGISTERED_PEER / "runs",
        REGISTERED_PEER / "report",
        REGISTERED_PEER / "index.md",
        REGISTERED_PEER_COMMAND,
        {"registration.csv", "registration_sides.csv", "fidelity.csv"},
    ),
    "stalled_actors": (
        STALLED / "runs",
        STALLED / "report",
        STALLED / "index.md",
        STALLED_COMMAND,
        {"registration.csv", "registration_sides.csv", "stalled_actors.csv"},
    ),
    "horizon": (
        HORIZON / "runs",
        HORIZON / "report",
        HORIZON / "index.md",
        HORIZON_COMMAND,
        {"registration.csv", "registration_sides.csv", "table2.csv", "table1.csv", "fidelity.csv"},
    ),
}
PAGES = [name for name, (_, _, page, _, _) in PUBLISHED.items() if page is not None]
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
    **{(SB3, env, "SB3 TD3"): ("td3_paper", SEEDS) for env in ("HalfCheetah-v5", "Hopper-v5", "Walker2d-v5", "Ant-v5")},
    **{("reference_bias", env, "AHE"): ("td3_paper", FIVE_SEEDS) for env in ("Hopper-v5", "Walker2d-v5")},
    **{("reference_bias", env, "AHE + CDQ"): ("td3_paper", FIVE_SEEDS) for env in ("Hopper-v5", "Walker2d-v5")},
    ("reference_td3_2018", "HalfCheetah-v5", "TD3"): ("td3_2018", SEEDS),
}


def committed_runs(runs: Path = RUNS) -> dict[Path, dict[str, object]]:
    """Every run dir under ``runs`` (docs/results/runs), with its config."""
    return {path.parent: yaml.safe_load(path.read_text()) for path in sorted(runs.rglob("config.yaml"))}


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
@pytest.mark.parametrize("published", PUBLISHED)
def test_the_committed_report_is_what_td3x_report_makes_of_the_committed_runs(
    published: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, report_dir, _, command, expected_tables = PUBLISHED[published]
    monkeypatch.chdir(ROOT)
    out = tmp_path / "report"
    assert report_main([*command[:1], "--out", str(out), *command[3:]]) == 0
    committed = sorted(path.relative_to(report_dir) for path in report_dir.rglob("*") if path.is_file())
    regenerated = sorted(path.relative_to(out) for path in out.rglob("*") if path.is_file())
    assert committed == regenerated
    tables = [path for path in committed if path.suffix in {".csv", ".tex", ".md"}]
    assert {path.name for path in tables} >= {*expected_tables, "report.md"}
    for path in tables:
        assert (out / path).read_bytes() == (report_dir / path).read_bytes(), f"{path} differs: regenerate the report"


def without_glance(page: str) -> str:
    """A results page without its glance table (made from several reports' tables: tested on its own)."""
    if glance.START not in page:
        return page
    head, rest = page.split(glance.START, 1)
    return head + rest.split(glance.END, 1)[1]


def test_the_results_page_leads_with_the_glance_table_made_from_the_committed_reports() -> None:
    page = PAGE.read_text()
    assert glance.written(page) == page, "run python docs/results/glance.py --write"
    first_table = next(line for line in page.splitlines() if line.startswith("|"))
    assert first_table == glance.HEADER.splitlines()[0]
    assert " | verdict | " in first_table and first_table.count("|") - 1 <= 8  # one verdict mark, a narrow table


@pytest.mark.parametrize("published", PAGES)
def test_the_results_page_quotes_the_report_s_tables_and_plots(published: str) -> None:
    _, report_dir, page_path, command, _ = PUBLISHED[published]
    page, report = without_glance(page_path.read_text()), (report_dir / "report.md").read_text()
    table_lines = [line for line in page.splitlines() if line.startswith("|")]
    assert len(table_lines) > 10
    missing = [line for line in table_lines if line not in report.splitlines()]
    assert missing == [], "every table row on the results page is a row of report.md"
    images = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", page)
    assert images and all((page_path.parent / image).is_file() for image in images)
    assert shlex.join(command) in page  # as typed in a shell: --peer 'SB3 TD3'


def test_the_results_page_states_every_fidelity_outcome_of_the_report() -> None:
    """The fidelity test's primary table is on the page whole: every row and env, whatever its outcome and its
    equivalence decision, both right after the row and env."""
    page = PAGE.read_text().splitlines()
    fidelity = pd.read_csv(REPORT / "fidelity.csv")
    assert len(fidelity) == 16 and set(fidelity["outcome"]) == {"differs", "no difference detected"}
    columns = ["row", "env", "outcome", "run_mean_equivalence"]
    for row, env, outcome, decision in fidelity[columns].itertuples(index=False):
        lines = [line for line in page if line.startswith(f"| {row} | {env} | {outcome} | {decision} | ")]
        assert len(lines) == 1, (row, env)


@pytest.mark.parametrize(
    ("page", "report_dir", "at_least"),
    [
        (PAGE, REPORT, 10),
        (ROOT / "docs" / "protocol.md", REPORT, 2),
        (STUDY_PAGE, STUDY_REPORT, 10),
        (REGISTERED_STUDY / "index.md", REGISTERED_STUDY / "report", 10),
        (REGISTERED_PEER / "index.md", REGISTERED_PEER / "report", 8),
        (STALLED / "index.md", STALLED / "report", 4),
        (HORIZON / "index.md", HORIZON / "report", 15),
    ],
)
def test_the_numbers_that_pages_quote_from_the_results_are_the_report_s(
    page: Path, report_dir: Path, at_least: int
) -> None:
    """Each figure written into a sentence (a return, a bias, a p-value, a count "k of n") is in report.md."""
    text, report = page.read_text().replace("−", "-"), (report_dir / "report.md").read_text()
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
    for run_dir in (run_dir for runs, *_ in PUBLISHED.values() for run_dir in committed_runs(runs)):
        provenance = json.loads((run_dir / "provenance.json").read_text())
        assert "cpu_capability" in provenance and "cpu_flags" in provenance, run_dir


REGISTRATION = RESULTS / "preregistration.yaml"  # the pre-registration the registered studies re-express
# each registered study's folder: its registration.yaml (the pre-registration's sections, re-expressed) and runs
REGISTERED = {"peer": REGISTERED_PEER, "study": REGISTERED_STUDY, "stalled": STALLED, "horizon": HORIZON}
# the pre-registration's amendments (sections added later, holding an ``amendment`` key): their new runs' sides
AMENDMENTS = {
    "bf16_fp32_tanh": ("peer", "bf16 (fp32 tanh) Walker2d"),
    "stalled_actors": ("stalled", "weights 3300"),
    "stalled_actors_control": ("stalled", "weights 3200 (control)"),
}


def git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=RESULTS, capture_output=True, text=True, timeout=30)


def descends(commit: str, ancestor: str) -> bool:
    """Whether ``commit`` is ``ancestor`` or has it in its history."""
    return git("merge-base", "--is-ancestor", ancestor, commit).returncode == 0


def registration_commit() -> str | None:
    """The commit that added the pre-registration file; None without the repository's history (an sdist, a shallow
    clone)."""
    added = git("log", "--diff-filter=A", "--format=%H", "--", REGISTRATION.name).stdout.split()
    return added[-1] if added and git("rev-parse", "--is-shallow-repository").stdout.strip() == "false" else None


def sides_found(study: str, runs: list[Run] | None = None) -> dict[str, Found]:
    """Each runs side of a registered study's file, its runs found among ``runs`` (default: the study's runs/)."""
    registration = read_registration(REGISTERED[study] / "registration.yaml")
    found = find_runs([REGISTERED[study] / "runs"]) if runs is None else runs
    return {name: find_side_runs(side.runs, found) for name, side in registration.sides.items() if side.runs}


def judged_runs() -> list[Run]:
    """Every committed run a registered study judges: each runs side's complete runs."""
    return [run for study in REGISTERED for side in sides_found(study).values() for run in side.complete]


def test_every_run_the_pre_registration_judges_records_a_commit_descending_from_the_one_that_added_it() -> None:
    added = registration_commit()
    if added is None:
        pytest.skip("needs the repository's full git history")
    assert descends(added, added) and not descends(f"{added}~1", added)  # the check rejects the commit before it
    judged = judged_runs()
    assert len(judged) >= 100  # every study's runs, not an empty selection
    for run in judged:
        for sitting in run.sittings:  # each sitting of a resumed run, too
            commit = sitting.get("git_commit")
            assert commit and descends(commit, added), f"{run.path}: {commit} does not descend from {added}"


def test_an_amendment_s_runs_record_a_commit_descending_from_the_one_that_added_it() -> None:
    """A section added later (it holds an ``amendment`` key) judges only runs of code from its own commit on."""
    sections = yaml.safe_load(REGISTRATION.read_text())
    amendments = [name for name, section in sections.items() if isinstance(section, dict) and "amendment" in section]
    assert amendments == list(AMENDMENTS)
    if registration_commit() is None:
        pytest.skip("needs the repository's full git history")
    new_runs = {section: sides_found(study)[side].complete for section, (study, side) in AMENDMENTS.items()}
    assert {name for name in amendments if new_runs[name]} >= {"bf16_fp32_tanh", "stalled_actors"}
    for section in amendments:
        log = git("log", "--format=%H", f"-G^{section}:", "--", REGISTRATION.name).stdout.split()
        added = log[-1]  # the oldest commit that touched the section's first line: the one adding it
        assert not descends(f"{added}~1", added)
        for run in new_runs[section]:
            for sitting in run.sittings:
                commit = sitting.get("git_commit")
                assert commit and descends(commit, added), f"{run.path}: {commit} does not descend from {added}"


def waiting_dirs() -> list[Path]:
    """Where the runs of an incomplete side wait (gone once every side is complete)."""
    return [folder for folder in [REGISTERED_PEER / "waiting"] if folder.exists()]


def test_the_registered_peer_runs_are_committed_complete_with_their_files_only_and_all_judged() -> None:
    """Every run under peer_registered/ is complete, holds the five small files and enters a registered comparison
    (its seed and config are the registered ones): nothing is committed there that no test judges. That holds for
    runs/, which the report reads, and for waiting/, where a side's runs wait until all of them are in."""
    runs = find_runs([REGISTERED_PEER / "runs", *waiting_dirs()])
    assert len(runs) >= 10
    judged = {run.path for side in sides_found("peer", runs).values() for run in side.complete}
    for run in runs:
        assert {file.name for file in run.path.iterdir()} == RUN_FILES, run.path  # no checkpoint, no wandb dir
        assert run.problem is None and run.summary is not None and run.summary["steps"] == STEPS, run.path
        assert run.path in judged, f"{run.path}: no registered comparison judges it"


def test_the_stalled_actors_runs_are_committed_complete_with_their_files_only_and_all_judged() -> None:
    """Every run under stalled_actors/ is complete, holds the five small files and is a complete run of one of the
    two amendments (its seeds and config the registered ones), on one CPU capability."""
    runs = find_runs([STALLED / "runs"])
    judged = {run.path for side in sides_found("stalled", runs).values() for run in side.complete}
    for run in runs:
        assert {file.name for file in run.path.iterdir()} == RUN_FILES, run.path
        assert run.path in judged, f"{run.path} is no complete run of a stalled-actors amendment"
    assert len({run.kernels for run in runs}) == 1


def test_the_horizon_runs_are_the_registered_five_complete_with_their_files_only_and_judged() -> None:
    """docs/results/horizon holds the paper_horizon comparison's runs and nothing else: seeds 4000-4004, each complete
    at 1M env steps with the five small files, on one CPU capability, all five in the registered test."""
    runs = find_runs([HORIZON / "runs"])
    (side,) = sides_found("horizon", runs).values()
    assert side.is_complete
    assert sorted(run.seed for run in side.complete) == [4000, 4001, 4002, 4003, 4004]
    assert {run.path for run in runs} == {run.path for run in side.complete}
    for run in runs:
        assert {file.name for file in run.path.iterdir()} == RUN_FILES, run.path  # no checkpoint, no buffer
        assert run.summary is not None and run.summary["steps"] == 1_000_000, run.path
    assert len({run.kernels for run in runs}) == 1


def test_a_side_is_read_only_once_complete_and_waits_until_then() -> None:
    """A side of a registered comparison is in runs/ (read by the report) only when all of its runs are; until then
    its runs wait under waiting/ (read by nothing), so no number of a comparison is seen before it is complete."""
    waiting = find_runs(waiting_dirs()) if waiting_dirs() else []
    waiting_paths = {run.path for run in waiting}
    runs = [*find_runs([REGISTERED_PEER / "runs"]), *waiting]
    for name, side in sides_found("peer", runs).items():
        paths = {run.path for run in side.complete}
        if side.is_complete:
            assert not paths & waiting_paths, f"{name}: complete, yet runs wait"
        else:
            assert paths <= waiting_paths, f"{name}: {side.problems}, yet runs are read"


def test_the_seed_study_is_committed_complete_each_condition_varying_its_source_only() -> None:
    """Every condition of the Hopper study: N runs (seeds 0..N-1) where only its source moves with the seed, the
    evaluation run with N sets of start states, and the two repeats of seed 0."""
    found: dict[str, list[int]] = {}
    for path, config in committed_runs(STUDY_RUNS).items():
        assert {file.name for file in path.iterdir()} == RUN_FILES, path
        summary = json.loads((path / "summary.json").read_text())
        assert (summary["status"], summary["steps"]) == ("complete", STUDY_STEPS), path
        choices, seeds, seed = config["choices"], config["effective_seeds"], int(config["seed"])  # type: ignore[call-overload]
        assert (config["env"]["id"], choices["agent"], config["logging"]["group"]) == (  # type: ignore[index]
            "Hopper-v5",
            "td3_paper",
            "seed_study",
        )
        condition = str(choices["seed_study"])  # type: ignore[index]
        found.setdefault(condition, []).append(seed)
        moving = SOURCES if condition == "all_vary" else (condition,) if condition in SOURCES else ()
        assert {source: seeds[source] for source in SOURCES} == {  # type: ignore[index]
            source: seed if source in moving else 0 for source in SOURCES
        }, path
        assert seeds["evaluation"] == 1_000_000 + 1_000 * seed, path  # start states follow the seed, as in all_vary
        sets = [column for column in pd.read_csv(path / "eval.csv").columns if column.startswith("return_mean_set_")]
        assert len(sets) == STUDY_N - 1, path  # every run measures its own evaluation noise
    expected = {name: list(range(STUDY_N)) for name in ("all_vary", *SOURCES)}
    assert {name: sorted(seeds) for name, seeds in found.items()} == {
        **expected,
        "evaluation": [0],
        "repeat_1": [0],
        "repeat_2": [0],
    }


def test_the_seed_study_s_two_repeats_are_bit_identical_and_its_report_shows_zero_spread() -> None:
    repeats = [path for path, config in committed_runs(STUDY_RUNS).items() if "repeat" in str(config["choices"])]
    first, second = (pd.read_csv(path / "eval.csv") for path in repeats)
    columns = [column for column in first.columns if not is_timing_column(column)]
    assert len(repeats) == 2 and first[columns].equals(second[columns])
    spreads = pd.read_csv(STUDY_REPORT / "seed_sources.csv")
    assert (spreads.loc[spreads["condition"] == "repeat", "sd"] == 0).all()


CPU_CHECK = STUDY / "cpu_check"  # seeds 3-4 of the reference runs, trained as those were (two side by side), 5k steps


def hopper_returns(runs: Path, condition: str = "all_vary") -> dict[int, pd.Series]:
    """Per seed, the TD3 Hopper runs' evaluation returns by step under ``runs`` (of one seed-study condition)."""
    return {
        int(config["seed"]): pd.read_csv(path / "eval.csv").set_index("step")["return_mean"]  # type: ignore[call-overload]
        for path, config in committed_runs(runs).items()
        if config["env"]["id"] == "Hopper-v5"
        and config["paper_row"] == "TD3"  # type: ignore[index]
        and config["choices"].get("seed_study", condition) == condition  # type: ignore[attr-defined]
    }


def test_the_study_s_all_vary_runs_are_the_reference_seeds_0_to_4_grown_apart_on_another_cpu() -> None:
    """all_vary trains the reference TD3 Hopper runs' seeds and config on a CPU without AVX-512 (the reference seeds
    3-4 record AVX-512; 0-2 predate the record), five side by side: the untrained policies' returns agree to six
    digits but not to the bit, and by 5k env steps they are other runs. The check trains seeds 3-4 here as the
    reference did, two side by side: it starts as the study does, bit for bit, and is another run than the
    reference's by 5k steps too, so the CPU makes the difference, not the stacking. The page quotes these returns."""
    reference, study = hopper_returns(RUNS / "reference_td3"), hopper_returns(STUDY_RUNS)
    check = hopper_returns(CPU_CHECK)
    assert sorted(study) == sorted(reference) == list(range(STUDY_N)) and sorted(check) == [3, 4]
    for seed in study:
        start_here, start_there = study[seed][0], reference[seed][0]
        assert start_here != start_there and abs(start_here - start_there) < 1e-6 * abs(start_there), seed
    assert all(check[seed][0] == study[seed][0] for seed in check)
    at_5k = {seed: (round(reference[seed][5000]), round(study[seed][5000])) for seed in study}
    assert at_5k[0] == (58, 227) and at_5k[3] == (65, 168) and round(check[3][5000]) == 169  # as quoted on the page
    check_configs = committed_runs(CPU_CHECK).values()
    assert all(config["run"]["num_seeds"] == 2 and config["seed"] in (3, 4) for config in check_configs)  # type: ignore[index]
    for seed in (3, 4):
        provenance = json.loads(
            next((RUNS / "reference_td3" / "hopper").rglob(f"seed_{seed}/provenance.json")).read_text()
        )
        assert "avx512f" in provenance["cpu_flags"], seed
    assert all(
        "avx512f" not in json.loads((path / "provenance.json").read_text())["cpu_flags"]
        for path in {**committed_runs(STUDY_RUNS), **committed_runs(CPU_CHECK)}
    )


def test_the_study_s_seed_0_trained_alone_and_in_all_vary_s_stack_of_five_are_other_runs() -> None:
    """The evaluation condition and the repeats train seed 0 alone; all_vary trains it beside seeds 1-4 (batched
    kernels round otherwise, docs/sweeps.md): the same start, other runs by 5k env steps, as quoted on the page."""
    curves = {
        str(config["choices"]["seed_study"]): pd.read_csv(path / "eval.csv").set_index("step")["return_mean"]  # type: ignore[index]
        for path, config in committed_runs(STUDY_RUNS).items()
        if int(config["seed"]) == 0  # type: ignore[call-overload]
    }
    alone, stacked = curves["evaluation"], curves["all_vary"]
    assert alone[0] == stacked[0] and curves["repeat_1"].equals(alone)
    assert (round(alone[5000]), round(stacked[5000])) == (171, 227)


def test_the_study_s_warmup_seed_3_returns_the_same_from_5k_steps_on() -> None:
    """The failed run the page describes: one policy, acting alike at every evaluation from 5k steps on."""
    warmup = hopper_returns(STUDY_RUNS, "warmup")
    stuck = warmup[3][[5000, 10_000, 15_000]].to_numpy()
    assert round(stuck[0], 1) == 37.5 and abs(stuck.max() - stuck.min()) < 1e-8 * stuck[0]
    others = [round(curve[15_000]) for seed, curve in warmup.items() if seed != 3]
    assert (min(others), max(others)) == (95, 354)
    env_seed_2 = hopper_returns(STUDY_RUNS, "env")[2]
    assert (round(env_seed_2[10_000]), round(env_seed_2[15_000])) == (178, 35)  # the other run below its start
    marked = pd.read_csv(STUDY_REPORT / "seed_sources_runs.csv").query("below_start")
    assert sorted(marked["run"].str.extract(r"seed_study=(\w+)/seed_(\d)").agg("/".join, axis=1)) == [
        "env/2",
        "warmup/3",
    ]


# ---------------------------------------------------------------------------------------------------- tuning
TUNING = RESULTS / "tuning_pendulum"  # docs/tuning.md's first study, as run: td3x-tune's summary and timing


def tuning_table() -> dict[str, str]:
    """docs/tuning.md's table of the study it ran: row name -> its text."""
    rows = re.findall(
        r"^\| (trials|time|env steps|best trial|search score|fresh-seed score) \| (.+) \|$",
        (ROOT / "docs" / "tuning.md").read_text(),
        flags=re.MULTILINE,
    )
    return dict(rows)


def test_the_tuning_page_quotes_the_committed_study_it_ran() -> None:
    summary = json.loads((TUNING / "summary.json").read_text())
    trials = pd.read_csv(TUNING / "trials.csv")
    wall_time = json.loads((TUNING / "timing.json").read_text())["wall_time_s"]
    complete, pruned = trials.query("state == 'complete'"), trials.query("state == 'pruned'")
    minutes, seconds = divmod(round(wall_time), 60)
    table = tuning_table()
    assert table["trials"].startswith(f"{len(complete)} complete, {len(pruned)} pruned")
    assert set(pruned["pruned_at_step"]) == {1500} and "each at env step 1500" in table["trials"]
    assert table["time"] == (
        f"{minutes} min {seconds:02d} s in all: {summary['compute']['trial_wall_time_s']:.0f} s of training in trials "
        f"({complete['wall_time_s'].min():.0f}-{complete['wall_time_s'].max():.0f} s a complete trial, "
        f"{pruned['wall_time_s'].min():.0f}-{pruned['wall_time_s'].max():.0f} s a pruned one), "
        f"{summary['fresh']['wall_time_s']:.0f} s for the {len(summary['fresh']['seeds'])} fresh seeds"
    )
    assert table["env steps"].startswith(f"{summary['compute']['trial_env_steps']:,} in trials")
    best = summary["best_params"]
    assert table["best trial"].startswith(f"trial {summary['best_trial']}: ")
    assert [f"{value:.3g}" for value in best.values()] == re.findall(r"` ([\d.]+)", table["best trial"])
    assert table["search score"].startswith(f"−{-summary['search_score']:.2f} ")
    low, high = summary["fresh"]["interval95"]
    assert table["fresh-seed score"].startswith(
        f"−{-summary['fresh']['score']:.2f}, 95% interval [−{-low:.2f}, −{-high:.2f}]"
    )


def test_the_tuning_page_s_pruning_sentences_are_the_two_studies_files() -> None:
    """The same study without pruning: its env steps, its choice, and what each pruned trial would have ended at."""
    pruned, whole = pd.read_csv(TUNING / "trials.csv"), pd.read_csv(TUNING / "no_pruning" / "trials.csv")
    summary, whole_summary = (
        json.loads((path / "summary.json").read_text()) for path in (TUNING, TUNING / "no_pruning")
    )
    page = " ".join((ROOT / "docs" / "tuning.md").read_text().split())
    assert f"took {whole_summary['compute']['trial_env_steps']:,} env steps in trials" in page
    assert (whole_summary["best_trial"], whole_summary["fresh"]["score"]) == (
        summary["best_trial"],
        summary["fresh"]["score"],
    )
    assert 4 * (whole["steps"].sum() - pruned["steps"].sum()) == whole["steps"].sum()  # "a quarter of the env steps"
    ended = [f"−{-score:.0f}" for score in whole.set_index("trial").loc[[4, 5, 6, 7], "score"]]
    assert f"they ended at {ended[0]}, {ended[1]} and {ended[2]}, below the median" in page
    stopped = f"−{-pruned.set_index('trial').loc[7, 'score']:.0f}"
    assert f"which it stopped at {stopped} and which would have ended at {ended[3]}, second best" in page
    assert sorted(whole["score"], reverse=True)[1] == whole.set_index("trial").loc[7, "score"]
