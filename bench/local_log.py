"""Benchmark the local-log target against the shell tools it replaces, in one run.

Generates (once, cached under bench/.data/) a 1 GiB Hugging Face-style training log with a
NaN at step 120, then prints babysit's figures beside their baselines:

  (a) one poll after 64 KiB is appended      vs  `tail -c 65536 FILE`      target ≤ 2×
  (b) the first poll (full-history scan)     vs  `grep -cE 'loss|nan|Error' FILE`
                                                  target ≥ 1/3 of grep's speed
  (c) `babysit --version`                     vs  `python -c "import typer"` target ≤ 1.5×
  (d) peak RSS of `babysit FILE --once`                                     target ≤ 60 MB

Usage: python bench/local_log.py [--size-mib 1024] [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"


def make_log(path: Path, size_mib: int) -> None:
    if path.exists() and path.stat().st_size >= size_mib * 1024 * 1024:
        return
    DATA.mkdir(exist_ok=True)
    target = size_mib * 1024 * 1024
    total = 10_000_000
    written = 0
    step = 0
    with path.open("w", encoding="utf-8") as handle:
        while written < target:
            block = []
            for _ in range(2000):
                step += 1
                loss = "nan" if step == 120 else f"{2.5 - step * 1e-7:.4f}"
                block.append(f" {step * 100 // total:3d}%|#         | {step}/{total} "
                             f"[01:02:03<12:34:56,  9.87it/s]\r")
                if step % 10 == 0:
                    block.append(f"{{'loss': '{loss}', 'grad_norm': '0.8731', "
                                 f"'learning_rate': '2.9e-04', 'epoch': '{step / 50000:.2f}'}}\n")
                if step % 50_000 == 0:
                    block.append(f"Saving model checkpoint to out/checkpoint-{step}\n")
            text = "".join(block)
            handle.write(text)
            written += len(text)


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def appended_block(start_step: int) -> str:
    """64 KiB of the same shape as the big log: a bar redraw per step, a loss dict
    every 10 steps (Hugging Face Trainer with logging_steps=10)."""
    lines = []
    step = start_step
    size = 0
    while size < 65536:
        step += 1
        lines.append(f"  50%|#####     | {step}/10000000 [01:02:03<12:34:56,  9.87it/s]\r")
        size += len(lines[-1])
        if step % 10 == 0:
            lines.append(f"{{'loss': '2.1000', 'grad_norm': '0.8731', "
                         f"'learning_rate': '2.9e-04', 'epoch': '{step / 50000:.2f}'}}\n")
            size += len(lines[-1])
    text = "".join(lines)
    return text[: text.rfind("\n") + 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent))
    from babysit.config import RuleSettings
    from babysit.core.run import Run
    from babysit.targets.log_file import LocalLogTarget

    big = DATA / f"hf-{args.size_mib}mib.log"
    print(f"preparing {big} ...", flush=True)
    make_log(big, args.size_mib)
    size = big.stat().st_size

    # (b) the first poll over the whole history vs grep over the whole file
    def first_poll() -> None:
        target = LocalLogTarget(big)
        snapshot = target.poll()
        target.close()
        first_poll.records = snapshot.records  # type: ignore[attr-defined]

    grep = median_time(lambda: subprocess.run(["grep", "-cE", "loss|nan|Error", str(big)],
                                              capture_output=True, check=False), args.repeat)
    scan = median_time(first_poll, max(3, args.repeat // 2))
    records = first_poll.records  # type: ignore[attr-defined]
    nan_steps = [r.step for r in records if any(v != v for v in r.metrics.values())]

    # (a) one poll after 64 KiB appended vs tail -c 65536
    with tempfile.TemporaryDirectory() as tmp:
        live = Path(tmp) / "live.log"
        with big.open("rb") as src, live.open("wb") as dst:
            src.seek(max(0, size - 8 * 1024 * 1024))
            dst.write(src.read())
        target = LocalLogTarget(live)
        tracker = Run(RuleSettings(), None, 0.0)
        tracker.absorb(target.poll().records)
        block = appended_block(5_000_000)
        poll_times = []
        for _ in range(args.repeat * 3):
            with live.open("a", encoding="utf-8") as handle:
                handle.write(block)
            start = time.perf_counter()  # a poll: read, parse, and apply the rules
            tracker.absorb(target.poll().records)
            poll_times.append(time.perf_counter() - start)
        target.close()
        poll = statistics.median(poll_times)
        tail = median_time(lambda: subprocess.run(["tail", "-c", "65536", str(live)],
                                                  capture_output=True, check=False),
                           args.repeat * 3)

    # (c) start-up
    exe = [sys.executable, "-m", "babysit"]
    version = median_time(lambda: subprocess.run([*exe, "--version"], capture_output=True,
                                                 check=True), args.repeat)
    typer_import = median_time(lambda: subprocess.run([sys.executable, "-c", "import typer"],
                                                      capture_output=True, check=True),
                               args.repeat)

    # (d) peak RSS of a whole `babysit FILE --once` on the big log
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        start = time.perf_counter()
        done = subprocess.run([*exe, str(big), "--once", "--out-dir", out], capture_output=True,
                              text=True, check=False)
        once_seconds = time.perf_counter() - start
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        verdict = json.loads((Path(out) / "babysit-training.json").read_text())
    if peak_kib <= before:
        print("warning: RSS of the --once run could not be separated from earlier children")

    print()
    print(f"log: {size / 2**30:.2f} GiB, {len(records)} records on the first poll; "
          f"first NaN found at step {nan_steps[0] if nan_steps else 'NONE'}")
    print(f"{'measure':44} {'babysit':>10} {'baseline':>10} {'ratio':>8}  target")
    print(f"{'(a) poll after 64 KiB appended / tail -c':44} {poll * 1e3:8.2f}ms "
          f"{tail * 1e3:8.2f}ms {poll / tail:7.2f}×  ≤ 2×")
    print(f"{'(b) first poll, full history / grep -cE':44} {scan:9.2f}s {grep:9.2f}s "
          f"{grep / scan:7.2f}   ≥ 0.33 of grep's speed")
    print(f"{'(c) babysit --version / import typer':44} {version * 1e3:8.0f}ms "
          f"{typer_import * 1e3:8.0f}ms {version / typer_import:7.2f}×  ≤ 1.5×")
    print(f"{'(d) peak RSS, babysit FILE --once':44} {peak_kib / 1024:8.1f}MB {'':>10} "
          f"{'':>8}  ≤ 60 MB   ({once_seconds:.1f}s, exit {done.returncode}, "
          f"{verdict['decision']}, anomalies: "
          f"{[(a['type'], a['step']) for a in verdict['anomalies_detected']]})")


if __name__ == "__main__":
    main()
