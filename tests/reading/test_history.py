"""The fast history scan finds what matters in a long log, with and without grep."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from babysit.model import EventKind
from babysit.reading.history import local_grep, scan_history


def _write_long_log(path: Path, lines: int, nan_at: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for step in range(1, lines + 1):
            loss = "nan" if step >= nan_at else f"{3.0 - step * 1e-5:.4f}"
            handle.write(f" {step * 100 // lines}%|##  | {step}/{lines} [00:01<00:09, 9.1it/s]\r")
            handle.write(f"{{'loss': '{loss}', 'grad_norm': '0.9', 'epoch': '0.5'}}\n")
            if step % 5000 == 0:
                handle.write(f"Saving model checkpoint to out/checkpoint-{step}\n")


def _reader(path: Path):
    data = path.read_bytes()
    return lambda offset, size: data[offset : offset + size]


@pytest.mark.parametrize("use_grep", [True, False])
def test_first_nan_in_history_is_found_with_its_step(tmp_path: Path, use_grep: bool):
    log = tmp_path / "train.log"
    _write_long_log(log, lines=40_000, nan_at=120)
    size = log.stat().st_size
    finder = local_grep(str(log)) if use_grep else None
    records = list(scan_history(_reader(log), 0, size, finder))
    nan_records = [r for r in records if any(math.isnan(v) for v in r.metrics.values())]
    assert nan_records[0].step == 120
    assert all(r.sparse for r in records)


@pytest.mark.parametrize("use_grep", [True, False])
def test_checkpoints_and_tracebacks_in_history_are_found(tmp_path: Path, use_grep: bool):
    log = tmp_path / "train.log"
    _write_long_log(log, lines=12_000, nan_at=10**9)
    with log.open("a", encoding="utf-8") as handle:
        handle.write("Traceback (most recent call last):\n  File \"t.py\", line 1\n"
                     "RuntimeError: boom\n")
    size = log.stat().st_size
    finder = local_grep(str(log)) if use_grep else None
    records = list(scan_history(_reader(log), 0, size, finder))
    saved = [e.detail for r in records for e in r.events if e.kind is EventKind.CHECKPOINT_SAVED]
    assert saved == ["out/checkpoint-10000"]  # of a row of saves, the newest
    exceptions = [e.detail for r in records for e in r.events if e.kind is EventKind.EXCEPTION]
    assert exceptions == ["RuntimeError: boom"]


def test_nan_flood_is_searched_once_not_line_by_line(tmp_path: Path):
    log = tmp_path / "train.log"
    _write_long_log(log, lines=30_000, nan_at=10)
    size = log.stat().st_size
    records = list(scan_history(_reader(log), 0, size, local_grep(str(log))))
    nonfinite = [r for r in records if any(math.isnan(v) for v in r.metrics.values())]
    assert len(nonfinite) == 1
