"""Statistics on arrays, the analysis' lowest floor: the paper's metrics and the report's intervals over seeds
(``metrics``), two-sample tests of means (``two_sample``), tests of spread (``spread_tests``), TOST at a bound with the
MDD beside it (``equivalence``) and the power arithmetic (``power``). No run, table or plot: it imports algo/'s
``seed_statistics`` and nothing else of td3x.
"""
