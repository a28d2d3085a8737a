"""AnomalyLedger: every anomaly of the run, open or resolved, in the order found.

An anomaly is open until something resolves it; while open, raising the same (type,
key) again does nothing, so a NaN that lasts a thousand steps is one entry. Severity
and meaning come from the catalogue unless the raiser says otherwise.
"""

from __future__ import annotations

import re
from dataclasses import replace

from babysit.model import Anomaly, AnomalyType, Severity
from babysit.rules.catalog import entry

MAX_PER_TYPE = 25  # keep the artifact readable when a run spikes all day
_ROOM_PER_RUN = 10  # findings of each type a new run in the same log may add at the cap
_MAX_DESCRIPTION = 600


class AnomalyLedger:
    def __init__(self, max_per_type: int = MAX_PER_TYPE) -> None:
        self._max_per_type = max_per_type
        self._anomalies: list[Anomaly] = []
        self._open: dict[tuple[AnomalyType, str], int] = {}
        # The types of the open anomalies, made again only after `_open` changed: the run
        # asks at every record whether one of a few types is open.
        self._open_types: frozenset[AnomalyType] | None = frozenset()
        self._fresh: list[Anomaly] = []
        self._per_type: dict[AnomalyType, int] = {}
        self.suppressed = 0  # left out because their type reached the cap
        # Severities at the run's end that a raiser set for one anomaly on its evidence.
        self._at_end: dict[tuple[AnomalyType, str], Severity | None] = {}
        # How many were raised before each open one: the order of events in a log that
        # prints no step (`raised` counts them all).
        self._serials: dict[tuple[AnomalyType, str], int] = {}
        self.raised = 0

    def open_serials(self, kind: AnomalyType) -> list[int]:
        """How many anomalies had been raised before each open one of this type."""
        return [self._serials.get(k, 0) for k in self._open if k[0] is kind]

    @property
    def anomalies(self) -> tuple[Anomaly, ...]:
        return tuple(self._anomalies)

    def raise_(self, kind: AnomalyType, step: int | None, description: str, key: str = "",
               severity: Severity | None = None,
               severity_at_end: Severity | None = None) -> Anomaly | None:
        """Record a new anomaly unless the same (type, key) is open. Returns it, or None
        when nothing new was recorded. `severity_at_end` overrides the catalogue's for
        this one anomaly (see `escalate_at_end`)."""
        if (kind, key) in self._open:
            return None
        if self._per_type.get(kind, 0) >= self._max_per_type:
            self.suppressed += 1
            return None
        if severity_at_end is not None:
            self._at_end[(kind, key)] = severity_at_end
        else:
            self._at_end.pop((kind, key), None)
        anomaly = Anomaly(kind, severity or entry(kind).severity, step,
                          description[:_MAX_DESCRIPTION], key)
        self._open[(kind, key)] = len(self._anomalies)
        self._serials[(kind, key)] = self.raised
        self.raised += 1
        self._open_types = None
        self._per_type[kind] = self._per_type.get(kind, 0) + 1
        self._anomalies.append(anomaly)
        self._fresh.append(anomaly)
        return anomaly

    def new_run(self) -> None:
        """A new run from scratch began in the same log (a sweep's next configuration,
        a fold): each type at its cap makes room for the new run's own findings by
        dropping its oldest resolved ones (left out, as any over the cap). Else a
        sweep's fifteenth run that overfits, after fourteen whose findings were raised
        and resolved as each new run began, was never raised, and the sweep read GO."""
        for kind, count in list(self._per_type.items()):
            while count > self._max_per_type - _ROOM_PER_RUN and self._drop_oldest_resolved(kind):
                count -= 1
                self.suppressed += 1

    def _drop_oldest_resolved(self, kind: AnomalyType) -> bool:
        at = next((i for i, a in enumerate(self._anomalies) if a.type is kind and a.resolved),
                  None)
        if at is None:
            return False
        del self._anomalies[at]
        self._open = {k: (i - 1 if i > at else i) for k, i in self._open.items()}
        self._per_type[kind] -= 1
        return True

    def resolve(self, kind: AnomalyType, how: str, key: str = "") -> bool:
        index = self._open.pop((kind, key), None)
        if index is None:
            return False
        self._open_types = None
        old = self._anomalies[index]
        self._anomalies[index] = replace(old, resolved=True,
                                         description=f"{old.description} — resolved: {how}")
        return True

    def resolve_type(self, kind: AnomalyType, how: str, keep: str | None = None) -> None:
        """Resolve every open anomaly of this type, whatever its key (but `keep`)."""
        for open_kind, key in [k for k in self._open if k[0] is kind and k[1] != keep]:
            self.resolve(open_kind, how, key)

    def annotate(self, kind: AnomalyType, action: str) -> None:
        """Record what babysit did about the open anomalies of this type."""
        for key in [k for k in self._open if k[0] is kind]:
            index = self._open[key]
            self._anomalies[index] = replace(self._anomalies[index], action_taken=action)

    def rename(self, old: str, new: str) -> None:
        """Name a place anew in every finding that named it the old way (a rank whose
        node became known after a finding on it: srun names a failed task's node as the
        task ends). `old` is replaced only as a whole name (`rank 2`, not `rank 20`)."""
        pattern = re.compile(re.escape(old) + r"(?![\w(]| \()")
        for index, anomaly in enumerate(self._anomalies):
            if old in anomaly.description:
                self._anomalies[index] = replace(
                    anomaly, description=pattern.sub(new, anomaly.description)[:_MAX_DESCRIPTION])

    def escalate(self, kind: AnomalyType, severity: Severity, why: str,
                 lowered_too: bool = True) -> None:
        """Raise the severity of the open anomalies of this type (never lowers it).
        With `lowered_too` False, one a rule raised below its catalogue severity on
        evidence (a rise validation does not share) keeps its judgement."""
        usual = entry(kind).severity.rank
        for key in [k for k in self._open if k[0] is kind]:
            index = self._open[key]
            old = self._anomalies[index]
            if not lowered_too and old.severity.rank < usual:
                continue
            if old.severity.rank < severity.rank:
                self._anomalies[index] = replace(old, severity=severity,
                                                 description=f"{old.description} ({why})")

    def escalate_at_end(self, kind: AnomalyType, default: Severity | None, why: str) -> None:
        """The run is over: raise each open anomaly of this type to the severity its
        raiser gave for the end, else to `default` (None: left as it is). Never lowers,
        and one a rule raised below its catalogue severity keeps its judgement."""
        for open_kind, key in [k for k in self._open if k[0] is kind]:
            at_end = self._at_end.get((open_kind, key), default)
            if at_end is None:
                continue
            index = self._open[(open_kind, key)]
            old = self._anomalies[index]
            if old.severity.rank < entry(kind).severity.rank:
                continue
            if old.severity.rank < at_end.rank:
                self._anomalies[index] = replace(old, severity=at_end,
                                                 description=f"{old.description} ({why})")

    def reassess(self, kind: AnomalyType, key: str, severity: Severity, why: str) -> None:
        """Judge one open anomaly again: its severity becomes `severity`, either way, with
        the reason added to its description."""
        index = self._open.get((kind, key))
        if index is None:
            return
        old = self._anomalies[index]
        if old.severity is not severity:
            self._anomalies[index] = replace(
                old, severity=severity,
                description=f"{old.description} — now {severity.value}: {why}"[:_MAX_DESCRIPTION])

    def hold_at_end(self, kind: AnomalyType, key: str, why: str) -> None:
        """Keep one open anomaly at its severity when the run ends (`escalate_at_end`
        leaves it), with the reason added to its description."""
        index = self._open.get((kind, key))
        if index is None:
            return
        self._at_end[(kind, key)] = None
        old = self._anomalies[index]
        self._anomalies[index] = replace(
            old, description=f"{old.description} ({why})"[:_MAX_DESCRIPTION])

    def reopen_latest(self, kind: AnomalyType, note: str) -> None:
        """Mark the newest anomaly of this type open again (a reviewer disagreed that it
        was over)."""
        for index in range(len(self._anomalies) - 1, -1, -1):
            old = self._anomalies[index]
            if old.type is kind:
                if old.resolved:
                    self._anomalies[index] = replace(old, resolved=False,
                                                     description=f"{old.description}; {note}")
                    self._open[(kind, old.key)] = index
                    self._open_types = None
                return

    def is_open(self, kind: AnomalyType, key: str = "") -> bool:
        return (kind, key) in self._open

    def any_open(self, kinds: tuple[AnomalyType, ...]) -> bool:
        """Whether an anomaly of one of these types is open (asked once per record)."""
        return not self.open_types().isdisjoint(kinds)

    def unresolved(self) -> list[Anomaly]:
        return [a for a in self._anomalies if not a.resolved]

    def open_types(self) -> frozenset[AnomalyType]:
        if self._open_types is None:
            self._open_types = frozenset(kind for kind, _ in self._open)
        return self._open_types

    def has_open_blocker(self) -> bool:
        return any(self._anomalies[i].severity is Severity.BLOCKER for i in self._open.values())

    def take_fresh(self) -> list[Anomaly]:
        """The anomalies recorded since the previous call."""
        fresh, self._fresh = self._fresh, []
        return fresh
