"""The numbers of docs/results/preregistration.yaml, made again from committed files: pilot SDs, equivalence bounds,
sample sizes, power, minimum detectable differences, simulated sizes and power, and compute estimates.

    python scripts/preregistration_power.py            # print every computed number, as the file's `computed` blocks
    python scripts/preregistration_power.py --check    # compare them with the file; exit 1 on any mismatch

The file holds the design (levels, seeds, step ranges, the bound rule); this script reads it and computes the rest,
each number rounded to the precision the file prints, so that ``--check`` compares them exactly. The data:
td3x's and Stable-Baselines3's committed pilot runs (docs/results/runs), the first seed study's runs
(docs/results/seed_study/runs), the authors' TD3 curves (td3x/data, read through ``td3x.analysis.paper``), and the
compute tables (docs/results/report/compute.csv, docs/results/seed_study/report/compute.csv, docs/performance.md).

The power of Welch's difference test and of TOST, and the minimum detectable difference, are
``td3x.analysis.power``'s (the report computes them the same way). The seed-study tests
(``td3x.analysis.spread_tests``, with which the report judges the registered seed study) are simulated with a fixed
seed; the stalled-actors follow-up's Fisher test is computed exactly (its reference count from the registered seed
study's runs, docs/results/seed_study_registered/runs).
"""

from __future__ import annotations

import csv
import functools
import itertools
import math
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from scipy import optimize, stats

from td3x.analysis.metrics import max_average_return as table1_peak
from td3x.analysis.paper import TD3_ROW, authors_curves, authors_steps, table2_score
from td3x.analysis.paper import authors_statistic as paper_statistic
from td3x.analysis.power import mdd, smallest_bound, tost_power
from td3x.analysis.registration import Registration, window_mean
from td3x.analysis.runs import Run, find_runs
from td3x.analysis.seed_study_registered import find_conditions, read_design
from td3x.analysis.spread_tests import bf_p, bf_tost_p, f_tost_p
from td3x.commands.common import OneLineParser

ROOT = Path(__file__).resolve().parents[1]
REGISTRATION = ROOT / "docs" / "results" / "preregistration.yaml"
RUNS = ROOT / "docs" / "results" / "runs"
STUDY_RUNS = ROOT / "docs" / "results" / "seed_study" / "runs"
REGISTERED_STUDY_RUNS = ROOT / "docs" / "results" / "seed_study_registered" / "runs"
STALLED_RUNS = ROOT / "docs" / "results" / "stalled_actors" / "runs"
COMPUTE = ROOT / "docs" / "results" / "report" / "compute.csv"
STUDY_COMPUTE = ROOT / "docs" / "results" / "seed_study" / "report" / "compute.csv"
PERFORMANCE = ROOT / "docs" / "performance.md"
HORIZON = 100_000  # every committed pilot run's length
POWER_DIGITS, RETURN_DIGITS, RATIO_DIGITS, HOURS_DIGITS = 3, 2, 2, 1


# ------------------------------------------------------------------------------------------------ Welch and TOST
def sd_upper(sd: float, n: int, confidence: float) -> float:
    """The one-sided upper confidence limit of a normal SD estimated from ``n`` values (chi-square)."""
    return sd * math.sqrt((n - 1) / stats.chi2.ppf(1 - confidence, n - 1))


def sd_at_power(power_at_sd: Callable[[float], float], start: float, power: float) -> float:
    """The SD (above ``start``, where the power is higher) at which ``power_at_sd`` falls to ``power``."""
    high = start
    while power_at_sd(high) > power:
        high *= 2
    return float(optimize.brentq(lambda sd: power_at_sd(sd) - power, start, high))


def f_test_ratio(n_x: int, n_y: int, alpha: float, power: float) -> float:
    """The SD ratio (above 1) that the two-sided F test of equal variances detects with ``power`` (normal data)."""

    def power_at(ratio: float) -> float:
        low, high = stats.f.ppf(alpha / 2, n_x - 1, n_y - 1), stats.f.ppf(1 - alpha / 2, n_x - 1, n_y - 1)
        return float(stats.f.sf(high / ratio**2, n_x - 1, n_y - 1) + stats.f.cdf(low / ratio**2, n_x - 1, n_y - 1))

    return float(optimize.brentq(lambda r: power_at(r) - power, 1.0 + 1e-9, 1000.0))


