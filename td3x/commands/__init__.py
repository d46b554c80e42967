"""One module per console script (td3x-train is train.py, ...): parse, check, call the library, print, exit.

May import every folder; no command imports another, only common.py and train_and_report.py.
"""
