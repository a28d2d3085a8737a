"""One run written to several log files — one per rank (`babysit r0.log r1.log …` or a
glob) — judged together.

Each file is followed on its own, like any log; their records are tagged with the rank
the file belongs to (from its name, `rank3`, `r3`, `…_3.log`, else its position), so
metrics come from the lowest rank and every rank's failures count, attributed to it.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence
from dataclasses import replace

from babysit import lazy_re
from babysit.clock import Waker
from babysit.model import Record
from babysit.reading.changes import GrowthWaker
from babysit.snapshot import LogSnapshot, Snapshot
from babysit.targets.base import TargetError
from babysit.targets.common.log_file import LocalLogTarget

_RANK_IN_NAME = lazy_re.compile(
    r"(?:rank|r|worker|proc)[_-]?(\d+)|[_.-](\d+)\.(?:log|out|err|txt)$",
                           re.IGNORECASE)
_GLOB = lazy_re.compile(r"[*?\[]")


def expand(paths: Sequence[str]) -> list[str]:
    """The files named, a glob pattern expanded in sorted order (quoted by the user so
    the shell left it alone). Raises TargetError when a pattern matches nothing."""
    found: list[str] = []
    for path in paths:
        if _GLOB.search(path) and not os.path.exists(path):
            matches = sorted(glob.glob(path))
            if not matches:
                raise TargetError(f"no log file matches {path}")
            found.extend(matches)
        else:
            found.append(path)
    return list(dict.fromkeys(found))


def rank_of(path: str, position: int) -> int:
    match = _RANK_IN_NAME.search(os.path.basename(path))
    if match is None:
        return position
    return int(match.group(1) or match.group(2))


class RankLogsTarget:
    target_type = "local-log"

    def __init__(self, paths: Sequence[str], label: str) -> None:
        if len(paths) < 2:
            raise TargetError("several rank logs were expected")
        self._label = label
        self._logs: list[tuple[int, LocalLogTarget]] = []
        try:
            for position, path in enumerate(paths):
                self._logs.append((rank_of(path, position), LocalLogTarget(path)))
        except TargetError:
            self.close()
            raise
        ranks = [rank for rank, _ in self._logs]
        if len(set(ranks)) != len(ranks):  # names that do not say: their order does
            self._logs = [(position, log) for position, (_, log) in enumerate(self._logs)]
        self._notices = [f"{len(self._logs)} rank logs: " + ", ".join(
            f"rank {rank} = {log.label}" for rank, log in self._logs)]

    @property
    def label(self) -> str:
        return self._label

    @property
    def log_path(self) -> str | None:
        return self._logs[0][1].label  # the lowest rank's, for `tail` and notifications

    def poll(self, final: bool = False) -> Snapshot:
        records: list[Record] = []
        formats: list[str] = []
        notices = list(self._notices)
        self._notices = []
        quiet: list[float] = []
        new_bytes = new_lines = 0
        phase = None
        for rank, log in sorted(self._logs):
            snapshot = log.poll(final)
            read = snapshot.log
            records.extend(r if r.rank is not None else replace(r, rank=rank)
                           for r in read.records)
            formats.extend(f for f in read.formats if f not in formats)
            notices.extend(f"rank {rank}: {n}" for n in snapshot.notices)
            if read.quiet_for is not None:
                quiet.append(read.quiet_for)
            new_bytes += read.new_bytes
            new_lines += read.new_lines
            phase = phase or read.phase
        return Snapshot(LogSnapshot(records=tuple(records), new_bytes=new_bytes,
                                    new_lines=new_lines, formats=tuple(formats),
                                    quiet_for=min(quiet) if quiet else None, phase=phase),
                        notices=tuple(notices))

    def change_waker(self) -> Waker:
        return GrowthWaker([str(log.path) for _, log in self._logs])

    def close(self) -> None:
        for _, log in self._logs:
            log.close()
