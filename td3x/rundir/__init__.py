"""A run dir on disk: its layout, checkpoint, state, lock, the resume decision, a trained run, export.

Imports config/, algo/ and host/.
"""
