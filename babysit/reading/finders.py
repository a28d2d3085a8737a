"""Searchers for the history scan: where in a long log a pattern matches, fast.

Each finder takes an extended regex and a byte range and yields the offsets of the
matches (the last byte of each), in file order. On this machine the fastest is
hyperscan, scanning 1 MiB chunks on several threads at once (its scan releases the
GIL); without it, grep behind `tr`; as a last resort, Python's `re`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import subprocess
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

ReadAt = Callable[[int, int], bytes]  # (offset, size) -> bytes
# (extended regex, start offset, end offset) -> offsets of matches in [start, end), in order
OffsetFinder = Callable[[str, int, int], Iterator[int]]

_CHUNK = 1024 * 1024  # fits the CPU's caches: faster than bigger reads
# Bytes before a chunk scanned with it, so a match that begins in the chunk before is
# still seen whole (the patterns are words: far shorter than this).
_OVERLAP = 256
_HITS_PER_SCAN = 4096
_MAX_WORKERS = 4
_AHEAD_PER_WORKER = 2  # chunks scanned ahead of the reader, per thread: memory stays small


def local_finder(path: str) -> OffsetFinder | None:
    """The fastest searcher this machine has for a local file: hyperscan, else grep."""
    try:
        import hyperscan
    except ImportError:
        return local_grep(path)
    return _hyperscan_finder(hyperscan, path)


def _workers() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))  # what this process may use, not the host's
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(_MAX_WORKERS, cpus))


def _hyperscan_finder(hyperscan: Any, path: str) -> OffsetFinder:
    databases: dict[str, Any] = {}

    def database(pattern: str) -> Any:
        if pattern not in databases:
            databases[pattern] = compiled_database(hyperscan, pattern)
        return databases[pattern]

    def find(pattern: str, offset: int, end: int) -> Iterator[int]:
        db = database(pattern)
        own = hyperscan.Scratch(db)  # a loaded database has none of its own
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            bounds = [(low, min(end, low + _CHUNK)) for low in range(offset, end, _CHUNK)]
            workers = min(_workers(), len(bounds))

            def scan(low: int, high: int, scratch: Any) -> tuple[list[int], int | None]:
                return _scan_chunk(hyperscan, db, scratch, fd, offset, low, high)

            if workers <= 1:
                results: Iterable[tuple[list[int], int | None]] = (
                    scan(low, high, own) for low, high in bounds)
                scans = None
            else:
                scans = _ParallelScans(scan, [hyperscan.Scratch(db) for _ in range(workers)],
                                       bounds)
                results = scans
            try:
                for (_, high), (hits, resume) in zip(bounds, results, strict=True):
                    yield from hits
                    while resume is not None:  # a chunk thick with hits: the rest of it
                        hits, resume = scan(resume, high, own)
                        yield from hits
            finally:
                if scans is not None:
                    scans.close()
        finally:
            os.close(fd)

    return find


def compiled_database(hyperscan: Any, pattern: str) -> Any:
    """The pattern compiled for hyperscan. Compiling the history words takes ~10 ms, a
    good part of a quick verdict, so the result is kept in babysit's cache directory
    (`BABYSIT_CACHE_DIR`, else `$XDG_CACHE_HOME/babysit`); a missing, stale or damaged
    entry is compiled again, and a cache that cannot be written is simply not kept."""
    tag = f"babysit history db\0hyperscan {hyperscan.__version__}\0{pattern}\0".encode()
    entry = _cache_dir() / f"hyperscan-{zlib.crc32(tag):08x}.db"
    stored = _read_small(entry)
    if stored is not None and stored.startswith(tag):
        with contextlib.suppress(hyperscan.error):
            return hyperscan.loadb(stored[len(tag):], hyperscan.HS_MODE_BLOCK)
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=[pattern.encode()], ids=[0], elements=1, flags=[0])
    with contextlib.suppress(OSError, hyperscan.error):
        _write_atomically(entry, tag + hyperscan.dumpb(db))
    return db


_MAX_CACHED_BYTES = 4 * 1024 * 1024


def _cache_dir() -> Path:
    given = os.environ.get("BABYSIT_CACHE_DIR")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "babysit"


def _read_small(path: Path) -> bytes | None:
    """A regular file's bytes, if it is one and small; None otherwise (never blocks)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_CACHED_BYTES:
            return None
        return os.pread(fd, info.st_size, 0)
    except OSError:
        return None
    finally:
        os.close(fd)


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    finally:
        with contextlib.suppress(OSError):
            partial.unlink()


