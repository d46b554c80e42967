"""How often the report's 95% intervals of its aggregates across envs cover the true value, by simulation.

rliable's stratified percentile bootstrap (the IQM, P(row > reference)) has no known coverage at a few seeds per
env, so this measures it on the designs the committed reports use: every aggregates row with a bootstrap CI
(``metrics.MIN_AGGREGATE_BOOTSTRAP_SEEDS`` or more seeds pooled per env), its envs and seeds per env, and per env
normal per-seed normalised scores with the mean and SD (ddof = 1) of that row's committed seeds. For each design,
``--replicates`` samples are drawn, each gets the interval the report would draw, and the CSV gives the share of
intervals that hold the true value of the sampled population:

- IQM: the 25%-trimmed mean of the equal-weight mixture of the envs' normals; stratified percentile bootstrap.
- mean: the mean of the envs' means; the report's Student-t interval (``metrics.stratified_t_interval``) and,
  beside it, rliable's stratified percentile bootstrap, which the report uses from 10 seeds per env.
- P(row > reference): the mean over envs of P(X > Y) = Φ((μx − μy)/√(σx² + σy²)), each row against the first
  bootstrapped row of its report with the same envs; stratified percentile bootstrap, x and y resampled apart.

The bootstrap here is rliable's method vectorised in numpy (runs resampled with replacement within each env,
percentiles of the resampled statistic), so thousands of replicates run in minutes; a test checks it against
rliable's own on one sample. numpy's default_rng(--seed) draws everything.

python scripts/aggregate_coverage.py                  # writes docs/results/aggregate_coverage.csv
python scripts/aggregate_coverage.py --replicates 20 --reps 200 --out /tmp/coverage.csv   # a quick look
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize, stats

from td3x.algo.seed_statistics import CONFIDENCE
from td3x.analysis.report import Settings
from td3x.analysis.stats.metrics import MIN_AGGREGATE_BOOTSTRAP_SEEDS, stratified_t_interval
from td3x.commands.common import OneLineParser

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ("docs/results/report", "docs/results/seed_study/report")  # relative to the repository's root
OUT = "docs/results/aggregate_coverage.csv"
BOOTSTRAP = "stratified percentile bootstrap"
STUDENT_T = "Student-t (stratified)"
COLUMNS = [
    "report",
    "row",
    "reference",
    "envs",
    "seeds_per_env",
    "statistic",
    "interval",
    "true_value",
    "coverage",
    "mc_se",
    "replicates",
    "reps",
    "seed",
]
TRIM = 0.25  # the IQM's cut at each end, rliable's aggregate_iqm


@dataclass(frozen=True, eq=False)  # hashed by identity: arrays inside
class Design:
    """One aggregates row's design: its report, envs, seeds per env and the normal per env it is simulated from."""

    report: str
    row: str
    envs: tuple[str, ...]
    seeds: int
    means: np.ndarray
    sds: np.ndarray


def read_designs(report_dir: Path, name: str) -> list[Design]:
    """The rows of a committed report's aggregates table that have a bootstrap CI, as simulation designs."""
    aggregates = pd.read_csv(report_dir / "aggregates.csv")
    normalisers = pd.read_csv(report_dir / "normalisers.csv", index_col="env")
    runs = pd.read_csv(report_dir / "runs.csv")
    runs = runs[(runs["status"] == "complete") & runs["problem"].isna()]
    designs = []
    for line in aggregates.itertuples(index=False):
        if int(line[2]) < MIN_AGGREGATE_BOOTSTRAP_SEEDS:  # "seeds pooled per env"
            continue
        envs = tuple(part.rsplit(" (", 1)[0] for part in str(line[1]).split(", "))
        per_env = {env: runs[(runs["row"] == line[0]) & (runs["env"] == env)].set_index("seed") for env in envs}
        seeds = sorted(set.intersection(*(set(frame.index) for frame in per_env.values())))
        scores = np.array(
            [
                [_normalise(per_env[env].loc[seed, "last10_return"], normalisers.loc[env]) for env in envs]
                for seed in seeds
            ]
        )
        designs.append(Design(name, str(line[0]), envs, len(seeds), scores.mean(axis=0), scores.std(axis=0, ddof=1)))
    return designs


def _normalise(score: float, normaliser: pd.Series) -> float:
    return (score - normaliser["zero"]) / (normaliser["reference"] - normaliser["zero"])


# ---------------------------------------------------------------------------------------------------- true values
def true_iqm(means: np.ndarray, sds: np.ndarray) -> float:
    """The 25%-trimmed mean of the equal-weight mixture of normals N(means[e], sds[e]²)."""

    def cdf(x: float) -> float:
        return float(np.mean(stats.norm.cdf((x - means) / sds)))

    span = (float(np.min(means - 10 * sds)), float(np.max(means + 10 * sds)))
    low, high = (optimize.brentq(lambda x, q=q: cdf(x) - q, *span, xtol=1e-14) for q in (TRIM, 1 - TRIM))
    a, b = (low - means) / sds, (high - means) / sds
    inside = means * (stats.norm.cdf(b) - stats.norm.cdf(a)) + sds * (stats.norm.pdf(a) - stats.norm.pdf(b))
    return float(np.mean(inside) / (1 - 2 * TRIM))


