"""A tracker target with a log to fall back on (`--fallback-log`).

When the tracker cannot be reached, the same run's log — local or over SSH, through
the ordinary log targets — is read instead, and the snapshot says so: a connectivity
anomaly, not a broken run. Steps the tracker already delivered are not replayed from
the log, so the rules do not see the run jump backwards."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from babysit.targets.base import Target, TargetError, TargetUnavailable
from babysit.targets.common.open_log import open_log
from babysit.targets.kinds import KindOption, Request

if TYPE_CHECKING:  # the model is imported when a target polls, not to build the CLI
    from babysit.snapshot import Snapshot


class TrackerUnreachable(TargetError):
    """Raised by a tracker target when its server cannot be reached as it opens. Without
    a fallback log that ends the session (exit code 4) with this message; with one,
    babysit starts on the log and keeps trying the tracker."""


class FallbackTarget:
    def __init__(self, primary: Target | None, fallback: Callable[[], Target],
                 fallback_name: str, source: str, *,
                 reopen: Callable[[], Target] | None = None, label: str | None = None,
                 target_type: str | None = None, down: str = "") -> None:
        """`primary` is None when the tracker could not be reached at the start (`down`
        says why): `reopen` is then tried again at each poll, and `label` and
        `target_type` name the target meanwhile."""
        if primary is not None:
            label = primary.label if label is None else label
            target_type = primary.target_type if target_type is None else target_type
        if label is None or target_type is None or (primary is None and reopen is None):
            raise ValueError("a tracker not opened yet needs reopen, label and target_type")
        self.primary = primary
        self._reopen = reopen
        self._label = label
        self._type = target_type
        self._down = down if primary is None else ""  # why it could not be opened
        self._make_fallback = fallback
        self._fallback: Target | None = None
        self._name = fallback_name
        self._source = source
        self._last_step: int | None = None  # as steps completed (see _completed)
        self._on_fallback = False
        # The highest step the fallback delivered, while the tracker (back again) has not
        # gone past it: the tracker's own copy of those steps is not delivered twice.
        self._seen_up_to: int | None = None

    @property
    def target_type(self) -> str:
        return self._type

    @property
    def label(self) -> str:
        return self._label

    def poll(self, final: bool = False) -> Snapshot:
        try:
            primary = self._open_primary()
            snapshot = primary.poll(final)
        except TargetUnavailable as error:
            return self._from_fallback(str(error), final)
        snapshot = self._not_again(snapshot)
        self._remember(snapshot)
        if self._on_fallback:
            self._on_fallback = False
            snapshot = replace(snapshot, notices=(f"{self._source} is reachable again: "
                                                  f"reading it instead of {self._name}",
                                                  *snapshot.notices))
        return snapshot

    def _open_primary(self) -> Target:
        if self.primary is not None:
            return self.primary
        if self._down:
            # Found unreachable as the target was opened, just now: read the log first.
            down, self._down = self._down, ""
            raise TargetUnavailable(down)
        assert self._reopen is not None
        try:
            self.primary = self._reopen()
        except TargetError as error:
            # Still down — or up, but refusing this run (a wrong id, credentials): either
            # way the log goes on being read, and the snapshot says why.
            raise TargetUnavailable(str(error)) from error
        return self.primary

    def _not_again(self, snapshot: Snapshot) -> Snapshot:
        """Drop the tracker's records of steps the fallback already delivered."""
        if self._seen_up_to is None:
            return snapshot
        seen = self._seen_up_to
        records = tuple(r for r in snapshot.log.records
                        if r.step is None or _completed(snapshot, r.step) > seen)
        if any(r.step is not None for r in records):
            self._seen_up_to = None  # the tracker is past what the log told
        if len(records) == len(snapshot.log.records):
            return snapshot
        return replace(snapshot, log=replace(snapshot.log, records=records))

    def _from_fallback(self, why: str, final: bool) -> Snapshot:
        try:
            if self._fallback is None:
                self._fallback = self._make_fallback()
            snapshot = self._fallback.poll(final)
        except (TargetError, TargetUnavailable) as error:
            raise TargetUnavailable(f"{why}; the fallback log {self._name} cannot be read "
                                    f"either: {error}") from error
        records = tuple(r for r in snapshot.log.records
                        if r.step is None or self._last_step is None or r.step > self._last_step)
        notices = snapshot.notices
        if not self._on_fallback:
            self._on_fallback = True
            if self.primary is None:
                notices = (f"{self._source} cannot be reached ({why}): starting on the "
                           f"fallback log {self._name}, and trying {self._source} again at "
                           f"every poll", *notices)
            else:
                notices = (f"{self._source} unreachable ({why}): reading the fallback log "
                           f"{self._name} instead", *notices)
        fallback = replace(snapshot, log=replace(snapshot.log, records=records), notices=notices,
                           degraded=f"{self._source} unreachable: {why} (reading "
                                    f"{self._name} meanwhile)")
        self._remember(fallback)
        if self._last_step is not None:
            self._seen_up_to = self._last_step
        return fallback

    def _remember(self, snapshot: Snapshot) -> None:
        steps = [_completed(snapshot, r.step) for r in snapshot.log.records if r.step is not None]
        if steps:
            self._last_step = max(steps + ([self._last_step] if self._last_step is not None
                                           else []))

    def close(self) -> None:
        if self.primary is not None:
            self.primary.close()
        if self._fallback is not None:
            self._fallback.close()


def _completed(snapshot: Snapshot, step: int) -> int:
    """The steps completed at `step`: the tracker's index + 1 when its run counts from 0
    (a log's steps are already counts), so the tracker's and the log's steps compare."""
    return step + 1 if snapshot.log.steps_from_zero else step


FALLBACK_LOG = KindOption("--fallback-log", "The run's log (local or user@host:/path), read "
                          "while the tracker cannot be reached.", metavar="LOG")


def with_fallback(primary: Callable[[], Target], request: Request, source: str) -> Target:
    """The tracker target, backed by `--fallback-log` when one was given — from the
    start when the tracker cannot be reached then."""
    log = request.option("fallback_log")
    if log is None:
        return primary()
    accept_new = bool(request.option("ssh_accept_new"))

    def fallback() -> Target:
        return open_log(log, accept_new)

    try:
        opened = primary()
    except TrackerUnreachable as error:
        return FallbackTarget(None, fallback, log, source, reopen=primary, label=request.value,
                              target_type=request.kind, down=str(error))
    return FallbackTarget(opened, fallback, log, source)
