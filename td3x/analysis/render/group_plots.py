"""Groups of marked runs (``reading.source_studies``' samples), drawn run by run: each group's learning curves in a
panel of its own, and a strip and box plot of each statistic per group (the seed sources' figures), as PNG. Outliers
are red, runs that end below their start dashed (a triangle in the strip plot). Each figure is a pyplot figure,
closed after saving.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib import pyplot as plt

from td3x.analysis.reading.source_studies import Sample


def group_curves_png(groups: Mapping[str, Sequence[Sample]], title: str, path: Path) -> Path:
    """Each group's curves in a panel of its own (five panels a line), red where an outlier, dashed where it ends
    below its start; returns ``path``, the PNG written."""
    names = list(groups)
    columns = min(len(names), 5)
    rows = math.ceil(len(names) / columns)
    figure, axes = plt.subplots(
        rows, columns, figsize=(3.2 * columns, 2.6 * rows), sharex=True, sharey=True, squeeze=False
    )
    for ax, name in zip(axes.ravel(), names, strict=False):
        for sample in groups[name]:
            style = "--" if sample.below_start else "-"
            color = "tab:red" if sample.outlier else "tab:blue"
            ax.plot(sample.steps, sample.returns, style, color=color, alpha=0.7, lw=1)
        ax.set_title(f"{name} ({len(groups[name])})", fontsize=9)
    for ax in axes.ravel()[len(names) :]:
        ax.set_visible(False)
    figure.suptitle(title, fontsize=10)
    figure.supxlabel("env steps", fontsize=9)
    figure.supylabel("average return", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def group_strip_png(
    groups: Mapping[str, Sequence[Sample]], statistics: Mapping[str, str], title: str, path: Path
) -> Path:
    """Per statistic (name → axis title), a box plot per group with each curve's value as a point: red x where an
    outlier, a triangle where it ends below its start; returns ``path``, the PNG written."""
    names = list(groups)
    figure, axes = plt.subplots(1, len(statistics), figsize=(1.1 * len(names) + 3, 3.6), squeeze=False)
    jitter = np.random.default_rng(0)  # fixed: the same runs draw the same figure
    for ax, (statistic, axis_title) in zip(axes[0], statistics.items(), strict=True):
        values = [[sample.value(statistic) for sample in groups[name]] for name in names]
        ax.boxplot(values, widths=0.5, showfliers=False)
        for i, name in enumerate(names, 1):
            for sample, value in zip(groups[name], values[i - 1], strict=True):
                color = "tab:red" if sample.outlier else "tab:blue"
                marker = "v" if sample.below_start else "x" if sample.outlier else "o"
                ax.scatter(i + jitter.uniform(-0.12, 0.12), value, color=color, marker=marker, s=16, zorder=3)
        ax.set_xticks(range(1, len(names) + 1), names, rotation=45, ha="right", fontsize=8)
        ax.set_title(axis_title, fontsize=9)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
