"""A registration file, read: the committed ones and the docs' example parse; every mistake is one line naming the
key, all of a file's mistakes at once, and ``td3x-report --plan`` refuses such a file with exit 2 and no file
written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from td3x.analysis.comparisons.schema import RegistrationError, read_registration

ROOT = Path(__file__).resolve().parents[3]
WALKER = ROOT / "docs/results/table2_walker2d/registration.yaml"

GOOD = {
    "registration": 1,
    "title": "TD3 against TD3 - CDQ on Pendulum",
    "statistics": {"last3": {"kind": "last_evaluations", "count": 3}},
    "sides": {
        "TD3": {
            "runs": {"env": "Pendulum-v1", "row": "TD3", "seeds": "0-2"},
            "assumed": {"mean": -300, "sd": 100, "source": "a guess"},
        },
        "TD3 - CDQ": {
            "runs": {"env": "Pendulum-v1", "row": "TD3 - CDQ", "seeds": [0, 1, 2]},
            "assumed": {"mean": -600, "sd": 100, "source": "a guess"},
        },
    },
    "comparisons": [{"name": "CDQ helps", "test": "directional", "statistic": "last3", "sides": ["TD3", "TD3 - CDQ"]}],
}


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "registration.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False) if not isinstance(data, str) else data)
    return path


def problems(tmp_path: Path, data: object) -> list[str]:
    with pytest.raises(RegistrationError) as caught:
        read_registration(write(tmp_path, data))
    return [line.split(": ", 1)[1] for line in caught.value.problems]


def test_the_committed_walker2d_registration_reads() -> None:
    registration = read_registration(WALKER)
    assert len([s for s in registration.sides.values() if s.runs]) == 11
    assert {c.test for c in registration.comparisons} == {"rank_correlation", "directional", "equivalence"}
    assert registration.family_sizes == {"the paper's conclusions": 4}


def test_a_good_file_reads(tmp_path: Path) -> None:
    registration = read_registration(write(tmp_path, GOOD))
    assert registration.sides["TD3"].runs is not None and registration.sides["TD3"].runs.seeds == (0, 1, 2)
    assert registration.sides["TD3"].runs.config == (("env.id", "Pendulum-v1"), ("paper_row", "TD3"))
    assert registration.alpha == 0.05 and registration.power == 0.8 and registration.sd_factor == 2.0


def mutated(change: dict[str, object]) -> dict[str, object]:
    data: dict[str, object] = yaml.safe_load(yaml.safe_dump(GOOD))
    for dotted, value in change.items():
        node: object = data
        *parents, last = dotted.split(".")
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]  # type: ignore[index]
        if value is None and isinstance(node, dict):
            node.pop(last)
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value  # type: ignore[index]
    return data


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"alhpa": 0.1}, "alhpa: is not a key here; did you mean 'alpha'?"),
        ({"alpha": 0.7}, "alpha: 0.7 is out of range: allowed 1e-06 to 0.5"),
        ({"title": None}, "title: is missing"),
        ({"registration": 2}, "registration: 2 is not a format td3x reads: write 1"),
        ({"sides.TD3.runs.seeds": "2-0"}, "sides.TD3.runs.seeds: '2-0' is no seed list"),
        ({"sides.TD3.runs.seeds": [1, 1]}, "sides.TD3.runs.seeds: names a seed twice"),
        ({"sides.TD3.runs.config": {"agent.tua": 0.1}}, "sides.TD3.runs.config.agent.tua: is not a td3x config key"),
        ({"sides.TD3.runs.choices": {"agent": "td4"}}, "sides.TD3.runs.choices.agent: 'td4' is not an option"),
        ({"sides.TD3.assumed.sd": -1}, "sides.TD3.assumed.sd: -1.0 must be above 0"),
        ({"sides.TD3.assumed.source": None}, "sides.TD3.assumed.source: is missing"),
        ({"comparisons.0.test": "ttest"}, "comparisons[0] (CDQ helps).test: 'ttest' is not allowed: choose one of"),
        ({"comparisons.0.sides": ["TD3", "TD4"]}, "comparisons[0] (CDQ helps).sides: 'TD4' is not a side"),
        ({"comparisons.0.statistic": "last4"}, "comparisons[0] (CDQ helps).statistic: 'last4' is not allowed"),
        ({"comparisons.0.bound": 5}, "comparisons[0] (CDQ helps).bound: is not a key of a directional comparison"),
        ({"comparisons.0.test": "equivalence"}, "comparisons[0] (CDQ helps).bound: is missing: equivalence needs it"),
        ({"statistics.last3.count": 0}, "statistics.last3.count: 0 is out of range: allowed 1 or more"),
        ({"statistics.last3.kind": "median"}, "statistics.last3.kind: 'median' is not allowed"),
        ({"comparisons.0.test": "fisher"}, "comparisons[0] (CDQ helps).statistic: fisher takes a count statistic"),
    ],
)
def test_each_mistake_is_one_line_naming_its_key(tmp_path: Path, change: dict[str, object], expected: str) -> None:
    found = problems(tmp_path, mutated(change))
    assert len(found) == 1, found
    assert found[0].startswith(expected), found


def test_all_of_a_files_mistakes_come_at_once(tmp_path: Path) -> None:
    found = problems(tmp_path, mutated({"alpha": 2, "sides.TD3.runs.seeds": "x", "comparisons.0.test": "t"}))
    assert [line.split(":")[0] for line in found] == ["alpha", "sides.TD3.runs.seeds"]
    found = problems(tmp_path, mutated({"alpha": 2, "comparisons.0.test": "t", "comparisons.0.bound": 3}))
    assert [line.split(":")[0] for line in found] == ["alpha", "comparisons[0] (CDQ helps).test"]


def test_a_reference_side_must_exist_in_the_papers_tables(tmp_path: Path) -> None:
    data = mutated({"sides.paper": {"published": {"paper": "table2", "row": "TD4", "env": "Walker2d-v5"}}})
    assert problems(tmp_path, data)[0].startswith("sides.paper.published: Table 2 has no number for row 'TD4'")
    data = mutated({"sides.authors": {"authors_curves": "Pendulum-v1"}})
    assert problems(tmp_path, data)[0].startswith("sides.authors.authors_curves: 'Pendulum-v1': the authors published")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "is empty"),
        ("a: [1,", "is not valid YAML at line 1"),
        ("- 1\n- 2\n", "the file: must be a mapping of keys, not a list"),
        (b"title: caf\xe9", "is not UTF-8 text"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "is a binary file, not text: name the registration file (YAML)"),
        ("title: a\nalpha: 0.05\ntitle: b\n", "is not valid YAML at line 3, column 1: the key 'title' is written"),
        ("env: {id: Pendulum-v1}\nagent: {}\nrun: {}\n", "is not a registration: it has none of its keys"),
    ],
)
def test_a_file_that_is_no_registration(tmp_path: Path, text: str | bytes, expected: str) -> None:
    path = tmp_path / "registration.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(RegistrationError) as caught:
        read_registration(path)
    assert caught.value.problems[0].startswith(f"{path}: {expected}")


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be"])
def test_a_good_file_with_a_byte_order_mark_reads(tmp_path: Path, encoding: str) -> None:
    """Windows editors and PowerShell save UTF-8 or UTF-16 with a byte-order mark: valid input, never refused."""
    path = tmp_path / "registration.yaml"
    text = yaml.safe_dump(GOOD, sort_keys=False, allow_unicode=True)
    bom = {"utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}.get(encoding, b"")
    path.write_bytes(bom + text.encode(encoding))
    assert read_registration(path).title == GOOD["title"]


ANCHORED = """\
registration: 1
title: anchors
statistics: {last3: {kind: last_evaluations, count: 3}}
sides:
  TD3:
    runs: &runs {env: Pendulum-v1, row: TD3, seeds: 0-2}
    assumed: &guess {mean: -300, sd: 100, source: a guess}
  TD3 - CDQ:
    runs: {<<: *runs, row: TD3 - CDQ}
    assumed: *guess
