"""The seed-sources section on its own design: runs shared bit for bit and the ratios without them, the
determinism control as bit-identity, the power at the study's size, and the variance shares'
F intervals, on small hand-checkable cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from td3x.analysis.reading.source_studies import (
    ALL_VARY,
    REPEAT,
    STATISTICS,
    Sample,
    SourceStudy,
    _spread,
    bit_identical,
)
from td3x.analysis.sections.seed_sources import display_frame, markdown, ratios_without, shared_runs
from td3x.analysis.stats.spread_tests import study_power

ROOT = Path(__file__).resolve().parents[2]
STEPS = np.array([0, 5, 10])


def run(label: str, final: float) -> Sample:
    return Sample(label, STEPS, np.array([10.0, final / 2, final]))


def study(samples: dict[str, list[Sample]]) -> SourceStudy:
    spreads = {
        (name, statistic): _spread(runs, samples[ALL_VARY], statistic)
        for name, runs in samples.items()
        for statistic in STATISTICS
    }
    return SourceStudy("Hopper-v5", "Hopper-v5", samples, spreads, [], {s: 1.0 for s in STATISTICS}, 20)


SHARED = run("all_vary/seed_0", 400.0)  # far from all_vary's other runs, and in every source condition too
ALL = [SHARED, run("all_vary/seed_1", 100.0), run("all_vary/seed_2", 110.0), run("all_vary/seed_3", 120.0)]
WEIGHTS = [run("weights/seed_0", 400.0), run("weights/seed_1", 90.0), run("weights/seed_2", 300.0)]


def test_a_run_two_conditions_share_is_found_and_left_out_of_the_ratio() -> None:
    assert shared_runs(ALL, {"weights": WEIGHTS, "env": ALL[1:]}) == {"weights": [0], "env": [0, 1, 2]}
    # without the shared run: weights' finals 90, 300 (SD 210/√2) against all_vary's 100, 110, 120 (SD 10)
    ratio = ratios_without(ALL, {"weights": WEIGHTS}, "final")["weights"]
    assert ratio == pytest.approx(210 / np.sqrt(2) / 10)


def test_the_determinism_control_is_bit_identity_not_a_spread() -> None:
    copy = Sample("repeat_2", STEPS, SHARED.returns.copy())
    assert bit_identical([SHARED, copy]) and not bit_identical([SHARED, ALL[1]]) and not bit_identical([SHARED])
    frame = display_frame(study({ALL_VARY: ALL, REPEAT: [SHARED, copy]}))
    assert frame.loc[REPEAT].tolist()[:4] == ["2", "bit-identical: yes", "—", "—"]


@pytest.mark.results
def test_the_power_of_5_runs_against_5_is_the_one_first_stated_for_the_seed_study() -> None:
    """study_power(5) gives the post-hoc figures the pre-registration file recorded for the first seed study."""
    recorded = yaml.safe_load((ROOT / "docs" / "results" / "preregistration.yaml").read_text())["post_hoc"]
    power = study_power(recorded["seed_study_runs"])
    figures = recorded["computed"]["seed_study"]
    assert round(power.f_test_ratio, 2) == figures["f_test_ratio_80"]
    assert round(power.bf_size, 3) == figures["bf_size"]
    assert round(power.bf_power_ratio_4, 3) == figures["bf_power_ratio_4"]


def test_the_f_test_detects_its_ratio_with_80_percent_power_by_scipy() -> None:
    ratio, df = study_power(3).f_test_ratio, 2
    low, high = stats.f.ppf(0.025, df, df), stats.f.ppf(0.975, df, df)
    assert stats.f.sf(high / ratio**2, df, df) + stats.f.cdf(low / ratio**2, df, df) == pytest.approx(0.8)


def test_the_power_at_the_study_s_n_is_quoted() -> None:
    text = markdown([study({ALL_VARY: ALL[:3], "weights": WEIGHTS})])
    power = study_power(3)
    assert f"could detect only about {power.f_test_ratio:.2f}-fold differences in SD" in text
    assert f"real size at 3 against 3 is {power.bf_size:.1%}" in text and "(simulated, normal runs)" in text
    assert "none was detected" in text and "**Shared run.** In 1 of 1 source conditions" in text


def test_the_measurement_share_gets_its_f_interval() -> None:
    text = markdown([study({ALL_VARY: ALL, "weights": WEIGHTS})])
    base = np.std([s.value("final") for s in ALL], ddof=1)
    share = 1.0 / base**2  # the within-run SD is 1 on 20 degrees of freedom, all_vary's variance on 3
    low, high = share / stats.f.ppf(0.975, 20, 3), share / stats.f.ppf(0.025, 20, 3)
    assert f"(95% F interval {100 * low:.2g}% to {100 * high:.2g}%" in text
