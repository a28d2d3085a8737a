"""A fixed-size sample of a whole run's values, for figures about the run as a whole
(its usual loss) that a window of the latest points cannot give.

Every value is kept until the sample is full; then every other one is dropped and only
every second value after is kept, and so on: the sample stays spread evenly over the
whole run in bounded memory, whatever its length, at a constant cost a point.
"""

from __future__ import annotations

_SIZE = 2048


class WholeRun:
    """Values spread evenly over everything added so far (at most `_SIZE`)."""

    def __init__(self) -> None:
        self._kept: list[float] = []
        self._stride = 1  # one value kept of this many added
        self._skipped = 0

    def add(self, value: float) -> None:
        self._skipped += 1
        if self._skipped < self._stride:
            return
        self._skipped = 0
        self._kept.append(value)
        if len(self._kept) >= _SIZE:
            del self._kept[1::2]
            self._stride *= 2

    def median(self) -> float | None:
        if not self._kept:
            return None
        ordered = sorted(self._kept)
        return ordered[len(ordered) // 2]
