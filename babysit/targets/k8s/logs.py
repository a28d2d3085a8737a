"""Each container's log, read a little at a time, through the same parsers as a local log.

The API serves a container's log from a moment on (`sinceSeconds`, whole seconds before
now), each line prefixed with the kubelet's RFC 3339 timestamp (`timestamps=true`). Both
are the node's clock, not babysit's (the Python client has no `sinceTime`), so the reader
asks from well before the newest line it has: what babysit's clock says has passed since,
plus how far ahead of it the node's clock has shown itself to be (a line stamped after
babysit's "now"), plus `OVERLAP_S`. It then skips lines older than the newest one it has
and, at that same instant, the ones it already holds: nothing is lost to a node clock a
few seconds ahead, and nothing is read twice. A poll takes at most `MAX_LINES` lines and `MAX_BYTES`
bytes per container, oldest first, so a chatty run is caught up over several polls
instead of flooding one. When a container restarts, what its previous instance wrote
after the last read (its traceback, its last step) is read once from `previous=true`.

Each pod has its own parser, as each rank's file would; its records carry the pod's rank
so rank 0 (the master) speaks for the run's metrics and every rank's failures count, and
once the job has more than one pod, the pod's name (`pod trainer-worker-1`), so a
finding on a rank says where to look (a one-pod job's findings stay as they were).
"""

from __future__ import annotations

import math
import re
import time
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any

from babysit import lazy_re
from babysit.model import Record
from babysit.parsing.parser import LogParser

MAX_LINES = 5000  # per container per poll
MAX_BYTES = 4 * 1024 * 1024
FIRST_LINES = 2000  # of a container met running: the end of what it wrote so far
OVERLAP_S = 10  # seconds asked for before the newest line held, for clocks that disagree
_TAIL = 50
_STAMP = lazy_re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?"
                         r"(Z|[+-]\d\d:\d\d)$")


def stamp_ns(text: str) -> int | None:
    """Nanoseconds since the epoch of an RFC 3339 time with up to 9 fraction digits (the
    kubelet's RFC3339Nano trims trailing zeros, so these cannot be compared as text)."""
    match = _STAMP.match(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    import calendar

    seconds = calendar.timegm((int(year), int(month), int(day), int(hour), int(minute),
                               int(second), 0, 0, 0))
    if zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        seconds -= sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    return seconds * 1_000_000_000 + int((fraction or "0").ljust(9, "0"))


@dataclass
class ContainerLog:
    """Where the reading of one container's log stands."""

    last_ns: int | None = None  # the newest line taken
    at_last: set[str] = field(default_factory=set)  # the lines taken at that instant
    ahead_ns: int = 0  # how far the node's clock has shown itself ahead of babysit's

    def query(self, now_ns: int) -> dict[str, Any]:
        if self.last_ns is None:
            return {"tail_lines": FIRST_LINES}
        behind = max(0.0, (now_ns - self.last_ns + self.ahead_ns) / 1e9)
        return {"since_seconds": math.ceil(behind) + OVERLAP_S}

    def take(self, text: str, *, capped: bool,
             now_ns: int | None = None) -> tuple[list[tuple[int, str]], bool]:
        """The new (time, line) pairs of an answer, oldest first, and whether more are
        waiting (the answer or the poll's share was cut short). now_ns: babysit's clock
        when the answer was asked for (a line stamped later shows the node ahead)."""
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        elif capped and lines:
            lines.pop()  # cut mid-line by limitBytes: read again next poll
        fresh: list[tuple[int, str]] = []
        more = capped
        for raw in lines:
            stamp, _, line = raw.partition(" ")
            moment = stamp_ns(stamp)
            if moment is None:  # a line without a time (should not happen): keep it
                fresh.append((self.last_ns or 0, raw))
                continue
            if self.last_ns is not None and (
                    moment < self.last_ns or (moment == self.last_ns and line in self.at_last)):
                continue
            if now_ns is not None and moment - now_ns > self.ahead_ns:
                self.ahead_ns = moment - now_ns
            if len(fresh) >= MAX_LINES:
                more = True
                break
            if moment != self.last_ns:
                self.last_ns, self.at_last = moment, set()
            self.at_last.add(line)
            fresh.append((moment, line))
        return fresh, more


class PodLogs:
    """The parsers of a job's pods, and the lines kept for explaining a failure."""

    def __init__(self) -> None:
        self._parsers: dict[str, tuple[LogParser, int, str]] = {}
        self.tail: deque[str] = deque(maxlen=_TAIL)
        self.last_line = ""
        self.newest_ns: int | None = None

    def feed(self, identity: str, pod: str, rank: int,
             lines: list[tuple[int, str]]) -> list[Record]:
        """identity: the pod's UID (a pod made again under its name is a new process
        with its own parser); pod: its name, for people."""
        held = self._parsers.get(identity)
        if held is None:
            held = self._parsers[identity] = (LogParser(), rank, f"pod {pod}")
        parser, _, source = held
        source = source if self._ranks() > 1 else ""
        texts: list[str] = []
        times: list[float] = []
        for moment, line in lines:
            # tqdm's carriage returns: the last state of the bar is what counts.
            parts = [p for p in re.split(r"\r", line) if p.strip()]
            for part in parts:
                texts.append(part)
                times.append(moment / 1e9)
            if parts:
                self.tail.append(f"{pod}: {parts[-1]}")
                self.last_line = parts[-1]
            self.newest_ns = max(self.newest_ns or 0, moment)
        records: list[Record] = []
        for record in parser.feed_lines(texts):
            records.append(replace(record, rank=rank, source=source)
                           if record.time is not None
                           else replace(record, rank=rank, source=source,
                                        time=times[-1] if times else time.time()))
        return records

    def finish(self) -> list[Record]:
        out: list[Record] = []
        several = self._ranks() > 1
        for parser, rank, source in self._parsers.values():
            out.extend(replace(r, rank=rank, source=source if several else "")
                       for r in parser.finish())
        return out

    def _ranks(self) -> int:
        """Ranks seen (a pod made again under its name is the same rank)."""
        return len({rank for _, rank, _ in self._parsers.values()})

    @property
    def formats(self) -> tuple[str, ...]:
        found: dict[str, int] = {}
        for parser, _, _ in self._parsers.values():
            for name, count in parser.formats.items():
                found[name] = found.get(name, 0) + count
        return tuple(sorted(found, key=lambda n: -found[n])[:3])
