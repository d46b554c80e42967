"""docs/results/preregistration.yaml: every computed number is what scripts/preregistration_power.py makes of the
committed files, the power functions give the textbook answers, and the page quotes the file."""

from __future__ import annotations

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


def test_welch_power_matches_the_textbook_two_sample_t_test() -> None:
    # Cohen's d = 0.5, 64 per group, two-sided alpha 0.05: power 0.8015 (G*Power, statsmodels' TTestIndPower)
    assert power.welch_power(0.5, 1.0, 64, 1.0, 64, 0.05) == pytest.approx(0.8015, abs=5e-4)
    # d = 0.8, 26 per group: 0.807
    assert power.welch_power(0.8, 1.0, 26, 1.0, 26, 0.05) == pytest.approx(0.807, abs=1e-3)
    assert power.welch_power(0.0, 1.0, 10, 2.0, 5, 0.05) == pytest.approx(0.05, abs=1e-12)  # the size, at no effect
    assert power.mdd(1.0, 64, 1.0, 64, 0.05, 0.8) == pytest.approx(0.4991, abs=5e-4)


def test_tost_power_matches_a_simulation_of_welch_tost() -> None:
    rng = np.random.default_rng(0)
    sims, n_x, n_y, sd_x, sd_y, bound, alpha = 100_000, 10, 14, 287.7, 607.2, 645.0, 0.025
    x = rng.normal(0.0, sd_x, (sims, n_x))
    y = rng.normal(0.0, sd_y, (sims, n_y))
    vx, vy = x.var(axis=1, ddof=1) / n_x, y.var(axis=1, ddof=1) / n_y
    df = (vx + vy) ** 2 / (vx**2 / (n_x - 1) + vy**2 / (n_y - 1))
    half = stats.t.ppf(1 - alpha, df) * np.sqrt(vx + vy)
    difference = x.mean(axis=1) - y.mean(axis=1)
    simulated = np.mean((difference - half > -bound) & (difference + half < bound))
    assert power.tost_power(0.0, bound, sd_x, n_x, sd_y, n_y, alpha) == pytest.approx(simulated, abs=0.005)


def test_tost_power_has_the_normal_limit_and_its_size_at_the_bound() -> None:
    se = power.welch_se(1.0, 5000, 1.0, 5000)
    z = stats.norm.ppf(0.95)
    normal_limit = 2 * stats.norm.cdf(0.05 / se - z) - 1
    assert power.tost_power(0.0, 0.05, 1.0, 5000, 1.0, 5000, 0.05) == pytest.approx(normal_limit, abs=1e-3)
    at_bound = power.tost_power(1.0, 1.0, 1.0, 200, 1.0, 200, 0.05)  # true difference on the bound: the size
    assert 0.045 < at_bound <= 0.05
    # a bound a tenth of an SD wide at 5 a side: only samples with almost no spread fit their interval inside it
    assert power.tost_power(0.0, 0.1, 1.0, 5, 1.0, 5, 0.05) < 1e-6
    assert power.tost_power(0.0, 1.0, 1.0, 200, 1.0, 200, 0.05) > 0.9999  # a bound of 10 SEs: always claimed


def test_the_f_test_and_brown_forsythe_give_the_audits_figures() -> None:
    assert power.f_test_ratio(5, 5, 0.05, 0.8) == pytest.approx(4.9, abs=0.05)
    rate = power.rejection_rate(power.bf_p, power.Scenario(1.0, 0.0), 5, 0.05, 20_000, 39, 0.0)
    assert rate < 0.02  # Brown-Forsythe at 5 against 5 rejects far less often than its 5%


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
    quoted = {float(value) for value in re.findall(r"(?<![\w.])-?\d+\.\d+", page)}
    in_the_file = {float(value) for _, value in power.leaves(registration) if isinstance(value, float)}
    assert quoted <= in_the_file | {0.025}, sorted(quoted - in_the_file)  # α/2 = 0.025, Holm's first step
