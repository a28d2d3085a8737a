"""An exception in a helper thread: Python prints it and the process goes on.

`threading` reports an exception that escapes a thread other than the main one as
`Exception in thread Thread-1:` and a traceback through `threading.py …
_bootstrap_inner`; the main thread is not stopped by it. After the run said it
finished, such a traceback (tensorboardX's event-file writer torn down at interpreter
exit: `OSError: handle is closed`) is not the run failing (see `core.lifecycle`).
"""

from __future__ import annotations

from dataclasses import replace

from babysit.model import EventKind, LogEvent

IN_THREAD = " (in a helper thread)"  # added to the detail of such an exception


class ThreadFailures:
    """Marks the exception that closes a helper thread's traceback."""

    def __init__(self) -> None:
        self._headers = 0  # `Exception in thread …:` lines not yet closed by an exception
        self._bootstrap = False  # the open traceback runs through a thread's bootstrap

    def line(self, text: str, in_traceback: bool) -> None:
        """A line of the log (`in_traceback`: inside a traceback's body)."""
        if in_traceback:
            if "_bootstrap_inner" in text or ("in _feed" in text and "queues.py" in text):
                # (a multiprocessing queue's feeder thread prints its own failure from
                # `queues.py … in _feed`, no bootstrap above it: a DataLoader's worker
                # gone, `BrokenPipeError: [Errno 32] Broken pipe`, the loop goes on)
                self._bootstrap = True
        elif text.startswith("Exception in thread ") and self._headers < 64:
            self._headers += 1

    def mark(self, events: list[LogEvent]) -> None:
        """Mark, in place, the exceptions among `events` that close a helper thread's
        traceback."""
        for index, event in enumerate(events):
            if event.kind is EventKind.THREAD_FAILED:
                # (the failure reader closed a thread's traceback itself: that header is
                # answered, and the main thread's traceback after it is no thread's — a
                # WaveNet notebook's loader threads died twice, then its cell's IndexError)
                self._headers = max(0, self._headers - 1)
                self._bootstrap = False
                continue
            if event.kind is not EventKind.EXCEPTION or event.detail.endswith(IN_THREAD):
                continue
            if self._bootstrap or self._headers:
                self._headers = max(0, self._headers - 1)
                self._bootstrap = False
                events[index] = replace(event, detail=event.detail + IN_THREAD)