# ------------------------------------------------------------------------------ spread: Brown-Forsythe tests, simulated
def draw_runs(rng: np.random.Generator, sims: int, n: int, sd: float, collapsed: float, share: float) -> np.ndarray:
    """``sims`` samples of ``n`` runs: normal with this SD; each run with probability ``share`` collapsed instead, at
    ``collapsed`` SDs from the mean (a location-scale family, so that every scale measure's ratio is the SDs')."""
    runs = rng.standard_normal((sims, n))
    runs[rng.random((sims, n)) < share] = collapsed
    return sd * runs


@dataclass(frozen=True)
class Scenario:
    """A simulated truth for the seed study: the SD ratio (source over all_vary) and the share of collapsed runs."""

    ratio: float
    collapsed_share: float


def rejection_rate(
    test: Callable[[np.ndarray, np.ndarray], np.ndarray],
    scenario: Scenario,
    n: int,
    level: float,
    sims: int,
    seed: int,
    collapsed: float,
) -> float:
    """How often ``test``'s p is below ``level`` when source and all_vary runs are drawn under ``scenario``."""
    rng = np.random.default_rng(seed)
    source = draw_runs(rng, sims, n, scenario.ratio, collapsed, scenario.collapsed_share)
    all_vary = draw_runs(rng, sims, n, 1.0, collapsed, scenario.collapsed_share)
    return float(np.mean(test(source, all_vary) < level))


# --------------------------------------------------------------------------------------------------------- data
def rounded(value: float | None, digits: int) -> float | None:
    """``value`` at the file's precision, None kept."""
    return None if value is None else round(float(value), digits)


@functools.cache
def _runs(folder: Path) -> tuple[Run, ...]:
    """Every complete run below ``folder``, read once (none when the folder does not exist yet)."""
    return tuple(run for run in find_runs([folder]) if run.problem is None) if folder.exists() else ()


def complete_runs(folder: Path, env_id: str) -> list[Run]:
    """The complete runs of ``env_id`` below ``folder``."""
    return [run for run in _runs(folder) if run.env_id == env_id]


def random_steps(runs: list[Run]) -> int:
    """The runs' shared ``env.random_steps``: the primary statistic starts after it."""
    values = {int(run.config["env"]["random_steps"]) for run in runs}
    if len(values) != 1:
        raise ValueError(f"runs with different env.random_steps: {sorted(values)}")
    return values.pop()


@dataclass(frozen=True)
class Pilot:
    """Committed pilot runs: a folder below docs/results/runs and the seeds that are the pilot."""

    folder: str
    seeds: tuple[int, ...]

    def runs(self, env_id: str) -> list[Run]:
        """The pilot's complete runs of ``env_id`` (other runs in the folder, test runs say, are not the pilot)."""
        return [run for run in complete_runs(RUNS / self.folder, env_id) if run.seed in self.seeds]

    def statistic(self, env_id: str) -> np.ndarray:
        """Each pilot run's primary statistic: its mean return over evaluations after env.random_steps to 100k."""
        runs = self.runs(env_id)
        return np.array([window_mean(run, random_steps(runs), HORIZON) for run in runs]) if runs else np.empty(0)

    def published_statistic(self, env_id: str) -> np.ndarray:
        """Each pilot run's published statistic: its mean return over evaluations 5k..100k (step 0 out)."""
        return np.array([window_mean(run, 0, HORIZON) for run in self.runs(env_id)])


def pilots(registration: dict[str, Any]) -> tuple[Pilot, Pilot]:
    """td3x's and SB3's pilots, as the file names them."""
    named = registration["common"]["pilots"]
    return Pilot(named["td3x"]["folder"], tuple(named["td3x"]["seeds"])), Pilot(
        named["sb3"]["folder"], tuple(named["sb3"]["seeds"])
    )


def authors_statistic(env_id: str, first: int, last: int) -> np.ndarray:
    """The authors' 10 seeds' mean return over their evaluations at steps first..last (inclusive)."""
    values = paper_statistic(env_id, first, last)
    if values is None:
        raise ValueError(f"no authors' curves for {env_id}")
    return values


def _curves(env_id: str) -> np.ndarray:
    curves = authors_curves(env_id)
    if curves is None:
        raise ValueError(f"no authors' curves for {env_id}")
    return curves


def max_average_return(curves: np.ndarray) -> float:
    """Table 1's metric (``metrics.max_average_return``) of the authors' curves."""
    return table1_peak(curves, authors_steps(curves.shape[1])).value


