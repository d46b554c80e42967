"""One process training one run dir: the front door, the loop, each seed's share, loggers, progress, video.

Imports config/, algo/, host/ and rundir/.
"""
