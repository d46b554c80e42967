"""Drawing what the sections computed, computing nothing: cell text, marks and notes, display grids and the Markdown,
CSV and LaTeX of a table (``tables``), the columns of the tests against a reference (``comparison_columns``), band
figures and a report's figures (``plots``), rliable's aggregate plots (``aggregate_plots``), the seed sources' groups
of runs (``group_plots``) and the report mirrored to W&B (``wandb_export``). It imports ``stats`` and ``reading``.
"""
