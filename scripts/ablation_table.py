"""The ablation table from a checkout, without the console script: the same as ``td3x-report``.

python scripts/ablation_table.py outputs/table2 --out report/
"""

import sys

from td3x.commands.report import main

if __name__ == "__main__":
    sys.exit(main())
