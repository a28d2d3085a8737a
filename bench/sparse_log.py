"""A Hugging Face Trainer-shaped log: a tqdm bar redraw every step (ended by `\\r`), a
loss dict every ten steps, a checkpoint save every 50,000, and a NaN at step 120.

Metric lines are one in eleven and short: the "sparse" shape of the benchmark, next to
the dense one of `dense_log.py`.

Usage: python bench/sparse_log.py OUT.log --size-mib 256
"""

from __future__ import annotations

import argparse
from pathlib import Path

TOTAL_STEPS = 10_000_000
NAN_STEP = 120


def write_sparse_log(path: Path, size_mib: int) -> None:
    target = size_mib * 1024 * 1024
    written = 0
    step = 0
    with path.open("w", encoding="utf-8") as handle:
        while written < target:
            block = []
            for _ in range(2000):
                step += 1
                loss = "nan" if step == NAN_STEP else f"{2.5 - step * 1e-7:.4f}"
                block.append(f" {step * 100 // TOTAL_STEPS:3d}%|#         | {step}/{TOTAL_STEPS} "
                             f"[01:02:03<12:34:56,  9.87it/s]\r")
                if step % 10 == 0:
                    block.append(f"{{'loss': '{loss}', 'grad_norm': '0.8731', "
                                 f"'learning_rate': '2.9e-04', 'epoch': '{step / 50000:.2f}'}}\n")
                if step % 50_000 == 0:
                    block.append(f"Saving model checkpoint to out/checkpoint-{step}\n")
            text = "".join(block)
            handle.write(text)
            written += len(text)


def appended_block(start_step: int, size: int = 65536) -> str:
    """`size` bytes (whole lines) of the same shape, as a live run appends them."""
    lines = []
    step = start_step
    length = 0
    while length < size:
        step += 1
        lines.append(f"  50%|#####     | {step}/{TOTAL_STEPS} [01:02:03<12:34:56,  9.87it/s]\r")
        length += len(lines[-1])
        if step % 10 == 0:
            lines.append(f"{{'loss': '2.1000', 'grad_norm': '0.8731', "
                         f"'learning_rate': '2.9e-04', 'epoch': '{step / 50000:.2f}'}}\n")
            length += len(lines[-1])
    text = "".join(lines)
    return text[: text.rfind("\n") + 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--size-mib", type=int, default=256)
    args = parser.parse_args()
    write_sparse_log(args.out, args.size_mib)
    print(f"wrote {args.out} ({args.out.stat().st_size / 2**20:.0f} MiB), NaN at step {NAN_STEP}")


if __name__ == "__main__":
    main()
