"""Noticing that a local log changed, so a NaN is read within a second at any backoff.

The backoff decides how often babysit reports; a local file is cheap to look at, so
between reports its size, modification time and inode are checked a few times a second
(`os.stat`, a few microseconds). Plain stat rather than inotify: it also sees writes
made on another host to a network filesystem (NFS, Lustre), which inotify does not, and
it works on every platform. A log that grows all the time wakes the loop at most once
per `min_gap`, so reading it costs what reading it at the next poll would.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence

CHECK_EVERY = 0.25
MIN_GAP = 1.0


class GrowthWaker:
    def __init__(self, paths: Sequence[str], *, check_every: float = CHECK_EVERY,
                 min_gap: float = MIN_GAP, monotonic: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._paths = tuple(paths)
        self._check_every = check_every
        self._min_gap = min_gap
        self._monotonic = monotonic
        self._sleep = sleep
        self._last_woken = -min_gap
        self._seen = [self._look(p) for p in self._paths]

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True as soon as a file changed (but never sooner than
        `min_gap` after the previous True), False when the time ran out."""
        deadline = self._monotonic() + max(0.0, seconds)
        while True:
            now = self._monotonic()
            look_at = max(now + self._check_every, self._last_woken + self._min_gap)
            if look_at >= deadline:
                self._sleep(max(0.0, deadline - now))
                return False
            self._sleep(look_at - now)
            if self._changed():
                self._last_woken = self._monotonic()
                return True

    def _changed(self) -> bool:
        changed = False
        for index, path in enumerate(self._paths):
            now = self._look(path)
            if now != self._seen[index]:
                self._seen[index] = now
                changed = True
        return changed

    @staticmethod
    def _look(path: str) -> tuple[int, int, int] | None:
        try:
            info = os.stat(path)
        except OSError:
            return None
        return info.st_ino, info.st_size, info.st_mtime_ns