def subset_max_average_return(curves: np.ndarray, n: int) -> float:
    """Table 1's metric averaged over every choice of ``n`` of the seeds: how high the maximum of a mean over fewer
    seeds lands, from the same runs (the maximum of a noisier curve is biased upward)."""
    subsets = itertools.combinations(range(len(curves)), n)
    return float(np.mean([max_average_return(curves[list(subset)]) for subset in subsets]))


def compute_row(path: Path, row: str, env_id: str) -> dict[str, str]:
    """One row of a report's compute.csv."""
    with path.open() as handle:
        for entry in csv.DictReader(handle):
            if entry["row"] == row and entry["env"] == env_id:
                return entry
    raise ValueError(f"{path} has no compute row {row!r} on {env_id}")


def core_hours_per_run(path: Path, row: str, env_id: str) -> float:
    """Core-hours per seed of a committed cell (its total over its seeds)."""
    entry = compute_row(path, row, env_id)
    return float(entry["core-hours"]) / int(entry["seeds"])


def bench_rate(preset: str, seeds: int) -> float:
    """td3x's env steps per second per core in docs/performance.md's per-core table (Hopper, one thread)."""
    pattern = re.compile(rf"^\| {re.escape(preset)} \| {seeds} \| ([\d.]+) \|", re.MULTILINE)
    match = pattern.search(PERFORMANCE.read_text())
    if match is None:
        raise ValueError(f"{PERFORMANCE} has no row for {preset} at K = {seeds}")
    return float(match.group(1))


# ------------------------------------------------------------------------------------------------ the comparisons
def pilot_block(values: np.ndarray) -> dict[str, Any]:
    """A pilot's n, mean and SD (None when it has no runs yet)."""
    if len(values) < 2:
        return {"seeds": len(values), "mean": None, "sd": None}
    return {
        "seeds": len(values),
        "mean": rounded(values.mean(), RETURN_DIGITS),
        "sd": rounded(values.std(ddof=1), RETURN_DIGITS),
    }


def smallest_n(power_at: Callable[[int], float], low: int, high: int, target: float) -> int | None:
    """The smallest n in low..high whose power reaches ``target``, or None."""
    return next((n for n in range(low, high + 1) if power_at(n) >= target), None)


def design_numbers(
    sd_x: float, n_x: int, sd_y: float, n_y: int, bound: float, alpha: float, power: float
) -> dict[str, Any]:
    """TOST power at the bound (at Holm's first step α/2 and at α) and the MDD (80%) at α and α/2."""
    return {
        "power_tost_holm_first_step": rounded(tost_power(0.0, bound, sd_x, n_x, sd_y, n_y, alpha / 2), POWER_DIGITS),
        "power_tost_alpha": rounded(tost_power(0.0, bound, sd_x, n_x, sd_y, n_y, alpha), POWER_DIGITS),
        "mdd_alpha": rounded(mdd(sd_x, n_x, sd_y, n_y, alpha, power), RETURN_DIGITS),
        "mdd_holm_first_step": rounded(mdd(sd_x, n_x, sd_y, n_y, alpha / 2, power), RETURN_DIGITS),
    }


def _sizes(common: dict[str, Any]) -> tuple[int, int, float, float]:
    return common["n_min"], common["n_max"], common["alpha"], common["power"]


def printed_sd(values: np.ndarray) -> float:
    """The sample SD (ddof = 1) as the file prints it: the SD every power figure assumes."""
    return float(np.round(values.std(ddof=1), RETURN_DIGITS))


def bound_of(fraction: float, mean: float) -> int:
    """An equivalence bound: ``fraction`` of |``mean``|, rounded to a whole return unit."""
    return round(fraction * abs(mean))


def equal_sides_power(n: int, sd: float, bound: float, alpha: float) -> float:
    """TOST power at n seeds a side, both sides at ``sd``, true difference 0."""
    return tost_power(0.0, bound, sd, n, sd, n, alpha)


