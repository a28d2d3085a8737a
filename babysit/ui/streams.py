"""stdout as babysit writes to it: a reader that goes away (`babysit … | head`) or a
stream that cannot take more (`> /dev/full`) ends the watch cleanly instead of with a
traceback, and later writes are dropped."""

from __future__ import annotations

import contextlib
import errno
import os
import select
import stat
import sys
from collections.abc import Callable
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


def pipe_reader_watch(stream: IO[str] | None = None) -> Callable[[], str | None] | None:
    """For stdout on a pipe or socket: a check that says when its reader went away
    (`babysit … | head -3` after the third line), which polling the write end reports
    as an error at once. babysit would otherwise learn it at its next print, minutes
    later at the backoff's cap. None for a terminal or a file (they have no reader to
    lose)."""
    stream = stream if stream is not None else sys.stdout
    try:
        fd = stream.fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError, AttributeError):
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)) or not hasattr(select, "poll"):
        return None  # (no poll() on Windows: the next print finds out, as before)
    poller = select.poll()
    poller.register(fd, 0)  # no events asked for: only errors and hang-ups are reported

    def gone() -> str | None:
        try:
            events = poller.poll(0)
        except OSError:
            return None
        if any(flags & (select.POLLERR | select.POLLHUP) for _, flags in events):
            return "the reader of babysit's output went away (broken pipe)"
        return None

    return gone
