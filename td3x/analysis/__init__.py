"""td3x's analysis side: run dirs → the paper's tables, rliable statistics and plots. It reads run dirs and never
trains, so it imports nothing else from td3x but ``td3x.cli`` (``--version`` and the help's defaults).

Modules: ``runs`` (find and load run dirs), ``cells`` (group runs into rows × envs, flag what is not averaged),
``metrics`` (the paper's metrics and rliable's statistics), ``cell_stats`` (one cell's numbers), ``aggregates``
(normalised scores across envs), ``seeds`` (the seed study), ``paper`` (the published numbers and curves),
``fidelity`` (every row against the authors' published TD3 curves: Welch's test, its margin and a held-out
yardstick), ``tables``, ``plots``, ``wandb_export``, ``report`` (build and write) and ``cli`` (``td3x-report``).
"""

from td3x.analysis.report import Report, Settings, build_report, write_report

__all__ = ["Report", "Settings", "build_report", "write_report"]
