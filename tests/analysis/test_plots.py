"""Figures that hold Table 2's 11 rows: each row drawn apart from the others (a panel per row in the report's curves,
on shared axes, the authors' curve cut where each row's runs end), legends outside the data, titles and tick labels
that never run into each other (the report's curves, and the tuning summary's ``params.png``).

Each figure is drawn with matplotlib's Agg renderer and measured: where its legend and labels land, in pixels.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import optuna
import pytest
from helpers.report_runs import REPS, curve, write_run
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import TrialState

from td3x.analysis import Report, Settings, build_report
from td3x.analysis.reading.paper import authors_band, table2_rows
from td3x.analysis.render.plots import REFERENCE_STYLE, Curve, Panel, band_figure, reference_label, row_styles
from td3x.analysis.sections import returns
from td3x.analysis.sections.fidelity import FidelitySection
from td3x.analysis.sections.returns import OTHER_ROWS, ROW_CURVE
from td3x.analysis.stats.metrics import Band
from td3x.tuning.summary import params_figure


def drawn(figure: Figure) -> None:
    """Lay the figure out as ``savefig`` would, so that extents are the file's."""
    FigureCanvasAgg(figure).draw()


def overlapping(boxes: list[Bbox]) -> list[tuple[int, int]]:
    return [(i, j) for i, a in enumerate(boxes) for j, b in enumerate(boxes) if i < j and a.overlaps(b)]


def test_table2_s_11_rows_get_11_colours_none_grey_the_first_10_solid() -> None:
    rows = table2_rows()
    styles = row_styles(rows)
    colours = [style.color for style in styles.values()]
    assert len(rows) == 11 and len(set(colours)) == 11
    assert REFERENCE_STYLE.color not in colours
    # grey is the authors' band and the other rows' means behind a row's curve: no row is drawn in it
    assert [colour for colour in colours if len({colour[1:3], colour[3:5], colour[5:7]}) == 1] == []
    assert [style.dash for style in styles.values()] == ["-"] * 10 + ["--"]
    assert row_styles(rows[:3]) == {row: styles[row] for row in rows[:3]}  # a row's style is its place's


def test_a_one_panel_figure_of_table2_s_rows_draws_each_apart_with_its_legend_outside_the_axes() -> None:
    rows = table2_rows()
    steps = np.arange(0.0, 100_001.0, 5000.0)
    styles = row_styles(rows)
    curves = [
        Curve(row, Band(steps, k * steps / 100, k * steps / 100 - 300, k * steps / 100 + 300), styles[row])
        for k, row in enumerate(rows)
    ]
    authors = Band(steps, steps / 50, steps / 50 - 500, steps / 50 + 500)
    curves.append(Curve(reference_label("Hopper-v1"), authors, REFERENCE_STYLE))
    figure = band_figure([Panel("", curves)], "Hopper-v5: return", ("env steps", "average return"))
    drawn(figure)
    [axes] = figure.axes
    [legend] = figure.legends
    assert not legend.get_window_extent().overlaps(axes.get_window_extent())  # outside the data
    assert [text.get_text().replace("\n", " ") for text in legend.get_texts()] == [c.name for c in curves]
    assert len({(line.get_color(), line.get_linestyle()) for line in axes.get_lines()}) == len(curves) == 12


# ---------------------------------------------------------------------------------------------------- the curves
@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """Table 2's 11 rows on Hopper-v5, 2 seeds of 1000 steps each, as ``+experiment=table2_smoke`` makes them: within
    them the authors have one evaluation (step 0), so no row has a p against their curves."""
    root = tmp_path_factory.mktemp("smoke")
    for k, row in enumerate(table2_rows()):
        for seed in (0, 1):
            write_run(root / f"{k}/{seed}", "Hopper-v5", row, seed, curve(100 * k, seed, n=11))
    return build_report([root], Settings(reps=REPS))


def curve_figure(report: Report, env_id: str = "Hopper-v5") -> tuple[list[Panel], Figure]:
    """The report's curve panels of ``env_id`` and their PNG's figure, laid out."""
    results = report.section(FidelitySection).results
    panels = returns.curve_panels(env_id, report.env_cells(env_id), results, row_styles(report.grid.rows))
    figure = band_figure(panels, f"{env_id}: return", ("env steps", "average return"))
    drawn(figure)
    return panels, figure


