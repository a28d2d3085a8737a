"""A fast first look at a long log's history.

Parsing every line of a multi-gigabyte log in Python takes minutes, yet the verdict on
a finished run must not miss the NaN at step 120. The verdict needs little from the
history before the fully-parsed tail: the first non-finite value of each metric, every
error, restart and completion line, and the checkpoint saves. So one linear pass finds
the lines that can carry those (a multi-pattern search over big chunks: hyperscan in
this process, else grep, else Python's `re`), and only those lines are parsed, each on
its own. A line that needs a step from its neighbours (a Hugging Face loss dict, a bare
`saving checkpoint`) borrows it from the nearest line above that has one.

Non-finite numbers are a flood once a run has gone NaN: after a few lines that name no
metric not already seen non-finite, the search goes on without them. Lines that repeat
(a warning printed at every step that happens to say "checkpoint") cost nothing after
their first: a line whose shape (its long numbers masked) was parsed before and said
nothing is counted, not parsed again, and a shape repeated many times is reported.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator
from dataclasses import replace

from babysit.model import EventKind, Record
from babysit.parsing.events import find_events
from babysit.parsing.parser import LogParser
from babysit.reading.finders import OffsetFinder, ReadAt, next_separator, python_offsets

NONFINITE = r"\b(nan|NaN|NAN|inf|Inf|INF|Infinity)\b"
# A superset of what `parsing.events` reports, as plain words so the search stays fast.
# tests/reading/test_history.py checks that every event line of the recorded and public
# logs contains one of them.
EVENTS = "|".join((
    "Traceback", "out of memory", "OutOfMemory", "Killed", "SIGKILL", "oom-kill", "oom_kill",
    "exceeded memory limit", "Signal 9", "signal 9", "exitcode", "CUDA error", "device-side",
    "illegal memory", "illegal instruction", "Illegal instruction", "Floating point exception",
    "CUDNN_STATUS", "cuDNN error", "CUBLAS_STATUS",
    "Allocator", "RESOURCE_EXHAUSTED", "ailed to allocate request", "ECC error", "chieved",
    "olved", "ttained", "arget loss", "arget acc", "esired", "oal ",
    "launch failure", "CUDA driver", "Xid",
    r"\.cu:", "NCCL", "nccl", "Gloo", "gloo", "DistBackendError", "timed out", "Timed out",
    "Timeout", "timeout", "Segmentation", "SIGSEGV", "SIGBUS", "SIGABRT", "Bus error",
    "Fatal Python", "Windows fatal exception", "core dumped", "Aborted", "ignal 11",
    "No space left", "quota exceeded",
    "Errno 28", "Errno 122", "PytorchStreamWriter", "unexpected pos", "SafetensorError",
    "rror while serializing",
    # Phrases, not the bare word: `torch.utils.checkpoint` warns at every step in many runs.
    "ave checkpoint", "aving checkpoint", "aved checkpoint", "the checkpoint",
    "odel checkpoint", "heckpoint saved", "heckpoint successfully", "heckpoint to",
    "aving model", "aved model",
    "ave model to", "inal model", "aved final", "aving final",
    # the best checkpoint evaluated once training is over (`Validating …/best.pt...`)
    # (written for grep -E and hyperscan alike: no `(?:`, no `\b`)
    r"best[A-Za-z0-9_=-]*\.(pt|pth|ckpt|h5|keras|bin|safetensors|pdparams)",
    # the model said trained, with how much (`Model trained in 100 epochs.`)
    "trained in ", "rained for ",
    "Saving the model", "Loading best", "est model", "est checkpoint", "Exception during",
    "death signal", "closing signal", "estarting workers", "Worker group FAILED",
    "oss scale", "Grad overflow", "Successfully completed", "TERM_OWNER", "TERM_RUNLIMIT",
    r"\*\*\* JOB", r"\*\*\* STEP", "raining is", "raining finished", "raining complete",
    "raining speed", "raining time", "done training", "after training", "arly stopping",
    "topped early", "ptimization complete", "ptimisation complete", "inal Model",
    "Check failed", "received SIG", r"\^C", "CUDA ERROR", "OOM when", "terminate called",
    # glog's, absl's and TensorFlow's C++ logger's FATAL lines (parsing.events)
    "[0-9]: F [A-Za-z_]", "F[0-9]{4} [0-9][0-9]:[0-9][0-9]:",
    "DataLoader worker", "fallen off", "NVLink", "double bit", "Ctrl ",
    "早停", "提前停止", "早期終了", "조기", "ừng sớm", "arada ", "rrêt ", "rret ",
    "uấn luyện",
    "raining done", "raining ended", "raining succeeded", "raining run", "raining has",
    "inished", "epochs completed", "arly stopping", "no improvement", "Signaling Trainer",
    "exits successfully", "reached", "fit stopped", "done", "complete", "All epochs",
    "improve in the last", "EarlyStopping counter", "Stopping training", "opped early",
    "eyboard", "Run is kept", "nterrupted by", "ResourceExhausted", "MemoryError",
    "bad_alloc", "Out of memory", "zsh: killed", "Received SIG", "Signals.SIG",
    "Terminated", "zsh: terminated", "received at time=", "arly Stop",
    # A NaN said without a `nan` token (parsing.nonfinite_words): Keras' and fastai's
    # TerminateOnNaN `Invalid loss`, ESPnet2's `gradients at all steps are invalid`.
    "nvalid loss", "nvalid grad", "are invalid",
    # A loop's own early stop with its reason (`No improvement over 5 epochs, stop
    # training`, `EARLY STOP`), a later command refused (`train.py: error: …`).
    "mprove", "atience", "onverged", "EARLY", ": error: ", "Exited with exit code",
    "remainder of ranks", "atchdog caught",
    # What ran the script, on how it ended (parsing.runner_exits); boosting's own end.
    "exit code", "W&B process", "walltime", "TERM_ADMIN", "TERM_MEMLIMIT", r"\] Error",
    "est iteration", "overfitting detector", "Shrink model", "bestIteration",
    '"event"', '"status"',
    # What the run says about itself (parsing.facts): its size and tokens per step.
    "arameters", "params", "tokens per", "ocab",
))
_FLOOD_LIMIT = 16  # non-finite lines naming nothing new before the search drops them
_CONTEXT_BEFORE = 2 * 1024
_LINE_PROBE = 4 * 1024
_MAX_LINE = 64 * 1024
_TRACEBACK_WINDOW = 48 * 1024
_LOOKBACK_LINES = 12


def scan_history(read_at: ReadAt, start: int, end: int,
                 finder: OffsetFinder | None = None,
                 notes: list[str] | None = None) -> Iterator[Record]:
    """Records for the notable lines in bytes [start, end) of a log, in file order.

    Every record is marked `sparse`: they are isolated points, not a series. `finder`
    searches the file fast; without one, Python's `re` searches the same patterns.
    `notes` receives a sentence for each line repeated very often (a warning at every
    step)."""
    if end <= start:
        return
    quiet: dict[bytes, list[int | bytes]] = {}  # shape → [repeats, first line]
    try:
        yield from _scan(read_at, start, end, finder, quiet)
    finally:
        if notes is not None:
            notes.extend(_repeated(quiet))


def _repeated(quiet: dict[bytes, list[int | bytes]]) -> list[str]:
    often = sorted((entry for entry in quiet.values() if int(entry[0]) >= _OFTEN),
                   key=lambda entry: -int(entry[0]))[:3]
    return [f"a line that says nothing about the run repeats {int(count):,} times in the "
            f"log's history (read once): {bytes(line)[:120].decode('utf-8', 'replace')}"
            for count, line in often]


def _shape(line: bytes) -> bytes:
    """The line with its digits masked (each digit kept as a digit, so numbers of
    another length make another shape); lines whose short numbers change their meaning
    (`signal 11`, `exitcode: -9`, `[Errno 28]`) are their own shape."""
    head = line[:512]
    if b"ignal" in head or b"xitcode" in head or b"rrno" in head:
        return head
    return head.translate(_MASK_DIGITS)


class _Blocks:
    """Reads served from the last block read: hits come in file order, often many to a
    block (a line repeated at every step), and each wants a few KiB around it.

    The block grows while hits crowd into it and shrinks while they are far apart: a
    save every 80 KiB read through 256 KiB blocks would read the file over again."""

    _SMALLEST = 16 * 1024
    _LARGEST = 256 * 1024

    def __init__(self, read_at: ReadAt) -> None:
        self._read_at = read_at
        self._size = self._SMALLEST
        self._start = -1
        self._data = b""
        self._served = 0

    def __call__(self, offset: int, size: int) -> bytes:
        data = self._data
        if self._start <= offset and offset + size <= self._start + len(data):
            self._served += 1
            at = offset - self._start
            return data[at:at + size]
        if size > self._SMALLEST // 2:
            return self._read_at(offset, size)
        if self._start >= 0:
            crowded = self._served > 4
            self._size = min(self._size * 4, self._LARGEST) if crowded \
                else max(self._size // 2, self._SMALLEST)
        self._start = offset - min(offset, _CONTEXT_BEFORE)
        self._data = self._read_at(self._start, self._size)
        self._served = 1
        at = offset - self._start
        return self._data[at:at + size]


def _scan(read_at: ReadAt, start: int, end: int, finder: OffsetFinder | None,
          quiet: dict[bytes, list[int | bytes]]) -> Iterator[Record]:
    read_at = _Blocks(read_at)
    search = finder or (lambda pattern, offset, stop: python_offsets(read_at, pattern, offset,
                                                                     stop))
    seen_nonfinite: set[str] = set()
    pending_save: tuple[int, bytes] | None = None
    with_nonfinite = True
    offset = start
    while offset < end:
        pattern = f"{NONFINITE}|{EVENTS}" if with_nonfinite else EVENTS
        hits = search(pattern, offset, end)
        restart_at: int | None = None
        done_to = offset
        idle = 0
        try:
            for hit in hits:
                if hit < done_to:
                    continue  # another match on a line already read
                line_start, line = _line_at(read_at, start, end, hit)
                done_to = line_start + len(line) + 1
                shape = _shape(line)
                seen = quiet.get(shape)
                if seen is not None:
                    seen[0] = int(seen[0]) + 1  # parsed once already, and it said nothing
                    continue
                if len(quiet) >= _MAX_SHAPES:
                    quiet.clear()
                if with_nonfinite and _event_words().search(line) is None:
                    # Only a non-finite number: worth it while it names a new metric.
                    record = _parse_line(read_at, start, line_start, line)
                    names = _nonfinite_names(record)
                    if names - seen_nonfinite:
                        seen_nonfinite |= names
                        assert record is not None
                        if pending_save is not None:
                            yield from _parse_event_line(read_at, start, end, *pending_save)[0]
                            pending_save = None
                        yield replace(record, sparse=True)
                        idle = 0
                        continue
                    idle += 1
                    if idle >= _FLOOD_LIMIT:
                        restart_at = done_to
                        break
                    continue
                if _only_a_save(line):
                    # Saves come every few hundred steps: of a row of them only the last
                    # matters (the newest before whatever comes next), so it waits.
                    pending_save = (line_start, line)
                    continue
                if pending_save is not None:
                    yield from _parse_event_line(read_at, start, end, *pending_save)[0]
                    pending_save = None
                records, done_to = _parse_event_line(read_at, start, end, line_start, line)
                if not any(r.events or r.facts or _nonfinite_names(r) for r in records):
                    quiet[shape] = [1, line]  # noise that matched a word: read it once
                for record in records:
                    seen_nonfinite |= _nonfinite_names(record)
                yield from records
        finally:
            close = getattr(hits, "close", None)
            if close is not None:
                close()
        if restart_at is None:
            break
        with_nonfinite = False
        offset = restart_at
    if pending_save is not None:
        yield from _parse_event_line(read_at, start, end, *pending_save)[0]


def _only_a_save(line: bytes, known: dict[bytes, bool] = {}) -> bool:  # noqa: B006
    """Whether the line says a checkpoint was saved and nothing else. Periodic saves
    differ only in their numbers, so the answer is remembered per shape."""
    if b"heckpoint" not in line and b"odel" not in line:
        return False
    shape = _DIGITS.sub(b"0", line[:512])
    answer = known.get(shape)
    if answer is None:
        events = find_events(line.decode("utf-8", errors="replace"))
        answer = bool(events) and all(e.kind is EventKind.CHECKPOINT_SAVED for e in events)
        if len(known) > 1024:
            known.clear()
        known[shape] = answer
    return answer


_DIGITS = re.compile(rb"\d+")
_MASK_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_MAX_SHAPES = 4096
_OFTEN = 100  # repeats that make a line worth mentioning


@functools.cache
def _event_words() -> re.Pattern[bytes]:
    return re.compile(EVENTS.encode())  # compiled on first use: start-up stays short


def _nonfinite_names(record: Record | None) -> set[str]:
    if record is None:
        return set()
    return {k for k, v in record.metrics.items() if not math.isfinite(v)}


def _line_at(read_at: ReadAt, start: int, end: int, hit: int) -> tuple[int, bytes]:
    """The line holding byte `hit` (cut to 64 KiB) and the offset it starts at."""
    window_start = max(start, hit - _CONTEXT_BEFORE)
    window = read_at(window_start, min(end, hit + _LINE_PROBE) - window_start)
    rel = hit - window_start
    line_start = max(window.rfind(b"\n", 0, rel), window.rfind(b"\r", 0, rel)) + 1
    if line_start == 0 and window_start > start:
        line_start = rel  # a line longer than the window: start at the match
    stop = next_separator(window, rel)
    if stop < 0 and window_start + len(window) < end:
        window = read_at(window_start, min(end, hit + _MAX_LINE) - window_start)
        stop = next_separator(window, rel)
    if stop < 0:
        stop = len(window)
    return window_start + line_start, window[line_start:stop]


def _parse_line(read_at: ReadAt, start: int, line_start: int, line: bytes) -> Record | None:
    """Parse one line on its own; if it needs a step, lend it the nearest step above."""
    text = line.decode("utf-8", errors="replace")
    record = LogParser(count_records=False).feed(text)
    if record is None or record.step is not None:
        return record
    context_start = max(start, line_start - _CONTEXT_BEFORE)
    before = read_at(context_start, line_start - context_start)
    previous = [raw for raw in re.split(rb"[\r\n]", before) if raw.strip()]
    if context_start > start and previous:
        previous = previous[1:]  # the first piece may be the tail of a longer line
    for raw in reversed(previous[-_LOOKBACK_LINES:]):
        parser = LogParser(count_records=False)
        parser.feed(raw.decode("utf-8", errors="replace"))
        if parser.step is None:
            continue
        again = parser.feed(text)
        return again if again is not None else record
    return record


def _parse_event_line(read_at: ReadAt, start: int, end: int, line_start: int,
                      line: bytes) -> tuple[list[Record], int]:
    """Records for a line with an event word; a traceback is followed to its end."""
    record = _parse_line(read_at, start, line_start, line)
    line_end = line_start + len(line) + 1
    if record is None:
        return [], line_end
    records = [replace(record, sparse=True)]
    if not any(e.kind is EventKind.TRACEBACK_START for e in record.events):
        return records, line_end
    parser = LogParser(count_records=False)
    parser.feed(line.decode("utf-8", errors="replace"))
    follow = read_at(line_end, min(end - line_end, _TRACEBACK_WINDOW))
    position = line_end
    for raw in re.split(rb"[\r\n]", follow):
        position += len(raw) + 1
        more = parser.feed(raw.decode("utf-8", errors="replace")) if raw else None
        if more is not None and more.events:
            records.append(replace(more, sparse=True))
            if any(e.kind is EventKind.EXCEPTION for e in more.events):
                break
    return records, min(position, end)
