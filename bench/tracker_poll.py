"""Benchmark tracker polling: requests and bytes per poll on a 100k-step run.

Starts a real MLflow tracking server (sqlite) on loopback, logs a 100,000-step run with
three metrics, then compares, side by side in one run, what one poll costs after 50 new
steps arrive:

  babysit   the run + only the new points (bulk-interval history after the last step)
  baseline  the run + every metric's full history again (paginated get-history)

It also shows that babysit's cost per poll does not grow with the run: the same poll at
10k and at 100k steps.

Usage: python bench/tracker_poll.py [--steps 100000]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def log_steps(client, run_id: str, start: int, stop: int) -> None:
    from mlflow.entities import Metric

    now = int(time.time() * 1000)
    batch = []
    for step in range(start, stop):
        for key, value in (("loss", 2.5 - step * 1e-5), ("lr", 3e-4), ("grad_norm", 0.9)):
            batch.append(Metric(key, value, now, step))
        if len(batch) >= 999:
            client.log_batch(run_id, metrics=batch)
            batch = []
    if batch:
        client.log_batch(run_id, metrics=batch)


def measure(target, poll=None) -> tuple[int, int, float]:
    requests, received = target.requests, target.bytes_received
    start = time.perf_counter()
    (poll or target.poll)()
    return (target.requests - requests, target.bytes_received - received,
            time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=100_000)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent))
    from mlflow.tracking import MlflowClient

    from babysit.targets.mlflow_run import MlflowTarget

    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        server = subprocess.Popen(
            [str(Path(sys.executable).with_name("mlflow")), "server", "--backend-store-uri",
             f"sqlite:///{tmp}/mlflow.db", "--default-artifact-root", f"{tmp}/art", "--host",
             "127.0.0.1", "--port", str(port), "--workers", "1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"})
        uri = f"http://127.0.0.1:{port}"
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{uri}/health", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        try:
            client = MlflowClient(uri)
            run_id = client.create_run("0").info.run_id
            print(f"logging {args.steps} steps × 3 metrics ...", flush=True)
            checkpoints = sorted({min(10_000, args.steps), args.steps})
            rows = []
            logged = 1
            ours = MlflowTarget(run_id, uri)
            theirs = MlflowTarget(run_id, uri)
            for size in checkpoints:
                log_steps(client, run_id, logged, size + 1)
                logged = size + 1
                ours.poll()  # catch up (not measured); the first answer may be cached
                ours.poll()
                log_steps(client, run_id, logged, logged + 50)
                logged += 50
                ours_cost = measure(ours)
                run = theirs._get_run()
                keys = [m["key"] for m in run["data"]["metrics"]]
                theirs_cost = measure(
                    theirs, lambda keys=keys: [theirs._full_history(k) for k in keys])
                rows.append((size, ours_cost, theirs_cost))
        finally:
            server.terminate()
            server.wait()
    print(f"{'run length':>12} {'':4} {'babysit (incremental)':>28} {'full history refetch':>28}")
    for size, (req, got, sec), (req2, got2, sec2) in rows:
        print(f"{size:>12,} steps  {req:3d} req {got / 1024:8.1f} KiB {sec * 1e3:6.0f} ms  "
              f"{req2 + 1:3d} req {got2 / 1024:8.1f} KiB {sec2 * 1e3:6.0f} ms")
    (_, (_, small, _), _), (_, (_, big, _), (_, full, _)) = rows[0], rows[-1]
    print(f"bytes per poll: babysit at {rows[-1][0]:,} steps is {full / max(big, 1):.0f}× "
          f"less than refetching; babysit's cost grew {big / max(small, 1):.2f}× from "
          f"{rows[0][0]:,} to {rows[-1][0]:,} steps")


if __name__ == "__main__":
    main()
