"""The transaction-log framer on hand-built streams: block padding, split records, corruption.

The streams are built by `_Log`, a small writer following the layout wandb-core's
core/pkg/leveldb/record.go writes (header, 32 KiB blocks, 7-byte chunk headers, CRC-32 of
type byte + payload). Real files written by wandb are exercised in test_wandb_files.py.
"""

from __future__ import annotations

import random
import struct
import zlib

import pytest

from babysit.targets.wandb.framing import (
    BLOCK_SIZE,
    FILE_HEADER,
    ChunkType,
    Framed,
    TransactionLogFramer,
    WandbFormatError,
)


class _Log:
    """Writes records the way wandb-core does, for building test streams."""

    def __init__(self) -> None:
        self.data = bytearray(FILE_HEADER)
        self.offsets: list[int] = []  # where each record's first chunk starts

    def record(self, payload: bytes) -> _Log:
        first = True
        while True:
            left = BLOCK_SIZE - len(self.data) % BLOCK_SIZE
            if left < 7:
                self.data += bytes(left)
                continue
            if first:
                self.offsets.append(len(self.data))
            room = left - 7
            piece, payload = payload[:room], payload[room:]
            last = not payload
            kind = ((ChunkType.FULL if last else ChunkType.FIRST) if first
                    else (ChunkType.LAST if last else ChunkType.MIDDLE))
            self.chunk(kind, piece)
            first = False
            if last:
                return self

    def chunk(self, kind: int, piece: bytes, *, crc: int | None = None) -> None:
        checksum = zlib.crc32(bytes([kind]) + piece) if crc is None else crc
        self.data += struct.pack("<IHB", checksum, len(piece), kind) + piece


def _feed_all(data: bytes, sizes: list[int] | None = None) -> tuple[list[bytes], int]:
    framer = TransactionLogFramer()
    payloads: list[bytes] = []
    corrupt = 0
    position = 0
    for size in sizes or [len(data)]:
        assert framer.next_offset == position
        framed = framer.feed(data[position:position + size])
        payloads += framed.payloads
        corrupt += framed.corrupt
        position += size
    return payloads, corrupt


def test_small_and_block_spanning_records_come_back_whole() -> None:
    records = [b"a" * 10, bytes(range(256)) * 400, b"", b"z" * (BLOCK_SIZE - 40), b"tail"]
    log = _Log()
    for payload in records:
        log.record(payload)
    assert _feed_all(bytes(log.data)) == (records, 0)


def test_any_split_of_the_stream_gives_the_same_records() -> None:
    rng = random.Random(7)
    records = [rng.randbytes(rng.choice([3, 50, 900, 40_000])) for _ in range(60)]
    log = _Log()
    for payload in records:
        log.record(payload)
    data = bytes(log.data)
    for _ in range(20):
        sizes: list[int] = []
        while sum(sizes) < len(data):
            sizes.append(rng.choice([1, 2, 6, 7, 8, 100, 5000, 40_000]))
        assert _feed_all(data, sizes) == (records, 0)


def test_fewer_than_seven_bytes_left_in_a_block_are_padding() -> None:
    log = _Log()
    # Leave exactly 3 bytes in the first block, then write one more record.
    log.record(b"x" * (BLOCK_SIZE - len(FILE_HEADER) - 7 - 3))
    log.record(b"next")
    assert log.offsets[1] == BLOCK_SIZE
    assert _feed_all(bytes(log.data)) == ([log_payload(log, 0), b"next"], 0)
    # The padding may not be written yet when the previous chunk is flushed.
    framer = TransactionLogFramer()
    first = framer.feed(bytes(log.data[: BLOCK_SIZE - 3]))
    assert len(first.payloads) == 1
    assert framer.next_offset == BLOCK_SIZE


def log_payload(log: _Log, index: int) -> bytes:
    start = log.offsets[index]
    length = struct.unpack_from("<H", log.data, start + 4)[0]
    return bytes(log.data[start + 7:start + 7 + length])


def test_bad_checksum_skips_to_the_next_block_and_counts() -> None:
    log = _Log()
    log.record(b"good")
    log.chunk(ChunkType.FULL, b"bad", crc=12345)
    log.record(b"lost with the rest of the block")
    log.data += bytes(BLOCK_SIZE - len(log.data))  # as if padded to the next block
    log.record(b"after")
    payloads, corrupt = _feed_all(bytes(log.data))
    assert payloads == [b"good", b"after"]
    assert corrupt == 1


def test_tail_of_a_corrupt_multi_block_record_is_dropped_once() -> None:
    log = _Log()
    log.record(b"before")
    log.record(b"m" * (3 * BLOCK_SIZE))
    log.record(b"after")
    data = bytearray(log.data)
    data[BLOCK_SIZE + 100] ^= 0xFF  # inside the MIDDLE chunk in block 1
    payloads, corrupt = _feed_all(bytes(data))
    assert payloads == [b"before", b"after"]
    assert corrupt == 1


def test_zeroed_block_tail_is_skipped() -> None:
    log = _Log()
    log.record(b"one")
    log.data += bytes(BLOCK_SIZE - len(log.data))
    log.record(b"two")
    assert _feed_all(bytes(log.data)) == ([b"one", b"two"], 0)


def test_impossible_length_or_type_is_corruption() -> None:
    log = _Log()
    log.record(b"one")
    log.data += struct.pack("<IHB", 1, 60_000, 1)
    assert _feed_all(bytes(log.data)) == ([b"one"], 1)
    log = _Log()
    log.chunk(9, b"what")
    assert _feed_all(bytes(log.data)) == ([], 1)


def test_incomplete_chunk_waits_without_loss() -> None:
    log = _Log().record(b"first").record(b"second" * 10)
    data = bytes(log.data)
    framer = TransactionLogFramer()
    cut = len(data) - 5
    assert framer.feed(data[:cut]) == Framed((b"first",), 0)
    assert framer.feed(b"") == Framed((), 0)
    assert framer.feed(data[cut:]) == Framed((b"second" * 10,), 0)


def test_header_is_checked_once_it_is_all_there() -> None:
    framer = TransactionLogFramer()
    assert framer.feed(FILE_HEADER[:4]) == Framed((), 0)
    framer.feed(FILE_HEADER[4:])
    assert framer.next_offset == len(FILE_HEADER)
    with pytest.raises(WandbFormatError, match="not a W&B transaction log"):
        TransactionLogFramer().feed(b"SQLite format 3\x00")
    with pytest.raises(WandbFormatError):
        TransactionLogFramer().feed(FILE_HEADER[:6] + b"\x01")  # a future version


def test_bad_chunk_at_the_very_end_is_read_again_not_judged() -> None:
    # On NFS a reader may see the new size before the new bytes: zeros, or a torn chunk.
    log = _Log().record(b"first").record(b"second")
    data = bytes(log.data)
    second = log.offsets[1]
    torn = data[:second] + bytes(len(data) - second)
    framer = TransactionLogFramer()
    assert framer.feed(torn) == Framed((b"first",), 0)
    assert framer.next_offset == second
    assert framer.feed(data[second:]) == Framed((b"second",), 0)
    # A bad checksum at the end: re-read; once something follows it, it is corrupt.
    bad = bytearray(data)
    bad[-1] ^= 0xFF
    framer = TransactionLogFramer()
    assert framer.feed(bytes(bad)) == Framed((b"first",), 0)
    assert framer.next_offset == second
    more = _Log()
    more.data = bytearray(bad)
    more.record(b"third")
    assert framer.feed(bytes(more.data[second:])) == Framed((), 1)
