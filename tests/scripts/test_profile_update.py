"""scripts/profile_update.py at a few updates: each of the update's matrix products counted once, in either
precision (autocast records a bf16 product twice: as called, and inside it on its casts)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def matmuls_per_update(precision: str) -> float:
    arguments = ["--preset", "td3_paper", "--threads", "1", "--seeds", "1", "--precision", precision]
    arguments += ["--updates", "2", "--blocks", "1", "--top", "3", "--floor-size", "128"]  # bf16 at 2048: minutes
    result = subprocess.run(
        [sys.executable, "profile_update.py", *arguments], cwd=SCRIPTS, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    assert f"1 thread(s), {precision};" in result.stdout
    found = re.search(r"its matmuls alone \(([\d.]+) per update", result.stdout)
    assert found, result.stdout
    return float(found.group(1))


@pytest.mark.slow
def test_bf16_counts_the_same_products_as_fp32() -> None:
    # 16 per update with td3_paper (docs/performance.md's floor section); bf16's forward products not twice
    assert matmuls_per_update("bf16") == matmuls_per_update("fp32") == 16.0
