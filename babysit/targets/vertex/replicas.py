"""Log entries of a job's replicas through the same parsers as a local log.

Each replica (`workerpool0-0`, `workerpool1-2`, …) has its own parser, as each rank's
file would; its records carry its rank, numbered as torch numbers them (the chief
`workerpool0-0` is 0, worker `workerpool1-i` is i + 1: Vertex AI allows one replica in
the first pool), so the chief speaks for the run's metrics and every replica's failures
count, and, once the job shows more than one replica, the replica's name (`replica
workerpool1-1`), so a finding says where to look (a one-replica job's findings stay as
they were: its replica is the job).
The reduction-server and evaluator pools (2, 3) train no rank: pool × 1000 + replica
keeps them apart.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import replace

from babysit import lazy_re
from babysit.model import Record
from babysit.parsing.parser import LogParser
from babysit.targets.vertex.cloud_logs import Entry

_REPLICA = lazy_re.compile(r"workerpool(\d+)-(\d+)")
_TAIL = 50


def rank_of(task: str) -> int:
    match = _REPLICA.search(task)
    if match is None:
        return 0
    pool, replica = int(match[1]), int(match[2])
    return replica + pool if pool <= 1 else pool * 1000 + replica


def source_of(task: str) -> str:
    return f"replica {task}" if task else ""


class ReplicaLogs:
    def __init__(self) -> None:
        self._parsers: dict[str, LogParser] = {}
        self.tail: deque[str] = deque(maxlen=_TAIL)  # the last lines, for failure analysis
        self.last_line = ""

    def feed(self, entries: list[Entry]) -> tuple[list[Record], int]:
        """Records of the new entries, in order, and how many lines they held."""
        records: list[Record] = []
        count = 0
        for entry in entries:
            parser = self._parsers.get(entry.task)
            if parser is None:
                parser = self._parsers[entry.task] = LogParser()
            rank, source = rank_of(entry.task), self._source_of(entry.task)
            # One entry may hold several lines (a traceback), or tqdm's carriage returns.
            lines = [line for line in re.split(r"\r\n|\r|\n", entry.text) if line.strip()]
            count += len(lines)
            for line in lines:
                self.tail.append(f"{entry.task}: {line}" if entry.task else line)
                self.last_line = line
            for record in parser.feed_lines(lines):
                records.append(replace(record, rank=rank, source=source,
                                       time=entry.time.timestamp())
                               if record.time is None
                               else replace(record, rank=rank, source=source))
        return records, count

    def finish(self) -> list[Record]:
        out: list[Record] = []
        for task, parser in self._parsers.items():
            out.extend(replace(r, rank=rank_of(task), source=self._source_of(task))
                       for r in parser.finish())
        return out

    def _source_of(self, task: str) -> str:
        return source_of(task) if len(self._parsers) > 1 else ""

    @property
    def formats(self) -> tuple[str, ...]:
        found: dict[str, int] = {}
        for parser in self._parsers.values():
            for name, count in parser.formats.items():
                found[name] = found.get(name, 0) + count
        return tuple(sorted(found, key=lambda n: -found[n])[:3])