def true_improvement(x: Design, y: Design) -> float:
    """P(X > Y) averaged over envs for independent normal runs."""
    return float(np.mean(stats.norm.cdf((x.means - y.means) / np.hypot(x.sds, y.sds))))


# ---------------------------------------------------------------------------------------------------- intervals
def resample(scores: np.ndarray, reps: int, rng: np.random.Generator) -> np.ndarray:
    """``reps`` stratified resamples of (runs, envs) scores: runs drawn with replacement within each env."""
    runs, envs = scores.shape
    return scores[rng.integers(0, runs, size=(reps, runs, envs)), np.arange(envs)]


def iqm(samples: np.ndarray) -> np.ndarray:
    """rliable's IQM (scipy's trim_mean at 25% over all runs and envs) of each leading-axis sample."""
    flat = np.sort(samples.reshape(len(samples), -1), axis=1)
    cut = int(TRIM * flat.shape[1])
    return flat[:, cut : flat.shape[1] - cut].mean(axis=1)


def improvement(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """rliable's P(X > Y) (Mann-Whitney U over runs, ties counted half, averaged over envs) per leading sample."""
    wins = (x[:, :, None, :] > y[:, None, :, :]) + 0.5 * (x[:, :, None, :] == y[:, None, :, :])
    return wins.mean(axis=(1, 2, 3))


def percentile_interval(resampled: np.ndarray) -> tuple[float, float]:
    """The percentile bootstrap's interval at the report's level."""
    tail = 100 * (1 - CONFIDENCE) / 2
    low, high = np.percentile(resampled, [tail, 100 - tail])
    return float(low), float(high)


# ---------------------------------------------------------------------------------------------------- simulation
def simulate(designs: list[Design], replicates: int, reps: int, seed: int) -> pd.DataFrame:
    """Coverage of each design's intervals over ``replicates`` normal samples (see the module's docstring)."""
    rng = np.random.default_rng(seed)
    references = _references(designs)
    lines = []
    for design in designs:
        reference = references.get(design)
        truth = {"IQM": true_iqm(design.means, design.sds), "mean": float(np.mean(design.means))}
        hits = {(statistic, BOOTSTRAP): 0 for statistic in truth} | {("mean", STUDENT_T): 0}
        if reference is not None:
            truth["P(row > reference)"] = true_improvement(design, reference)
            hits[("P(row > reference)", BOOTSTRAP)] = 0
        for _ in range(replicates):
            for key, (low, high) in _intervals(design, reference, reps, rng).items():
                hits[key] += int(low <= truth[key[0]] <= high)
        for (statistic, interval), count in hits.items():
            coverage = count / replicates
            lines.append(
                {
                    "report": design.report,
                    "row": design.row,
                    "reference": reference.row if reference is not None and statistic.startswith("P(") else "",
                    "envs": " ".join(design.envs),
                    "seeds_per_env": design.seeds,
                    "statistic": statistic,
                    "interval": interval,
                    "true_value": round(truth[statistic], 6),
                    "coverage": round(coverage, 4),
                    "mc_se": round(float(np.sqrt(coverage * (1 - coverage) / replicates)), 4),
                    "replicates": replicates,
                    "reps": reps,
                    "seed": seed,
                }
            )
    return pd.DataFrame(lines, columns=COLUMNS)


def _references(designs: list[Design]) -> dict[Design, Design]:
    first: dict[tuple[str, tuple[str, ...]], Design] = {}
    for design in designs:
        first.setdefault((design.report, design.envs), design)
    return {d: first[(d.report, d.envs)] for d in designs if first[(d.report, d.envs)] is not d}


def _draw(design: Design, rng: np.random.Generator) -> np.ndarray:
    return design.means + design.sds * rng.standard_normal((design.seeds, len(design.envs)))


def _intervals(
    design: Design, reference: Design | None, reps: int, rng: np.random.Generator
) -> dict[tuple[str, str], tuple[float, float]]:
    sample = _draw(design, rng)
    resampled = resample(sample, reps, rng)
    _, t_low, t_high = stratified_t_interval(sample)
    intervals = {
        ("IQM", BOOTSTRAP): percentile_interval(iqm(resampled)),
        ("mean", BOOTSTRAP): percentile_interval(resampled.mean(axis=(1, 2))),
        ("mean", STUDENT_T): (t_low, t_high),
    }
    if reference is not None:
        other = resample(_draw(reference, rng), reps, rng)
        intervals[("P(row > reference)", BOOTSTRAP)] = percentile_interval(improvement(resampled, other))
    return intervals


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", nargs="+", default=list(REPORTS), help="committed report dirs (from the root)")
    parser.add_argument("--replicates", type=int, default=4000, help="simulated samples per design")
    parser.add_argument("--reps", type=int, default=Settings().reps, help="bootstrap resamples per interval")
    parser.add_argument("--seed", type=int, default=39, help="seeds numpy's default_rng")
    parser.add_argument("--out", type=Path, default=ROOT / OUT, help="the CSV to write")
    args = parser.parse_args(argv)
    if args.replicates < 1 or args.reps < 1:
        parser.error("--replicates and --reps must be >= 1")
    designs = [d for name in args.reports for d in read_designs(ROOT / name, name)]
    table = simulate(designs, args.replicates, args.reps, args.seed)
    table.to_csv(args.out, index=False)
    print(table.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
