"""td3x's analysis side: run dirs → the paper's tables, rliable statistics and plots. It reads run dirs and never
trains: it imports config/, algo/ (``seed_statistics``: the last-10 metric and the Student-t interval) and rundir/
(the layout, a run's state), never training/ or above. ``td3x-report`` is :mod:`td3x.commands.report`.

The report's sections, one module each with its numbers, tables, Markdown and plots: ``return_tables`` (Tables 2
and 1, return at a step, area under the curve, learning curves, the cells and runs, the runs not averaged),
``bias``, ``fidelity`` with ``fidelity_tables`` (every row against the authors' published TD3 curves), ``peer``
(TD3 rows against another implementation), ``aggregates`` (normalised scores across envs), ``seed_spread`` (the
"Seed study": the spread of a cell with many seeds), ``seed_sources`` (which source of randomness makes the spread,
``+experiment=seed_study``) and ``compute`` (what the runs cost). ``report`` computes them in order
(``build_report``) and writes them (``write_report``).

Below the sections: ``runs`` (find and load run dirs), ``cells`` (group runs into rows × envs, flag what is not
averaged), ``cell_stats`` (one cell's numbers), ``metrics`` (the paper's metrics and rliable's statistics),
``two_sample`` (Welch, the exact permutation test, Holm, and the comparison of two spreads), ``equivalence``
(TOST at a bound, where the bound comes from, the MDD), ``power`` (the power arithmetic), ``paper`` (the
published numbers and curves), ``comparisons`` (registration files: their plan and verdicts), ``tables`` (cell text
and marks, display grids, Markdown/CSV/LaTeX), ``plots`` (drawing, and a report's figures) and ``wandb_export``.
"""

from td3x.analysis.report import Report, Settings, build_report, write_report

__all__ = ["Report", "Settings", "build_report", "write_report"]
