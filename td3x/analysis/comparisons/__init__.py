"""Registered comparisons: a file a user writes before the runs (the sides, the per-seed statistic, the test, its
bound, level and Holm family, the SDs it assumes), planned (power, MDD, the sizing rule's n) with
``td3x-report --plan FILE`` and judged against any folder of runs with ``td3x-report RUNS --registration FILE``.

The floors inside: :mod:`.reader` reads a YAML mapping key by key; :mod:`.side_entries` and :mod:`.schema` read
and check the file's sides and the rest of it; :mod:`.statistics` computes a run's per-seed
statistic; :mod:`.sides` finds each side's runs and values; :mod:`.kinds` holds the tests, each with its power and
its judgement; :mod:`.plan` and :mod:`.judge` apply them to the whole file; :mod:`.render` writes the tables.
It imports the analysis' ``stats``, ``reading`` and ``render`` floors below it. Docs: docs/registration.md.
"""
