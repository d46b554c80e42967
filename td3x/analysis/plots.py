"""Figures: curves with bands as PNG (matplotlib, drawn by rliable's plot_utils) and interactive HTML (plotly),
and rliable's aggregate plots (interval estimates, probability of improvement, performance profiles) as PNG.

Figures are built on ``matplotlib.figure.Figure`` objects, not pyplot's global state, so a report leaves no
open figures behind (rliable's ``plot_interval_estimates`` makes its own pyplot figure, closed after saving).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import seaborn as sns
from matplotlib import pyplot as plt
from matplotlib.figure import Figure
from rliable import plot_utils

from td3x.analysis.metrics import Band, Estimate

DPI = 120
REFERENCE_COLOR = "black"  # the authors' published curve, apart from our rows' palette
# how an HTML page gets plotly.js: one plotly.min.js beside the pages (opens offline, one 4.8 MB copy), a <script>
# from plotly's CDN (no copy; needs a network to open), a copy inside each page, or no HTML pages at all (PNG only)
PLOTLY_JS: dict[str, str | bool | None] = {"directory": "directory", "cdn": "cdn", "inline": True, "none": None}
PAIR_SEPARATOR = " > "  # row labels may hold commas (rliable's default separator)
ROW_HEIGHT = 0.6  # inches per row of the interval plot
XLABEL_DROP = 0.7  # inches from the interval plot's axis down to its x label


def band_plot(
    bands: dict[str, Band],
    stem: Path,
    title: str,
    labels: tuple[str, str],
    reference: str | None = None,
    plotly_js: str = "directory",
) -> list[Path]:
    """One figure of curves with bands, as ``stem.png`` and (unless ``plotly_js`` is ``none``) ``stem.html``.

    Args:
        bands: per legend entry, a mean curve with its band (a NaN band is not drawn).
        stem: the output path without suffix.
        title: the figure's title (a line break starts a subtitle).
        labels: the x-axis and y-axis labels.
        reference: the entry drawn in black (the authors' published curve), if any.
        plotly_js: how the HTML page gets plotly.js, a key of ``PLOTLY_JS``.
    """
    stem.parent.mkdir(parents=True, exist_ok=True)
    colors = _band_colors(list(bands), reference)
    files = [_band_png(bands, stem.with_suffix(".png"), title, labels, colors)]
    include = PLOTLY_JS[plotly_js]
    if include is not None:
        files.append(_band_html(bands, stem, title, labels, colors, include))
    return files


def reference_label(paper_env: str) -> str:
    """The legend entry of the authors' published TD3 curve, with its spread.

    Args:
        paper_env: the authors' gym id, e.g. ``Hopper-v1``.
    """
    return f"authors' TD3 ({paper_env}, gym v1, sfujim/TD3): 10-seed mean ± 2 std"


def _band_colors(names: list[str], reference: str | None) -> dict[str, str]:
    palette = sns.color_palette("colorblind", n_colors=max(len(names), 1)).as_hex()
    ours = [name for name in names if name != reference]
    return {name: REFERENCE_COLOR if name == reference else palette[ours.index(name)] for name in names}


def _band_png(bands: dict[str, Band], path: Path, title: str, labels: tuple[str, str], colors: dict[str, str]) -> Path:
    figure = Figure(figsize=(9, 5.5))
    ax = figure.subplots()
    for name, band in bands.items():
        plot_utils.plot_sample_efficiency_curve(
            band.x,
            {name: band.mean},
            {name: np.stack([band.low, band.high])},
            algorithms=[name],
            colors=colors,
            ax=ax,
            xlabel=labels[0],
            ylabel=labels[1],
            marker="",
            labelsize="large",
            ticklabelsize="medium",
        )
    ax.set_title(title)
    ax.legend(fontsize="small")
    figure.savefig(path, dpi=DPI, bbox_inches="tight")
    return path


def _band_html(
    bands: dict[str, Band],
    stem: Path,
    title: str,
    labels: tuple[str, str],
    colors: dict[str, str],
    plotly_js: str | bool,
) -> Path:
    figure = go.Figure()
    for name, band in bands.items():
        color = colors[name]
        if np.isfinite(band.low).any():
            figure.add_trace(
                go.Scatter(
                    x=np.concatenate([band.x, band.x[::-1]]),
                    y=np.concatenate([band.high, band.low[::-1]]),
                    fill="toself",
                    fillcolor=color,
                    opacity=0.2,
                    line={"width": 0},
                    hoverinfo="skip",
                    legendgroup=name,
                    showlegend=False,
                )
            )
        figure.add_trace(go.Scatter(x=band.x, y=band.mean, name=name, legendgroup=name, line={"color": color}))
    figure.update_layout(
        title=title.replace("\n", "<br>"), xaxis_title=labels[0], yaxis_title=labels[1], hovermode="x unified"
    )
    path = stem.with_suffix(".html")
    figure.write_html(path, include_plotlyjs=plotly_js)
    return path


def interval_plot(estimates: dict[str, tuple[Estimate, Estimate]], path: Path) -> Path:
    """rliable's interval-estimate plot of each row's IQM and mean of normalised scores.

    Args:
        estimates: per row, its (IQM, mean) estimates.
        path: the PNG to write.
    """
    points = {row: np.array([iqm.value, mean.value]) for row, (iqm, mean) in estimates.items()}
    intervals = {row: np.array([[iqm.low, mean.low], [iqm.high, mean.high]]) for row, (iqm, mean) in estimates.items()}
    height = ROW_HEIGHT * len(estimates)
    figure, _ = plot_utils.plot_interval_estimates(
        points,
        intervals,
        metric_names=["IQM", "Mean"],
        algorithms=list(estimates),
        xlabel="Normalised score",
        row_height=ROW_HEIGHT,
        xlabel_y_coordinate=-XLABEL_DROP / height,  # in figure units: a fixed drop below the ticks at any height
    )
    figure.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(figure)
    return path


def improvement_plot(improvements: dict[tuple[str, str], Estimate], path: Path) -> Path:
    """rliable's probability-of-improvement plot: P(row > its TD3 row) with CIs.

    Args:
        improvements: per (row, reference row), the estimate of P(row > reference).
        path: the PNG to write.
    """
    figure = Figure(figsize=(6, 1 + 0.5 * len(improvements)))
    ax = figure.subplots()
    keys = {PAIR_SEPARATOR.join(pair): estimate for pair, estimate in improvements.items()}
    plot_utils.plot_probability_of_improvement(
        {key: estimate.value for key, estimate in keys.items()},
        {key: np.array([estimate.low, estimate.high]) for key, estimate in keys.items()},
        pair_separator=PAIR_SEPARATOR,
        ax=ax,
        xlabel="P(X > Y)",
    )
    figure.savefig(path, dpi=DPI, bbox_inches="tight")
    return path


def profile_plot(taus: np.ndarray, profiles: dict[str, np.ndarray], cis: dict[str, np.ndarray], path: Path) -> Path:
    """rliable's performance profiles: per row, the fraction of (seed, env) runs with normalised score > tau.

    Args:
        taus: the thresholds.
        profiles: per row, the profile at each tau.
        cis: per row, its CI, shape (2, len(taus)).
        path: the PNG to write.
    """
    figure = Figure(figsize=(8, 5))
    ax = figure.subplots()
    plot_utils.plot_performance_profiles(
        profiles, taus, performance_profile_cis=cis, ax=ax, xlabel="Normalised score (τ)", legend=True
    )
    figure.savefig(path, dpi=DPI, bbox_inches="tight")
    return path
