"""When a log line was written, from the timestamp a logger put at its start.

Only the common shapes, and only at the start of a line (after an optional `[`):
`2024-08-06 09:59:26`, `2024-08-06T09:59:26`, `12/20 18:16:09` (detectron2,
mmengine: no year), `I0811 21:54:55` (glog, absl: no year either). The times serve to
measure a run's own cadence, so a missing year is harmless: gaps between lines are all
that is used.
"""

from __future__ import annotations

from datetime import datetime, timezone

from babysit import lazy_re

_ISO = lazy_re.compile(r"^\[?(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})")
_MONTH_DAY = lazy_re.compile(r"^\[?(\d{2})/(\d{2}) (\d{2}):(\d{2}):(\d{2})")
_GLOG = lazy_re.compile(r"^[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})")
_NO_YEAR = 2000  # a leap year, so 02/29 parses


def line_time(line: str) -> float | None:
    """Seconds since the epoch of the timestamp the line starts with, or None."""
    first = line[:1]
    if not first or not (first.isdecimal() or first in "[IWEF"):
        return None
    match = _ISO.match(line)
    if match is not None:
        year, month, day, hour, minute, second = (int(g) for g in match.groups())
    else:
        match = _MONTH_DAY.match(line) or _GLOG.match(line)
        if match is None:
            return None
        month, day, hour, minute, second = (int(g) for g in match.groups())
        year = _NO_YEAR
    try:
        when = datetime(year, month, day, hour, minute, second, tzinfo=timezone.utc)
    except ValueError:
        return None
    return when.timestamp()
