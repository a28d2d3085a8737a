"""Benchmark tracker polling: requests and bytes per poll on a 100k-step run.

Starts a real MLflow tracking server (sqlite) on loopback, logs a 100,000-step run with
three metrics, then compares, side by side in one run, what one poll costs after 50 new
steps arrive:

  babysit   the run + only the new points (bulk-interval history after the last step)
  baseline  the run + every metric's full history again (paginated get-history)

It also shows that babysit's cost per poll does not grow with the run: the same poll at
10k and at 100k steps. The same comparison then runs for W&B, through the real
`wandb.Api` client against the loopback fake W&B server of the tests (it answers the
GraphQL the client sends and counts requests and bytes): babysit's poll (reload the run,
`scan_history` after the last step) vs `scan_history()` of the whole run.

Usage: python bench/tracker_poll.py [--steps 100000] [--only mlflow|wandb]
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
    parser.add_argument("--only", choices=("mlflow", "wandb"))
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent))
    if args.only != "wandb":
        bench_mlflow(args.steps)
    if args.only != "mlflow":
        bench_wandb(args.steps)


def bench_wandb(steps: int) -> None:
    import wandb

    from babysit.targets.wandb.run import WandbApiTarget
    from tests.fakes.wandb_api import FakeWandbServer

    with tempfile.TemporaryDirectory() as tmp, FakeWandbServer() as server:
        for name in [n for n in os.environ if n.startswith("WANDB_")]:
            del os.environ[name]
        os.environ.update(WANDB_BASE_URL=server.base_url, WANDB_API_KEY=server.api_key,
                          WANDB_SILENT="true", WANDB_CONFIG_DIR=f"{tmp}/c",
                          WANDB_CACHE_DIR=f"{tmp}/k", WANDB_DATA_DIR=f"{tmp}/d",
                          NETRC=f"{tmp}/netrc")
        run = server.add_run("team/proj/long")
        target = WandbApiTarget("team/proj/long", "team/proj/long")
        api = wandb.Api(timeout=60)
        rows = []
        for size in sorted({min(10_000, steps), steps}):
            while run.last_step + 1 < size:
                run.log(loss=2.0, lr=3e-4, grad_norm=0.9)
            target.poll()
            for _ in range(50):
                run.log(loss=2.0, lr=3e-4, grad_norm=0.9)
            server.reset_counts()
            start = time.perf_counter()
            target.poll()
            ours = (sum(server.operations().values()), server.response_bytes(),
                    time.perf_counter() - start)
            server.reset_counts()
            start = time.perf_counter()
            full = list(api.run("team/proj/long").scan_history(page_size=1000))
            theirs = (sum(server.operations().values()), server.response_bytes(),
                      time.perf_counter() - start)
            assert len(full) == run.last_step + 1
            rows.append((size, ours, theirs))
    print("W&B (fake server, real wandb.Api client)")
    report(rows, "full scan_history")


def bench_mlflow(steps: int) -> None:
    from mlflow.tracking import MlflowClient

    from babysit.targets.mlflow.run import MlflowTarget

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
            print(f"logging {steps} steps × 3 metrics ...", flush=True)
            checkpoints = sorted({min(10_000, steps), steps})
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
    print("MLflow (real tracking server)")
    report([(size, ours, (req + 1, got, sec)) for size, ours, (req, got, sec) in rows],
           "full history refetch")


def report(rows: list, baseline: str) -> None:
    print(f"{'run length':>12} {'':4} {'babysit (incremental)':>28} {baseline:>28}")
    for size, (req, got, sec), (req2, got2, sec2) in rows:
        print(f"{size:>12,} steps  {req:3d} req {got / 1024:8.1f} KiB {sec * 1e3:6.0f} ms  "
              f"{req2:3d} req {got2 / 1024:8.1f} KiB {sec2 * 1e3:6.0f} ms")
    (_, (_, small, _), _), (_, (_, big, _), (_, full, _)) = rows[0], rows[-1]
    print(f"bytes per poll: babysit at {rows[-1][0]:,} steps is {full / max(big, 1):.0f}× "
          f"less than refetching; babysit's cost grew {big / max(small, 1):.2f}× from "
          f"{rows[0][0]:,} to {rows[-1][0]:,} steps\n")


if __name__ == "__main__":
    main()
