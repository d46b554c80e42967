"""The power arithmetic of a two-sample comparison, defined once for the report and registration files' plans:
Welch's degrees of freedom and standard error, the power of Welch's two-sided test and its minimum detectable
difference (MDD), the power of TOST with the narrowest bound it reaches, and the SD ratio the F test detects.

Power of Welch's difference test is the noncentral t with the Welch-Satterthwaite df at the assumed SDs. Power of
TOST (two one-sided Welch tests, each at α) integrates over the estimated standard error, taken as
SE·sqrt(χ²_ν/ν) with ν the Welch-Satterthwaite df (exact for equal n and SDs, Satterthwaite's approximation
otherwise), independent of the difference of means.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

# TOST power's quadrature nodes and weights on [-1, 1]: 200 are plenty for 3 digits
GAUSS_NODES, GAUSS_WEIGHTS = np.polynomial.legendre.leggauss(200)


def welch_df(sd_x: float, n_x: int, sd_y: float, n_y: int) -> float:
    """The Welch-Satterthwaite degrees of freedom of two samples with these SDs and sizes."""
    vx, vy = sd_x**2 / n_x, sd_y**2 / n_y
    return (vx + vy) ** 2 / (vx**2 / (n_x - 1) + vy**2 / (n_y - 1))


def welch_se(sd_x: float, n_x: int, sd_y: float, n_y: int) -> float:
    """The standard error of the difference of two means."""
    return math.sqrt(sd_x**2 / n_x + sd_y**2 / n_y)


def welch_power(delta: float, sd_x: float, n_x: int, sd_y: float, n_y: int, alpha: float) -> float:
    """Power of the two-sided Welch t-test at level ``alpha`` when the true difference of means is ``delta``."""
    df = welch_df(sd_x, n_x, sd_y, n_y)
    ncp = delta / welch_se(sd_x, n_x, sd_y, n_y)
    critical = stats.t.ppf(1 - alpha / 2, df)
    far_tail = np.nan_to_num(stats.nct.cdf(-critical, df, abs(ncp)))  # NaN where it underflows: 0
    return float(stats.nct.sf(critical, df, abs(ncp)) + far_tail)


def mdd(sd_x: float, n_x: int, sd_y: float, n_y: int, alpha: float, power: float) -> float:
    """The minimum detectable difference: the true difference the two-sided Welch test detects with ``power``."""
    se = welch_se(sd_x, n_x, sd_y, n_y)
    return float(optimize.brentq(lambda d: welch_power(d, sd_x, n_x, sd_y, n_y, alpha) - power, 0.0, 10 * se))


def tost_power(delta: float, bound: float, sd_x: float, n_x: int, sd_y: float, n_y: int, alpha: float) -> float:
    """Power of TOST (equivalence within ±``bound``: both one-sided Welch tests at ``alpha`` reject, i.e. the
    1 − 2α interval lies inside the bound) when the true difference is ``delta``.

    The probability that the difference of means lies inside (−bound + h, bound − h), h the interval's half-width
    c·SE·sqrt(χ²/ν), integrated over χ²'s quantile u (Gauss-Legendre) up to the χ² where h
    reaches the bound and no difference can be claimed.
    """
    se, df = welch_se(sd_x, n_x, sd_y, n_y), welch_df(sd_x, n_x, sd_y, n_y)
    critical = stats.t.ppf(1 - alpha, df)
    u_max = stats.chi2.cdf(df * (bound / (critical * se)) ** 2, df)
    u = (GAUSS_NODES + 1) * u_max / 2
    half = critical * se * np.sqrt(stats.chi2.ppf(u, df) / df)
    inside = stats.norm.cdf((bound - half - delta) / se) - stats.norm.cdf((-bound + half - delta) / se)
    return float(np.sum(GAUSS_WEIGHTS * np.clip(inside, 0.0, None)) * u_max / 2)


def smallest_bound(sd_x: float, n_x: int, sd_y: float, n_y: int, alpha: float, power: float) -> float:
    """The narrowest bound at which TOST has ``power`` when the truth is equal."""
    se = welch_se(sd_x, n_x, sd_y, n_y)
    return float(optimize.brentq(lambda b: tost_power(0.0, b, sd_x, n_x, sd_y, n_y, alpha) - power, 1e-6, 20 * se))


def one_sided_power(delta: float, sd_x: float, n_x: int, sd_y: float, n_y: int, alpha: float) -> float:
    """Power of the one-sided Welch t-test at level ``alpha`` (H1: the first mean above the second) when the first
    mean exceeds the second by ``delta`` (negative: the effect runs the other way)."""
    df = welch_df(sd_x, n_x, sd_y, n_y)
    return float(stats.nct.sf(stats.t.ppf(1 - alpha, df), df, delta / welch_se(sd_x, n_x, sd_y, n_y)))


def one_sided_mdd(sd_x: float, n_x: int, sd_y: float, n_y: int, alpha: float, power: float) -> float:
    """The smallest true difference the one-sided Welch test at ``alpha`` detects with ``power``."""
    se = welch_se(sd_x, n_x, sd_y, n_y)
    return float(optimize.brentq(lambda d: one_sided_power(d, sd_x, n_x, sd_y, n_y, alpha) - power, 0.0, 20 * se))


def f_test_ratio(n_x: int, n_y: int, alpha: float, power: float) -> float:
    """The SD ratio (above 1) that the two-sided F test of equal variances detects with ``power`` (normal data)."""

    def power_at(ratio: float) -> float:
        low, high = stats.f.ppf(alpha / 2, n_x - 1, n_y - 1), stats.f.ppf(1 - alpha / 2, n_x - 1, n_y - 1)
        return float(stats.f.sf(high / ratio**2, n_x - 1, n_y - 1) + stats.f.cdf(low / ratio**2, n_x - 1, n_y - 1))

    return float(optimize.brentq(lambda r: power_at(r) - power, 1.0 + 1e-9, 1000.0))
