"""stdout as babysit writes to it: a reader that goes away (`babysit … | head`) or a
stream that cannot take more (`> /dev/full`) ends the watch cleanly instead of with a
traceback, and later writes are dropped."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from typing import IO

from babysit.core.reports import OutputClosed


class GuardedStream:
    """A text stream that turns a failed write into OutputClosed, once."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream
        self.closed_reason: str | None = None

    @property
    def stream(self) -> IO[str]:
        return self._stream if self._stream is not None else sys.stdout

    def write(self, text: str) -> int:
        if self.closed_reason is not None:
            return len(text)
        try:
            return self.stream.write(text)
        except (BrokenPipeError, OSError, ValueError) as error:
            self._fail(error)
        return len(text)

    def flush(self) -> None:
        if self.closed_reason is not None:
            return
        try:
            self.stream.flush()
        except (BrokenPipeError, OSError, ValueError) as error:
            self._fail(error)

    def isatty(self) -> bool:
        with contextlib.suppress(Exception):
            return self.stream.isatty()
        return False

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self.stream, "encoding", None) or "utf-8"

    def _fail(self, error: BaseException) -> None:
        if isinstance(error, BrokenPipeError) or getattr(error, "errno", None) == errno.EPIPE:
            self.closed_reason = "the reader of babysit's output went away (broken pipe)"
        else:
            self.closed_reason = f"babysit's output cannot be written: {error}"
        # Nothing more can reach the reader; keep the interpreter's own flush at exit
        # from printing a second error about the same stream.
        with contextlib.suppress(Exception):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
            os.close(devnull)
        raise OutputClosed(self.closed_reason)
