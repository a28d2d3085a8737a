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
from babysit.targets.kinds import KindOption, Request

if TYPE_CHECKING:  # the model is imported when a target polls, not to build the CLI
    from babysit.model import Snapshot


class FallbackTarget:
    def __init__(self, primary: Target, fallback: Callable[[], Target], fallback_name: str,
                 source: str) -> None:
        self.primary = primary
        self._make_fallback = fallback
        self._fallback: Target | None = None
        self._name = fallback_name
        self._source = source
        self._last_step: int | None = None
        self._on_fallback = False

    @property
    def target_type(self) -> str:
        return self.primary.target_type

    @property
    def label(self) -> str:
        return self.primary.label

    def poll(self, final: bool = False) -> Snapshot:
        try:
            snapshot = self.primary.poll(final)
        except TargetUnavailable as error:
            return self._from_fallback(str(error), final)
        self._remember(snapshot)
        if self._on_fallback:
            self._on_fallback = False
            snapshot = replace(snapshot, notices=(f"{self._source} is reachable again: "
                                                  f"reading it instead of {self._name}",
                                                  *snapshot.notices))
        return snapshot

    def _from_fallback(self, why: str, final: bool) -> Snapshot:
        try:
            if self._fallback is None:
                self._fallback = self._make_fallback()
            snapshot = self._fallback.poll(final)
        except (TargetError, TargetUnavailable) as error:
            raise TargetUnavailable(f"{why}; the fallback log {self._name} cannot be read "
                                    f"either: {error}") from error
        records = tuple(r for r in snapshot.records
                        if r.step is None or self._last_step is None or r.step > self._last_step)
        notices = snapshot.notices
        if not self._on_fallback:
            self._on_fallback = True
            notices = (f"{self._source} unreachable ({why}): reading the fallback log "
                       f"{self._name} instead", *notices)
        fallback = replace(snapshot, records=records, notices=notices,
                           degraded=f"{self._source} unreachable: {why} (reading "
                                    f"{self._name} meanwhile)")
        self._remember(fallback)
        return fallback

    def _remember(self, snapshot: Snapshot) -> None:
        steps = [r.step for r in snapshot.records if r.step is not None]
        if steps:
            self._last_step = max(steps + ([self._last_step] if self._last_step else []))

    def close(self) -> None:
        self.primary.close()
        if self._fallback is not None:
            self._fallback.close()


FALLBACK_LOG = KindOption("--fallback-log", "The run's log (local or user@host:/path), read "
                          "while the tracker cannot be reached.", metavar="LOG")


def with_fallback(primary: Callable[[], Target], request: Request, source: str) -> Target:
    """The tracker target, backed by `--fallback-log` when one was given."""
    log = request.option("fallback_log")
    if log is None:
        return primary()
    from babysit.targets.registry import open_log

    accept_new = bool(request.option("ssh_accept_new"))
    return FallbackTarget(primary(), lambda: open_log(log, accept_new), log, source)
