"""The fast history scan finds what matters in a long log, whichever searcher runs it
(hyperscan, grep, Python's `re`), and finds what a full parse finds."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from babysit.model import EventKind
from babysit.parsing.endings import FROM_ORDER
from babysit.parsing.events import find_events
from babysit.parsing.text import clean
from babysit.reading.finders import OffsetFinder, local_finder, local_grep
from babysit.reading.history import EVENTS, NONFINITE, scan_history
from tests.conftest import FIXTURES, development_logs

pytestmark = pytest.mark.corpus

FINDERS = ["hyperscan", "grep", "python"]


def _finder(kind: str, path: Path) -> OffsetFinder | None:
    if kind == "python":
        return None
    if kind == "grep":
        return local_grep(str(path))
    pytest.importorskip("hyperscan")
    return local_finder(str(path))


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


@pytest.mark.parametrize("finder", FINDERS)
def test_first_nan_in_history_is_found_with_its_step(tmp_path: Path, finder: str):
    log = tmp_path / "train.log"
    _write_long_log(log, lines=40_000, nan_at=120)
    size = log.stat().st_size
    records = list(scan_history(_reader(log), 0, size, _finder(finder, log)))
    nan_records = [r for r in records if any(math.isnan(v) for v in r.metrics.values())]
    assert nan_records[0].step == 120
    assert all(r.sparse for r in records)


@pytest.mark.parametrize("finder", FINDERS)
def test_checkpoints_and_tracebacks_in_history_are_found(tmp_path: Path, finder: str):
    log = tmp_path / "train.log"
    _write_long_log(log, lines=12_000, nan_at=10**9)
    with log.open("a", encoding="utf-8") as handle:
        handle.write("Traceback (most recent call last):\n  File \"t.py\", line 1\n"
                     "RuntimeError: boom\n")
    size = log.stat().st_size
    records = list(scan_history(_reader(log), 0, size, _finder(finder, log)))
    saved = [e.detail for r in records for e in r.events if e.kind is EventKind.CHECKPOINT_SAVED]
    assert saved == ["out/checkpoint-10000"]  # of a row of saves, the newest
    exceptions = [e.detail for r in records for e in r.events if e.kind is EventKind.EXCEPTION]
    assert exceptions == ["RuntimeError: boom"]


@pytest.mark.parametrize("finder", FINDERS)
def test_the_newest_save_before_the_first_nan_is_kept(tmp_path: Path, finder: str):
    """The checkpoint to roll back to is the last one saved before the run went NaN."""
    log = tmp_path / "train.log"
    _write_long_log(log, lines=23_000, nan_at=22_000)
    size = log.stat().st_size
    records = list(scan_history(_reader(log), 0, size, _finder(finder, log)))
    order = [("save", e.detail) for r in records for e in r.events
             if e.kind is EventKind.CHECKPOINT_SAVED]
    nan_at = next(i for i, r in enumerate(records)
                  if any(math.isnan(v) for v in r.metrics.values()))
    before = [e.detail for r in records[:nan_at] for e in r.events
              if e.kind is EventKind.CHECKPOINT_SAVED]
    assert before[-1] == "out/checkpoint-20000"
    assert order  # and nothing else went missing around it
    assert records[nan_at].step == 22_000


@pytest.mark.parametrize("finder", FINDERS)
def test_nan_flood_is_dropped_after_a_few_lines(tmp_path: Path, finder: str):
    log = tmp_path / "train.log"
    _write_long_log(log, lines=30_000, nan_at=10)
    size = log.stat().st_size
    records = list(scan_history(_reader(log), 0, size, _finder(finder, log)))
    nonfinite = [r for r in records if any(math.isnan(v) for v in r.metrics.values())]
    assert len(nonfinite) == 1 and nonfinite[0].step == 10


def _all_fixture_lines() -> list[str]:
    lines: list[str] = []
    for log in development_logs():
        text = log.read_bytes().decode("utf-8", errors="replace")
        lines.extend(part for part in re.split(r"[\r\n]", text) if part.strip())
    return lines


def test_every_event_line_in_the_recorded_and_public_logs_is_a_search_hit():
    """The search words are a superset of what the event signatures report: a line the
    full parse would call an error, a save or the end must reach the parser."""
    words = re.compile(f"{NONFINITE}|{EVENTS}")
    missed = [line for line in _all_fixture_lines()
              if find_events(clean(line)) and words.search(line) is None]
    assert missed == []


@pytest.mark.parametrize("name", sorted(str(p.relative_to(FIXTURES / "logs"))
                                        for p in development_logs()
                                        if p.stat().st_size > 8 * 1024))
def test_history_scan_finds_the_one_line_events_a_full_parse_finds(name: str):
    """Each recorded or public log read with a 2 KiB tail (so nearly all of it goes
    through the history scan) reports the same errors, crashes, completion and first
    non-finite step as a full parse of it."""
    from babysit.targets.common.log_file import LocalLogTarget

    log = FIXTURES / "logs" / name

    def seen(tail_bytes: int | None) -> tuple[set[EventKind], int | None]:
        target = LocalLogTarget(log) if tail_bytes is None else \
            LocalLogTarget(log, tail_bytes=tail_bytes)
        records = target.poll(final=True).log.records
        target.close()
        kinds = {e.kind for r in records for e in r.events
                 if not (e.kind is EventKind.COMPLETED and e.detail in FROM_ORDER)} \
            & _ONE_LINE_EVENTS
        first_nan = next((r.step for r in records
                          if any(not math.isfinite(v) for v in r.metrics.values())), None)
        return kinds, first_nan

    assert seen(2048) == seen(None)


_ONE_LINE_EVENTS = {EventKind.OOM, EventKind.HOST_KILL, EventKind.CUDA_ERROR, EventKind.NCCL,
                    EventKind.EXCEPTION, EventKind.SEGFAULT, EventKind.DISK_FULL,
                    EventKind.CHECKPOINT_ERROR, EventKind.COMPLETED,
                    EventKind.STOPPED_BY_SIGNAL, EventKind.LOSS_SCALE_FLOOR}


def test_memory_stays_bounded_on_a_sparse_file_without_a_newline(tmp_path: Path):
    """A preallocated (sparse) file is one endless line of NULs: neither babysit nor the
    grep it may start holds that line in memory."""
    # 256 MiB: well above the 150 MiB bound held below; every MiB more is scanned twice
    # (~6 ms of CPU each) on every run of the suite.
    log = tmp_path / "train.log"
    with log.open("wb") as handle:
        handle.write(b"step 1/100 | loss=2.0\n")
        handle.truncate(256 * 1024**2)
        handle.seek(256 * 1024**2)
        handle.write(b"\nstep 2/100 | loss=nan\n")
    probe = ("import re, resource, sys\n"
             "from babysit.reading.finders import local_grep, local_finder\n"
             "from babysit.reading.history import scan_history\n"
             "path = sys.argv[1]\nend = 256 * 1024**2\n"
             "fd = open(path, 'rb')\nread = lambda o, n: (fd.seek(o), fd.read(n))[1]\n"
             "for finder in (local_finder(path), local_grep(path)):\n"
             "    list(scan_history(read, 0, end + 1, finder))\n"
             "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1]\n"
             "kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
             "print(int(hwm) // 1024, kids // 1024)\n")
    done = subprocess.run([sys.executable, "-c", probe, str(log)], capture_output=True,
                          text=True, timeout=120, check=True)
    own_mib, children_mib = (int(x) for x in done.stdout.split())
    # Unbounded, either would hold the whole 256 MiB line.
    assert own_mib < 150 and children_mib < 150, done.stdout

