"""What `babysit.hooks.Monitor.step()` costs a training loop, per call.

Each mode writes the same step lines (step, loss, lr, grad_norm, tokens, step_time,
model_flops, total: the call of the module's example) to a file in a temporary folder:

  json.dumps             `json.dumps(d)` of the same fields, already in a dict (baseline)
  json.dumps + write     the baseline written to a buffered file
  step, buffered         Monitor(path, flush_every=None): flushed by the file's buffer
  step, default          Monitor(path): flushed at most once a second
  step, line-flushed     Monitor(path, flush_every=0): one write(2) per line
  step, no target        Monitor(None), as on the ranks that do not log

and the cost of `import babysit.hooks` in a fresh interpreter (bytecode cached), beside
`import json` (most of it; a training script has loaded json long before).

Goal: step, buffered ≤ 5 µs per call. Timings are the best of --repeats rounds (the
least disturbed); the median is shown beside it. Float formatting (repr, as json.dumps
does it) is most of a call: about half a microsecond per float on a slow core.

Usage: python bench/hooks_cost.py [--calls 200000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from babysit.hooks import Monitor  # noqa: E402

GOAL_NS = 5000  # step, buffered


def _values(calls: int) -> list[tuple[float, float, float]]:
    """Loss, learning rate and gradient norm that change every step, like a run's."""
    return [(2.5 - i * 1e-6, 3e-4 * (1 - i / (2 * calls)), 0.8 + (i % 97) * 1e-3)
            for i in range(calls)]


def _timed(body: Callable[[], None]) -> float:
    start = time.perf_counter_ns()
    body()
    return float(time.perf_counter_ns() - start)


def _monitor_calls(path: Path | None, flush_every: float | None,
                   values: list[tuple[float, float, float]]) -> Callable[[], None]:
    def body() -> None:
        mon = Monitor(path, flush_every=flush_every)
        step = mon.step
        for i, (loss, lr, norm) in enumerate(values):
            step(i, loss=loss, lr=lr, grad_norm=norm, tokens=524288, step_time=0.41,
                 model_flops=3.7e17, total=5000)
        mon.close()
    return body


def _dicts(values: list[tuple[float, float, float]]) -> list[dict[str, float]]:
    return [{"step": i, "loss": loss, "lr": lr, "grad_norm": norm, "tokens": 524288,
             "tokens/s": 524288 / 0.41, "step_time": 0.41, "model_flops": 3.7e17,
             "total_steps": 5000} for i, (loss, lr, norm) in enumerate(values)]


def _dumps_calls(dicts: list[dict[str, float]]) -> Callable[[], None]:
    def body() -> None:
        dumps = json.dumps
        for d in dicts:
            dumps(d)
    return body


def _dumps_write_calls(path: Path, dicts: list[dict[str, float]]) -> Callable[[], None]:
    def body() -> None:
        dumps = json.dumps
        with path.open("a", encoding="utf-8") as handle:
            write = handle.write
            for d in dicts:
                write(dumps(d) + "\n")
    return body


def _import_us(module: str, runs: int = 15) -> float:
    """Median microseconds `import MODULE` takes in a fresh interpreter (-X importtime,
    cumulative: the module and what it imports that was not loaded yet), with bytecode
    cached in a temporary folder."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    with tempfile.TemporaryDirectory() as cache:
        cmd = [sys.executable, "-X", "importtime", "-X", f"pycache_prefix={cache}", "-c",
               f"import {module}"]
        subprocess.run(cmd, env=env, check=True, capture_output=True)  # writes the bytecode
        times = []
        for _ in range(runs):
            done = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
            # `import time: self | cumulative | name`, the name indented by depth.
            rows = [line.split("|") for line in done.stderr.splitlines()]
            times.extend(int(row[1]) for row in rows
                         if len(row) == 3 and row[2] == f" {module}")
    return float(statistics.median(times))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    calls = args.calls
    values = _values(calls)
    dicts = _dicts(values)
    flushed_calls = max(1, calls // 10)  # a syscall per line: fewer calls suffice

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        modes: list[tuple[str, Callable[[], None], int]] = [
            ("json.dumps (baseline)", _dumps_calls(dicts), calls),
            ("json.dumps + write", _dumps_write_calls(folder / "dumps.log", dicts), calls),
            ("step, buffered", _monitor_calls(folder / "buffered.log", None, values), calls),
            ("step, default (1 s)", _monitor_calls(folder / "default.log", 1.0, values), calls),
            ("step, line-flushed", _monitor_calls(folder / "flushed.log", 0,
                                                  values[:flushed_calls]), flushed_calls),
            ("step, no target", _monitor_calls(None, None, values), calls),
        ]
        results: dict[str, tuple[float, float]] = {}
        for name, body, count in modes:
            rounds = []
            for _ in range(args.repeats):
                rounds.append(_timed(body) / count)
            results[name] = (min(rounds), statistics.median(rounds))
        sample = (folder / "buffered.log").read_text(encoding="utf-8").splitlines()[1]
        bytes_per_line = len(sample) + 1

    print(f"Monitor.step(): ns per call (best / median of {args.repeats} rounds; "
          f"{calls:,} calls, {flushed_calls:,} line-flushed), Python "
          f"{sys.version.split()[0]}")
    for name, (best, median) in results.items():
        print(f"  {name:<24}{best:>9.0f}{median:>9.0f}")
    print(f"  a step line: {bytes_per_line} bytes, e.g. {sample}")
    print(f"import, µs (median, -X importtime): json {_import_us('json'):.0f}, "
          f"babysit.hooks {_import_us('babysit.hooks'):.0f} (json and weakref included)")
    buffered = results["step, buffered"][0]
    verdict = "met" if buffered <= GOAL_NS else "MISSED"
    print(f"goal: step, buffered <= {GOAL_NS} ns per call: {verdict} ({buffered:.0f} ns)")
    return 0 if buffered <= GOAL_NS else 1


if __name__ == "__main__":
    sys.exit(main())
