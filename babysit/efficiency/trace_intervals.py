"""Interval arithmetic for busy time: kernels on several streams of one device overlap,
and the device was busy once, not twice, while they did."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence

Interval = tuple[float, float]  # (start, end), end >= start, in microseconds


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """The union as disjoint intervals sorted by start (touching ones are joined)."""
    merged: list[Interval] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def covered(merged: Sequence[Interval], start: float, end: float) -> float:
    """How much of [start, end] the union `merged` (the result of `merge`) covers.

    Disjoint sorted intervals have sorted ends too, so the first one that can reach
    into the window is found by bisection: a trace with many steps and many kernels
    stays O((steps + kernels) log kernels)."""
    total = 0.0
    # Walked by index: a slice `merged[first:]` would copy the rest of the list for
    # every window, and the time would grow with steps × kernels again.
    for index in range(bisect_right(merged, start, key=lambda interval: interval[1]),
                       len(merged)):
        busy_start, busy_end = merged[index]
        if busy_start >= end:
            break
        total += min(busy_end, end) - max(busy_start, start)
    return total


def covered_each(merged: Sequence[Interval], windows: Sequence[Interval]) -> list[float]:
    """`covered(merged, start, end)` for every window, the windows sorted by start (they
    may overlap): one walk over both lists, O(windows + intervals) where windows do not
    overlap, instead of a bisection per window (a million steps: seconds, not a minute)."""
    totals = []
    first = 0
    for start, end in windows:
        while first < len(merged) and merged[first][1] <= start:
            first += 1  # ends before this window, so before every later one too
        total = 0.0
        for index in range(first, len(merged)):
            busy_start, busy_end = merged[index]
            if busy_start >= end:
                break
            total += min(busy_end, end) - max(busy_start, start)
        totals.append(total)
    return totals
