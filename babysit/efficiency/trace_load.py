"""Reading a Chrome trace file — plain or gzipped JSON — event by event.

Bounded whatever the file holds: only a regular file is opened (a FIFO or a device is
refused at once, before a read that could block or never end), at most MAX_TRACE_BYTES
of JSON text are read, decompressed or not (a gzip bomb stops there), at most
MAX_TRACE_EVENTS events are taken, and an integer of more than a few dozen digits is read
as a float (so a 5,000-digit timestamp is an infinite, skipped one, not a crash). The
events are decoded one at a time from the text: the summary keeps a few numbers per event,
never the whole list of dicts."""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from babysit import lazy_re
from babysit.safe_files import UnsafeFile, open_regular

_GZIP_MAGIC = b"\x1f\x8b"
MAX_TRACE_BYTES = 512 * 1024 * 1024
MAX_TRACE_EVENTS = 2_500_000  # 2·10⁶: 90 s and 1.4 GB on a busy 2-CPU machine
_MAX_INT_DIGITS = 30
_SPACE = lazy_re.compile(r"[ \t\n\r]*")


class TraceError(Exception):
    """The file cannot be read as a Chrome trace; the message says why, in one line."""


def load_events(path: Path) -> Iterator[Any]:
    """The `traceEvents` of the trace at `path`, as parsed, one at a time (nothing is
    checked here beyond the shape of the document; the summary skips events it cannot
    use). Raises TraceError (one line, naming the file) when the file cannot be read, is
    too large, or stops being JSON — at once, or while the events are taken."""
    text = _read_text(path)
    try:
        yield from _events_in(text, path)
    except json.JSONDecodeError as error:
        raise TraceError(f"{path}: not valid JSON ({error.msg} at line {error.lineno}, "
                         f"column {error.colno}); not a trace, or one cut short") from None
    except RecursionError:
        raise TraceError(f"{path}: JSON nested too deeply to be a trace") from None


def _read_text(path: Path) -> str:
    try:
        fd, info = open_regular(path)
    except UnsafeFile as error:
        if isinstance(error.__cause__, FileNotFoundError):
            raise TraceError(f"{path}: no such file") from None
        raise TraceError(str(error) if str(error).startswith(str(path)) else
                         f"{path}: {error}") from None
    limit = f"{MAX_TRACE_BYTES // (1024 * 1024):,} MiB"
    try:
        with os.fdopen(fd, "rb") as raw:
            # Sniffed rather than trusted to the suffix: traces get renamed and re-compressed.
            gzipped = raw.read(2) == _GZIP_MAGIC
            raw.seek(0)
            if gzipped:
                with gzip.GzipFile(fileobj=raw) as unpacked:
                    data = unpacked.read(MAX_TRACE_BYTES + 1)
                if len(data) > MAX_TRACE_BYTES:
                    raise TraceError(f"{path}: decompresses to more than {limit} of JSON: "
                                     f"too large to summarize (profile fewer steps)")
            elif info.st_size > MAX_TRACE_BYTES:
                raise TraceError(f"{path}: more than {limit}: too large to summarize "
                                 f"(profile fewer steps)")
            else:
                data = raw.read(MAX_TRACE_BYTES + 1)
    except (gzip.BadGzipFile, EOFError, zlib.error) as error:
        raise TraceError(f"{path}: a damaged or truncated gzip file ({error})") from None
    except OSError as error:
        raise TraceError(f"{path}: cannot read it ({error.strerror or error})") from None
    if len(data) > MAX_TRACE_BYTES:  # it grew while being read
        raise TraceError(f"{path}: more than {limit}: too large to summarize")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise TraceError(f"{path}: not text, so not a JSON trace") from None


def _bounded_int(digits: str) -> int | float:
    # int() of thousands of digits is slow, then refused (ValueError past 4,300 digits),
    # and float() of a huge int overflows: as a float it is infinite, and skipped.
    return int(digits) if len(digits) <= _MAX_INT_DIGITS else float(digits)


def _events_in(text: str, path: Path) -> Iterator[Any]:
    # export_chrome_trace writes the object form; the bare array form is valid Chrome
    # trace JSON too, and some tools write it.
    decoder = json.JSONDecoder(parse_int=_bounded_int)
    at = _SPACE.match(text, 1 if text.startswith("\ufeff") else 0).end()  # type: ignore[union-attr]
    if text.startswith("[", at):
        yield from _array(decoder, text, at, path)
        return
    if not text.startswith("{", at):
        decoder.raw_decode(text, at)  # not JSON at all: its own error
        raise TraceError(f"{path}: JSON, but not a Chrome trace (no \"traceEvents\" list)")
    at = _space(text, at + 1)
    while not text.startswith("}", at):
        key, at = decoder.raw_decode(text, at)
        at = _expect(text, _space(text, at), ":")
        at = _space(text, at)
        if key == "traceEvents" and text.startswith("[", at):
            yield from _array(decoder, text, at, path)
            return  # what follows the events is not needed
        _, at = decoder.raw_decode(text, at)  # metadata: schemaVersion, deviceProperties…
        at = _space(text, at)
        if text.startswith(",", at):
            at = _space(text, at + 1)
        else:
            _expect(text, at, "}")
    raise TraceError(f"{path}: JSON, but not a Chrome trace (no \"traceEvents\" list)")


def _array(decoder: json.JSONDecoder, text: str, at: int, path: Path) -> Iterator[Any]:
    at = _space(text, at + 1)
    count = 0
    while not text.startswith("]", at):
        event, at = decoder.raw_decode(text, at)
        count += 1
        if count > MAX_TRACE_EVENTS:
            raise TraceError(f"{path}: more than {MAX_TRACE_EVENTS:,} events: too many to "
                             f"summarize (profile fewer steps)")
        yield event
        at = _space(text, at)
        if text.startswith(",", at):
            at = _space(text, at + 1)
        else:
            _expect(text, at, "]")


def _space(text: str, at: int) -> int:
    return _SPACE.match(text, at).end()  # type: ignore[union-attr]


def _expect(text: str, at: int, char: str) -> int:
    if not text.startswith(char, at):
        raise json.JSONDecodeError(f"Expecting '{char}'", text, at)
    return at + 1
