"""Formatting numbers and durations the way people read them in a terminal."""

from __future__ import annotations

import math


def format_duration(seconds: float) -> str:
    """`3d 2h`, `1h 23m`, `4m 5s`, `12s`."""
    seconds = max(0, int(seconds))
    days, rem = divmod(seconds, 86400)
    hours, rem = divmod(rem, 3600)
    minutes, secs = divmod(rem, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {secs}s"
    return f"{secs}s"


def count(number: int, noun: str, plural: str | None = None) -> str:
    """`1 event`, `3 events`, `1 process`, `2 processes` (given): never `1 events`."""
    return f"{number} {noun if number == 1 else (plural or noun + 's')}"


def format_interval(seconds: float) -> str:
    """A poll interval: `45s`, `2s`, and `0.3s` for the short ones of tests and demos."""
    if seconds >= 10 or seconds == int(seconds):
        return f"{seconds:.0f}s"
    return f"{seconds:.2g}s"


def format_value(value: float) -> str:
    """Compact and faithful: `0.342`, `1e-4`, `2.5e-5`, `nan`, `1842`."""
    if not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    magnitude = abs(value)
    if value != 0 and (magnitude < 1e-3 or magnitude >= 1e6):
        mantissa, exponent = f"{value:.2e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    if value == int(value):
        return str(int(value))
    return f"{value:.4g}"
