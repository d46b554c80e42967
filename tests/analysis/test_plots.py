"""Figures that hold Table 2's 11 rows: each row drawn apart from the others, legends beside the data, tick labels
that never run into each other (the report's curves, and the tuning summary's ``params.png``).

Each figure is drawn with matplotlib's Agg renderer and measured: where its legend and labels land, in pixels.
"""

from __future__ import annotations

import numpy as np
import optuna
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import TrialState

from td3x.analysis.metrics import Band
from td3x.analysis.paper import table2_rows
from td3x.analysis.plots import REFERENCE_STYLE, band_figure, reference_label, row_styles
from td3x.tuning.summary import params_figure


def drawn(figure: Figure) -> None:
    """Lay the figure out as ``savefig`` would, so that extents are the file's."""
    FigureCanvasAgg(figure).draw()


def overlapping(boxes: list[Bbox]) -> list[tuple[int, int]]:
    return [(i, j) for i, a in enumerate(boxes) for j, b in enumerate(boxes) if i < j and a.overlaps(b)]


def test_table2_s_11_rows_get_11_colours_none_the_authors_black_the_first_10_solid() -> None:
    rows = table2_rows()
    styles = row_styles(rows)
    colours = [style.color for style in styles.values()]
    assert len(rows) == 11 and len(set(colours)) == 11
    assert REFERENCE_STYLE.color not in colours
    assert [style.dash for style in styles.values()] == ["-"] * 10 + ["--"]
    assert row_styles(rows[:3]) == {row: styles[row] for row in rows[:3]}  # a row's style is its place's


def test_a_curve_figure_of_table2_s_rows_draws_each_apart_with_its_legend_beside_the_axes() -> None:
    rows = table2_rows()
    steps = np.arange(0.0, 100_001.0, 5000.0)
    bands = {
        row: Band(steps, k * steps / 100, k * steps / 100 - 300, k * steps / 100 + 300) for k, row in enumerate(rows)
    }
    authors = reference_label("Hopper-v1")
    bands[authors] = Band(steps, steps / 50, steps / 50 - 500, steps / 50 + 500)
    figure = band_figure(
        bands, "Hopper-v5: return", ("env steps", "average return"), {**row_styles(rows), authors: REFERENCE_STYLE}
    )
    drawn(figure)
    [axes] = figure.axes
    legend = axes.get_legend()
    assert legend.get_window_extent().x0 > axes.get_window_extent().x1  # beside the axes, over no curve
    assert [text.get_text().replace("\n", " ") for text in legend.get_texts()] == list(bands)  # long ones wrap
    assert len({(line.get_color(), line.get_linestyle()) for line in axes.get_lines()}) == len(bands) == 12


def test_params_figure_s_tick_labels_and_legend_never_overlap() -> None:
    """Log ranges under a decade (matplotlib labels every multiple of 10^-4 there: they ran into each other), of
    1.5 and of 5 decades, a linear and an int range, and a categorical param whose values are long words."""
    space = {
        "agent.actor_lr": FloatDistribution(2e-4, 9e-4, log=True),
        "agent.critic_lr": FloatDistribution(1e-4, 3e-3, log=True),
        "agent.tau": FloatDistribution(0.001, 0.02),
        "noise.std": FloatDistribution(1e-6, 0.1, log=True),  # five decades
        "agent.policy_delay": IntDistribution(1, 4),
        "noise.kind": CategoricalDistribution(["gaussian", "ornstein_uhlenbeck"]),
    }
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(seed=0))
    for number in range(12):
        trial = study.ask(space)
        if number % 4 == 3:
            trial.report(-900.0 + number, 1000)
            study.tell(trial, state=TrialState.PRUNED)
        else:
            study.tell(trial, -1000.0 + 50 * number)
    figure = params_figure(study.get_trials(), "last10")
    assert figure is not None
    drawn(figure)
    panels = [axes for axes in figure.axes if axes.get_visible()]
    assert sorted(axes.get_xlabel() for axes in panels) == sorted(space)
    for axes in panels:
        low, high = sorted(axes.get_xlim())
        ticks = zip(axes.get_xticks(), axes.get_xticklabels(), strict=True)
        labels = [label.get_window_extent() for at, label in ticks if low <= at <= high and label.get_text()]
        assert len(labels) >= 2, axes.get_xlabel()
        assert overlapping(labels) == [], axes.get_xlabel()
    [legend] = figure.legends
    assert overlapping([legend.get_window_extent(), *(axes.get_window_extent() for axes in panels)])[:1] == []
