"""Waiting between polls, beyond the clock: a waker that also watches babysit's output."""

from __future__ import annotations

from collections.abc import Callable

from babysit.clock import Clock, Waker
from babysit.core.reports import OutputClosed


class OutputWatchingWaker:
    """Waits as `inner` does, looking at babysit's output every `every` seconds: when its
    reader went away (`babysit … | head -3`), the watch ends then, with its verdict,
    rather than at the next print, which may be minutes away."""

    def __init__(self, inner: Waker, gone: Callable[[], str | None], clock: Clock,
                 every: float = 0.5) -> None:
        self.inner = inner
        self.gone = gone
        self.clock = clock
        self.every = every

    def wait(self, seconds: float) -> bool:
        deadline = self.clock.monotonic() + seconds
        while True:
            reason = self.gone()
            if reason is not None:
                raise OutputClosed(reason)
            left = deadline - self.clock.monotonic()
            if left <= 0:
                return False
            if self.inner.wait(min(left, self.every)):
                return True
