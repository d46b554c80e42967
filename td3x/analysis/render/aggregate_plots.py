"""rliable's plots of the aggregates as PNG: the interval estimates of each row's IQM and mean, the probability of
improvement over the TD3 row, and performance profiles; each row in its report-wide colour (``plots.row_styles``).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
from matplotlib import pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from rliable import plot_utils

from td3x.analysis.render.plots import DPI, LEGEND_CHARS, Style
from td3x.analysis.stats.metrics import Estimate

PAIR_SEPARATOR = " > "  # row labels may hold commas (rliable's default separator)
ROW_HEIGHT = 0.6  # inches per row of the interval plot
XLABEL_DROP = 0.7  # inches from the interval plot's axis down to its x label
MAX_TICKS = 4  # x ticks per aggregate panel: its tick labels never touch


def interval_plot(estimates: dict[str, tuple[Estimate, Estimate]], path: Path, styles: dict[str, Style]) -> Path:
    """rliable's interval-estimate plot of each row's IQM and mean of normalised scores.

    Args:
        estimates: per row, its (IQM, mean) estimates.
        path: the PNG to write.
        styles: per row, its colour.
    """
    points = {row: np.array([iqm.value, mean.value]) for row, (iqm, mean) in estimates.items()}
    intervals = {row: np.array([[iqm.low, mean.low], [iqm.high, mean.high]]) for row, (iqm, mean) in estimates.items()}
    height = ROW_HEIGHT * len(estimates)
    figure, axes = plot_utils.plot_interval_estimates(
        points,
        intervals,
        metric_names=["IQM", "Mean"],
        algorithms=list(estimates),
        colors={row: styles[row].color for row in estimates},
        max_ticks=MAX_TICKS,
        xlabel="Normalised score",
        row_height=ROW_HEIGHT,
        xlabel_y_coordinate=-XLABEL_DROP / height,  # in figure units: a fixed drop below the ticks at any height
    )
    for ax in axes:  # rliable's xx-large tick labels run into each other on a 3.4-inch panel
        ax.tick_params(axis="x", labelsize="large")
        ax.xaxis.set_major_locator(MaxNLocator(MAX_TICKS))
    figure.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(figure)
    return path


def improvement_plot(improvements: dict[tuple[str, str], Estimate], path: Path, styles: dict[str, Style]) -> Path:
    """rliable's probability-of-improvement plot: P(row > its TD3 row) with CIs.

    Args:
        improvements: per (row, reference row), the estimate of P(row > reference).
        path: the PNG to write.
        styles: per row, its colour (a pair is drawn in its first row's).
    """
    figure = Figure(figsize=(6, 1 + 0.5 * len(improvements)))
    ax = figure.subplots()
    keys = {PAIR_SEPARATOR.join(pair): estimate for pair, estimate in improvements.items()}
    plot_utils.plot_probability_of_improvement(
        {key: estimate.value for key, estimate in keys.items()},
        {key: np.array([estimate.low, estimate.high]) for key, estimate in keys.items()},
        pair_separator=PAIR_SEPARATOR,
        colors=[styles[row].color for row, _ in improvements],
        ax=ax,
        xlabel="P(X > Y)",
    )
    right = figure.axes[-1]  # rliable's twin axis of the Y names, scaled on its own: align it with the X names
    right.set_ylim(ax.get_ylim())
    figure.savefig(path, dpi=DPI, bbox_inches="tight")
    return path


def profile_plot(
    taus: np.ndarray, profiles: dict[str, np.ndarray], cis: dict[str, np.ndarray], path: Path, styles: dict[str, Style]
) -> Path:
    """rliable's performance profiles: per row, the fraction of (seed, env) runs with normalised score > tau.

    Args:
        taus: the thresholds.
        profiles: per row, the profile at each tau.
        cis: per row, its CI, shape (2, len(taus)).
        path: the PNG to write.
        styles: per row, its colour and line style.
    """
    figure = Figure(figsize=(8, 5))
    ax = figure.subplots()
    plot_utils.plot_performance_profiles(
        profiles,
        taus,
        performance_profile_cis=cis,
        ax=ax,
        colors={row: styles[row].color for row in profiles},
        linestyles={row: styles[row].dash for row in profiles},
        xlabel="Normalised score (τ)",
    )
    # the legend to the right of the axes, top-aligned: outside the data however many rows there are; a long entry
    # wraps, so that the legend does not take the width the curves need
    handles, names = ax.get_legend_handles_labels()
    ax.legend(
        handles,
        [textwrap.fill(name, LEGEND_CHARS) for name in names],
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        fontsize="small",
        frameon=False,
        borderaxespad=0.0,
    )
    figure.savefig(path, dpi=DPI, bbox_inches="tight")
    return path
