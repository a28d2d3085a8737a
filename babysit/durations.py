"""Durations as people write them: `90`, `45s`, `10m`, `1.5h`, `2d`."""

from __future__ import annotations

import re
from itertools import pairwise

from babysit import lazy_re

_DURATION = lazy_re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|hr|d)?\s*$", re.IGNORECASE)
_UNIT = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600, "d": 86400}
MAX_SECONDS = 7 * 86400


def parse_duration(text: str) -> float:
    """Seconds. Raises ValueError naming the text when it is not a duration."""
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a duration (examples: 90, 45s, 10m, 1.5h)")
    seconds = float(match.group(1)) * _UNIT[(match.group(2) or "s").lower()]
    if seconds <= 0:
        raise ValueError(f"{text!r}: a duration must be positive")
    if seconds > MAX_SECONDS:
        raise ValueError(f"{text!r}: longer than a week, the longest babysit waits between "
                         f"looks")
    return seconds


def parse_schedule(text: str) -> tuple[float, ...]:
    """`10m,20m,30m,60m` → (600, 1200, 1800, 3600); must not decrease."""
    values = tuple(parse_duration(part) for part in text.split(",") if part.strip())
    if not values:
        raise ValueError("a schedule needs at least one interval")
    if any(b < a for a, b in pairwise(values)):
        raise ValueError(f"{text!r}: the intervals of a schedule must not decrease")
    return values