def bf16_numbers(registration: dict[str, Any]) -> dict[str, Any]:
    """bf16 against fp32 td3x: both sides assumed to spread as td3x's fp32 pilot; n per side by the sizing rule."""
    design = registration["bf16"]
    low, high, alpha, power = _sizes(registration["common"])
    numbers: dict[str, Any] = {}
    for env_id in design["envs"]:
        fp32 = pilots(registration)[0].statistic(env_id)
        sd, bound = printed_sd(fp32), bound_of(design["bound_fraction"], float(fp32.mean()))
        power_at = functools.partial(equal_sides_power, sd=sd, bound=bound, alpha=alpha / 2)
        n = smallest_n(power_at, low, high, power) or high
        numbers[env_id] = {
            "fp32_pilot": pilot_block(fp32),
            "bound": bound,
            "n_per_side": n,
            "power_tost_holm_first_step_at_10": rounded(power_at(10), POWER_DIGITS),
            **design_numbers(sd, n, sd, n, bound, alpha, power),
        }
    return numbers


def bf16_fp32_tanh_numbers(registration: dict[str, Any], bf16: dict[str, Any]) -> dict[str, Any]:
    """bf16 with the actor's tanh in fp32 against bf16's fp32 side: bf16's bound, fp32 runs and assumed SD; n_bf16 by
    the sizing rule at α (a family of one)."""
    low, high, alpha, power = _sizes(registration["common"])
    numbers: dict[str, Any] = {}
    for env_id in registration["bf16_fp32_tanh"]["envs"]:
        sd, bound, n_fp32 = bf16[env_id]["fp32_pilot"]["sd"], bf16[env_id]["bound"], bf16[env_id]["n_per_side"]
        power_at = functools.partial(tost_power, 0.0, bound, sd, sd_y=sd, n_y=n_fp32, alpha=alpha)
        n = smallest_n(power_at, low, high, power) or high
        numbers[env_id] = {
            "bound": bound,
            "n_fp32": n_fp32,
            "n_bf16": n,
            "power_tost_alpha": rounded(power_at(n), POWER_DIGITS),
            "mdd_alpha": rounded(mdd(sd, n, sd, n_fp32, alpha, power), RETURN_DIGITS),
        }
    return numbers


def peer_numbers(registration: dict[str, Any], bf16: dict[str, Any]) -> dict[str, Any]:
    """td3x against SB3: td3x's n is bf16's fp32 side; SB3's from its pilot by the sizing rule (None: no pilot)."""
    numbers: dict[str, Any] = {}
    for env_id in registration["peer"]["envs"]:
        td3x, sb3 = (pilot.statistic(env_id) for pilot in pilots(registration))
        entry: dict[str, Any] = {"td3x_pilot": pilot_block(td3x), "sb3_pilot": pilot_block(sb3)}
        entry.update(bound=bf16[env_id]["bound"], n_td3x=bf16[env_id]["n_per_side"], n_sb3=None, decision=None)
        if len(sb3) >= registration["peer"]["pilot_seeds"]:
            entry.update(sized_peer(registration, td3x, sb3, entry["n_td3x"], entry["bound"]))
        numbers[env_id] = entry
    return numbers


def sized_peer(registration: dict[str, Any], td3x: np.ndarray, sb3: np.ndarray, n_x: int, bound: int) -> dict:
    """SB3's n by the sizing rule from the two pilots, the decision, and the design's power and MDDs."""
    design = registration["peer"]
    low, high, alpha, power = _sizes(registration["common"])
    sd_x, sd_y = printed_sd(td3x), printed_sd(sb3)

    def power_at(n_y: int, sd: float = sd_y) -> float:
        return tost_power(0.0, bound, sd_x, n_x, sd, n_y, alpha / 2)

    n_y = smallest_n(power_at, low, high, power)
    run = n_y is not None or power_at(high) >= design["least_power_to_run"]
    n_y = n_y or high
    upper_x = sd_upper(sd_x, len(td3x), design["sd_upper_confidence"])
    upper_y = sd_upper(sd_y, len(sb3), design["sd_upper_confidence"])
    at_upper = tost_power(0.0, bound, upper_x, n_x, upper_y, n_y, alpha / 2)
    return {
        "n_sb3": n_y,
        "decision": "run" if run else "not run: no affordable n can pass",
        **design_numbers(sd_x, n_x, sd_y, n_y, bound, alpha, power),
        "power_tost_holm_first_step_at_upper_sds": rounded(at_upper, POWER_DIGITS),
        "sb3_sd_at_half_power": rounded(sd_at_power(lambda sd: power_at(n_y, sd), sd_y, 0.5), RETURN_DIGITS),
    }


