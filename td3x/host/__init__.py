"""The machine a run computes on: its fp32 kernels' settings (run.numerics) and a run's provenance.

Imports config/ only.
"""
