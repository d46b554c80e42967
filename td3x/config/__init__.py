"""What a run is: every config key's type, default and range, its Hydra registration, the override checks.

Imports nothing of td3x: every other folder may import it.
"""
