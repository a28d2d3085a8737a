"""What both Vertex AI targets share: reading a job's replica logs, the moments a job
reports, failure descriptions and the commands a person runs next."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, TypeVar

from babysit.model import AnomalyType, Severity
from babysit.redact import clip
from babysit.snapshot import ServiceAnomaly
from babysit.targets.base import TargetError, TargetUnavailable
from babysit.targets.vertex.causes import likely_cause
from babysit.targets.vertex.cloud_logs import Entry, EntryReader
from babysit.targets.vertex.names import JobRef
from babysit.targets.vertex.replicas import ReplicaLogs
from babysit.targets.vertex.service import LOGS_ROLE, VertexService

T = TypeVar("T")


def moment(value: Any) -> datetime | None:
    """A timestamp field of a job, or None when the service left it unset."""
    if value is None or not isinstance(value, datetime):
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value if value.timestamp() > 0 else None


def now() -> datetime:
    return datetime.now(timezone.utc)


def later(read: Callable[[], T]) -> T:
    """A read after the first: the job was there, so a refusal now (credentials revoked or
    expired, a role removed) is a problem reaching it, reported as connectivity, not the
    end of the watch or of the run."""
    try:
        return read()
    except TargetError as error:
        raise TargetUnavailable(str(error)) from error


def job_ref(name: str) -> JobRef | None:
    """The job a resource name names, or None when it is not a valid job name (the
    service's text is outside text: a name that breaks the grammar is not used)."""
    parts = name.split("/")
    if len(parts) == 6 and parts[0] == "projects" and parts[2] == "locations":
        try:
            return JobRef(parts[1], parts[3], parts[4], parts[5])
        except ValueError:
            return None
    return None


class JobLogs:
    """The Cloud Logging entries of one custom job, parsed per replica."""

    def __init__(self, service: VertexService, job_id: str, since: datetime | None) -> None:
        self.service = service
        self.replicas = ReplicaLogs()
        self.reader = EntryReader(
            lambda **kw: service.logging.list_entries(**kw), service.project,
            f'resource.type="ml_job" AND resource.labels.job_id="{job_id}"', since)

    def read(self) -> list[Entry]:
        return self.service.guard(self.reader.read, "reading the job's Cloud Logging entries",
                                  LOGS_ROLE)


class LogsReachable:
    """Logs are a second source: when they fail, the job's state still counts. A
    transient failure is noted each time; a permission error once, then logs stop."""

    def __init__(self) -> None:
        self.denied = False

    def read(self, logs: JobLogs, notices: list[str]) -> list[Entry]:
        if self.denied:
            return []
        try:
            return logs.read()
        except TargetUnavailable as error:
            notices.append(f"Cloud Logging unreachable this poll ({error}); the job's state "
                           f"is still read")
        except TargetError as error:
            self.denied = True
            notices.append(f"cannot read the job's logs, so steps, losses and errors inside "
                           f"it are not seen: {error}")
        return []


def failure(kind: AnomalyType, what: str, state: str, error: Any,
            tail: list[str]) -> ServiceAnomaly:
    """The anomaly of a failed, cancelled or expired job or task, its likely cause first."""
    code = int(getattr(error, "code", 0) or 0) or None
    message = str(getattr(error, "message", "") or "")
    if state == "CANCELLED":
        return ServiceAnomaly(kind, Severity.HIGH, f"{what} was cancelled"
                              + (f": {message}" if message else ""))
    if state == "EXPIRED":
        message = message or "it ran past its scheduling timeout"
    cause = likely_cause(code, message, tail)
    text = f"{what} {'expired' if state == 'EXPIRED' else 'failed'}"
    if cause is not None:
        text += f" — likely cause: {cause.title} ({clip(cause.evidence.strip(), 300)}); " \
                f"{cause.advice}"
    if message and (cause is None or message not in cause.evidence):
        text += f". Error: {clip(message, 300)}"
    return ServiceAnomaly(kind, Severity.BLOCKER if kind is not AnomalyType.TASK_FAILURE
                          else Severity.HIGH, text)


# Vertex AI turns a job FAILED first and fills its `error` a little later (about a
# minute, one poll): so many polls are waited for the reason before the failure is
# reported without one.
ERROR_WAITS = 2


def has_error(error: Any) -> bool:
    return bool(int(getattr(error, "code", 0) or 0) or getattr(error, "message", ""))


class ErrorWait:
    """Holds back a FAILED job's end while its error is still empty, at most
    `ERROR_WAITS` polls (never on the last poll of a watch)."""

    def __init__(self) -> None:
        self.waited = 0

    def hold(self, state: str, error: Any, final: bool, notices: list[str]) -> bool:
        if state != "FAILED" or has_error(error) or final or self.waited >= ERROR_WAITS:
            return False
        self.waited += 1
        notices.append("Vertex AI reports the job FAILED but has not said why yet; it is "
                       "read again at the next poll for its error")
        return True


def gcloud(*args: str, ref: JobRef) -> str:
    # The parts of a JobRef are validated when it is made (names.JobRef).
    return shlex.join(["gcloud", *args, f"--region={ref.region}", f"--project={ref.project}"])


def console_url(ref: JobRef) -> str:
    if ref.collection == "customJobs":
        return (f"https://console.cloud.google.com/vertex-ai/locations/{ref.region}/training/"
                f"{ref.job_id}/cpu?project={ref.project}")
    return (f"https://console.cloud.google.com/vertex-ai/locations/{ref.region}/pipelines/"
            f"runs/{ref.job_id}?project={ref.project}")


class VertexJob:
    """What both Vertex AI targets do alike: the job read once at opening (an error then
    is the watch's start failing), handed to the first poll; later reads through `later`;
    the resource name as label."""

    def __init__(self, ref: JobRef, service: VertexService) -> None:
        self.ref = ref
        self.service = service
        self._first: Any = self._get()
        self.display_name = str(self._first.display_name or ref.job_id)
        self._reachable = LogsReachable()

    @property
    def label(self) -> str:
        return self.ref.name

    def _get(self) -> Any:
        raise NotImplementedError

    def _read(self) -> Any:
        """The job for this poll: the one read at opening, once, then a fresh read."""
        job = self._first if self._first is not None else later(self._get)
        self._first = None
        return job

    def close(self) -> None:
        self.service.close()
