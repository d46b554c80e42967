"""TD3 and its parts: networks, replay buffer, noise, normaliser, envs, seeding, precision, the evaluation episodes
and their statistics (the last-10 metric, the overestimation bias).

Imports config/ only: no files, no commands.
"""
