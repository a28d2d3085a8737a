"""A Vertex AI pipeline job: its state, every task's state and times, the running
tasks' custom jobs followed into their logs, and ERROR entries of its task events.

Each poll is one `get` of the pipeline job, one `entries:list` per running task's job,
and one for the pipeline's own ERROR entries. A task that fails is explained from its
error and the end of its job's logs (read once more when it fails).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, ClassVar

from babysit import lazy_re
from babysit.model import AnomalyType, Record, Severity, TerminalState
from babysit.redact import clip
from babysit.snapshot import LogSnapshot, ProcessSnapshot, ServiceAnomaly, ServiceSnapshot, Snapshot
from babysit.targets.vertex import describe
from babysit.targets.vertex.cloud_logs import EntryReader
from babysit.targets.vertex.jobs import (
    ErrorWait,
    JobLogs,
    VertexJob,
    console_url,
    failure,
    job_ref,
    moment,
    now,
)
from babysit.targets.vertex.names import JobRef
from babysit.targets.vertex.service import LOGS_ROLE, VertexService

_TERMINAL = {"SUCCEEDED": TerminalState.SUCCEEDED, "FAILED": TerminalState.FAILED,
             "CANCELLED": TerminalState.CANCELLED}
_WAITING = ("QUEUED", "PENDING", "PAUSED", "UNSPECIFIED")
_TASK_DONE = ("SUCCEEDED", "SKIPPED", "FAILED", "CANCELLED", "NOT_TRIGGERED")


class PipelineTarget(VertexJob):
    target_type: ClassVar[str] = "vertex-pipeline"

    def __init__(self, ref: JobRef, service: VertexService) -> None:
        super().__init__(ref, service)
        job = self._first
        self._planned = _planned_tasks(job.pipeline_spec)
        self._job_logs: dict[str, JobLogs] = {}  # custom job name → its logs
        self._errors = EntryReader(
            lambda **kw: service.logging.list_entries(**kw), service.project,
            f'resource.type="aiplatform.googleapis.com/PipelineJob" AND '
            f'resource.labels.pipeline_job_id="{ref.job_id}" AND severity>=ERROR',
            moment(job.create_time))
        self._task_states: dict[str, str] = {}
        self._state: str | None = None
        self._raised_end = False
        self._error_wait = ErrorWait()
        self._notices = [f"Vertex AI pipeline {self.display_name} in project {ref.project}, "
                         f"{ref.region}" + (f", {len(self._planned)} tasks planned"
                                            if self._planned else "")]

    def _get(self) -> Any:
        return self.service.call(self.service.pipelines.get_pipeline_job,
                                 f"pipeline job {self.ref.name}", name=self.ref.name)

    def poll(self, final: bool = False) -> Snapshot:
        job = self._read()
        state = describe.short_state(describe.enum_name(job.state))
        tasks = self._tasks(job)
        notices, self._notices = self._notices, []
        if describe.is_unknown(state) and state != self._state:
            notices.append(describe.unknown_state_notice(state, "the pipeline"))
        before = dict(self._task_states)
        self._task_states = {t.key: t.state for t in tasks}
        moved = bool(before) and before != self._task_states
        changed = self._state is not None and state != self._state
        self._state = state
        raised: list[ServiceAnomaly] = []
        records: list[Record] = []
        lines = 0
        # Follow the jobs of running tasks, and of tasks that just ended (their last words).
        for task in tasks:
            just_ended = before.get(task.key) not in (None, task.state) \
                and task.state in _TASK_DONE
            if task.state != "RUNNING" and not just_ended \
                    and not (task.state == "FAILED" and task.key not in before):
                continue
            for name in task.jobs:
                logs = self._logs_of(name, task, notices)
                found, count = logs.replicas.feed(self._reachable.read(logs, notices))
                # A pipeline runs many tasks: what a task's job printed names the task.
                records += [replace(record, source=", ".join(
                    p for p in (f"task {task.name}", record.source) if p)) for record in found]
                lines += count
            if task.state == "FAILED":
                tail = [line for name in task.jobs for line in self._logs_of(name, task)
                        .replicas.tail]
                anomaly = failure(AnomalyType.TASK_FAILURE, f"task {task.name}", "FAILED",
                                  _Error(task.error), tail)
                raised.append(ServiceAnomaly(anomaly.type, anomaly.severity,
                                             anomaly.description, key=f"task:{task.key}"))
        raised += self._error_entries(notices)
        run_state = _TERMINAL.get(state)
        holding = self._error_wait.hold(state, job.error, final, notices)
        if holding:
            run_state = None
        if final or run_state is not None:
            for logs in self._job_logs.values():
                records += logs.replicas.finish()
        if run_state not in (None, TerminalState.SUCCEEDED) and not self._raised_end:
            self._raised_end = True
            failed = [t.name for t in tasks if t.state == "FAILED"]
            what = f"pipeline {self.display_name}" + (f" (failed: {', '.join(failed)})"
                                                      if failed else "")
            tail = [line for logs in self._job_logs.values() for line in logs.replicas.tail]
            raised.append(failure(AnomalyType.PIPELINE_FAILURE, what, state, job.error, tail))
        service_state = state + "|" + ",".join(f"{t.name}={t.state}" for t in tasks)
        return Snapshot(
            log=LogSnapshot(
                records=tuple(records),
                new_lines=lines,
                formats=self._formats()),
            process=ProcessSnapshot(
                alive=run_state is None),
            service=ServiceSnapshot(
                run_state=run_state,
                run_state_detail=f"Vertex AI pipeline state: PIPELINE_STATE_{state}",
                run_state_source="Vertex AI",
                evidence_url=console_url(self.ref),
                status=self._status(job, state, tasks),
                headline=describe.task_counts(tasks, now(), brief=True),
                raised=tuple(raised),
                service_state=service_state,
                activity=bool(lines) or moved or changed or holding or state in _WAITING,
                commands=self._commands(),
                cancel_command=self._cancel_command() if run_state is None and not holding
                else None),
            notices=tuple(notices),
            stall_hint=("Vertex AI still reports the pipeline RUNNING, but no task changed "
                        "state and no running task wrote a log entry in that time")
            if state == "RUNNING" else "",
        )

    # --- tasks ------------------------------------------------------------------------

    def _tasks(self, job: Any) -> list[describe.Task]:
        details = list(job.job_detail.task_details)
        parents = {int(d.parent_task_id) for d in details if d.parent_task_id}
        tasks = []
        for detail in details:
            if int(detail.task_id) in parents or (
                    not detail.parent_task_id and (len(details) > 1 or self._planned)):
                continue  # the pipeline's own DAG (or a nested one), not a step of work
            executor = detail.executor_detail
            jobs = [executor.custom_job_detail.job, executor.container_detail.main_job,
                    *launched_jobs(detail.execution.metadata)]
            tasks.append(describe.Task(
                name=str(getattr(detail, "task_unique_name", "") or detail.task_name),
                state=describe.enum_name(detail.state),
                started=moment(detail.start_time), ended=moment(detail.end_time),
                error=str(detail.error.message or ""),
                jobs=tuple(dict.fromkeys(j for j in jobs if j)),
                key=str(detail.task_id)))
        # Iterations of a ParallelFor share their name (and unique name): told apart by ID.
        counts: dict[str, int] = {}
        for task in tasks:
            counts[task.name] = counts.get(task.name, 0) + 1
        tasks = [replace(t, name=f"{t.name} [task {t.key}]") if counts[t.name] > 1 else t
                 for t in tasks]
        seen = {str(d.task_name) for d in details}
        tasks += [describe.Task(name, "PENDING", key=f"planned:{name}")
                  for name in self._planned if name not in seen]
        return tasks

    def _logs_of(self, job_name: str, task: describe.Task,
                 notices: list[str] | None = None) -> JobLogs:
        logs = self._job_logs.get(job_name)
        if logs is None:
            if notices is not None:
                notices.append(f"task {task.name}: reading the logs of custom job {job_name}")
            ref = job_ref(job_name)
            job_id = ref.job_id if ref is not None else job_name.rsplit("/", 1)[-1]
            logs = self._job_logs[job_name] = JobLogs(self.service, job_id, task.started)
        return logs

    def _error_entries(self, notices: list[str]) -> Iterator[ServiceAnomaly]:
        if self._reachable.denied:
            return
        try:
            entries = self.service.guard(self._errors.read, "reading the pipeline's error log",
                                         LOGS_ROLE)
        except Exception as error:  # logs are a second source: the states still count
            notices.append(f"cannot read the pipeline's error log this poll: {error}")
            return
        if entries:
            first = entries[0]
            more = f" (+{len(entries) - 1} more)" if len(entries) > 1 else ""
            yield ServiceAnomaly(AnomalyType.TASK_FAILURE, Severity.MEDIUM,
                                 f"ERROR in the pipeline's task events: "
                                 f"{clip(first.text.strip(), 300)}{more}", key="error-log")

    # --- for people -------------------------------------------------------------------

    def _status(self, job: Any, state: str, tasks: list[describe.Task]) -> tuple[str, ...]:
        start = moment(job.start_time) or moment(job.create_time)
        ended = moment(job.end_time)
        took = describe.elapsed(start, ended, now())
        lines = [f"Pipeline: {self.display_name} ({self.ref.name})",
                 f"State: {state}" + (f" | {'Duration' if ended else 'Elapsed'}: {took}"
                                      if took else ""),
                 describe.task_counts(tasks, now(), brief=False)]
        for task in tasks:
            if task.state == "RUNNING":
                since = describe.elapsed(task.started, None, now())
                lines.append(f"Running task: {task.name}"
                             + (f" — started {since} ago" if since else ""))
        return tuple(lines)

    def _formats(self) -> tuple[str, ...]:
        found: list[str] = []
        for logs in self._job_logs.values():
            found += [f for f in logs.replicas.formats if f not in found]
        return tuple(found[:3]) or ("vertex",)

    def _commands(self) -> tuple[str, ...]:
        query = (f'resource.type="aiplatform.googleapis.com/PipelineJob" AND '
                 f'resource.labels.pipeline_job_id="{self.ref.job_id}"')
        commands = [shlex.join(["gcloud", "logging", "read", query,
                                f"--project={self.ref.project}", "--limit=50"])]
        for name in self._job_logs:
            ref = job_ref(name)
            if ref is not None:
                commands.append(shlex.join(["gcloud", "ai", "custom-jobs", "describe",
                                            ref.job_id, f"--region={ref.region}",
                                            f"--project={ref.project}"]))
        return tuple(commands)

    def _cancel_command(self) -> str:
        # gcloud has no command for pipeline jobs; the client library does it. The region
        # and name are validated parts (names.JobRef), written as string literals (JSON's
        # double-quoted strings are Python's too; the shell quotes the whole in '…').
        endpoint = json.dumps(f"{self.ref.region}-aiplatform.googleapis.com")
        code = (f"from google.cloud import aiplatform_v1 as v; v.PipelineServiceClient("
                f"client_options={{\"api_endpoint\": {endpoint}}})"
                f".cancel_pipeline_job(name={json.dumps(self.ref.name)})")
        return shlex.join(["python", "-c", code])



class _Error:
    """A task's error text in the shape `failure` reads (a code and a message)."""

    def __init__(self, message: str) -> None:
        self.code = 0
        self.message = message


