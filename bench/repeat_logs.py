"""Two more shapes for the history scan, where a line repeats at every step.

- warning-every-step: a Hugging Face-style run whose every step prints a Python warning
  (`UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed
  explicitly ...` followed by `  warnings.warn(`), as many real runs do, with a loss
  dict every 10 steps. The warning says "checkpoint", so every repeat is a candidate
  event line for the scan.
- newline-bars: a tqdm bar written with newlines instead of carriage returns (a bar
  printed by a logger, or a notebook's output saved as text): one bar line per step and
  a loss dict every 10.

Both carry one `nan` loss a third of the way in and end with the trainer's summary, so
a right verdict is NO-GO at that step. Deterministic, so two machines bench the same
bytes.

Usage: python bench/repeat_logs.py OUT.log --shape warnings --size-mib 256
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

NAN_AT_FRACTION = 1 / 3
_BLOCK = 2000
_WARNING = ("/usr/lib/python3/site-packages/torch/utils/checkpoint.py:464: UserWarning: "
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "In version 2.4 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current "
            "default behavior, you can pass use_reentrant=True.\n  warnings.warn(\n")


def _loss(step: int, total: int) -> float:
    return 3.2 * math.exp(-step / (total / 3)) + 0.9 + 0.01 * math.sin(step)


def _dict(step: int, total: int, nan_at: int) -> str:
    loss = "nan" if nan_at - 10 < step <= nan_at else f"{_loss(step, total):.4f}"
    return (f"{{'loss': {loss}, 'grad_norm': {1.2 + 0.1 * math.cos(step):.4f}, "
            f"'learning_rate': {5e-5 * (1 - step / total):.4e}, "
            f"'epoch': {3 * step / total:.2f}}}\n")


def _bar(step: int, total: int) -> str:
    return (f"{100 * step // total:3d}%|####      | {step}/{total} "
            f"[12:01<30:12,  2.31it/s]\n")


def _warnings_block(start: int, total: int, nan_at: int) -> str:
    parts = []
    for step in range(start, start + _BLOCK):
        parts.append(_WARNING)
        if step % 10 == 0:
            parts.append(_dict(step, total, nan_at))
    return "".join(parts)


def _bars_block(start: int, total: int, nan_at: int) -> str:
    parts = []
    for step in range(start, start + _BLOCK):
        parts.append(_bar(step, total))
        if step % 10 == 0:
            parts.append(_dict(step, total, nan_at))
    return "".join(parts)


SHAPES: dict[str, Callable[[int, int, int], str]] = {
    "warnings": _warnings_block, "newline-bars": _bars_block}


def write_repeat_log(path: Path, size_mib: int, shape: str) -> int:
    """Write the log; returns the step whose loss first prints as NaN."""
    block = SHAPES[shape]
    wanted = size_mib * 1024 * 1024
    per_step = len(block(_BLOCK, 10 * _BLOCK, -100)) / _BLOCK
    total = max(_BLOCK, int(wanted / per_step) // _BLOCK * _BLOCK)
    nan_at = (int(total * NAN_AT_FRACTION) // 10) * 10
    with path.open("w", encoding="utf-8") as out:
        out.write(f"  Total optimization steps = {total:,}\n")
        for start in range(0, total, _BLOCK):
            out.write(block(start, total, nan_at))
        out.write(f"{{'train_runtime': 9000.1, 'train_samples_per_second': 12.1, "
                  f"'train_steps_per_second': {total / 9000.1:.3f}, 'train_loss': 1.4, "
                  f"'epoch': 3.0}}\n")
    return nan_at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="warnings")
    parser.add_argument("--size-mib", type=int, default=256)
    args = parser.parse_args()
    nan_at = write_repeat_log(args.out, args.size_mib, args.shape)
    print(f"wrote {args.out} ({args.out.stat().st_size / 2**20:.0f} MiB), NaN at step {nan_at}")


if __name__ == "__main__":
    main()
