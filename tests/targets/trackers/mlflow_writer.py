"""A training script that logs to a real MLflow server (MLFLOW_TRACKING_URI), for tests.

Modes:
  finish        log --steps steps and end normally (FINISHED)
  nan           log a NaN loss at --at, keep going, end normally
  crash         raise inside `with mlflow.start_run()` at --at (MLflow marks it FAILED)
  bare-crash    raise after a bare `mlflow.start_run()` (MLflow's atexit hook ends it FINISHED)
  hang          log to --at, then sleep (the test kills it: the run stays RUNNING)
Prints the run id on its first line, then logs one step every --delay seconds; with
--batch, all steps in a few `log_batch` requests (a long finished run, quickly). Steps
are numbered from --first (1; 0 for a loop that logs `step=i` for i in range(steps)).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Any

import mlflow


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="finish")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--at", type=int, default=10)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--batch", action="store_true")
    parser.add_argument("--first", type=int, default=1)
    args = parser.parse_args()
    if args.mode == "bare-crash":
        run = mlflow.start_run()
        train(run.info.run_id, args)
        return
    with mlflow.start_run() as run:
        train(run.info.run_id, args)


def train(run_id: str, args: argparse.Namespace) -> None:
    print(run_id, flush=True)
    mlflow.log_params({"max_steps": args.steps, "learning_rate": 3e-4})
    if args.batch:
        log_in_batches(run_id, args.steps)
        return
    for step in range(args.first, args.first + args.steps):
        loss = 2.5 * math.exp(-step / 20) + 0.4
        if args.mode == "nan" and step >= args.at:
            loss = float("nan")
        mlflow.log_metrics({"loss": loss, "lr": 3e-4, "grad_norm": 0.9}, step=step)
        if step % 10 == 0:
            mlflow.log_metric("eval_loss", loss + 0.1, step=step)
        if step == args.at and args.mode in ("crash", "bare-crash"):
            raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (32x17 and 16x32)")
        if step == args.at and args.mode == "hang":
            print("hanging", flush=True)
            time.sleep(3600)
        time.sleep(args.delay)
    sys.stdout.flush()


def log_in_batches(run_id: str, steps: int) -> None:
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    now = int(time.time() * 1000)
    metrics = []
    for step in range(1, steps + 1):
        loss = 2.5 * math.exp(-step / 20) + 0.4
        metrics += [Metric(key, value, now, step)
                    for key, value in (("loss", loss), ("lr", 3e-4), ("grad_norm", 0.9))]
        if step % 10 == 0:
            metrics.append(Metric("eval_loss", loss + 0.1, now, step))
    client = MlflowClient()
    for start in range(0, len(metrics), 1000):  # the server's limit per request
        client.log_batch(run_id, metrics=metrics[start : start + 1000])


def forked(uri: str, args: list[str], out: Any) -> None:
    """Run as a child forked from a process that has already imported mlflow (see
    conftest.Writer): the same script, its stdout the pipe `out`, and the interpreter's exit
    hooks run at the end as they would at a normal exit (mlflow ends a bare `start_run()`
    there)."""
    import atexit
    import os
    import traceback

    os.dup2(out.fileno(), 1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # as quiet as the script run on its own
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    os.environ["MLFLOW_TRACKING_URI"] = uri
    sys.argv = [__file__, *args]
    code = 0
    try:
        main()
    except BaseException:  # the script's own crash, as Python reports it
        traceback.print_exc()
        code = 1
    finally:
        atexit._run_exitfuncs()
        sys.stdout.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
