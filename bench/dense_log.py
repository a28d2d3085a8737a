"""The worst realistic log shape for babysit's reader: a metric line at every step.

A nanoGPT-style run printing `iter N: loss …` each iteration, with a tqdm bar redraw
and an info line between (so one line in three carries metrics), an eval and a
checkpoint save every 500 iterations, one overflowed step whose loss is `nan` a third
of the way in, and a closing line. Deterministic, so two machines bench the same bytes.

Usage: python bench/dense_log.py OUT.log --size-mib 256
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

NAN_AT_FRACTION = 1 / 3
_BLOCK = 2000  # iterations rendered per write


def _block(start: int, total: int, nan_at: int) -> str:
    lines = []
    for it in range(start, start + _BLOCK):
        loss = 4.2 * math.exp(-it / (total / 3)) + 1.1 + 0.01 * math.sin(it)
        shown = "nan" if it == nan_at else f"{loss:.4f}"
        lines.append(f"{100 * it // total:3d}%|####      | {it}/{total} "
                     f"[12:01<30:12, 27.31it/s]\r")
        lines.append(f"[2026-11-30 10:{it // 60 % 60:02d}:{it % 60:02d}] data: "
                     f"shard 17 prefetch 4 batches, queue 12\n")
        lines.append(f"iter {it}: loss {shown}, time 45.{it % 97:02d}ms, "
                     f"mfu 38.{it % 89:02d}%\n")
        if it and it % 500 == 0:
            lines.append(f"step {it}: train loss {loss:.4f}, val loss "
                         f"{loss + 0.05:.4f}\nsaving checkpoint to out\n")
    return "".join(lines)


def iterations_for(size_mib: int) -> int:
    """How many iterations fill `size_mib`, so the planned total is the real one."""
    wanted = size_mib * 1024 * 1024
    guess = wanted // 190
    per_iteration = len(_block(guess // 2, guess, -1)) / _BLOCK
    return max(_BLOCK, int(wanted / per_iteration) // _BLOCK * _BLOCK)


def write_dense_log(path: Path, size_mib: int) -> int:
    """Write the log; returns the iteration whose loss is NaN."""
    total = iterations_for(size_mib)
    nan_at = int(total * NAN_AT_FRACTION)
    with path.open("w", encoding="utf-8") as out:
        out.write(f"tokens per iteration will be: 491,520\nmax_iters = {total}\n")
        for start in range(0, total, _BLOCK):
            out.write(_block(start, total, nan_at))
        out.write(f"iter {total}: loss 1.1000, time 45.00ms, mfu 38.00%\n"
                  f"training finished after {total} iterations\n")
    return nan_at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--size-mib", type=int, default=256)
    args = parser.parse_args()
    nan_at = write_dense_log(args.out, args.size_mib)
    print(f"wrote {args.out} ({args.out.stat().st_size / 2**20:.0f} MiB), NaN at iter {nan_at}")


if __name__ == "__main__":
    main()
