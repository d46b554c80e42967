"""Drawing the report's figures: curves with bands as PNG (matplotlib, drawn by rliable's plot_utils) and
interactive HTML (plotly), and rliable's aggregate plots (interval estimates, probability of improvement, performance
profiles) as PNG; and ``Figures``, the files a report's sections draw and the ones they could not. What to draw is
each section's; the seed sources' groups of marked runs are ``group_plots``'.

Figures are built on ``matplotlib.figure.Figure`` objects, not pyplot's global state, so a report leaves no
open figures behind (rliable's ``plot_interval_estimates`` makes a pyplot figure, closed after saving).
Every plot holds Table 2's 11 rows: each row has its own colour and line style (``row_styles``), the same in every
figure of a report, and legends sit beside the axes, outside the data.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import plotly.graph_objects as go
import seaborn as sns
from matplotlib import pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from rliable import plot_utils

from td3x.analysis.metrics import Band, Estimate

DPI = 120
PLOTS_DIR = "plots"  # the report's folder of figures
# how an HTML page gets plotly.js: one plotly.min.js beside the pages (opens offline, one 4.8 MB copy), a <script>
# from plotly's CDN (no copy; needs a network to open), a copy inside each page, or no HTML pages at all (PNG only)
PLOTLY_JS: dict[str, str | bool | None] = {"directory": "directory", "cdn": "cdn", "inline": True, "none": None}
PAIR_SEPARATOR = " > "  # row labels may hold commas (rliable's default separator)
ROW_HEIGHT = 0.6  # inches per row of the interval plot
XLABEL_DROP = 0.7  # inches from the interval plot's axis down to its x label
# ten well-separated hues, then four darker ones (told apart from the first ten by their dashed lines)
ROW_COLORS = (*sns.color_palette("tab10").as_hex(), "#7b4173", "#b8860b", "#3b5b18", "#843c39")
SOLID_ROWS = 10  # rows 11 and on are dashed, then dotted
Dash = Literal["-", "--", ":"]  # matplotlib's solid, dashed and dotted lines
LINE_STYLES: tuple[Dash, ...] = ("-", "--", ":")
PLOTLY_DASH: dict[Dash, str] = {"-": "solid", "--": "dash", ":": "dot"}
MAX_TICKS = 4  # x ticks per aggregate panel: its tick labels never touch
LEGEND_CHARS = 52  # a legend entry's line: a Table 2 row with its fidelity numbers fits on one


@dataclass(frozen=True)
class Style:
    """How one legend entry is drawn: its matplotlib colour and line style (``-``, ``--``, ``:``)."""

    color: str
    dash: Dash = "-"


REFERENCE_STYLE = Style("black")  # the authors' published curve, apart from our rows' palette


def row_styles(rows: list[str]) -> dict[str, Style]:
    """A colour and line style per row, no two rows alike: the first 10 solid in tab10's colours, then dashed.

    Args:
        rows: the report's rows in order (the same row gets the same style in every figure).
    """
    return {
        row: Style(ROW_COLORS[index % len(ROW_COLORS)], LINE_STYLES[index // SOLID_ROWS % len(LINE_STYLES)])
        for index, row in enumerate(rows)
    }


def band_plot(
    bands: dict[str, Band],
    stem: Path,
    title: str,
    labels: tuple[str, str],
    styles: dict[str, Style] | None = None,
    plotly_js: str = "directory",
) -> list[Path]:
    """One figure of curves with bands, as ``stem.png`` and (unless ``plotly_js`` is ``none``) ``stem.html``.

    Args:
        bands: per legend entry, a mean curve with its band (a NaN band is not drawn).
        stem: the output path without suffix.
        title: the figure's title (a line break starts a subtitle).
        labels: the x-axis and y-axis labels.
        styles: per legend entry, its colour and line style; by default ``row_styles`` of the entries in order.
        plotly_js: how the HTML page gets plotly.js, a key of ``PLOTLY_JS``.
    """
    stem.parent.mkdir(parents=True, exist_ok=True)
    styles = styles if styles is not None else row_styles(list(bands))
    files = [_band_png(bands, stem.with_suffix(".png"), title, labels, styles)]
    include = PLOTLY_JS[plotly_js]
    if include is not None:
        files.append(_band_html(bands, stem, title, labels, styles, include))
    return files


def reference_label(paper_env: str) -> str:
    """The legend entry of the authors' published TD3 curve, with its spread.

    Args:
        paper_env: the authors' gym id, e.g. ``Hopper-v1``.
    """
    return f"authors' TD3 ({paper_env}, gym v1, sfujim/TD3): 10-seed mean ± 2 std"


def _legend_beside(ax: Axes) -> None:
    """The legend to the right of the axes, top-aligned: outside the data however many rows there are; a long entry
    (the authors' curve) wraps, so that the legend does not take the width the curves need."""
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


def band_figure(bands: dict[str, Band], title: str, labels: tuple[str, str], styles: dict[str, Style]) -> Figure:
    """The PNG's figure of ``band_plot``: curves with bands, the legend beside the axes.

    Args:
        bands: per legend entry, a mean curve with its band.
        title: the figure's title.
        labels: the x-axis and y-axis labels.
        styles: per legend entry, its colour and line style.
    """
    figure = Figure(figsize=(9, 5.5))
    ax = figure.subplots()
    for name, band in bands.items():
        plot_utils.plot_sample_efficiency_curve(
            band.x,
            {name: band.mean},
            {name: np.stack([band.low, band.high])},
            algorithms=[name],
            colors={name: styles[name].color},
            ax=ax,
            xlabel=labels[0],
            ylabel=labels[1],
            marker="",
            labelsize="large",
            ticklabelsize="medium",
        )
        ax.get_lines()[-1].set_linestyle(styles[name].dash)  # rliable draws every curve solid
    ax.set_title(title)
    _legend_beside(ax)
    return figure


def _band_png(
    bands: dict[str, Band], path: Path, title: str, labels: tuple[str, str], styles: dict[str, Style]
) -> Path:
    band_figure(bands, title, labels, styles).savefig(path, dpi=DPI, bbox_inches="tight")
    return path


def _band_html(
    bands: dict[str, Band],
    stem: Path,
    title: str,
    labels: tuple[str, str],
    styles: dict[str, Style],
    plotly_js: str | bool,
) -> Path:
    figure = go.Figure()
    for name, band in bands.items():
        color = styles[name].color
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
        line = {"color": color, "dash": PLOTLY_DASH[styles[name].dash]}
        figure.add_trace(go.Scatter(x=band.x, y=band.mean, name=name, legendgroup=name, line=line))
    figure.update_layout(
        title=title.replace("\n", "<br>"), xaxis_title=labels[0], yaxis_title=labels[1], hovermode="x unified"
    )
    path = stem.with_suffix(".html")
    figure.write_html(path, include_plotlyjs=plotly_js)
    return path


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
    taus: np.ndarray,
    profiles: dict[str, np.ndarray],
    cis: dict[str, np.ndarray],
    path: Path,
    styles: dict[str, Style],
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
    _legend_beside(ax)
    figure.savefig(path, dpi=DPI, bbox_inches="tight")
    return path


# ---------------------------------------------------------------------------------------------------- a report's
@dataclass
class Figures:
    """The plots of a report being written: the files so far, and one line per figure not drawn saying why.

    Attributes:
        directory: where the PNG and HTML files go.
        plotly_js: how the HTML pages get plotly.js (a key of ``PLOTLY_JS``).
        styles: per row, its colour and line style, the same in every figure.
    """

    directory: Path
    plotly_js: str
    styles: dict[str, Style]
    files: list[Path] = field(default_factory=list)
    not_drawn: list[str] = field(default_factory=list)

    def bands(
        self,
        bands: dict[str, tuple[Band, Style]],
        name: str,
        title: str,
        labels: tuple[str, str],
        empty: str,
    ) -> None:
        """Draw a band plot of the entries that hold a number; with none, note why it is not drawn.

        Args:
            bands: per legend entry, its curve and band, and how it is drawn.
            name: the file name without suffix.
            title: the figure's title.
            labels: the x-axis and y-axis labels.
            empty: why every entry would be NaN, for the note.
        """
        drawable = {label: band for label, (band, _) in bands.items() if np.isfinite(band.mean).any()}
        if not drawable:
            self.not_drawn.append(f"`{PLOTS_DIR}/{name}` is not drawn because {empty}.")
            return
        styles = {label: bands[label][1] for label in drawable}
        self.files += band_plot(drawable, self.directory / name, title, labels, styles, self.plotly_js)
