"""Framing of W&B's transaction log (`run-<id>.wandb`): bytes in, record payloads out.

The format, as wandb-core 0.31 writes it (core/pkg/leveldb/record.go, crc.go and
core/internal/stream/store.go in github.com/wandb/wandb; a LevelDB log with a W&B header):

- The file starts with a 7-byte header: the ident `:W&B`, the magic 0xBEE1 as a little-endian
  uint16 (bytes E1 BE) and a version byte, 0.
- The whole file, header included, is cut into 32 KiB blocks at offsets that are multiples of
  32768; the first block's chunks therefore start at offset 7.
- A block holds chunks packed tightly. A chunk is a 7-byte header — a little-endian uint32
  checksum, a little-endian uint16 payload length, a one-byte type — then the payload.
  A chunk never crosses a block boundary; when fewer than 7 bytes are left in a block the
  writer fills them with zeros and starts the next chunk in the next block.
- The checksum is the standard CRC-32 (IEEE, as `zlib.crc32`) of the type byte followed by
  the payload; W&B does not use LevelDB's masked CRC-32C here.
- Types: 1 FULL (a whole record), 2 FIRST, 3 MIDDLE, 4 LAST (a record split over blocks).
- The writer flushes partial blocks, so a live file may end anywhere: inside a chunk header,
  inside a payload, or after the FIRST chunk of a record whose LAST chunk is still buffered.

On a corrupt chunk (bad checksum, impossible length or type) the rest of its block cannot be
trusted, so, like wandb's own reader, this one skips to the next block and resumes at the
next FULL or FIRST chunk. A bad checksum or zeros at the very end of the data are not
judged yet (see `_unread`): the caller feeds those bytes again later.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from enum import IntEnum

BLOCK_SIZE = 32 * 1024
CHUNK_HEADER_SIZE = 7
FILE_HEADER = b":W&B" + struct.pack("<H", 0xBEE1) + bytes([0])

_CHUNK_HEADER = struct.Struct("<IHB")


class WandbFormatError(Exception):
    """The file is not a W&B transaction log this reader understands, or it changed under us."""


class ChunkType(IntEnum):
    FULL = 1
    FIRST = 2
    MIDDLE = 3
    LAST = 4


@dataclass(frozen=True)
class Framed:
    """What one `feed` produced: whole record payloads in file order, and how many corrupt
    chunks or abandoned partial records were skipped on the way."""

    payloads: tuple[bytes, ...]
    corrupt: int


class TransactionLogFramer:
    """Turns the bytes of a transaction log, fed in order in pieces of any size, into record
    payloads. Incomplete data at the end is kept until more arrives; nothing is lost or
    returned twice. Pure: no I/O.
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self._pos = 0  # file offset of the next chunk header; _buf[0] is this byte
        self._header_checked = False
        self._parts: list[bytes] | None = None  # payloads of a record started by FIRST
        self._resyncing = False  # after corruption: drop MIDDLE/LAST until FULL or FIRST

    @property
    def next_offset(self) -> int:
        """File offset of the next byte `feed` expects."""
        return self._pos + len(self._buf)

    def feed(self, data: bytes) -> Framed:
        """Take the file's bytes starting at `next_offset` and return the records completed.

        `next_offset` may move back (to re-read a doubtful chunk at the end); the next feed
        must start there.

        Raises WandbFormatError if the file header is not a W&B header of version 0.
        """
        self._buf += data
        if not self._header_checked:
            if len(self._buf) < len(FILE_HEADER):
                return Framed((), 0)
            if bytes(self._buf[: len(FILE_HEADER)]) != FILE_HEADER:
                raise WandbFormatError(
                    f"not a W&B transaction log: header {bytes(self._buf[:7])!r}, expected "
                    f"{FILE_HEADER!r}")
            self._header_checked = True
            self._advance(len(FILE_HEADER))
        payloads: list[bytes] = []
        corrupt = 0
        while True:
            left_in_block = BLOCK_SIZE - self._pos % BLOCK_SIZE
            if left_in_block < CHUNK_HEADER_SIZE:
                # Zero padding: no chunk can start here, whether or not it was written yet.
                self._advance(left_in_block)
                continue
            if len(self._buf) < CHUNK_HEADER_SIZE:
                break
            checksum, length, kind = _CHUNK_HEADER.unpack_from(self._buf, 0)
            if checksum == 0 and length == 0 and kind == 0:
                if len(self._buf) < left_in_block and not any(self._buf):
                    self._unread()  # zeros up to what we have: maybe not visible yet
                    break
                # A zeroed block tail (preallocated file): wandb's reader skips it too.
                corrupt += self._abandon()
                self._advance(left_in_block)
                continue
            end = CHUNK_HEADER_SIZE + length
            if end > left_in_block or kind not in ChunkType._value2member_map_:
                corrupt += 1 + self._abandon(counted=True)
                self._advance(left_in_block)
                continue
            if len(self._buf) < end:
                break  # the chunk is still being written
            with memoryview(self._buf) as view:
                valid = zlib.crc32(view[CHUNK_HEADER_SIZE - 1 : end]) == checksum
                payload = bytes(view[CHUNK_HEADER_SIZE:end])
            if not valid and len(self._buf) == end:
                self._unread()  # the newest chunk: judge it once something follows it
                break
            if not valid:
                corrupt += 1 + self._abandon(counted=True)
                self._advance(left_in_block)
                continue
            self._advance(end)
            corrupt += self._take(ChunkType(kind), payload, payloads)
        return Framed(tuple(payloads), corrupt)

    def _take(self, kind: ChunkType, payload: bytes, out: list[bytes]) -> int:
        """Assemble one valid chunk; return how many records were abandoned."""
        if kind in (ChunkType.FULL, ChunkType.FIRST):
            abandoned = self._abandon()
            self._resyncing = False
            if kind is ChunkType.FULL:
                out.append(payload)
            else:
                self._parts = [payload]
            return abandoned
        if self._parts is None:
            # A MIDDLE or LAST without its FIRST: the tail of a record lost to corruption.
            # Count it once, unless that corruption was already counted.
            counted = 0 if self._resyncing else 1
            self._resyncing = True
            return counted
        self._parts.append(payload)
        if kind is ChunkType.LAST:
            out.append(b"".join(self._parts))
            self._parts = None
        return 0

    def _abandon(self, *, counted: bool = False) -> int:
        """Drop a half-assembled record. Return 1 if one is lost and not yet counted."""
        lost = self._parts is not None
        self._parts = None
        if counted:
            self._resyncing = True
            return 0
        return 1 if lost else 0

    def _unread(self) -> None:
        """Forget the bytes from the current chunk on, so the caller reads them again.

        On a network filesystem a reader can see a file's new size before its new bytes
        (zeros, or a torn chunk). A bad chunk at the very end of the data is therefore
        re-read on the next feed rather than declared corrupt; only once more data follows
        it is it skipped and counted.
        """
        self._buf.clear()

    def _advance(self, count: int) -> None:
        """Move the read position forward, past bytes that may not have arrived yet."""
        self._pos += count
        del self._buf[: min(count, len(self._buf))]
