"""A tiny training script that logs to W&B in offline mode, for tests of the .wandb reader.

Run as `python wandb_writer.py DIR --mode MODE`. It creates a real offline run under DIR
(so DIR/wandb/latest-run points at it), logs `--steps` rows of history
(`loss`, `lr`, a nested `acc/top1`, and a string `phase` that is not a number; `--wide N`
adds N more numbers to step 0, so that record spans blocks), and
then does what `--mode` says:

  finish   set a summary value and end cleanly (exit code 0)
  nan      log `loss=nan` at step `--at` (and `+inf` in `grad_norm`), then finish
  raise    raise RuntimeError at step `--at`: an uncaught exception, as a buggy script would
  kill     send itself SIGKILL at step `--at`, after waiting for the log to be flushed
  slow     log one row every `--delay` seconds, printing `logged N` after each, then finish

After each row it prints `logged STEP` (flushed) so a test can follow its progress.
The caller sets WANDB_MODE=offline, WANDB_SILENT=true, WANDB_DISABLE_GIT=true and
WANDB_X_TRANSACTION_LOG_FLUSH_INTERVAL; nothing here touches the network.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time

import wandb


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--mode", default="finish")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--at", type=int, default=5)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--wide", type=int, default=0,
                        help="add this many numeric keys to step 0 (a record over 32 KiB)")
    parser.add_argument("--flush-wait", type=float, default=1.5,
                        help="seconds to wait before SIGKILL so the core has flushed")
    args = parser.parse_args()

    run = wandb.init(
        mode="offline",
        dir=args.dir,
        project="babysit-tests",
        name="writer-" + args.mode,
        config={"lr": 0.001, "optimizer": {"name": "adamw", "betas": [0.9, 0.999]},
                "batch_size": 32},
    )
    for step in range(args.steps):
        if args.mode == "raise" and step == args.at:
            raise RuntimeError(f"boom at step {step}")
        if args.mode == "kill" and step == args.at:
            time.sleep(args.flush_wait)
            os.kill(os.getpid(), signal.SIGKILL)
        loss = 1.0 / (step + 1)
        row: dict[str, object] = {
            "loss": loss,
            "lr": 0.001 * (0.9 ** step),
            "acc": {"top1": 0.1 * step},
            "phase": "train",
        }
        if step == 0 and args.wide:
            row["wide"] = {f"k{index:05d}": float(index) for index in range(args.wide)}
        if args.mode == "nan" and step == args.at:
            row["loss"] = float("nan")
            row["grad_norm"] = float("inf")
        wandb.log(row, step=step)
        print(f"logged {step}", flush=True)
        if args.delay:
            time.sleep(args.delay)
    run.summary["best_loss"] = 1.0 / args.steps
    run.finish()
    print("finished", flush=True)


if __name__ == "__main__":
    sys.exit(main())
