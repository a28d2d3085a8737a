"""A training log on this machine, followed incrementally.

Each poll reads only the bytes appended since the previous one. Rotation (a new
file at the same path: new inode) and truncation (`copytruncate`: the size shrank)
are detected on every poll. The first poll of a long log reads only its tail in
full and searches the history before it with `reading.history`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ClassVar

from babysit.model import Record, Snapshot
from babysit.parsing.parser import LogParser
from babysit.reading.history import scan_history
from babysit.reading.lines import LineSplitter
from babysit.targets.base import TargetError, TargetUnavailable

TAIL_BYTES = 2 * 1024 * 1024
_READ_CHUNK = 4 * 1024 * 1024


class LocalLogTarget:
    target_type: ClassVar[str] = "local-log"

    def __init__(self, path: str | os.PathLike[str], *, tail_bytes: int = TAIL_BYTES,
                 use_grep: bool = True, wall_time: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self._label = os.fspath(path)  # as the user wrote it: `./demo` stays `./demo`
        self._tail_bytes = tail_bytes
        self._use_grep = use_grep
        self._wall_time = wall_time
        self._fd: int | None = None
        self._identity: tuple[int, int] | None = None
        self._offset = 0
        self._splitter = LineSplitter()
        self._parser = LogParser()
        self._deleted = False
        self._lines = 0
        self._check_readable()

    @property
    def label(self) -> str:
        return self._label

    def _check_readable(self) -> None:
        if not self.path.exists():
            raise TargetError(f"log file not found: {self.path}")
        if self.path.is_dir():
            raise TargetError(f"{self.path} is a directory; give the path of the log file")
        try:
            self._open()
        except PermissionError as error:
            raise TargetError(f"cannot read {self.path}: permission denied") from error
        except OSError as error:
            raise TargetError(f"cannot open {self.path}: {error.strerror or error}") from error

    def _open(self) -> None:
        fd = os.open(self.path, os.O_RDONLY)
        info = os.fstat(fd)
        if self._fd is not None:
            os.close(self._fd)
        self._fd = fd
        self._identity = (info.st_dev, info.st_ino)

    def poll(self, final: bool = False) -> Snapshot:
        notices: list[str] = []
        records: list[Record] = []
        new_bytes = 0
        cut_before = self._splitter.cut_lines
        lines_before = self._lines
        try:
            notices.extend(self._follow_path(records))
            assert self._fd is not None
            size = os.fstat(self._fd).st_size
            if size < self._offset:
                notices.append(f"log truncated ({self._offset} → {size} bytes); reading it "
                               f"from the start")
                self._offset = 0
                self._splitter.reset()
            new_bytes += self._read_to(size, records)
            mtime = os.fstat(self._fd).st_mtime
        except OSError as error:
            reason = error.strerror or str(error)
            raise TargetUnavailable(f"cannot read {self.path}: {reason}") from error
        if final:
            records.extend(self._parse_lines(self._splitter.flush()))
        if self._splitter.cut_lines > cut_before:
            notices.append("an overlong line was cut to 64 KiB")
        return Snapshot(
            records=tuple(records),
            new_bytes=new_bytes,
            new_lines=self._lines - lines_before,
            formats=tuple(f for f, _ in self._parser.formats.most_common()),
            notices=tuple(notices),
            quiet_for=max(0.0, self._wall_time() - mtime),
            alive=None,
        )

    def _follow_path(self, records: list[Record]) -> list[str]:
        """Notice a deleted or replaced file; finish the old one before switching."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            if self._deleted:
                return []
            self._deleted = True
            return [f"log file {self.path} was deleted; still reading the already-open file"]
        identity = (info.st_dev, info.st_ino)
        if identity == self._identity:
            if self._deleted:
                self._deleted = False
                return [f"log file {self.path} is back"]
            return []
        # Rotated: drain what the writer put in the old file, then start the new one.
        assert self._fd is not None
        self._read_to(os.fstat(self._fd).st_size, records)
        records.extend(self._parse_lines(self._splitter.flush()))
        self._open()
        self._offset = 0
        self._deleted = False
        return [f"log rotated: now reading the new {self.path} from its start"]

    def _read_to(self, size: int, records: list[Record]) -> int:
        start = self._offset
        if size <= start:
            return 0
        if size - start > 2 * self._tail_bytes:
            # A long stretch (the first poll of an old log, or a huge burst): search its
            # history fast and parse only the tail in full.
            tail_start = size - self._tail_bytes
            records.extend(scan_history(self._read_at, start, tail_start, str(self.path),
                                        self._use_grep))
            self._splitter.reset()
            self._skip_partial_line(tail_start)
            start = self._offset
        for chunk in self._chunks(start, size):
            records.extend(self._parse_lines(self._splitter.feed(chunk)))
        self._offset = size
        return size - start

    def _skip_partial_line(self, position: int) -> None:
        """Start at the first full line at or after `position`."""
        probe = self._read_at(position - 1, 64 * 1024) if position > 0 else b"\n"
        for index, byte in enumerate(probe):
            if byte in (10, 13):
                self._offset = position - 1 + index + 1
                return
        self._offset = position

    def _chunks(self, start: int, end: int) -> Iterator[bytes]:
        position = start
        while position < end:
            data = self._read_at(position, min(_READ_CHUNK, end - position))
            if not data:
                return
            position += len(data)
            yield data

    def _read_at(self, offset: int, size: int) -> bytes:
        assert self._fd is not None
        return os.pread(self._fd, size, offset)

    def _parse_lines(self, lines: list[str]) -> list[Record]:
        self._lines += len(lines)
        return self._parser.feed_lines(lines)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
