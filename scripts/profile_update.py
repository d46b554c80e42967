"""Where one TD3 update's time goes: td3x's own update on real Hopper-v5 transitions, op by op, against its matmuls.

    python scripts/profile_update.py [--preset td3] [--threads 2] [--seeds 1] [--precision fp32] [--updates 200]
                                     [--blocks 20] [--top 20] [--floor-size 2048]

Fills the replay buffer with the preset's random warm-up on Hopper-v5, then times ``sample`` + ``update``
against the update's matmuls replayed alone (plain calls of the recorded shapes on the same threads), in
alternating blocks so that the machine's drift hits both. The matmuls' time is the part of an update that only
fewer FLOPs or a faster BLAS can shrink; the rest is per-op overhead and memory-bound element-wise passes. With
``--precision bf16`` the update runs as ``run.precision=bf16`` and the replayed matmuls and the floor are bfloat16
products (the update's casts to bf16 count in the rest). Last,
``torch.profiler``'s top ops (self CPU time and calls per update; the profiler's own overhead is in those times,
not in the timed medians). Profile before optimising.
"""

from __future__ import annotations

import functools
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import torch
from bench_sps import WARMUP, start_trainer, td3x_config
from torch import Tensor
from torch.autograd.profiler_util import FunctionEvent
from torch.profiler import ProfilerActivity, profile

from td3x.commands.common import OneLineParser
from td3x.config.enums import Numerics, Precision
from td3x.config.hydra import register_configs
from td3x.host import numerics

MATMULS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"}
MATMUL_DTYPES = {Precision.fp32: torch.float32, Precision.bf16: torch.bfloat16}  # run.precision's matmuls
SHAPE_UPDATES = 2 * 3 * 4  # a multiple of every policy delay up to 4, so that actor updates count in proportion


def is_aten(event: FunctionEvent) -> bool:
    return event.name.startswith("aten::")


def is_outer_matmul(event: FunctionEvent) -> bool:
    """A matmul not called by another: under autocast a product is recorded twice, as called and again, inside it,
    on its bf16 casts."""
    return event.name in MATMULS and not (event.cpu_parent is not None and event.cpu_parent.name in MATMULS)


def block_ms(function: Callable[[], object], calls: int) -> float:
    """Time of ``calls`` calls, in ms."""
    started = time.perf_counter()
    for _ in range(calls):
        function()
    return 1e3 * (time.perf_counter() - started)


Matmul = tuple[Callable[[Tensor, Tensor], Tensor], Tensor, Tensor]


def operands(name: str, shapes: list[list[int]], dtype: torch.dtype) -> Matmul:
    """A recorded matmul as a plain call of the same shapes on random contiguous operands of ``dtype`` ((n, k) @
    (k, m), batched for bmm and baddbmm)."""
    first, second = (shapes[0], shapes[1]) if name in ("aten::mm", "aten::bmm") else (shapes[1], shapes[2])
    a, b = torch.randn(first, dtype=dtype), torch.randn(second, dtype=dtype)
    return (torch.bmm if a.dim() == 3 else torch.mm, a, b)


def gflop(matmul: Matmul) -> float:
    _, a, b = matmul
    return 2.0 * a.numel() * b.shape[-1] / 1e9


def matmul_replay(events: list[tuple[str, list[list[int]]]], dtype: torch.dtype) -> tuple[Callable[[], None], float]:
    """A function that runs the recorded matmuls once each, and their GFLOP in all."""
    calls = [operands(name, shapes, dtype) for name, shapes in events]

    def replay() -> None:
        for multiply, a, b in calls:
            multiply(a, b)

    return replay, sum(map(gflop, calls))


def shape_table(events: list[tuple[str, list[list[int]]]], updates: int, dtype: torch.dtype) -> list[str]:
    """Per distinct matmul shape, the costliest first: calls per update, ms per call (best of 5 blocks), GFLOP/s,
    and ms per update."""
    counts = Counter((name, tuple(map(tuple, shapes))) for name, shapes in events)
    rows = []
    for (name, shapes), count in counts.items():
        matmul = operands(name, [list(shape) for shape in shapes], dtype)
        multiply, a, b = matmul
        ms = min(block_ms(functools.partial(multiply, a, b), 10) / 10 for _ in range(5))
        rows.append((ms * count / updates, matmul, count / updates, ms))
    lines = [f"{'matmul (a @ b)':44s} {'per update':>10s} {'ms':>7s} {'GFLOP/s':>8s} {'ms/update':>9s}"]
    for ms_per_update, matmul, per_update, ms in sorted(rows, key=lambda row: -row[0]):
        shapes_text, rate = f"{tuple(matmul[1].shape)} @ {tuple(matmul[2].shape)}", gflop(matmul) / ms * 1e3
        lines.append(f"{shapes_text:44s} {per_update:10.1f} {ms:7.3f} {rate:8.1f} {ms_per_update:9.2f}")
    return lines


def attainable_gflops(dtype: torch.dtype, size: int = 2048) -> float:
    """One large square matmul's rate on the current threads (best of 3): about what the CPU's BLAS can reach."""
    a, b = torch.randn(size, size, dtype=dtype), torch.randn(size, size, dtype=dtype)
    seconds = min(block_ms(lambda: torch.mm(a, b), 1) for _ in range(3)) / 1e3
    return 2.0 * size**3 / seconds / 1e9