def _scan_chunk(hyperscan: Any, db: Any, scratch: Any, fd: int, start: int, low: int,
                high: int) -> tuple[list[int], int | None]:
    """Matches whose last byte lies in [low, high), and where to go on if there were too
    many to collect at once (the line after the last one kept)."""
    base = max(start, low - _OVERLAP)
    data = os.pread(fd, high - base, base)
    hits: list[int] = []

    def on_match(_id: int, _from: int, to: int, _flags: int, _ctx: object) -> bool:
        at = base + to - 1
        if at >= low:
            hits.append(at)
        return len(hits) >= _HITS_PER_SCAN  # True stops the scan

    with contextlib.suppress(hyperscan.ScanTerminated):
        db.scan(data, match_event_handler=on_match, scratch=scratch)
    if len(hits) < _HITS_PER_SCAN:
        return hits, None
    following = next_separator(data, hits[-1] - base)
    resume = base + following + 1 if following >= 0 else high
    return hits, resume if resume < high else None


class _ParallelScans:
    """The chunks (their [low, high) bounds), scanned by worker threads a little ahead
    of the reader and handed to it in file order. An error in a worker reaches the
    reader."""

    def __init__(self, scan: Callable[[int, int, Any], tuple[list[int], int | None]],
                 scratches: list[Any], bounds: list[tuple[int, int]]) -> None:
        self._scan = scan
        self._bounds = bounds
        self._count = len(bounds)
        self._ahead = _AHEAD_PER_WORKER * len(scratches)
        self._done: dict[int, tuple[list[int], int | None] | BaseException] = {}
        self._claimed = 0  # the next chunk a worker takes
        self._taken = 0  # the next chunk the reader takes
        self._closed = False
        self._lock = threading.Condition()
        self._threads = [threading.Thread(target=self._work, args=(scratch,), daemon=True,
                                          name="babysit-scan") for scratch in scratches]
        for thread in self._threads:
            thread.start()

    def _work(self, scratch: Any) -> None:
        lock = self._lock
        while True:
            with lock:
                while not self._closed and self._claimed < self._count \
                        and self._claimed >= self._taken + self._ahead:
                    lock.wait()
                if self._closed or self._claimed >= self._count:
                    return
                index = self._claimed
                self._claimed += 1
            result: tuple[list[int], int | None] | BaseException
            try:
                result = self._scan(*self._bounds[index], scratch)
            except BaseException as error:  # handed to the reader, which raises it
                result = error
            with lock:
                self._done[index] = result
                lock.notify_all()

    def __iter__(self) -> Iterator[tuple[list[int], int | None]]:
        lock = self._lock
        for index in range(self._count):
            with lock:
                while index not in self._done:
                    lock.wait()
                result = self._done.pop(index)
                self._taken = index + 1
                lock.notify_all()
            if isinstance(result, BaseException):
                raise result
            yield result

    def close(self) -> None:
        """Stop the workers; each finishes at most the chunk it is scanning."""
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        for thread in self._threads:
            thread.join()


def next_separator(data: bytes, position: int) -> int:
    """Where the first line break at or after `position` is, or -1."""
    newline = data.find(b"\n", position)
    carriage = data.find(b"\r", position)
    if newline < 0:
        return carriage
    if carriage < 0:
        return newline
    return min(newline, carriage)


def local_grep(path: str) -> OffsetFinder | None:
    """A finder that runs this machine's grep over `path`; None without grep.

    grep buffers a whole line, and a `\\r`-only tqdm log or a sparse file is one
    endless line to it, so `tr` first turns carriage returns and NULs into newlines
    (byte for byte: the offsets stay true)."""
    grep, tr = shutil.which("grep"), shutil.which("tr")
    if grep is None or tr is None:
        return None

    def find(pattern: str, offset: int, end: int) -> Iterator[int]:
        env = {**os.environ, "LC_ALL": "C"}
        with open(path, "rb") as handle:
            handle.seek(offset)
            split = subprocess.Popen([tr, "\\r\\000", "\\n\\n"], stdin=handle,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        assert split.stdout is not None
        search = subprocess.Popen([grep, *GREP_ARGS, pattern], stdin=split.stdout,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        split.stdout.close()
        assert search.stdout is not None
        try:
            yield from offsets_from_grep(search.stdout, offset, end)
        finally:
            for proc in (search, split):
                proc.kill()
            search.stdout.close()
            search.wait()
            split.wait()

    return find


GREP_ARGS = ("--line-buffered", "-a", "-b", "-o", "-E")


def offsets_from_grep(lines: Iterable[bytes], offset: int, end: int) -> Iterator[int]:
    """Absolute offsets from `grep -b -o` output over a stream that began at `offset`."""
    for raw in lines:
        relative, _, _ = raw.partition(b":")
        try:
            hit = offset + int(relative)
        except ValueError:
            continue
        if hit >= end:
            return
        yield hit


def python_offsets(read_at: ReadAt, pattern: str, offset: int, end: int,
                   chunk: int = _CHUNK) -> Iterator[int]:
    """The same search with Python's `re`: slow on big files, but everywhere."""
    compiled = re.compile(pattern.encode())
    position = offset
    while position < end:
        data = read_at(position, min(chunk + 256, end - position))
        if not data:
            return
        for match in compiled.finditer(data):
            if match.start() >= chunk and position + len(data) < end:
                break
            yield position + match.start()
        position += min(chunk, len(data))
