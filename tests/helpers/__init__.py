"""Helpers shared by the test files: run dirs read back, offline W&B files decoded, tiny agents, hand-written run
dirs for the report, sweeps and the local SLURM cluster."""