def paired_ms(update: Callable[[], None], replay: Callable[[], None], blocks: int) -> tuple[float, float, float]:
    """ms per update of the update and of its matmuls alone, timed in alternating blocks (a slow second of the
    machine hits both), each the median over blocks; and the median of the blocks' ratios."""
    updates, matmuls = [], []
    for _ in range(blocks):
        updates.append(block_ms(update, SHAPE_UPDATES) / SHAPE_UPDATES)
        matmuls.append(block_ms(replay, 1) / SHAPE_UPDATES)
    shares = [m / u for m, u in zip(matmuls, updates, strict=True)]
    return statistics.median(updates), statistics.median(matmuls), statistics.median(shares)


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="td3", help="agent preset (conf/agent)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=1, help="run.num_seeds: K seeds updated together")
    parser.add_argument("--precision", default="fp32", choices=[p.name for p in Precision], help="run.precision")
    parser.add_argument("--updates", type=int, default=200, help="updates profiled")
    parser.add_argument("--blocks", type=int, default=20, help="alternating blocks of updates and matmuls timed")
    parser.add_argument("--top", type=int, default=20, help="ops shown, by self CPU time")
    parser.add_argument(
        "--floor-size",
        type=int,
        default=2048,
        help="n of the n x n matmul timed as the floor (a CPU without bf16 instructions takes minutes at 2048)",
    )
    args = parser.parse_args()
    if args.floor_size < 1:
        parser.error(f"--floor-size {args.floor_size}: must be >= 1")
    register_configs()
    numerics.apply(Numerics.native)  # as td3x-train: denormals flushed
    config = td3x_config(
        args.preset, args.threads, steps=0, seeds=args.seeds, extra=[f"run.precision={args.precision}"]
    )
    dtype = MATMUL_DTYPES[Precision(args.precision)]
    with tempfile.TemporaryDirectory() as run_dir:
        trainer = start_trainer(config, Path(run_dir))
        for _ in range(WARMUP):
            trainer._collect()
        agent, buffer, batch_size = trainer.agent, trainer.buffer, config.agent.batch_size

        def update() -> None:
            agent.update(buffer.sample(batch_size))

        block_ms(update, args.updates)  # warm-up: allocator, caches, lazy init
        # shapes first: recording them slows the element-wise ops several-fold under the profiler
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as shapes:
            block_ms(update, SHAPE_UPDATES)
        matmuls = [(e.name, [list(s) for s in e.input_shapes]) for e in shapes.events() if is_outer_matmul(e)]
        replay, gflop = matmul_replay(matmuls, dtype)
        update_ms, matmul_ms, matmul_share = paired_ms(update, replay, args.blocks)
        with profile(activities=[ProfilerActivity.CPU]) as profiler:
            block_ms(update, args.updates)
        trainer.close("complete")
    top_level_ops = sum(1 for e in profiler.events() if is_aten(e) and not (e.cpu_parent and is_aten(e.cpu_parent)))
    gflop /= SHAPE_UPDATES

    print(
        f"Hopper-v5, agent={args.preset}, {args.seeds} seed(s), batch {batch_size}, {args.threads} thread(s), "
        f"{args.precision}; "
        f"torch {torch.__version__}"
    )
    print(f"update (sample + update): {update_ms:.2f} ms, median of {args.blocks} blocks of {SHAPE_UPDATES}")
    print(
        f"its matmuls alone ({len(matmuls) / SHAPE_UPDATES:.1f} per update, {gflop:.3f} GFLOP): {matmul_ms:.2f} ms "
        f"= {gflop / matmul_ms * 1e3:.0f} GFLOP/s; in alternating blocks, a median {100 * matmul_share:.0f}% of "
        "the update."
    )
    print(
        f"the rest: {top_level_ops / args.updates:.0f} aten ops per update (not counting those they call), their "
        "dispatch, autograd, the optimisers' bookkeeping and the element-wise passes"
    )
    peak = attainable_gflops(dtype, args.floor_size)
    print(
        f"the floor: one large matmul ({args.floor_size}^3) runs at {peak:.0f} GFLOP/s on {args.threads} thread(s); "
        "at that rate "
        f"the update's {gflop:.3f} GFLOP take {gflop / peak * 1e3:.2f} ms ({gflop / peak * 1e3 / args.seeds:.2f} ms "
        "per seed)"
    )
    print("\nthe matmuls by shape, each alone:\n" + "\n".join(shape_table(matmuls, SHAPE_UPDATES, dtype)))
    print(f"\nprofile, per update (the profiler's own overhead included):\n{'op':58s} {'calls':>6s} {'self ms':>8s}")
    ops = sorted(profiler.key_averages(), key=lambda e: -e.self_cpu_time_total)
    for op in ops[: args.top]:
        print(f"{op.key[:58]:58s} {op.count / args.updates:6.1f} {op.self_cpu_time_total / 1e3 / args.updates:8.3f}")


if __name__ == "__main__":
    main()
