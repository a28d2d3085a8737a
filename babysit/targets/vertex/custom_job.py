"""A Vertex AI custom training job: its state and machines from the Jobs API, its
replicas' output from Cloud Logging, parsed like a local log.

Each poll is one `get` of the job and one `entries:list` for what its replicas wrote
since the last poll. Steps, losses, NaN, OOM and NCCL errors inside the job are found
by the same parsers and rules as in a local file; the job's own state decides how the
run ended, and a failure is explained by its error and the end of its logs.
"""

from __future__ import annotations

import shlex
from datetime import timedelta
from typing import Any, ClassVar

from babysit.model import AnomalyType, TerminalState
from babysit.redact import clip
from babysit.snapshot import (
    LogSnapshot,
    ProcessSnapshot,
    ServiceAnomaly,
    ServiceSnapshot,
    Snapshot,
    TimeLimit,
)
from babysit.targets.vertex import describe
from babysit.targets.vertex.jobs import (
    ErrorWait,
    JobLogs,
    VertexJob,
    console_url,
    failure,
    gcloud,
    moment,
    now,
)
from babysit.targets.vertex.names import JobRef
from babysit.targets.vertex.service import VertexService
from babysit.units import format_duration

_TERMINAL = {"SUCCEEDED": TerminalState.SUCCEEDED, "FAILED": TerminalState.FAILED,
             "CANCELLED": TerminalState.CANCELLED, "EXPIRED": TerminalState.TIMEOUT,
             "PARTIALLY_SUCCEEDED": TerminalState.FAILED}
_WAITING = ("QUEUED", "PENDING", "UPDATING", "PAUSED", "UNSPECIFIED")


def _time_limit(job: Any) -> TimeLimit | None:
    """jobSpec.scheduling.timeout, counted from the job's start (Vertex AI ends the job
    EXPIRED then). It cannot be changed on a running job: only a new job resumes."""
    timeout = getattr(job.job_spec.scheduling, "timeout", None)
    start = moment(job.start_time)
    if not isinstance(timeout, timedelta) or timeout.total_seconds() <= 0 or start is None:
        return None
    return TimeLimit(timeout.total_seconds(), max(0.0, (now() - start).total_seconds()),
                     "Vertex AI scheduling.timeout")


class CustomJobTarget(VertexJob):
    target_type: ClassVar[str] = "vertex-training"

    def __init__(self, ref: JobRef, service: VertexService) -> None:
        super().__init__(ref, service)
        job = self._first
        self._logs = JobLogs(service, ref.job_id, moment(job.create_time))
        self._state: str | None = None
        self._raised = False
        self._error_wait = ErrorWait()
        self._notices = [f"Vertex AI custom job {self.display_name} in project "
                         f"{ref.project}, {ref.region} ({self._machine(job)})"]

    def _get(self) -> Any:
        return self.service.call(self.service.jobs.get_custom_job, f"custom job {self.ref.name}",
                                 name=self.ref.name)

    @staticmethod
    def _machine(job: Any) -> str:
        pools = list(job.job_spec.worker_pool_specs)
        if not pools:
            return "no worker pools"
        first = pools[0]
        spec = first.machine_spec
        text = describe.machine(spec.machine_type, describe.enum_name(spec.accelerator_type),
                                int(spec.accelerator_count), int(first.replica_count or 1))
        return text + (f" + {len(pools) - 1} more pool(s)" if len(pools) > 1 else "")

    def poll(self, final: bool = False) -> Snapshot:
        job = self._read()
        state = describe.short_state(describe.enum_name(job.state))
        changed = self._state is not None and state != self._state
        notices, self._notices = self._notices, []
        if describe.is_unknown(state) and state != self._state:
            notices.append(describe.unknown_state_notice(state))
        self._state = state
        entries = self._reachable.read(self._logs, notices)
        records, lines = self._logs.replicas.feed(entries)
        run_state = _TERMINAL.get(state)
        holding = self._error_wait.hold(state, job.error, final, notices)
        if holding:
            run_state = None
        if final or run_state is not None:
            records += self._logs.replicas.finish()
        raised: tuple[ServiceAnomaly, ...] = ()
        if run_state not in (None, TerminalState.SUCCEEDED) and not self._raised:
            self._raised = True
            raised = (failure(AnomalyType.JOB_FAILURE, f"custom job {self.display_name}",
                              state, job.error, list(self._logs.replicas.tail)),)
        newest = self._logs.reader.newest
        return Snapshot(
            log=LogSnapshot(
                records=tuple(records),
                new_lines=lines,
                formats=self._logs.replicas.formats or ("vertex",),
                quiet_for=(now() - newest).total_seconds() if newest else None),
            process=ProcessSnapshot(
                alive=run_state is None),
            service=ServiceSnapshot(
                run_state=run_state,
                run_state_detail=f"Vertex AI job state: JOB_STATE_{state}",
                run_state_source="Vertex AI",
                evidence_url=console_url(self.ref),
                status=self._status(job, state),
                headline=self._headline(job, state),
                raised=raised,
                service_state=state,
                activity=bool(lines) or changed or holding or state in _WAITING,
                commands=self._commands(run_state),
                cancel_command=gcloud("ai", "custom-jobs", "cancel", self.ref.job_id, ref=self.ref)
                if run_state is None and not holding else None,
                time_limit=_time_limit(job) if state == "RUNNING" else None),
            notices=tuple(notices),
            stall_hint=("Vertex AI still reports the job RUNNING, but none of its replicas "
                        "wrote a log entry in that time") if state == "RUNNING" else "",
        )

    def _times(self, job: Any, state: str) -> str:
        start = moment(job.start_time)
        if start is None:
            waited = describe.elapsed(moment(job.create_time), None, now())
            return f"State: {state}" + (f" | Waiting: {waited}" if waited else "")
        ended = moment(job.end_time)
        took = describe.elapsed(start, ended, now())
        line = f"State: {state} | {'Duration' if ended else 'Elapsed'}: {took}"
        limit = _time_limit(job) if state == "RUNNING" else None
        if limit is not None:
            line += f" | Left: {format_duration(limit.left_seconds)} of the timeout"
        return line

    def _status(self, job: Any, state: str) -> tuple[str, ...]:
        lines = [f"Custom job: {self.display_name} ({self.ref.name})",
                 f"{self._times(job, state)} | Machine: {self._machine(job)}"]
        if state in _TERMINAL and self._logs.replicas.last_line:
            lines.append(f"Final log: {clip(self._logs.replicas.last_line, 300)}")
        return tuple(lines)

    def _headline(self, job: Any, state: str) -> str:
        line = self._times(job, state)
        if state in _TERMINAL and self._logs.replicas.last_line:
            line += f" | Final log: {clip(self._logs.replicas.last_line, 300)}"
        return line

    def _commands(self, run_state: TerminalState | None) -> tuple[str, ...]:
        commands = [gcloud("ai", "custom-jobs", "describe", self.ref.job_id, ref=self.ref)]
        if run_state is None:
            commands.append(gcloud("ai", "custom-jobs", "stream-logs", self.ref.job_id,
                                   ref=self.ref))
        else:
            query = f'resource.type="ml_job" AND resource.labels.job_id="{self.ref.job_id}"'
            commands.append(shlex.join(["gcloud", "logging", "read", query,
                                        f"--project={self.ref.project}", "--limit=50"]))
        return tuple(commands)