def not_run_numbers(registration: dict[str, Any]) -> dict[str, Any]:
    """Envs registered as not run: TOST power at the most seeds afforded, from the committed pilots."""
    design = registration["peer"]
    _, high, alpha, _ = _sizes(registration["common"])
    numbers: dict[str, Any] = {}
    for env_id in design["not_run"]:
        td3x, sb3 = (pilot.statistic(env_id) for pilot in pilots(registration))
        sd_x, sd_y = printed_sd(td3x), printed_sd(sb3)
        bound = bound_of(design["bound_fraction"], float(td3x.mean()))
        numbers[env_id] = {
            "td3x_pilot": pilot_block(td3x),
            "sb3_pilot": pilot_block(sb3),
            "bound": bound,
            "power_tost_holm_first_step_at_most_seeds": rounded(
                tost_power(0.0, bound, sd_x, high, sd_y, high, alpha / 2), POWER_DIGITS
            ),
            "power_tost_alpha_at_most_seeds": rounded(
                tost_power(0.0, bound, sd_x, high, sd_y, high, alpha), POWER_DIGITS
            ),
        }
    return numbers


def collapsed_run(registration: dict[str, Any]) -> tuple[float, float]:
    """The first study's failed warm-up run's statistic, and how far it lies from all_vary's mean in all_vary's SDs
    (both on the study's primary statistic)."""
    design = registration["seed_study"]["collapsed_runs"]
    runs = _runs(STUDY_RUNS)

    def statistic(condition: str, seed: int | None = None) -> np.ndarray:
        chosen = [r for r in runs if f"seed_study={condition}" in str(r.path) and seed in (None, r.seed)]
        return np.array([window_mean(r, 0, registration["seed_study"]["steps"]) for r in chosen])

    all_vary = statistic("all_vary")
    failed = statistic(design["condition"], design["seed"])
    return float(failed[0]), float((failed[0] - all_vary.mean()) / all_vary.std(ddof=1))


def seed_study_numbers(registration: dict[str, Any]) -> dict[str, Any]:
    """The spread study's runs per condition (its sizing rule) and its simulated size and power there."""
    design = registration["seed_study"]
    sim = design["simulation"]
    alpha, power, (low, high) = registration["common"]["alpha"], registration["common"]["power"], design["ratio_bound"]
    failed_run, distance = collapsed_run(registration)
    collapsed = round(distance, RATIO_DIGITS)
    share = design["collapsed_runs"]["share"]
    bf = lambda x, y: bf_tost_p(x, y, low, high)  # noqa: E731
    ft = lambda x, y: f_tost_p(x, y, low, high)  # noqa: E731

    def rate(test: Callable[[np.ndarray, np.ndarray], np.ndarray], ratio: float, shr: float, lvl: float) -> float:
        value = rejection_rate(test, Scenario(ratio, shr), n, lvl, sim["replicates"], sim["seed"], collapsed)
        return float(np.round(value, POWER_DIGITS))

    n = design["runs_min"]  # the smallest even n from runs_min on whose power reaches the target (normal runs)
    while rate(bf, 1.0, 0.0, alpha / 2) < power:
        n += 2
    numbers: dict[str, Any] = {
        "collapsed_run_mean": rounded(failed_run, RETURN_DIGITS),
        "collapsed_at_sds": collapsed,
        "runs_per_condition": n,
    }
    for name, shr in (("normal", 0.0), ("collapsed", share)):
        numbers[name] = {
            "bf_tost_power_ratio_1_holm_first_step": rate(bf, 1.0, shr, alpha / 2),
            "bf_tost_power_sensitivity_ratio_holm_first_step": rate(bf, design["sensitivity_ratio"], shr, alpha / 2),
            "bf_tost_power_ratio_1_alpha": rate(bf, 1.0, shr, alpha),
            "bf_tost_size_at_high_bound": rate(bf, high, shr, alpha),
            "bf_tost_size_at_low_bound": rate(bf, low, shr, alpha),
            "f_tost_size_at_high_bound": rate(ft, high, shr, alpha),
            "f_tost_size_at_low_bound": rate(ft, low, shr, alpha),
            "bf_difference_power_ratio_2": rate(bf_p, 2.0, shr, alpha),
        }
    return numbers


def stalled_counts(registration: dict[str, Any], condition: str) -> tuple[int, int]:
    """(stalled, runs) of one condition of the registered seed study (its registered runs, as the report finds them):
    its complete runs whose actor ended with a gradient norm below td3x.algo.td3.STALLED_ACTOR_NORM."""
    design = read_design(Registration(REGISTRATION, registration))
    return stalled_count(find_conditions(list(_runs(REGISTERED_STUDY_RUNS)), design)[condition].complete)


