"""Record the real PyTorch profiler trace that tests/efficiency/test_trace.py reads.

A tiny MLP trains for a few steps on random data under torch.profiler, on the CPU only,
each step wrapped in `record_function("perf::step")`; the Chrome trace the profiler
exports is gzipped into tests/fixtures/traces/. torch is not a babysit dependency, so it
was run from a scratch virtual environment outside the repository:

    python3 -m venv /work/scratch/torchenv
    /work/scratch/torchenv/bin/pip install torch==2.13.0      # the CPU build
    /work/scratch/torchenv/bin/python scripts/record_cpu_trace.py

The timings differ at every recording; the tests assert on the structure (step count,
op names, no device events) and on durations read back from the committed file.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import tempfile
from pathlib import Path

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function

DEFAULT_OUT = Path(__file__).parents[1] / "tests" / "fixtures" / "traces" / "cpu_mlp.json.gz"


def train_under_profiler(steps: int) -> profile:
    torch.manual_seed(0)
    torch.set_num_threads(1)  # fewer worker threads: a smaller, steadier trace
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    inputs = torch.randn(32, 64)
    labels = torch.randint(0, 10, (32,))
    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        for _ in range(steps):
            with record_function("perf::step"):
                optimizer.zero_grad()
                loss = loss_fn(model(inputs), labels)
                loss.backward()
                optimizer.step()
    return profiler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    profiler = train_under_profiler(args.steps)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        plain = Path(scratch) / "trace.json"
        profiler.export_chrome_trace(str(plain))
        # mtime=0: re-gzipping the same JSON gives the same bytes.
        with plain.open("rb") as source, gzip.GzipFile(args.out, "wb", mtime=0) as target:
            shutil.copyfileobj(source, target)
    print(f"{args.out}: {args.out.stat().st_size} bytes, torch {torch.__version__}")


if __name__ == "__main__":
    main()