_CUSTOM_JOB_NAME = lazy_re.compile(r"projects/[^/\s]+/locations/[^/\s]+/customJobs/[^/\s\"]+")


def launched_jobs(metadata: Any) -> list[str]:
    """The custom jobs a Google Cloud Pipeline Components task started. Its container
    (`containerDetail.mainJob`) is only a launcher; the training job it creates is named
    in the task's `gcp_resources` output, which Vertex AI keeps in the execution's
    metadata as `output:gcp_resources`, a JSON string:
    `{"resources": [{"resourceType": "CustomJob", "resourceUri":
    "https://REGION-aiplatform.googleapis.com/v1/projects/…/customJobs/ID"}]}`
    (google-cloud-aiplatform reads it so, `model_evaluation/model_evaluation_job.py`)."""
    try:
        text = metadata.get("output:gcp_resources", "")
    except (TypeError, KeyError, AttributeError):
        return []
    if not isinstance(text, str) or not text or len(text) > 100_000:
        return []
    try:
        resources = json.loads(text).get("resources") or []
    except (ValueError, AttributeError):
        return []
    found = []
    for resource in resources if isinstance(resources, list) else []:
        if not isinstance(resource, dict) or resource.get("resourceType") != "CustomJob":
            continue
        match = _CUSTOM_JOB_NAME.search(str(resource.get("resourceUri") or ""))
        if match is not None:
            found.append(match[0])
    return found


def _planned_tasks(spec: Any) -> list[str]:
    """Top-level task names of the compiled pipeline (`root.dag.tasks`), in order."""
    try:
        tasks = spec["root"]["dag"]["tasks"]
        return [str(name) for name in tasks]
    except (KeyError, TypeError, ValueError):
        return []