def stalled_count(runs: list[Run]) -> tuple[int, int]:
    """(stalled, runs): how many of ``runs`` ended with a stalled actor, and how many there are."""
    return sum(bool(run.actor_stalled) for run in runs), len(runs)


def fisher_rejection_rate(reference: tuple[int, int], n: int, rate: float, alpha: float) -> float:
    """How often Fisher's two-sided exact test of n new runs' stalled count against the reference's count (fixed)
    rejects at ``alpha`` when each new run stalls with probability ``rate``."""
    stalled, runs = reference
    rejected = [k for k in range(n + 1) if stats.fisher_exact([[stalled, runs - stalled], [k, n - k]])[1] < alpha]
    return float(stats.binom.pmf(rejected, n, rate).sum())


def stalled_actors_numbers(registration: dict[str, Any]) -> dict[str, Any]:
    """The stalled-actors follow-up's reference count (the registered seed study's runs), runs (its sizing rule) and
    the test's rejection rates there."""
    design, alpha = registration["stalled_actors"], registration["common"]["alpha"]
    reference = stalled_counts(registration, design["reference_condition"])
    step, low, high = design["runs_step"], design["runs_min"], design["runs_max"]

    def power(n: int, rate: float = design["alternative_rate"]) -> float:
        return float(np.round(fisher_rejection_rate(reference, n, rate, alpha), POWER_DIGITS))

    n = next((n for n in range(low, high + 1, step) if power(n) >= registration["common"]["power"]), high)
    return {
        "reference_stalled": reference[0],
        "reference_runs": reference[1],
        "runs": n,
        "power_at_alternative_rate": power(n),
        "power_at_1_of_32": power(n, 1 / 32),
        "rejection_rate_at_reference_rate": power(n, reference[0] / reference[1]),
    }


def stalled_control_numbers(registration: dict[str, Any], stalled_actors: dict[str, Any]) -> dict[str, Any]:
    """The control's treated count (stalled_actors' committed runs) and its test's rejection rates at n runs a side
    when the control's runs stall as often as the seed study's warmup runs did (``stalled_actors``' reference
    count), and half as often."""
    design, alpha = registration["stalled_actors_control"], registration["common"]["alpha"]
    treated = [
        run
        for run in _runs(STALLED_RUNS)
        if run.config["seeds"]["weights"] == registration["stalled_actors"]["weights_seed"]
    ]
    counted = stalled_count(treated)
    reference_rate = stalled_actors["reference_stalled"] / stalled_actors["reference_runs"]
    n = design["runs_per_side"]
    return {
        "treated_stalled": counted[0],
        "treated_runs": counted[1],
        "power_at_reference_rate": rounded(fisher_rejection_rate(counted, n, reference_rate, alpha), POWER_DIGITS),
        "power_at_half_the_reference_rate": rounded(
            fisher_rejection_rate(counted, n, reference_rate / 2, alpha), POWER_DIGITS
        ),
    }


def horizon_numbers(registration: dict[str, Any]) -> dict[str, Any]:
    """TD3 at 1M on HalfCheetah: TOST and Welch against the authors' 10 seeds, both sides at the authors' SD."""
    design = registration["paper_horizon"]
    alpha, power = registration["common"]["alpha"], registration["common"]["power"]
    authors = authors_statistic(design["env"], design["first_step"], design["last_step"])
    sd, n, n_authors = float(authors.std(ddof=1)), design["seeds"], len(authors)
    table2 = table2_score(TD3_ROW, design["env"])
    if table2 is None:
        raise ValueError(f"the paper's Table 2 has no TD3 number for {design['env']}")
    bound = bound_of(design["bound_fraction"], table2)
    many = 10**6  # "infinitely many" td3x seeds: the floor set by the authors' 10
    return {
        "table1_authors": rounded(max_average_return(_curves(design["env"])), RETURN_DIGITS),
        "table1_mean_at_5_of_their_seeds": rounded(subset_max_average_return(_curves(design["env"]), n), RETURN_DIGITS),
        "table2_td3": table2,
        "authors_mean": rounded(authors.mean(), RETURN_DIGITS),
        "authors_sd": rounded(sd, RETURN_DIGITS),
        "bound": bound,
        "power_tost": rounded(tost_power(0.0, bound, sd, n, sd, n_authors, alpha), POWER_DIGITS),
        "mdd": rounded(mdd(sd, n, sd, n_authors, alpha, power), RETURN_DIGITS),
        "mdd_floor": rounded(mdd(sd, many, sd, n_authors, alpha, power), RETURN_DIGITS),
        "mdd_floor_in_sds": rounded(mdd(1.0, many, 1.0, n_authors, alpha, power), POWER_DIGITS),
        "smallest_bound": rounded(smallest_bound(sd, n, sd, n_authors, alpha, power), RETURN_DIGITS),
        "smallest_bound_floor": rounded(smallest_bound(sd, many, sd, n_authors, alpha, power), RETURN_DIGITS),
    }


