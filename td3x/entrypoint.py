"""``python -m td3x.entrypoint``: ``td3x-train`` under its module path before td3x's modules moved into folders.

Kept so that jobs queued before an upgrade (a SLURM requeue, a pending sweep relaunch) still start; everything
else runs ``td3x-train``, whose module is :mod:`td3x.commands.train`.
"""

from td3x.commands.train import main

if __name__ == "__main__":
    main()