comparisons: [{name: CDQ helps, test: directional, statistic: last3, sides: [TD3, TD3 - CDQ]}]
"""


def test_anchors_and_merge_keys_read(tmp_path: Path) -> None:
    """A merged key (``<<: *runs``) overridden beside the merge is no key written twice."""
    registration = read_registration(write(tmp_path, ANCHORED))
    runs = registration.sides["TD3 - CDQ"].runs
    assert runs is not None and dict(runs.config)["paper_row"] == "TD3 - CDQ" and runs.seeds == (0, 1, 2)


def test_plan_refuses_a_bad_file_in_one_line_a_problem_exit_2_nothing_written(tmp_path: Path) -> None:
    path = write(tmp_path, mutated({"alpha": 2, "power": 0}))
    out = tmp_path / "plan"
    done = subprocess.run(
        [sys.executable, "-m", "td3x.commands.report", "--plan", str(path), "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"report error: {path}: alpha: 2 is out of range: allowed 1e-06 to 0.5",
        f"report error: {path}: power: 0 is out of range: allowed 0.5 to 0.999",
    ]
    assert not out.exists() and done.stdout == ""
    command = [sys.executable, "-m", "td3x.commands.report", "--plan", str(tmp_path)]
    folder = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert folder.returncode == 2
    assert folder.stderr.strip().endswith("is a directory: name the registration file (YAML)")


def test_plan_with_run_dirs_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "td3x.commands.report", str(tmp_path), "--plan", str(WALKER)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2 and "--plan takes a registration file alone" in done.stderr