def post_hoc_numbers(registration: dict[str, Any]) -> dict[str, Any]:
    """The power the published comparisons had (5k..100k statistic), recomputed: against the authors (their SD
    for both sides), td3x against SB3 (the pilots' SDs), and the first seed study (5 against 5)."""
    design = registration["post_hoc"]
    alpha, power = registration["common"]["alpha"], registration["common"]["power"]
    fidelity: dict[str, Any] = {}
    for env_id, n in design["fidelity_seeds"].items():
        authors = authors_statistic(env_id, 5000, HORIZON)
        sd, mean = float(authors.std(ddof=1)), float(authors.mean())
        sd_td3x = float(pilots(registration)[0].published_statistic(env_id).std(ddof=1))
        fidelity[env_id] = {
            "authors_mean": rounded(mean, RETURN_DIGITS),
            "authors_sd": rounded(sd, RETURN_DIGITS),
            "mdd_alpha": rounded(mdd(sd, n, sd, len(authors), alpha, power), RETURN_DIGITS),
            "mdd_alpha_over_7": rounded(mdd(sd, n, sd, len(authors), alpha / 7, power), RETURN_DIGITS),
            "power_tost_20_percent": rounded(
                tost_power(0.0, 0.2 * abs(mean), sd, n, sd, len(authors), alpha), POWER_DIGITS
            ),
            "power_tost_20_percent_td3x_sd": rounded(
                tost_power(0.0, 0.2 * abs(mean), sd_td3x, n, sd, len(authors), alpha), POWER_DIGITS
            ),
        }
    peer: dict[str, Any] = {}
    for env_id in design["peer_envs"]:
        td3x, sb3 = (pilot.published_statistic(env_id) for pilot in pilots(registration))
        sd_x, sd_y, bound = float(td3x.std(ddof=1)), float(sb3.std(ddof=1)), 0.2 * abs(float(td3x.mean()))
        peer[env_id] = {
            "mdd_alpha": rounded(mdd(sd_x, len(td3x), sd_y, len(sb3), alpha, power), RETURN_DIGITS),
            "power_tost_20_percent": rounded(
                tost_power(0.0, bound, sd_x, len(td3x), sd_y, len(sb3), alpha), POWER_DIGITS
            ),
        }
    many = 10**6
    study_n, sim = design["seed_study_runs"], registration["seed_study"]["simulation"]

    def bf_rate(ratio: float) -> float:
        value = rejection_rate(bf_p, Scenario(ratio, 0.0), study_n, alpha, sim["replicates"], sim["seed"], 0.0)
        return float(np.round(value, POWER_DIGITS))

    return {
        "fidelity": fidelity,
        "mdd_floor_in_sds": rounded(mdd(1.0, many, 1.0, 10, alpha, power), POWER_DIGITS),
        # the same floor with the authors' SD taken as known (z for t): what a normal approximation gives
        "mdd_floor_in_sds_normal_approximation": rounded(
            (stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) / math.sqrt(10), POWER_DIGITS
        ),
        "peer": peer,
        "seed_study": {
            "f_test_ratio_80": rounded(f_test_ratio(study_n, study_n, alpha, power), RATIO_DIGITS),
            "bf_size": bf_rate(1.0),
            "bf_power_ratio_4": bf_rate(4.0),
        },
    }


