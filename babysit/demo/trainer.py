"""A stand-in training process for the demo: no torch, realistic log lines.

The loss follows a noisy exponential decay under a warm-up + cosine learning-rate
schedule; at `--spike-at` one batch blows the loss and the gradient norm up, and
from `--nan-at` the loss is NaN, as in a run whose optimizer state got poisoned.
Lines look like a plain PyTorch loop's: `step 120/400 | loss 2.3456 | lr 3.0e-04 ...`.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from pathlib import Path


def learning_rate(step: int, total: int, peak: float = 3e-4, warmup: int = 20) -> float:
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * peak * (1 + math.cos(math.pi * progress))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--spike-at", type=int, default=150)
    parser.add_argument("--nan-at", type=int, default=260)
    parser.add_argument("--delay", type=float, default=0.025, help="seconds per step")
    parser.add_argument("--checkpoint-every", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    with args.log.open("a", encoding="utf-8") as log:
        def say(text: str) -> None:
            log.write(text + "\n")
            log.flush()

        say("Loading dataset: 128,000 samples, batch size 32 (demo: synthetic)")
        say(f"Starting training: max_steps={args.steps}, peak lr=3e-4, warmup 20 steps")
        for step in range(1, args.steps + 1):
            time.sleep(args.delay)
            lr = learning_rate(step, args.steps)
            loss = 1.2 + 2.4 * math.exp(-step / 90) + rng.gauss(0, 0.03)
            grad_norm = 0.9 + 0.4 * math.exp(-step / 60) + abs(rng.gauss(0, 0.08))
            if step == args.spike_at:
                loss *= 3.1
                grad_norm = 48.0
            if step >= args.nan_at:
                loss = float("nan")
                grad_norm = float("nan")
            throughput = 142.0 + rng.gauss(0, 3)
            say(f"step {step}/{args.steps} | loss {loss:.4f} | lr {lr:.2e} | "
                f"grad_norm {grad_norm:.3f} | {throughput:.1f} samples/s")
            if step % args.checkpoint_every == 0:
                say(f"Saving checkpoint to runs/demo/checkpoint-{step}")
        say("Training finished")


if __name__ == "__main__":
    main()
