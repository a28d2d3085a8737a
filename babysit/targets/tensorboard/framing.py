"""TFRecord framing, the container of TensorBoard event files, read incrementally.

Each record is:

    uint64  length of the data (little-endian)
    uint32  masked CRC-32C of those 8 bytes
    bytes   data (one serialized Event)
    uint32  masked CRC-32C of the data

A writer appends whole records, but a reader may see one half written: a record whose
header or data is not all there yet is left for the next read, never an error. A header
whose checksum fails is damage (or not an event file at all, when it is the first): the
reader looks for the next good header and counts the bytes it skipped. A record whose
data checksum fails is skipped whole. A record longer than `MAX_KEPT` (an image or a
histogram a writer made huge, or a length field forged to claim a gigabyte) is stepped
over without being read: scalars are a few dozen bytes, and memory stays bounded by the
chunk size whatever a header claims.

The data checksum is checked with google-crc32c when it is installed (it comes with
Google's cloud clients), else in Python for records up to `PY_CHECK_LIMIT` bytes:
scalars are small; a large image or histogram is left to the protobuf parser to reject.
"""

from __future__ import annotations

import importlib
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

HEADER = 12  # length + its checksum
FOOTER = 4
MAX_RECORD = 1 << 30  # a length beyond this is damage, not a record
MAX_KEPT = 16 * 1024 * 1024  # a longer record is skipped unread (no scalar is that big)
PY_CHECK_LIMIT = 16 * 1024
_LENGTH = struct.Struct("<Q")
_CRC = struct.Struct("<I")


def _table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _table()


def crc32c_python(data: bytes) -> int:
    crc = 0xFFFFFFFF
    table = _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _fast_crc32c() -> Callable[[bytes], int] | None:
    try:
        module = importlib.import_module("google_crc32c")
    except ImportError:
        return None
    if getattr(module, "implementation", "") != "c":
        return None  # its pure-Python fallback is no faster than ours
    value: Callable[[bytes], int] = module.value
    return value


_FAST = _fast_crc32c()


def masked_crc32c(data: bytes) -> int:
    crc = _FAST(data) if _FAST is not None else crc32c_python(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _data_ok(data: bytes, stored: int) -> bool:
    if _FAST is None and len(data) > PY_CHECK_LIMIT:
        return True
    return masked_crc32c(data) == stored


@dataclass
class Framed:
    """What one buffer held: the records' data, how many bytes were used up (the rest
    waits for more), what was skipped, and the size of a record longer than the buffer."""

    payloads: list[bytes] = field(default_factory=list)
    consumed: int = 0
    skipped_bytes: int = 0
    bad_records: int = 0
    need: int = 0  # a record starts at `consumed` and is this long: read that much
    # A record over MAX_KEPT starts at `consumed` and is this long, header and footer
    # included: step over it once the file holds all of it, without reading it.
    oversized: int = 0
    not_tfrecord: bool = False  # the first header of a file failed its checksum


def _header_at(buf: bytes, pos: int) -> int | None:
    """The data length of a good header at `pos`, or None."""
    (length,) = _LENGTH.unpack_from(buf, pos)
    (stored,) = _CRC.unpack_from(buf, pos + 8)
    if length > MAX_RECORD or masked_crc32c(buf[pos:pos + 8]) != stored:
        return None
    return int(length)


def frame(buf: bytes, *, file_start: bool = False) -> Framed:
    """Split `buf`, which begins at a record boundary, into records. `file_start`: `buf`
    begins the file, so a bad first header means the file is not a TFRecord file."""
    out = Framed()
    pos = 0
    size = len(buf)
    while size - pos >= HEADER:
        length = _header_at(buf, pos)
        if length is None:
            if not buf[pos:].strip(b"\0"):
                break  # zeros a network file system shows before the bytes land: wait
            if file_start and pos == 0:
                out.not_tfrecord = True
                return out
            found = _resync(buf, pos + 1)
            if found is None:  # no good header here; keep a possible partial one
                skip_to = max(pos, size - HEADER + 1)
                out.skipped_bytes += skip_to - pos
                pos = skip_to
                break
            out.skipped_bytes += found - pos
            pos = found
            continue
        end = pos + HEADER + length + FOOTER
        if length > MAX_KEPT:
            out.oversized = HEADER + length + FOOTER
            break
        if end > size:
            out.need = HEADER + length + FOOTER
            break
        data = buf[pos + HEADER:pos + HEADER + length]
        (stored,) = _CRC.unpack_from(buf, end - FOOTER)
        if _data_ok(data, stored):
            out.payloads.append(data)
        else:
            out.bad_records += 1
        pos = end
    out.consumed = pos
    if out.need and pos > 0:
        out.need = 0  # the caller reads again from the new boundary
    return out


def _resync(buf: bytes, start: int) -> int | None:
    """The next position after damage where a good header begins."""
    for pos in range(start, len(buf) - HEADER + 1):
        if _header_at(buf, pos) is not None:
            return pos
    return None
