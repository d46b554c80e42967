"""A run dir on disk: its layout, eval.csv, checkpoint, state, lock, the resume decision, a trained run, export.

Imports config/, algo/ and host/.
"""
