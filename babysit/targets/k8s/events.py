"""The events of a job and its pods (core/v1 Event), as anomalies and notices.

Type and severity, from the existing catalogue, and why:
- FailedScheduling: `job-failure` at medium. The pod waits for room (GPUs, quota,
  taints); the scheduler retries and an autoscaler or a finishing job may make room, so
  it is not the job's end and must not stop a later GO, but its owner should know why
  nothing runs yet. The scheduler's message ("0/8 nodes are available: 8 Insufficient
  nvidia.com/gpu") is the evidence.
- Evicted, Preempted / Preempting: `crash` at high. The node or the scheduler killed a
  running pod; the training code did not fail. The Job or the operator may start it
  again, and the anomaly resolves when training goes on (crash recovers on progress); if
  it does not, the job's own Failed condition is the blocker.
- BackOff ("Back-off restarting failed container"): `crash` under the same key as the
  container's own crash-loop state, so one loop is one anomaly; "Back-off pulling image"
  is `job-failure` at high like ImagePullBackOff.
- FailedCreate on the job (quota, admission webhooks): `job-failure` at high: no pod can
  be made until it is fixed, though the controller keeps trying.
Every other Warning event is a notice, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from babysit.model import AnomalyType, Severity
from babysit.snapshot import ServiceAnomaly


@dataclass(frozen=True)
class Event:
    uid: str
    kind: str  # of the object it is about: Job, Pod, PyTorchJob
    name: str
    reason: str
    message: str
    type: str  # Normal or Warning
    count: int
    last: str


def parse_events(body: dict[str, Any]) -> list[Event]:
    found = []
    for item in body.get("items") or []:
        involved = item.get("involvedObject") or item.get("regarding") or {}
        meta = item.get("metadata") or {}
        series = item.get("series") or {}
        found.append(Event(
            uid=str(meta.get("uid") or meta.get("name") or ""),
            kind=str(involved.get("kind") or ""), name=str(involved.get("name") or ""),
            reason=str(item.get("reason") or ""),
            message=str(item.get("message") or item.get("note") or "").strip(),
            type=str(item.get("type") or "Normal"),
            count=int(item.get("count") or series.get("count") or 1),
            last=str(item.get("lastTimestamp") or item.get("eventTime")
                     or meta.get("creationTimestamp") or "")))
    found.sort(key=lambda e: e.last)
    return found


class EventReader:
    """Each event once (an event seen again with a higher count happened again)."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def fresh(self, events: list[Event]) -> list[Event]:
        out = []
        for event in events:
            if self._seen.get(event.uid, 0) >= event.count:
                continue
            self._seen[event.uid] = event.count
            out.append(event)
        return out


def judge(event: Event, rank: int | None = None) -> tuple[ServiceAnomaly | None, str | None]:
    """The anomaly an event raises and/or the notice it makes."""
    who = f"{event.kind.lower()} {event.name}" + (f" (rank {rank})" if rank is not None
                                                  else "")
    text = event.message[:400]
    reason = event.reason
    if reason == "FailedScheduling":
        return ServiceAnomaly(AnomalyType.JOB_FAILURE, Severity.MEDIUM,
                              f"{who} cannot be scheduled: {text} (the scheduler keeps "
                              f"trying; check GPU capacity, quotas, taints and node "
                              f"selectors)", key="scheduling"), None
    if reason == "Evicted":
        return ServiceAnomaly(AnomalyType.CRASH, Severity.HIGH,
                              f"{who} was evicted by its node: {text} (not the training "
                              f"code: node pressure or a drain)", key=f"evicted:{event.name}"), \
            f"{who} was evicted: {text}"
    if reason in ("Preempted", "Preempting"):
        return ServiceAnomaly(AnomalyType.CRASH, Severity.HIGH,
                              f"{who} was preempted: {text} (a higher-priority pod took its "
                              f"place; not the training code)", key=f"preempted:{event.name}"), \
            f"{who} was preempted: {text}"
    if reason == "BackOff" and event.type == "Warning":
        if "image" in text.lower():
            return ServiceAnomaly(AnomalyType.JOB_FAILURE, Severity.HIGH,
                                  f"{who} cannot pull its image: {text}",
                                  key=f"start:{event.name}"), None
        return ServiceAnomaly(AnomalyType.CRASH, Severity.BLOCKER,
                              f"{who}: {text} (seen {event.count} time(s)): the container "
                              f"fails on every start", key=f"crash:{event.name}"), None
    if reason == "FailedCreate":
        return ServiceAnomaly(AnomalyType.JOB_FAILURE, Severity.HIGH,
                              f"{who} cannot create its pods: {text}", key="create"), None
    if event.type == "Warning":
        return None, f"{who}: {reason}: {text}"
    return None, None
