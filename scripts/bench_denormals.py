"""Why td3x flushes denormals: a checkpoint's own updates, timed with denormal floats kept and flushed to zero.

    python scripts/bench_denormals.py RUN_DIR [--updates 30]

RUN_DIR holds a td3x ``checkpoint.pt`` (a plain run's dir, or a K-seeds process dir). The agent and replay buffer
are restored from it, the share of Adam's moment entries that are denormal (nonzero, below 2^-126 in magnitude) is
counted, and ``--updates`` updates are timed twice from the same state, batches and smoothing noise on one thread:
with denormals kept (x86 computes on them in microcode) and flushed (what ``td3x.host.numerics`` sets in every run);
then how many of the actors' and critics' weights came out bit-identical. The later a checkpoint,
the more of Adam's first moments have decayed into that range (weights into dead ReLU units get zero gradients).
"""

from __future__ import annotations

import copy
import sys
import tempfile
import time
from pathlib import Path

import torch

from td3x.commands.common import OneLineParser
from td3x.rundir.checkpoint import load
from td3x.rundir.layout import CHECKPOINT_FILE
from td3x.rundir.trained_run import RunError, config_from_dict
from td3x.training.loop import Trainer


def denormal_share(optimizer_state: dict[str, object]) -> tuple[int, int]:
    """(denormal entries, all entries) of an optimiser's moment tensors."""
    tiny, denormal, total = torch.finfo(torch.float32).tiny, 0, 0
    for state in optimizer_state["state"].values():  # type: ignore[attr-defined]
        for name in ("exp_avg", "exp_avg_sq"):
            moment = state[name]
            denormal += int(((moment != 0) & (moment.abs() < tiny)).sum())
            total += moment.numel()
    return denormal, total


def main() -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--updates", type=int, default=30)
    args = parser.parse_args()
    path = args.run_dir / CHECKPOINT_FILE
    if not path.is_file():
        sys.exit(f"bench_denormals: {path} does not exist (RUN_DIR must hold a td3x checkpoint.pt)")
    if args.updates < 1:
        sys.exit(f"bench_denormals: --updates must be at least 1, got {args.updates}")
    parts = load(path)
    try:
        config = config_from_dict(parts["config"])
    except RunError as error:
        sys.exit(f"bench_denormals: {path}: {error}")
    if "critic_optimizer" not in parts["agent"] or "buffer" not in parts:
        sys.exit(
            f"bench_denormals: {path} holds no training state (a finished run keeps it only with "
            "run.keep_buffer=true): use a run in progress or one trained with it"
        )
    torch.set_num_threads(1)
    for name in ("actor_optimizer", "critic_optimizer"):
        denormal, total = denormal_share(parts["agent"][name])
        print(f"{name}: {denormal} of {total} moment entries denormal ({100 * denormal / total:.1f}%)")
    with tempfile.TemporaryDirectory() as scratch:
        trainer = Trainer(config, Path(scratch))
        noise_states = [generator.get_state() for generator in trainer.agent.smoothing_generators]
        timings, weights = {}, {}
        for flush in (False, True):  # the same state, batches and smoothing noise for both
            trainer.buffer.load_state_dict(copy.deepcopy(parts["buffer"]))
            trainer.agent.load_state_dict(copy.deepcopy(parts["agent"]))
            for generator, state in zip(trainer.agent.smoothing_generators, noise_states, strict=True):
                generator.set_state(state)
            torch.set_flush_denormal(flush)
            started = time.perf_counter()
            for _ in range(args.updates):
                trainer.agent.update(trainer.buffer.sample(config.agent.batch_size))
            timings[flush] = (time.perf_counter() - started) / args.updates
            weights[flush] = torch.cat(
                [p.detach().flatten() for p in (*trainer.agent.actor_params, *trainer.agent.critic_params)]
            )
            print(f"denormals {'flushed' if flush else 'kept'}: {timings[flush] * 1e3:.1f} ms per update", flush=True)
        trainer.close("complete")
    same = int((weights[False] == weights[True]).sum())
    print(
        f"weights after {args.updates} updates: {same} of {weights[True].numel()} bit-identical between the two, "
        f"largest difference {float((weights[False] - weights[True]).abs().max()):.3g}"
    )
    print(
        f"{config.env.id}, K={config.run.num_seeds} seed(s), env step {parts['counters']['step']}: kept / flushed = "
        f"{timings[False] / timings[True]:.2f}"
    )


if __name__ == "__main__":
    main()
