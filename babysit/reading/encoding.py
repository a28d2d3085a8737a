"""A log's text encoding, told from its first bytes, and its bytes made UTF-8.

Nearly every training log is UTF-8. The exception is Windows: PowerShell 5's `>` and
`Tee-Object` write UTF-16 LE with a byte-order mark, and some loggers write UTF-16
without one. Read as UTF-8, such a log is ASCII with a NUL after each letter (which
`parsing.text.decode` drops) and garbage for everything else: tqdm's bar glyphs, the
box of a rich traceback, any non-English word. So the encoding is told once, from the
start of the file (a BOM, or NULs interleaved with ASCII), and the bytes are decoded
with it and handed on as UTF-8, which the line splitter and the parser expect.
"""

from __future__ import annotations

import codecs

UTF8 = "utf-8"
SNIFF_BYTES = 4096
# Of the first bytes, how many of one parity must be NUL (and how few of the other)
# for text without a BOM to be UTF-16: ASCII text in UTF-16 has a NUL in every pair.
_NUL_SHARE = 0.7


def sniff(head: bytes) -> str:
    """The codec that decodes a log whose first bytes are `head`: `utf-16` (a BOM, which
    the codec consumes), `utf-16-le` or `utf-16-be` (NULs interleaved with text), else
    UTF-8."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) \
            and not head.startswith(codecs.BOM_UTF32_LE):
        return "utf-16"
    pairs = len(head) // 2
    if pairs < 4:
        return UTF8
    even = head[0 : 2 * pairs : 2].count(0)
    odd = head[1 : 2 * pairs : 2].count(0)
    if odd >= _NUL_SHARE * pairs and even <= 0.05 * pairs:
        return "utf-16-le"
    if even >= _NUL_SHARE * pairs and odd <= 0.05 * pairs:
        return "utf-16-be"
    return UTF8


def byte_order(encoding: str, head: bytes) -> str:
    """`encoding` with its byte order settled: the BOM's for `utf-16` (to decode a
    stretch that starts past the BOM), else `encoding` itself."""
    if encoding != "utf-16":
        return encoding
    return "utf-16-be" if head.startswith(codecs.BOM_UTF16_BE) else "utf-16-le"


class Transcoder:
    """Bytes of a log in `encoding`, as UTF-8 bytes, chunk by chunk (a character cut
    between two chunks is completed by the next)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")

    def __call__(self, data: bytes) -> bytes:
        return self._decoder.decode(data).encode(UTF8)