def test_11_rows_draw_as_11_panels_on_shared_axes_each_titled_by_its_row_and_none_overlapping(smoke: Report) -> None:
    _, figure = curve_figure(smoke)
    panels = [axes for axes in figure.axes if axes.get_visible()]
    assert len(panels) == 11 and len(figure.axes) == 12  # 3 lines of 4, the last place empty
    assert all(panels[0].get_shared_x_axes().joined(panels[0], axes) for axes in panels)
    assert all(panels[0].get_shared_y_axes().joined(panels[0], axes) for axes in panels)
    assert [axes.get_title().split("\n")[0] for axes in panels] == smoke.grid.rows
    [legend] = figure.legends  # once for the figure, outside every panel
    boxes = [axes.get_tightbbox() for axes in panels]  # a panel with its title and tick labels
    assert overlapping([legend.get_window_extent(), *boxes]) == []
    for axes in panels:  # tick labels apart, under the panels with no panel below them only
        low, high = sorted(axes.get_xlim())
        ticks = [tick for tick in axes.xaxis.get_major_ticks() if low <= tick.get_loc() <= high]
        labels = [tick.label1.get_window_extent() for tick in ticks if tick.label1.get_visible()]
        assert overlapping(labels) == []
    assert [bool(axes.get_xlabel()) for axes in panels] == [False] * 7 + [True] * 4  # the 8th has none under it
    # the rows' own curves are told apart from the grey and black ones behind them
    assert {text.get_text() for text in legend.get_texts()} == {
        OTHER_ROWS,
        reference_label("Hopper-v1").replace("sfujim/TD3): ", "sfujim/TD3):\n"),
        ROW_CURVE,
    }


def test_a_row_without_a_p_against_the_authors_says_so_by_leaving_it_out(smoke: Report) -> None:
    """The authors' curves and these runs share step 0 alone: no mean over 5k..T, no p (the legend read
    "p = n/a" in every row); the band count stays."""
    assert all(np.isnan(f.run_mean.test.p) for f in smoke.section(FidelitySection).results)
    _, figure = curve_figure(smoke)
    texts = [text.get_text() for text in figure.findobj(Text)]
    assert [text for text in texts if "n/a" in text or "p =" in text] == []
    assert sum(re.fullmatch(r".+\n[0-2] of 2 points", text) is not None for text in texts) == 11


def test_the_authors_curve_stops_where_each_row_s_runs_stop(smoke: Report, tmp_path: Path) -> None:
    """Every 5000 steps, the authors' curve ran on to 5000 beside runs of 1000 (and to the longest run's end in every
    row's place): in each panel it now ends at the row's last step, at the value its line has there."""
    authors = authors_band("Hopper-v5")
    assert authors is not None
    panels, figure = curve_figure(smoke)
    for panel, axes in zip(panels, figure.axes, strict=False):
        [reference] = [curve.band for curve in panel.curves if curve.style == REFERENCE_STYLE]
        assert list(reference.x) == [0, 1000]
        assert reference.mean[-1] == pytest.approx(np.interp(1000, authors.x, authors.mean))
        assert axes.get_xlim()[1] < 1100  # the axes end with the runs
    # a row of 100k steps beside a row of 1000: each row's own end
    write_run(tmp_path / "long", "Hopper-v5", "TD3", 0, curve(0, 0, n=21), eval_every=5000)
    write_run(tmp_path / "long1", "Hopper-v5", "TD3", 1, curve(0, 1, n=21), eval_every=5000)
    for seed in (0, 1):
        write_run(tmp_path / f"short/{seed}", "Hopper-v5", "AHE", seed, curve(0, seed, n=11))
    panels, _ = curve_figure(build_report([tmp_path], Settings(reps=REPS)))
    ends = {
        panel.title.split("\n")[0]: [c.band.x[-1] for c in panel.curves if c.style == REFERENCE_STYLE]
        for panel in panels
    }
    assert ends == {"TD3": [100_000], "AHE": [1000]}


def test_a_band_stops_at_a_step_between_two_of_its_points_on_the_line_through_them() -> None:
    x, mean, high = np.array([0.0, 5000.0, 10000.0]), np.array([0.0, 50.0, 60.0]), np.array([10.0, 90.0, 100.0])
    band = Band(x, mean, np.zeros(3), high)
    cut = band.until(1000)
    assert (list(cut.x), list(cut.mean), list(cut.high)) == ([0, 1000], [0, 10], [10, 26])
    assert list(band.until(5000).x) == [0, 5000] and list(band.until(50_000).x) == [0, 5000, 10000]


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
