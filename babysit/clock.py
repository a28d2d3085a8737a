"""Time as the loop sees it, injectable so tests never really sleep."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Protocol


class Clock(Protocol):
    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards."""
        ...

    def now(self) -> datetime:
        """Current wall time, timezone-aware UTC."""
        ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def now(self) -> datetime:
        return datetime.now(timezone.utc)

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))


class Waker(Protocol):
    """Waits between polls, and may end the wait early when something new arrived."""

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True when woken early by news, False on time out."""
        ...


class SleepingWaker:
    """No news channel: sleep on the loop's clock (so a fake clock never really sleeps)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    def wait(self, seconds: float) -> bool:
        self._clock.sleep(seconds)
        return False
