"""Many runs: a multirun's jobs, their launches, their W&B runs gathered for viewing.

Imports the floors below it (config/ to training/ and analysis/); never commands/.
"""
