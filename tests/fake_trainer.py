"""A small stand-in for a training script, for tests that need a real process.

It prints realistic progress lines (`step 12/40 | loss=2.3456 | lr=3.0e-04`) to stdout,
flushing each, and at `--at` does what `--mode` says:

  finish     keep going to the last step, print `Training finished`, exit 0
  raise      raise ValueError (a bug in user code: deterministic)
  transient  raise ConnectionResetError (a network blip: worth a restart)
  hang       stop printing and sleep without using CPU
  kill       send itself SIGKILL (no traceback, like the OOM killer)
  segv       send itself SIGSEGV
  nan        print loss=nan from then on and keep going
  child      start a child that outlives it, and raise four steps later
  daemonize  hand the loop to a double-forked worker (the launcher exits 0 at once)

With `--state FILE` it resumes from the step recorded there (a checkpoint) and
counts its starts in FILE.starts; `--fail-times N` makes only the first N starts fail;
`--every N` acts at every multiple of N instead of once at `--at`.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--at", type=int, default=10)
    parser.add_argument("--mode", default="finish")
    parser.add_argument("--delay", type=float, default=0.02)
    parser.add_argument("--state", type=Path)
    parser.add_argument("--fail-times", type=int, default=10**9)
    parser.add_argument("--every", type=int, default=0, help="fail at every multiple of this")
    parser.add_argument("--child-pidfile", type=Path)
    parser.add_argument("--api-token", help="unused; a secret on the command line")
    parser.add_argument("--no-finish-line", action="store_true",
                        help="end without printing a completion line")
    args = parser.parse_args()

    start, starts = 1, 1
    if args.state is not None:
        starts_file = args.state.with_suffix(".starts")
        starts = int(starts_file.read_text()) + 1 if starts_file.exists() else 1
        starts_file.write_text(str(starts))
        if args.state.exists():
            start = int(args.state.read_text()) + 1
    failing = starts <= args.fail_times
    print(f"Starting training: max_steps={args.steps} (start {starts}, from step {start})",
          flush=True)
    for step in range(start, args.steps + 1):
        time.sleep(args.delay)
        loss = 2.5 * math.exp(-step / 30) + 0.5
        if args.mode == "nan" and step >= args.at:
            loss = float("nan")
        print(f"step {step}/{args.steps} | loss={loss:.4f} | lr=3.0e-04", flush=True)
        if args.state is not None:
            args.state.write_text(str(step))
        due = step % args.every == 0 if args.every else step == args.at
        if due and failing:
            act(args)
        if args.mode == "child" and step == args.at + 4 and failing:
            raise RuntimeError("DataLoader worker (pid 4242) exited unexpectedly")
    if not args.no_finish_line:
        print("Training finished", flush=True)


def act(args: argparse.Namespace) -> None:
    mode = args.mode
    if mode == "raise":
        raise ValueError("learning_rate must be positive, got -0.001")
    if mode == "transient":
        raise ConnectionResetError(104, "Connection reset by peer")
    if mode == "hang":
        time.sleep(3600)
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "daemonize":
        # The launcher goes away; a grandchild, re-parented to init, trains on.
        if os.fork() > 0:
            os._exit(0)
        os.setsid()
        if os.fork() > 0:
            os._exit(0)
        return
    if mode == "child":
        # A worker that will outlive this process, which dies four steps later.
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        if args.child_pidfile is not None:
            args.child_pidfile.write_text(str(child.pid))


if __name__ == "__main__":
    main()
