#!/usr/bin/env bash
# A user's install, not the checkout's: build td3x's wheel from this tree, install it in a virtualenv of its own
# outside the repository, and from there train briefly, list Table 2's sweep and report. Used by .ci/run.
# Usage: bash scripts/check_wheel.sh   (needs python3 and pip; the tree should hold no stale build/)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

python3 -m pip wheel --quiet --no-deps --wheel-dir "$scratch/dist" "$repo"
python3 -m venv "$scratch/venv"
. "$scratch/venv/bin/activate"
pip install --quiet torch==2.13.0      # the CPU wheel; an unpinned torch would pull a CUDA build
pip install --quiet "$scratch"/dist/td3x-*.whl

cd "$scratch"                          # nothing of the checkout is on the path from here
python - <<'PY'
import td3x.config.hydra
assert "site-packages" in str(td3x.config.hydra.CONF_DIR), f"conf/ not from the wheel: {td3x.config.hydra.CONF_DIR}"
PY
td3x-train run.total_steps=600 env.random_steps=200 run.eval_every=300 run.eval_episodes=2 \
  logging.wandb_mode=disabled hydra.run.dir=wheel_run
td3x-sweep list +experiment=table2 | tail -n 1 | grep -qx "44 jobs, 440 runs"
td3x-report wheel_run --out wheel_report > /dev/null
test -s wheel_report/report.md
echo "wheel check: train, sweep list (44 jobs) and report work from an installed wheel"
