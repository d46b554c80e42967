"""Hyper-parameter search on Optuna for ``td3x-tune``: search spaces (:mod:`~td3x.tuning.space`), the study's loop
(:mod:`~td3x.tuning.study`), trial scores (:mod:`~td3x.tuning.scores`) and what a study shows
(:mod:`~td3x.tuning.summary`).

Imports the floors below it (config/ to training/); ``td3x-tune`` is :mod:`td3x.commands.tune`."""
