"""Telling a log's encoding from its first bytes (issue 23): Windows PowerShell writes
UTF-16 LE with a BOM (`>`, `Tee-Object`); some loggers write UTF-16 without one."""

from __future__ import annotations

import codecs

import pytest

from babysit.reading.encoding import Transcoder, sniff

TEXT = "Epoch 1:  40%|████      | 40/100 [00:04<00:06, 9.8it/s, loss=0.52]\r\n"


@pytest.mark.parametrize(("data", "expected"), [
    (TEXT.encode("utf-8"), "utf-8"),
    (codecs.BOM_UTF8 + TEXT.encode("utf-8"), "utf-8"),
    (TEXT.encode("utf-16"), "utf-16"),  # a BOM
    (TEXT.encode("utf-16-le"), "utf-16-le"),
    (TEXT.encode("utf-16-be"), "utf-16-be"),
    ("训练开始 loss=0.5\n".encode(), "utf-8"),
    (b"\x00" * 4096, "utf-8"),  # a preallocated file: NULs, not text
    (b"ab", "utf-8"),
])
def test_sniff(data: bytes, expected: str):
    assert sniff(data) == expected


def test_a_character_cut_between_chunks_is_completed_by_the_next():
    data = ("loss=0.5 █ 训练\n" * 3).encode("utf-16")
    transcode = Transcoder(sniff(data))
    out = b"".join(transcode(data[i:i + 7]) for i in range(0, len(data), 7))
    assert out.decode("utf-8") == "loss=0.5 █ 训练\n" * 3
