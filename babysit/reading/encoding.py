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
import re

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


# The first bytes of files people point babysit at by mistake, and what each is.
_MAGIC = ((b"\x7fELF", "an executable (ELF)"), (b"\x1f\x8b", "a gzip archive"),
          (b"PK\x03\x04", "a zip archive (a PyTorch checkpoint is one)"),
          (b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
          (b"\x93NUMPY", "a NumPy array"), (b"\x89HDF", "an HDF5 file (a Keras model?)"),
          (b"BZh", "a bzip2 archive"), (b"\xfd7zXZ", "an xz archive"),
          (b"(\xb5/\xfd", "a zstd archive"), (b"SQLite format 3\x00", "an SQLite database"))
# Of the first bytes of a file that is not UTF-16, the share of NUL bytes above which it
# is no text at all (a log holds none; a pickle, a tensor file or an image is full of them).
_BINARY_NUL_SHARE = 0.1
_NUL_RUNS = 8  # separate runs of NULs among them, at least
_NUL_RUN = re.compile(rb"\x00+")


def binary_kind(head: bytes) -> str | None:
    """What a file whose first bytes are `head` is when it is no text log (`a gzip
    archive`, `binary data`), else None. UTF-16 text is text; so is an empty head."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if head.startswith((b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")):
        return "a Python pickle (a checkpoint?)"
    if not head or sniff(head) != UTF8:
        return None
    if head.count(0) > _BINARY_NUL_SHARE * len(head) \
            and len(_NUL_RUN.findall(head)) >= _NUL_RUNS:
        # NULs scattered among the other bytes: not a log whose end a crash filled with
        # zeros (one run of them after its text), nor a file preallocated and not yet
        # written (zeros only).
        return "binary data"
    return None


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
