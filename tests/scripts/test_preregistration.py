"""docs/results/preregistration.yaml: every computed number is what scripts/preregistration_power.py makes of the
committed files, the spread tests give the audit's figures, and the page quotes the file (the power functions' own
tests: tests/analysis/test_power.py)."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.scripts import load_script
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "results" / "preregistration.md"


power = load_script("preregistration_power")


@pytest.fixture(scope="module")
def registration() -> dict[str, Any]:
    return power.load_registration()


def computed_blocks(registration: dict[str, Any]) -> dict[str, Any]:
    """The file's ``computed`` blocks by section, as ``all_numbers`` returns them."""
    return {
        section: block["computed"]
        for section, block in registration.items()
        if isinstance(block, dict) and "computed" in block
    }


@pytest.mark.slow  # recomputes every number: the pilots' run files, the authors' curves, the simulations (seconds)
def test_every_computed_number_in_the_file_is_the_scripts(registration: dict[str, Any]) -> None:
    assert power.mismatches(registration, power.all_numbers(registration)) == []


def test_the_check_names_a_missing_a_wrong_and_an_unmade_number() -> None:
    registration = {"bf16": {"computed": {"bound": 645, "n_per_side": 11, "extra": 1.0}}, "peer": {"note": "x"}}
    numbers = {"bf16": {"bound": 645, "n_per_side": 10, "power": 0.9}, "peer": {"bound": 91}}
    assert sorted(power.mismatches(registration, numbers)) == [
        "bf16.extra: in the file, not computed by the script",
        "bf16.n_per_side: the file has 11, the script 10",
        "bf16.power: the file has None, the script 0.9",
        "peer.bound: the file has None, the script 91",
    ]


def test_the_f_test_and_brown_forsythe_give_the_audits_figures() -> None:
    assert power.f_test_ratio(5, 5, 0.05, 0.8) == pytest.approx(4.9, abs=0.05)
    rate = power.rejection_rate(power.bf_p, power.Scenario(1.0, 0.0), 5, 0.05, 20_000, 39, 0.0)
    assert rate < 0.02  # Brown-Forsythe at 5 against 5 rejects far less often than its 5%


def test_the_stalled_actors_test_by_hand() -> None:
    """8 new runs, none stalled, against 12 stalled of 32: with 12 stalled among 40 runs, the chance that none of 8
    drawn is is C(28, 8) / C(40, 8) = 0.040; Fisher's two-sided p adds every table at most as likely (5 to 8
    stalled of the 8), 0.079: not below 0.05. With 16 new runs none stalled is rarer and rejected."""
    tables = [math.comb(12, k) * math.comb(28, 8 - k) for k in range(9)]
    assert tables[0] / sum(tables) == pytest.approx(0.0404, abs=1e-4)
    assert sum(t for t in tables if t <= tables[0]) / sum(tables) == pytest.approx(0.0790, abs=1e-4)
    assert power.fisher_rejection_rate((12, 32), 8, 0.0, 0.05) == 0.0  # a run that never stalls: k = 0 always
    assert power.fisher_rejection_rate((12, 32), 16, 0.0, 0.05) == 1.0
    # at a rate of 1/2 the new runs' count is Binomial(16, 1/2); the test rejects its tails alone
    rate = power.fisher_rejection_rate((12, 32), 16, 0.5, 0.05)
    assert 0.0 < rate < 0.5


def test_brown_forsythe_is_scipys_levene_on_the_median() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.normal(0, 1, (3, 7)), rng.normal(0, 2, (3, 9))
    expected = [stats.levene(a, b, center="median").pvalue for a, b in zip(x, y, strict=True)]
    assert power.bf_p(x, y) == pytest.approx(expected, rel=1e-10)


def test_brown_forsythe_tost_rejects_only_inside_the_bound() -> None:
    rng = np.random.default_rng(2)
    base = rng.standard_normal((1, 400))
    assert power.bf_tost_p(base, rng.standard_normal((1, 400)), 0.5, 2.0)[0] < 0.01  # same spread: equivalent
    assert power.bf_tost_p(4.0 * base, rng.standard_normal((1, 400)), 0.5, 2.0)[0] > 0.5  # four times: not


def test_the_page_quotes_the_files_numbers(registration: dict[str, Any]) -> None:
    page, numbers = PAGE.read_text(), computed_blocks(registration)
    for env_id in ("HalfCheetah-v5", "Walker2d-v5"):
        bf16, peer = numbers["bf16"][env_id], numbers["peer"][env_id]
        assert f"| bf16 − fp32 | {env_id} | ±{bf16['bound']} | {bf16['n_per_side']} / {bf16['n_per_side']} |" in page
        assert f"| td3x − SB3 | {env_id} | ±{peer['bound']} |" in page
        for design in (bf16, peer):  # the page's MDD at α beside the reports' MDD at Holm's first step
            assert f"| {design['mdd_alpha']} | {design['mdd_holm_first_step']} |" in page
    quoted = {float(value) for value in re.findall(r"(?<![\w.])-?\d+\.\d+", page)}
    in_the_file = {float(value) for _, value in power.leaves(registration) if isinstance(value, float)}
    # α/2 = 0.025, Holm's first step; the amendment's 3.47, where bf16 rounds tanh to 1: atanh(1 - 2⁻⁹)
    constants = {0.025, round(math.atanh(1 - 2**-9), 2)}
    assert quoted <= in_the_file | constants, sorted(quoted - in_the_file)
