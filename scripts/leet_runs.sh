#!/usr/bin/env bash
# What W&B's terminal viewer lists for a W&B directory: opens `wandb leet` on it in a detached tmux session of the
# given size, optionally types a runs filter (leet's `f`), waits until the runs list has settled, prints the screen
# (tmux capture-pane) and closes the session. leet keeps its filter and selection in the directory it views
# (.wandb-leet.json): it views a scratch W&B directory of links to the same runs, so DIR is left as it was.
#
#   scripts/leet_runs.sh WANDB_DIR [FILTER] [COLUMNS]
#   scripts/leet_runs.sh outputs/multirun/2026-11-26_09-11-30/wandb 'config.paper_row="TD3 - CDQ"'
#
# Needs tmux and the wandb of the active environment. Exit 0 with the screen on stdout; 1 when leet showed no run
# list within 60 s; 2 for bad usage.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 3 || ! -d "$1" ]]; then
    echo "usage: scripts/leet_runs.sh WANDB_DIR [FILTER] [COLUMNS] (WANDB_DIR: a W&B directory, e.g. <sweep>/wandb)" >&2
    exit 2
fi
command -v tmux >/dev/null || { echo "scripts/leet_runs.sh: tmux is not installed" >&2; exit 2; }
wandb_dir=$1
filter=${2:-}
columns=${3:-160}
session="leet-runs-$$"
python=$(command -v python)
scratch=$(mktemp -d)
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$scratch"' EXIT
for entry in "$wandb_dir"/run-* "$wandb_dir"/offline-run-*; do
    [[ -d "$entry" ]] && ln -s "$(realpath "$entry")" "$scratch/$(basename "$entry")"
done

# leet's own settings file goes to the scratch dir too (WANDB_CONFIG_DIR), not to the user's W&B config
mkdir "$scratch/config"
tmux new-session -d -s "$session" -x "$columns" -y 40 \
    "WANDB_CONFIG_DIR=$(printf '%q' "$scratch/config") $python -m wandb leet $(printf '%q' "$scratch")"

screen() { tmux capture-pane -p -t "$session"; }
# the header reads "Runs [N items]" once the W&B directory was scanned
wait_for_runs() {
    local previous="" current
    for _ in $(seq 1 120); do
        sleep 0.5
        current=$(screen)
        if grep -q "Runs \[" <<<"$current" && [[ "$current" == "$previous" ]]; then
            return 0
        fi
        previous=$current
    done
    return 1
}

wait_for_runs || { echo "scripts/leet_runs.sh: wandb leet showed no run list within 60 s" >&2; screen >&2; exit 1; }
echo "wandb leet $wandb_dir (viewed through the links in $scratch):"
if [[ -n "$filter" ]]; then
    tmux send-keys -t "$session" f
    tmux send-keys -t "$session" -l "$filter"
    tmux send-keys -t "$session" Enter
    wait_for_runs || { echo "scripts/leet_runs.sh: the filter did not settle" >&2; exit 1; }
fi
screen
