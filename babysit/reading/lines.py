"""Bytes in, complete lines out, with bounded memory whatever the input."""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.text import decode

# Progress bars redraw with a bare carriage return, so CR ends a line as LF does.
_SEPARATOR = lazy_re.compile(rb"[\r\n]")
MAX_LINE_BYTES = 64 * 1024


class LineSplitter:
    """Accumulates appended bytes and returns the lines they complete.

    A line longer than `max_line` is cut to its first `max_line` bytes and the rest
    is dropped until its end arrives, so a 50 MB line without a newline costs
    `max_line` of memory, not 50 MB. `cut_lines` counts such lines."""

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self._max_line = max_line
        self._pending = bytearray()
        self._overflowing = False
        self.cut_lines = 0

    @property
    def pending_bytes(self) -> int:
        return len(self._pending)

    def feed(self, data: bytes) -> list[str]:
        last = max(data.rfind(b"\n"), data.rfind(b"\r"))
        if last < 0:
            self._append(data)
            return []
        first_break = _SEPARATOR.search(data)
        assert first_break is not None
        self._append(data[: first_break.start()])
        lines: list[str] = []
        if self._pending:
            lines.append(decode(bytes(self._pending)))
        self._pending.clear()
        self._overflowing = False
        if first_break.end() <= last:
            # Everything between the first and the last separator is whole lines:
            # decode it in one go and split the text, rather than line by line.
            # splitlines also breaks on a few rare separators (form feed, U+2028);
            # for log text that is harmless, and it is much faster than a regex.
            parts = decode(data[first_break.end() : last]).splitlines()
            limit = self._max_line
            if parts and max(map(len, parts)) <= limit:
                lines.extend(filter(None, parts))  # the usual case, without a loop here
            else:
                for part in parts:
                    if not part:
                        continue
                    if len(part) > limit:
                        part = part[:limit]
                        self.cut_lines += 1
                    lines.append(part)
        self._append(data[last + 1 :])
        return lines

    def flush(self) -> list[str]:
        """The unterminated last line, if any: call when no more input will come."""
        line = decode(bytes(self._pending)) if self._pending else ""
        self._pending.clear()
        self._overflowing = False
        return [line] if line.strip() else []

    def reset(self) -> None:
        self._pending.clear()
        self._overflowing = False

    def _append(self, piece: bytes) -> None:
        if self._overflowing or not piece:
            return
        room = self._max_line - len(self._pending)
        if len(piece) > room:
            self._pending += piece[:room]
            self._overflowing = True
            self.cut_lines += 1
        else:
            self._pending += piece