def compute_numbers(
    registration: dict[str, Any], peer: dict[str, Any], bf16: dict[str, Any], study_runs: int
) -> dict[str, Any]:
    """Core-hours per item, from the committed compute tables (upper bounds: those runs shared their cores)."""
    per_run = {
        ("td3x", env_id): core_hours_per_run(COMPUTE, "TD3 [agent=td3_paper]", env_id)
        for env_id in registration["peer"]["envs"]
    }
    per_run.update({("sb3", "HalfCheetah-v5"): core_hours_per_run(COMPUTE, "SB3 TD3", "HalfCheetah-v5")})
    per_run[("sb3", "Walker2d-v5")] = core_hours_per_run(COMPUTE, "SB3 TD3", registration["compute"]["sb3_walker2d_as"])
    sb3_seeds = {env_id: (peer[env_id]["n_sb3"] or registration["common"]["n_max"]) for env_id in peer}
    pilot_seeds = registration["peer"]["pilot_seeds"]
    td3x_hours = sum(bf16[env]["n_per_side"] * per_run[("td3x", env)] for env in bf16)
    sb3_hours = sum(sb3_seeds[env] * per_run[("sb3", env)] for env in peer)
    sb3_hours += pilot_seeds * per_run[("sb3", "Walker2d-v5")]
    study = registration["seed_study"]
    study_run = core_hours_per_run(STUDY_COMPUTE, "TD3 [seed_study=all_vary]", study["env"])
    horizon = registration["paper_horizon"]
    horizon_steps = horizon["seeds"] * horizon["last_step"]
    return {
        "peer_td3x_fp32": rounded(td3x_hours, HOURS_DIGITS),
        "peer_sb3_with_pilot": rounded(sb3_hours, HOURS_DIGITS),
        "bf16_side": rounded(td3x_hours, HOURS_DIGITS),
        "seed_study": rounded(study_run * study_runs * len(study["conditions"]), HOURS_DIGITS),
        "paper_horizon_from_compute_table": rounded(
            per_run[("td3x", horizon["env"])] * horizon_steps / HORIZON, HOURS_DIGITS
        ),
        "paper_horizon_from_benchmark": rounded(
            horizon_steps / bench_rate("td3_paper", horizon["seeds"]) / 3600, HOURS_DIGITS
        ),
    }


def all_numbers(registration: dict[str, Any]) -> dict[str, Any]:
    """Every computed number of the registration, keyed as the file's ``computed`` blocks."""
    bf16 = bf16_numbers(registration)
    peer = peer_numbers(registration, bf16)
    study = seed_study_numbers(registration)
    stalled = stalled_actors_numbers(registration)
    return {
        "peer": {**peer, **not_run_numbers(registration)},
        "bf16": bf16,
        "bf16_fp32_tanh": bf16_fp32_tanh_numbers(registration, bf16),
        "seed_study": study,
        "stalled_actors": stalled,
        "stalled_actors_control": stalled_control_numbers(registration, stalled),
        "paper_horizon": horizon_numbers(registration),
        "post_hoc": post_hoc_numbers(registration),
        "compute": compute_numbers(registration, peer, bf16, study["runs_per_condition"]),
    }


# ---------------------------------------------------------------------------------------------------- the check
def leaves(tree: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, value) of every leaf of nested dicts."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from leaves(value, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, tree


def mismatches(registration: dict[str, Any], numbers: dict[str, Any]) -> list[str]:
    """One line per computed number the file lacks, gets wrong, or has without the script computing it."""
    written = {key: value for section in numbers for key, value in leaves(_computed(registration, section), section)}
    made = dict(leaves(numbers))
    problems = [
        f"{key}: the file has {written.get(key)!r}, the script {value!r}"
        for key, value in made.items()
        if key not in written or written[key] != value
    ]
    problems += [f"{key}: in the file, not computed by the script" for key in written if key not in made]
    return problems


def _computed(registration: dict[str, Any], section: str) -> dict[str, Any]:
    """A section's ``computed`` block (empty when the file lacks it)."""
    block: dict[str, Any] = (registration.get(section) or {}).get("computed") or {}
    return block


def load_registration(path: Path = REGISTRATION) -> dict[str, Any]:
    """The pre-registration file, parsed."""
    registration: dict[str, Any] = yaml.safe_load(path.read_text())
    return registration


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the file; exit 1 on any mismatch")
    parser.add_argument("--file", type=Path, default=REGISTRATION, help="the pre-registration (default: %(default)s)")
    args = parser.parse_args(argv)
    registration = load_registration(args.file)
    numbers = all_numbers(registration)
    if not args.check:
        blocks = {section: {"computed": block} for section, block in numbers.items()}
        print(yaml.safe_dump(blocks, sort_keys=False, allow_unicode=True), end="")
        return 0
    problems = mismatches(registration, numbers)
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{args.file.name}: {'every computed number matches' if not problems else f'{len(problems)} mismatches'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
