"""Drawing the report's figures of curves with bands: small multiples, a panel per row on shared axes, as PNG
(matplotlib, each curve drawn by rliable's plot_utils) and interactive HTML (plotly, the same panels); each row's
colour and line style, the same in every figure of a report (``row_styles``); and ``Figures``, the files a report's
sections draw and the ones they could not. What to draw, and how to group it into panels, is each section's;
rliable's aggregate plots are ``aggregate_plots``', the seed sources' groups of runs ``group_plots``'.

Why panels: Table 2 has 11 rows, and 11 bands in one axes overlap into one grey mass. A panel per row reads alone,
shared axes let rows compare by position, and one legend under the grid names what every panel draws. Figures are
built on ``matplotlib.figure.Figure`` objects, not pyplot's global state, so a report leaves no open figures behind.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import plotly.graph_objects as go
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import EngFormatter, MaxNLocator
from plotly.subplots import make_subplots
from rliable import plot_utils

from td3x.analysis.stats.metrics import Band

DPI = 120
PLOTS_DIR = "plots"  # the report's folder of figures
# how an HTML page gets plotly.js: one plotly.min.js beside the pages (opens offline, one 4.8 MB copy), a <script>
# from plotly's CDN (no copy; needs a network to open), a copy inside each page, or no HTML pages at all (PNG only)
PLOTLY_JS: dict[str, str | bool | None] = {"directory": "directory", "cdn": "cdn", "inline": True, "none": None}
# ten well-separated hues: tab10's, its grey (the colour of the authors' band and of the other rows' means behind a
# row) swapped for indigo; then four darker ones (told apart from the first ten by their dashed lines)
TAB10 = sns.color_palette("tab10").as_hex()
ROW_COLORS = (*TAB10[:7], "#393b79", *TAB10[8:], "#7b4173", "#b8860b", "#3b5b18", "#843c39")
SOLID_ROWS = 10  # rows 11 and on are dashed, then dotted
Dash = Literal["-", "--", ":"]  # matplotlib's solid, dashed and dotted lines
LINE_STYLES: tuple[Dash, ...] = ("-", "--", ":")
PLOTLY_DASH: dict[Dash, str] = {"-": "solid", "--": "dash", ":": "dot"}
LEGEND_CHARS = 52  # a legend entry's line: a Table 2 row with its fidelity numbers fits on one
MAX_COLUMNS = 4  # panels per line of a band figure: Table 2's 11 rows make 3 lines of 4
PANEL_SIZE = (3.4, 2.8)  # inches per panel of a band figure with several, its title and tick labels included
FRAME_HEIGHT = 1.2  # inches above and below a band figure's panels: its title, its legend
SINGLE_SIZE = (9.0, 5.5)  # inches of a band figure with one panel
MAX_X_TICKS = 5  # x ticks per panel
TITLE_CHARS = 40  # a panel title's line: a long row label wraps within its panel's width
LEGEND_COLUMNS = 3  # a band figure's legend, under its grid: the authors' curve, a row's and the other rows'
HTML_PANEL_HEIGHT, HTML_TOP = 300, 140  # pixels per line of panels of an HTML band figure, and above them
MIXED_COLOR = "dimgray"  # a legend entry each panel draws in its own colour: its line style shown in grey


@dataclass(frozen=True)
class Style:
    """How one legend entry is drawn: its matplotlib colour and line style (``-``, ``--``, ``:``)."""

    color: str
    dash: Dash = "-"


REFERENCE_STYLE = Style("black")  # the authors' published curve, apart from our rows' palette


def row_styles(rows: list[str]) -> dict[str, Style]:
    """A colour and line style per row, no two rows alike: the first 10 solid in ``ROW_COLORS``', then dashed.

    Args:
        rows: the report's rows in order (the same row gets the same style in every figure).
    """
    return {
        row: Style(ROW_COLORS[index % len(ROW_COLORS)], LINE_STYLES[index // SOLID_ROWS % len(LINE_STYLES)])
        for index, row in enumerate(rows)
    }


@dataclass(frozen=True)
class Curve:
    """A curve with its band, its legend entry and how it is drawn (a NaN band is not drawn)."""

    name: str
    band: Band
    style: Style


@dataclass(frozen=True)
class Panel:
    """One panel of a band figure: its title and its curves, drawn in order (the last on top); the legend lists each
    entry once, however many curves and panels have it (the authors' curve in every panel, say)."""

    title: str
    curves: list[Curve]


def reference_label(paper_env: str) -> str:
    """The legend entry of the authors' published TD3 curve, with its spread (``paper_env``: e.g. ``Hopper-v1``)."""
    return f"authors' TD3 ({paper_env}, gym v1, sfujim/TD3): 10-seed mean ± 2 std"


def grid_shape(panels: int) -> tuple[int, int]:
    """(lines, columns) of a grid of ``panels`` panels, at most ``MAX_COLUMNS`` a line and the lines as full as the
    count allows: 11 rows make 3 lines of 4, 6 rows 2 lines of 3."""
    lines = math.ceil(panels / MAX_COLUMNS)
    return lines, math.ceil(panels / lines)


def last_in_column(index: int, panels: int) -> bool:
    """Whether panel ``index`` has no panel under it: it carries the x ticks and label of its column."""
    return index + grid_shape(panels)[1] >= panels


def band_figure(panels: list[Panel], title: str, labels: tuple[str, str]) -> Figure:
    """The PNG's figure of ``Figures.bands``: one panel per ``Panel`` on shared axes, so that panels compare by
    position, the legend under the grid, once for the figure."""
    lines, columns = grid_shape(len(panels))
    size = SINGLE_SIZE if len(panels) == 1 else (PANEL_SIZE[0] * columns, PANEL_SIZE[1] * lines + FRAME_HEIGHT)
    figure = Figure(figsize=size, layout="constrained")
    grid = figure.subplots(lines, columns, sharex=True, sharey=True, squeeze=False).ravel()
    for index, (ax, panel) in enumerate(zip(grid, panels, strict=False)):
        _draw_panel(ax, panel)
        bottom = last_in_column(index, len(panels))
        ax.tick_params(labelbottom=bottom)
        ax.set_xlabel(labels[0] if bottom else "", fontsize="medium")
        ax.set_ylabel(labels[1] if index % columns == 0 else "", fontsize="medium")
    for ax in grid[len(panels) :]:
        ax.set_visible(False)
    figure.suptitle(title)
    handles = _legend_handles(panels)
    figure.legend(
        list(handles.values()),
        [textwrap.fill(name, LEGEND_CHARS) for name in handles],
        loc="outside lower center",
        ncols=min(len(handles), LEGEND_COLUMNS),
        fontsize="small",
        frameon=False,
    )
    return figure


def _draw_panel(ax: Axes, panel: Panel) -> None:
    for curve in panel.curves:
        band, name = curve.band, curve.name
        plot_utils.plot_sample_efficiency_curve(
            band.x,
            {name: band.mean},
            {name: np.stack([band.low, band.high])},
            algorithms=[name],
            colors={name: curve.style.color},
            ax=ax,
            xlabel="",  # band_figure labels the grid's outer panels only
            ylabel="",
            marker="",
            ticklabelsize="medium",
        )
        ax.get_lines()[-1].set_linestyle(curve.style.dash)  # rliable draws every curve solid
    # steps as 20k, 1M: five full numbers up to 100000 run into each other under a panel 3.4 inches wide
    ax.xaxis.set_major_locator(MaxNLocator(MAX_X_TICKS, steps=[1, 2, 2.5, 5, 10]))
    ax.xaxis.set_major_formatter(EngFormatter(sep=""))
    ax.set_title("\n".join(textwrap.fill(line, TITLE_CHARS) for line in panel.title.split("\n")), fontsize="medium")


def _legend_handles(panels: list[Panel]) -> dict[str, Line2D]:
    """One handle per legend entry, in the order met: in the entry's colour, or in grey with its line style alone
    where the panels draw it in their own colours (a row's mean in each row's panel)."""
    styles: dict[str, list[Style]] = {}
    for panel in panels:
        for curve in panel.curves:
            styles.setdefault(curve.name, []).append(curve.style)
    return {
        name: Line2D(
            [], [], color=drawn[0].color if len({s.color for s in drawn}) == 1 else MIXED_COLOR, ls=drawn[0].dash, lw=2
        )
        for name, drawn in styles.items()
    }


def _band_html(panels: list[Panel], stem: Path, title: str, labels: tuple[str, str], plotly_js: str | bool) -> Path:
    """The same panels as an interactive page: an entry's legend item shows or hides it in every panel."""
    lines, columns = grid_shape(len(panels))
    subtitles = [panel.title.replace("\n", "<br>") for panel in panels]
    figure = make_subplots(lines, columns, shared_xaxes="all", shared_yaxes="all", subplot_titles=subtitles)
    listed: set[str] = set()
    for index, panel in enumerate(panels):
        at = {"row": index // columns + 1, "col": index % columns + 1}
        for curve in panel.curves:
            for trace in _band_traces(curve, show=curve.name not in listed):
                figure.add_trace(trace, **at)
            listed.add(curve.name)
        if last_in_column(index, len(panels)):  # plotly labels only the bottom line's x axes of shared ones
            figure.update_xaxes(showticklabels=True, title_text=labels[0], **at)
    figure.update_yaxes(title_text=labels[1], col=1)
    figure.update_layout(
        title=title.replace("\n", "<br>"),
        hovermode="x unified",
        height=HTML_TOP + HTML_PANEL_HEIGHT * lines,
        margin={"t": HTML_TOP},  # room for the two-line title above the first panels' titles
    )
    path = stem.with_suffix(".html")
    figure.write_html(path, include_plotlyjs=plotly_js)
    return path


def _band_traces(curve: Curve, show: bool) -> list[go.Scatter]:
    """A curve's plotly traces: its band (where it has one) and its mean line, grouped under its legend entry."""
    band, name, style = curve.band, curve.name, curve.style
    traces = []
    if np.isfinite(band.low).any():
        traces.append(
            go.Scatter(
                x=np.concatenate([band.x, band.x[::-1]]),
                y=np.concatenate([band.high, band.low[::-1]]),
                mode="lines",  # plotly marks the points of a short trace: a band has none to show
                fill="toself",
                fillcolor=style.color,
                opacity=0.2,
                line={"width": 0},
                hoverinfo="skip",
                legendgroup=name,
                showlegend=False,
            )
        )
    line = {"color": style.color, "dash": PLOTLY_DASH[style.dash]}
    traces.append(
        go.Scatter(x=band.x, y=band.mean, mode="lines", name=name, legendgroup=name, showlegend=show, line=line)
    )
    return traces


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

    def bands(self, panels: list[Panel], name: str, title: str, labels: tuple[str, str], empty: str) -> None:
        """Draw a band figure of the curves that hold a number (a panel left with none is left out), as
        ``name.png`` and, unless ``plotly_js`` is ``none``, ``name.html``; with none at all, note why it is not drawn.

        Args:
            panels: the panels, each with its curves and how they are drawn.
            name: the file name without suffix.
            title: the figure's title (a line break starts a subtitle).
            labels: the x-axis and y-axis labels.
            empty: why every curve would be NaN, for the note.
        """
        drawable = [
            Panel(panel.title, [curve for curve in panel.curves if np.isfinite(curve.band.mean).any()])
            for panel in panels
        ]
        drawable = [panel for panel in drawable if panel.curves]
        if not drawable:
            self.not_drawn.append(f"`{PLOTS_DIR}/{name}` is not drawn because {empty}.")
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        stem = self.directory / name
        band_figure(drawable, title, labels).savefig(stem.with_suffix(".png"), dpi=DPI, bbox_inches="tight")
        self.files.append(stem.with_suffix(".png"))
        include = PLOTLY_JS[self.plotly_js]
        if include is not None:
            self.files.append(_band_html(drawable, stem, title, labels, include))
