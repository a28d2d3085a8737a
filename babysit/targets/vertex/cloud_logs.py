"""Cloud Logging entries of one job, read incrementally.

The first read takes the newest entries (newest first, then put back in order), so a
long job's history costs one bounded request. Later reads ask for entries at or after
the newest timestamp seen, minus a look-back for entries that arrive late (Cloud
Logging does not ingest in timestamp order), and drop the ones already seen by their
`insertId`. A `timestamp >=` term is always in the filter: without one, the library
adds its own 24-hour window.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

_LOOK_BACK = timedelta(seconds=60)
_FIRST_READ = 2000  # newest entries taken at the start
_PER_READ = 5000  # entries at most per later read; the rest come next poll
_LINE_LIMIT = 16384  # characters kept of one entry's text


@dataclass(frozen=True)
class Entry:
    insert_id: str
    time: datetime
    severity: str
    task: str  # workerpool0-0, … ("" when the entry does not say)
    text: str


class EntryReader:
    def __init__(self, list_entries: Callable[..., Any], project: str, base_filter: str,
                 since: datetime | None = None) -> None:
        self._list = list_entries
        self._project = project
        self._filter = base_filter
        self._since = since
        self._seen: dict[str, datetime] = {}
        self._started = False
        self.newest: datetime | None = None  # timestamp of the newest entry read

    def read(self) -> list[Entry]:
        from google.cloud import logging as cloud_logging

        if not self._started:
            self._started = True
            since = self._since or datetime(1970, 1, 1, tzinfo=timezone.utc)
            raw = list(self._list(resource_names=[f"projects/{self._project}"],
                                  filter_=f'{self._filter} AND timestamp>="{_iso(since)}"',
                                  order_by=cloud_logging.DESCENDING, page_size=1000,
                                  max_results=_FIRST_READ))
            raw.reverse()
        else:
            newest = self.newest or self._since or datetime(1970, 1, 1, tzinfo=timezone.utc)
            since = newest - _LOOK_BACK
            raw = list(self._list(resource_names=[f"projects/{self._project}"],
                                  filter_=f'{self._filter} AND timestamp>="{_iso(since)}"',
                                  order_by=cloud_logging.ASCENDING, page_size=1000,
                                  max_results=_PER_READ))
        fresh: list[Entry] = []
        for item in raw:
            entry = _entry(item)
            if entry.insert_id and entry.insert_id in self._seen:
                continue
            self._seen[entry.insert_id] = entry.time
            fresh.append(entry)
            if self.newest is None or entry.time > self.newest:
                self.newest = entry.time
        self._forget()
        fresh.sort(key=lambda e: e.time)
        return fresh

    def _forget(self) -> None:
        """Keep only the IDs a later read can return again (inside the look-back)."""
        if self.newest is None or len(self._seen) < 10000:
            return
        horizon = self.newest - 2 * _LOOK_BACK
        self._seen = {k: t for k, t in self._seen.items() if t >= horizon}


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _entry(item: Any) -> Entry:
    payload = item.payload
    if isinstance(payload, str):
        text = payload
    elif isinstance(payload, dict):
        message = payload.get("message")
        text = message if isinstance(message, str) else " ".join(
            f"{k}={v}" for k, v in payload.items())
    else:
        text = "" if payload is None else str(payload)
    labels = getattr(item.resource, "labels", None) or {}
    task = labels.get("task_name") or (item.labels or {}).get("task_name") or ""
    if not task and item.log_name:
        tail = item.log_name.rsplit("/", 1)[-1]
        task = tail if tail.startswith("workerpool") else ""
    moment = item.timestamp or datetime.now(timezone.utc)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return Entry(str(item.insert_id or ""), moment, str(item.severity or "DEFAULT"), task,
                 text[:_LINE_LIMIT])
