"""Following a growing log file, wherever it lives.

`LogFollower` holds everything that makes reading incremental and safe — the offset,
the half-read last line, the parser's state, rotation (a different file at the path),
truncation (the file shrank), deletion (the path is gone but the open file still
grows) and the fast history scan of a long file's first read. Where the bytes come
from is a `FileAccess`: the local filesystem, or SFTP on another host.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Hashable, Iterator
from dataclasses import replace
from typing import Protocol

from babysit.model import Reading, Record
from babysit.parsing.parser import LogParser
from babysit.parsing.text import decode
from babysit.reading.encoding import SNIFF_BYTES, UTF8, Transcoder, byte_order, sniff
from babysit.reading.finders import OffsetFinder
from babysit.reading.history import scan_history
from babysit.reading.lines import LineSplitter
from babysit.snapshot import LogSnapshot, Snapshot

TAIL_BYTES = 2 * 1024 * 1024
# Of a long stretch, the last lines are parsed in full: enough for every rule's window
# (the loss rules' longest, 500 points, on a log with a metric line every other line; a
# loss dict each ten bar redraws still gives ninety), few enough that a log with a metric
# line every step is judged in a fraction of a second. Parsing is most of a quick
# verdict's cost beyond start-up: 2,000 lines took a fifth more of it, and changed no
# verdict on any of the public logs longer than 1,000 lines (79 of them).
TAIL_LINES = 600
# How much of a long log's start the parser reads when the history scan reads its middle:
# enough for the start-up lines a new launch is seen by (parsing.launches).
_HEAD_BYTES = 64 * 1024
_READ_CHUNK = 4 * 1024 * 1024
# Lines past which a stretch is searched by the history scan whatever its size: the full
# parse costs tens of microseconds a line (4 MB of a bare `2.0000` a line, 600,000 lines,
# took 48 s and 400 MB), the scan milliseconds. The longest public log has 42,000 lines.
MAX_PARSED_LINES = 50_000
_MARK_BYTES = 64


class OpenFile(Protocol):
    def size(self) -> int: ...

    def mtime(self) -> float: ...

    def read_at(self, offset: int, size: int) -> bytes: ...

    def close(self) -> None: ...


class FileAccess(Protocol):
    """How to reach one log file. Methods raise FileNotFoundError when the path is
    missing and other OSErrors when it cannot be read."""

    path: str

    def identity(self) -> Hashable | None:
        """What names the file now at `path` (device and inode), None if unknown."""
        ...

    def open(self) -> tuple[OpenFile, Hashable | None]: ...

    def offsets(self) -> OffsetFinder | None:
        """A fast searcher (grep) for the history scan, when the host has one."""
        ...

    def now(self) -> float:
        """Wall time on the host that writes the file (to age its mtime)."""
        ...


class LogFollower:
    def __init__(self, access: FileAccess, tail_bytes: int = TAIL_BYTES) -> None:
        self.access = access
        self._tail_bytes = tail_bytes
        self._file: OpenFile | None = None
        self._identity: Hashable | None = None
        self._offset = 0
        self._splitter = LineSplitter()
        self._parser = LogParser()
        self._deleted = False
        self._lines = 0
        self._mark = b""  # the last bytes read: still there if the file was only appended to
        self._history_notes: list[str] = []  # what the history scan found worth saying
        self._searched = 0  # bytes the history scan searched rather than parsed
        self._transcoder: Transcoder | None = None  # a log not in UTF-8 (see `encoding`)
        self._order: str | None = None  # its codec with the byte order settled
        self._sniffed = False

    @property
    def offset(self) -> int:
        return self._offset

    def open(self) -> None:
        """Open the file (again): after a reconnect the same file continues at the
        saved offset; a different file is read from its start."""
        handle, identity = self.access.open()
        if self._file is not None:
            self.detach()
        same = self._identity is None or identity is None or identity == self._identity
        if not same:
            self._restart_file()
        self._file, self._identity = handle, identity

    def detach(self) -> None:
        """Drop the open file (its connection is gone) but keep offset and state."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None

    def poll(self, final: bool = False) -> Snapshot:
        if self._file is None:
            self.open()
        assert self._file is not None
        notices: list[str] = []
        records: list[Record] = []
        cut_before = self._splitter.cut_lines
        lines_before = self._lines
        notices.extend(self._follow_path(records))
        if self._file is None:  # rotated to a file that cannot be opened: keep what was read
            return Snapshot(LogSnapshot(
                records=tuple(records), new_lines=self._lines - lines_before,
                formats=tuple(f for f, _ in self._parser.formats.most_common()),
                phase=self._parser.phase, reading=self._reading(),
                lr_schedule=self._parser.lr_schedule), notices=tuple(notices))
        size = self._file.size()
        if size < self._offset:
            notices.append(f"log truncated ({self._offset} → {size} bytes); reading it from "
                           f"the start")
            self._restart_file()
        elif self._rewritten():
            notices.append(f"log rewritten (truncated and written again past byte "
                           f"{self._offset} between two polls); reading it from the start")
            self._restart_file()
        new_bytes = self._read_to(size, records)
        notices.extend(self._history_notes)
        self._history_notes.clear()
        mtime = self._file.mtime()
        if final:
            records.extend(self._parse_lines(self._splitter.flush()))
            records.extend(self._parser.finish())
        if self._splitter.cut_lines > cut_before:
            notices.append("an overlong line was cut to 64 KiB")
        return Snapshot(LogSnapshot(
            records=tuple(records),
            new_bytes=new_bytes,
            new_lines=self._lines - lines_before,
            formats=tuple(f for f, _ in self._parser.formats.most_common()),
            quiet_for=max(0.0, self.access.now() - mtime),
            phase=self._parser.phase,
            reading=self._reading(),
            lr_schedule=self._parser.lr_schedule,
        ), notices=tuple(notices))

    def _reading(self) -> Reading:
        """How much of the log was understood, and how much of it only searched."""
        reading = self._parser.reading()
        return replace(reading, searched_bytes=self._searched) if self._searched else reading

    def _follow_path(self, records: list[Record]) -> list[str]:
        """Notice a deleted or replaced file; finish the old one before switching."""
        path = self.access.path
        try:
            identity = self.access.identity()
        except FileNotFoundError:
            if self._deleted:
                return []
            self._deleted = True
            return [f"log file {path} was deleted; still reading the already-open file"]
        if identity is None or identity == self._identity:
            if self._deleted:
                self._deleted = False
                return [f"log file {path} is back"]
            return []
        # Rotated: drain what the writer put in the old file, then start the new one.
        assert self._file is not None
        self._read_to(self._file.size(), records)
        records.extend(self._parse_lines(self._splitter.flush()))
        self.detach()
        self._restart_file()
        self._deleted = False
        try:
            self._file, self._identity = self.access.open()
        except OSError as error:
            reason = error.strerror or str(error)
            return [f"log rotated, but the new {path} cannot be opened ({reason}); what the "
                    f"old file held has been read"]
        return [f"log rotated: now reading the new {path} from its start"]

    def _restart_file(self) -> None:
        self._offset = 0
        self._splitter.reset()
        self._mark = b""
        self._transcoder, self._order, self._sniffed = None, None, False
        self._searched = 0

    def _rewritten(self) -> bool:
        """Whether the bytes just before the offset are no longer the ones read there: the
        file was truncated and written again (a restarted run reopening it with `>`) and
        has already grown past where babysit stopped reading."""
        mark = self._mark
        if not mark or self._offset < len(mark):
            return False
        return self._read_at(self._offset - len(mark), len(mark)) != mark

    def _read_to(self, size: int, records: list[Record]) -> int:
        start = self._offset
        if size <= start:
            return 0
        if not self._sniffed and start == 0:
            self._sniff(size)
        # A stretch short enough to parse whole is read once: counted, then parsed from
        # the same bytes (over SFTP a second read is a second transfer).
        stretch = self._read_at(start, size - start) \
            if MAX_PARSED_LINES < size - start <= 2 * self._tail_bytes else None
        if size - start > 2 * self._tail_bytes or (stretch is not None
                                                   and _too_many_lines(stretch)):
            # A long stretch (the first poll of an old log, or a huge burst): search its
            # history fast and parse only the tail in full.
            tail_start = self._tail_start(start, size)
            if start == 0:
                self._parser.learn_start_up(self._head_lines())
            if self._transcoder is None:
                records.extend(scan_history(self._read_at, start, tail_start,
                                            self.access.offsets(), self._history_notes))
            else:
                records.extend(self._scan_transcoded(start, tail_start))
            self._splitter.reset()
            self._searched += tail_start - start
            self._offset = start = tail_start
            stretch = None
        transcode = self._transcoder
        whole = stretch is not None and len(stretch) == size - start
        for chunk in [stretch] if whole and stretch is not None else self._chunks(start, size):
            text = transcode(chunk) if transcode is not None else chunk
            records.extend(self._parse_lines(self._splitter.feed(text)))
            self._mark = (self._mark + chunk)[-_MARK_BYTES:]
        self._offset = size
        return size - start

    def _sniff(self, size: int) -> None:
        """Tell the log's encoding from its first bytes. A long UTF-16 log's history is
        made UTF-8 before it is searched (`_scan_transcoded`)."""
        self._sniffed = True
        head = self._read_at(0, min(size, SNIFF_BYTES))
        encoding = sniff(head)
        if encoding != UTF8:
            self._transcoder = Transcoder(encoding)
            self._order = byte_order(encoding, head)
            self._history_notes.append(f"the log is written in UTF-16 ({encoding}): read as such")

    def _scan_transcoded(self, start: int, end: int) -> list[Record]:
        """The history scan of a stretch of a UTF-16 log: made UTF-8 chunk by chunk into
        a temporary file (the scan searches UTF-8 bytes), so its memory stays bounded
        however long the log; the tail after it is decoded afresh from `end`."""
        assert self._transcoder is not None and self._order is not None
        # From the start, the BOM-reading codec (it drops the BOM); past it, the order
        # the BOM gave.
        middle = Transcoder(self._transcoder.encoding if start == 0 else self._order)
        with tempfile.TemporaryFile() as utf8:
            for chunk in self._chunks(start, end):
                utf8.write(middle(chunk))
            length = utf8.tell()

            def read_utf8(offset: int, size: int) -> bytes:
                utf8.seek(offset)
                return utf8.read(size)

            found = list(scan_history(read_utf8, 0, length, None, self._history_notes))
        self._transcoder = Transcoder(self._order)
        return found

    def _tail_start(self, start: int, size: int) -> int:
        """Where the last TAIL_LINES lines begin, within the last `tail_bytes` (and not
        before `start`)."""
        block_start = max(start, size - self._tail_bytes)
        if self._transcoder is not None:
            block_start += (block_start - start) % 2  # on a UTF-16 code unit
        block = self._read_at(block_start, size - block_start)
        position = len(block)
        for _ in range(TAIL_LINES + 1):
            newline = block.rfind(b"\n", 0, position)
            carriage = block.rfind(b"\r", 0, position)
            found = max(newline, carriage)
            if found < 0:
                break
            position = found
        else:
            return self._on_unit(start, block_start + position + 1)
        # Fewer lines than that: start at the first whole line of the block (or in
        # the middle of one endless line; the splitter cuts it).
        first = min((i for i in (block.find(b"\n"), block.find(b"\r")) if i >= 0),
                    default=-1)
        return self._on_unit(start, block_start + first + 1)

    def _on_unit(self, start: int, offset: int) -> int:
        """`offset`, moved on to a whole UTF-16 code unit in a UTF-16 log (its newline's
        0x0A is the first byte of two in little-endian)."""
        if self._transcoder is None:
            return offset
        return offset + (offset - start) % 2

    def _head_lines(self) -> list[str]:
        """The log's first whole lines (its start-up, for the parser to know it by)."""
        head = self._read_at(0, _HEAD_BYTES)
        if self._transcoder is not None:
            head = Transcoder(self._transcoder.encoding)(head)
        lines = decode(head).splitlines()
        return lines[:-1] if len(lines) > 1 else lines

    def _chunks(self, start: int, end: int) -> Iterator[bytes]:
        position = start
        while position < end:
            data = self._read_at(position, min(_READ_CHUNK, end - position))
            if not data:
                return
            position += len(data)
            yield data

    def _read_at(self, offset: int, size: int) -> bytes:
        assert self._file is not None
        return self._file.read_at(offset, size)

    def _parse_lines(self, lines: list[str]) -> list[Record]:
        self._lines += len(lines)
        return self._parser.feed_lines(lines)

    def close(self) -> None:
        self.detach()


def _too_many_lines(data: bytes) -> bool:
    """Whether a stretch short enough to parse whole has too many lines for it (a stretch
    of fewer bytes than MAX_PARSED_LINES is never read for this)."""
    return max(data.count(b"\n"), data.count(b"\r")) > MAX_PARSED_LINES
