"""A Kubernetes Job, a Kubeflow PyTorchJob or TrainJob: its conditions from the API, its pods'
states and events, and every pod's log parsed like a local one.

Each poll is one GET of the job, one LIST of its pods (by the controller's label), one
LIST of events per object (the job and each pod) and one log read per started
container. The job's own conditions decide how the run ended; the pods say why (an OOM
kill, an exit code, a crash loop, an eviction), and their logs carry the steps, losses,
NaN, CUDA and NCCL errors that the same parsers and rules as for a local file find.
"""

from __future__ import annotations

import re
import shlex
import time
from typing import Any, ClassVar

from babysit import lazy_re
from babysit.model import AnomalyType, Record, Severity, TerminalState
from babysit.redact import clip
from babysit.snapshot import (
    LogSnapshot,
    ProcessSnapshot,
    ServiceAnomaly,
    ServiceSnapshot,
    Snapshot,
    TimeLimit,
)
from babysit.targets.base import TargetError, TargetUnavailable
from babysit.targets.k8s.api import KubeService, NotFound
from babysit.targets.k8s.conditions import STATE_OF, JobState
from babysit.targets.k8s.events import EventReader, judge, parse_events
from babysit.targets.k8s.logs import MAX_BYTES, ContainerLog, PodLogs, stamp_ns
from babysit.targets.k8s.names import JobReference, is_object_name
from babysit.targets.k8s.pods import PodStates, PodView, views

_WAITING = ("PENDING", "CREATED", "SUSPENDED", "RESTARTING")
_ERROR_LINE = lazy_re.compile(r"Error|Exception|Traceback|error:|FATAL|Killed", re.I)
class KubeJobTarget:
    target_type: ClassVar[str] = "k8s"

    def __init__(self, ref: JobReference, service: KubeService) -> None:
        self.ref = ref
        self.service = service
        self.namespace = service.namespace
        resource = f"{ref.api.plural} ({ref.api.group or 'batch'})"
        self._resource = resource
        # Read at once: a job that is not there, or that may not be read, ends the watch
        # before it starts (exit 4) with what to check.
        self._first: tuple[dict[str, Any], list[dict[str, Any]]] | None = \
            (self._get(), self._pods())
        self._states = PodStates()
        self._events = EventReader()
        self._logs = PodLogs()
        self._readers: dict[tuple[str, str], ContainerLog] = {}
        self._restarts: dict[tuple[str, str], int] = {}
        self._finished: set[tuple[str, str]] = set()
        self._denied: set[str] = set()  # "logs", "events": refused once, not asked again
        self._state: str | None = None
        self._raised = False
        self._causes: list[str] = []  # the pods' own reasons, for explaining a failure
        self._known_pods: dict[str, str] = {}  # UID → name
        self._last_job: dict[str, Any] | None = None  # as read at the last poll
        self._last_pods: list[PodView] = []
        self._gone = False  # the job was deleted: said once
        self._notices = [f"Kubernetes {ref.title} {ref.name} in namespace {self.namespace} "
                         f"({service.host})"]

    @property
    def label(self) -> str:
        return f"{self.ref.kind}/{self.ref.name} (namespace {self.namespace})"

    # --- reads -------------------------------------------------------------------------

    def _get(self) -> dict[str, Any]:
        what = f"{self.ref.title} {self.ref.name}"
        if self.ref.kind == "job":
            found = self.service.read(self.service.batch.read_namespaced_job, what,
                                      self._resource, self.ref.name, self.namespace)
        else:
            api = self.ref.api
            try:
                found = self.service.read(
                    self.service.custom.get_namespaced_custom_object, what, self._resource,
                    api.group, api.version, self.namespace, api.plural, self.ref.name)
            except NotFound as error:
                raise NotFound(f"{error} (and if no {api.title} exists anywhere, is "
                               f"{api.installed_by} installed?)") from error
        return dict(found)

    def _selector(self) -> str:
        return f"{self.ref.api.pod_label}={self.ref.name}"

    def _pods(self) -> list[dict[str, Any]]:
        found = self.service.read(self.service.core.list_namespaced_pod,
                                  f"the pods of {self.ref.title} {self.ref.name}",
                                  self._resource, self.namespace,
                                  label_selector=self._selector())
        return list(found.get("items") or [])

    def _later(self) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """A read after the first: the job was there, so a refusal now is a problem
        reaching it (a token expired, a role removed), reported as connectivity, not as
        the end of the run. None: the job is gone (a 404)."""
        try:
            return self._get(), self._pods()
        except NotFound:
            return None
        except TargetError as error:
            raise TargetUnavailable(str(error)) from error

    def _deleted(self, final: bool) -> Snapshot:
        """The job was deleted between two polls: most often by the TTL controller
        (`ttlSecondsAfterFinished`) right after it finished, before babysit read how.
        Its end is not known: the run is over, and its logs say what they say."""
        ttl = ((self._last_job or {}).get("spec") or {}).get("ttlSecondsAfterFinished")
        if ttl is None:  # a PyTorchJob keeps it in its runPolicy
            ttl = (((self._last_job or {}).get("spec") or {}).get("runPolicy") or {}) \
                .get("ttlSecondsAfterFinished")
        why = (f"its ttlSecondsAfterFinished ({ttl} s) deletes it that long after it ends"
               if ttl is not None else "someone or something deleted it")
        pods = "; ".join(f"{p.name} {p.phase}" for p in self._last_pods) or "none"
        last = self._state.split(";")[0] if self._state else "not read"
        detail = (f"Kubernetes {self.ref.title} {self.ref.name} was deleted before its end "
                  f"was read ({why}); last seen: {last}, pods: {pods}")
        records = self._logs.finish() if not self._gone else []
        notices = () if self._gone else (detail,)
        self._gone = True
        return Snapshot(
            log=LogSnapshot(
                records=tuple(records),
                formats=self._logs.formats or ("k8s",)),
            process=ProcessSnapshot(
                alive=False),
            service=ServiceSnapshot(
                run_state=None,
                run_state_detail=detail,
                run_state_source="Kubernetes",
                status=(detail,),
                headline=detail,
                commands=(self._kubectl("get", "events", "--field-selector",
                                        f"involvedObject.name={self.ref.name}"),)),
            notices=notices,
            stall_hint=f"the {self.ref.title} was deleted, so nothing more of it "
                       f"can be read; its end is not known",
        )

    def _secondary(self, part: str, read: Any, notices: list[str]) -> Any:
        """Events and logs: when they fail, the job's state still counts. A transient
        failure is noted; a refusal once, then that part is not asked for again."""
        if part in self._denied:
            return None
        try:
            return read()
        except TargetUnavailable as error:
            notices.append(f"{part} unreachable this poll ({error}); the job's state is "
                           f"still read")
        except NotFound:
            return None  # the pod went away between the list and this read
        except TargetError as error:
            if "HTTP 403" in str(error) or "HTTP 401" in str(error):
                self._denied.add(part)
                notices.append(f"cannot read the {part}, so what they say is not seen: "
                               f"{error}")
            # Anything else (a container still waiting to start: HTTP 400): next poll.
        return None

    # --- one poll ----------------------------------------------------------------------

    def poll(self, final: bool = False) -> Snapshot:
        read = self._first if self._first is not None else self._later()
        self._first = None
        if read is None:
            return self._deleted(final)
        job, raw_pods = read
        pods = views(raw_pods)
        self._last_job, self._last_pods = job, pods
        state = STATE_OF[self.ref.kind](job, pods)
        service_state = state.words + "".join(
            f"; {p.name} {p.phase} r{p.restarts}" for p in pods)
        changed = self._state is not None and service_state != self._state
        self._state = service_state
        notices, self._notices = self._notices, []
        first_look = not self._known_pods
        for pod in pods:
            if pod.identity not in self._known_pods:
                again = pod.name in self._known_pods.values()
                self._known_pods[pod.identity] = pod.name
                if again:
                    notices.append(f"pod {pod.name} was made again (a new pod, rank "
                                   f"{pod.rank}, {pod.phase}): its log is read from the start")
                elif not first_look:
                    notices.append(f"new pod {pod.name} (rank {pod.rank}, {pod.phase})")
        raised, said = self._states.look(pods)
        notices += said
        self._causes += [r.description for r in raised if r.type in (AnomalyType.OOM,
                                                                       AnomalyType.CRASH)]
        raised += self._read_events(pods, notices)
        records, lines = self._read_logs(pods, notices)
        run_state = state.run_state
        if final or run_state is not None:
            records += self._logs.finish()
        if run_state not in (None, TerminalState.SUCCEEDED) and not self._raised:
            self._raised = True
            raised.append(self._failure(state))
        newest = self._logs.newest_ns
        return Snapshot(
            log=LogSnapshot(
                records=tuple(records),
                new_lines=lines,
                formats=self._logs.formats or ("k8s",),
                quiet_for=max(0.0, time.time() - newest / 1e9) if newest else None),
            process=ProcessSnapshot(
                alive=run_state is None),
            service=ServiceSnapshot(
                run_state=run_state,
                run_state_detail=f"Kubernetes {self.ref.title} condition: {state.words}"
                + (f" — {state.message}" if state.message else ""),
                run_state_source="Kubernetes",
                status=self._status(job, state, pods),
                headline=self._headline(job, state, pods),
                raised=tuple(raised),
                service_state=service_state,
                activity=bool(lines) or changed or state.words in _WAITING,
                commands=self._commands(run_state, pods),
                cancel_command=self._kubectl("delete", self.ref.kind, self.ref.name)
                if run_state is None else None,
                time_limit=self._time_limit(job) if state.words == "RUNNING" else None),
            notices=tuple(notices),
            stall_hint=(f"Kubernetes still reports the {self.ref.title} running, but none of "
                        f"its pods wrote a log line in that time")
            if state.words == "RUNNING" else "",
        )

    def _time_limit(self, job: dict[str, Any]) -> TimeLimit | None:
        """activeDeadlineSeconds (a Job's spec, a PyTorchJob's runPolicy), counted by the
        controller from status.startTime."""
        spec = job.get("spec") or {}
        field = "spec.activeDeadlineSeconds"
        limit = spec.get("activeDeadlineSeconds")
        if limit is None and self.ref.kind != "job":
            field = "spec.runPolicy.activeDeadlineSeconds"
            limit = (spec.get("runPolicy") or {}).get("activeDeadlineSeconds")
        start = stamp_ns(str((job.get("status") or {}).get("startTime") or ""))
        if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0 or start is None:
            return None
        patch = ('{"spec":{"activeDeadlineSeconds":{seconds}}}' if field.count(".") == 1
                 else '{"spec":{"runPolicy":{"activeDeadlineSeconds":{seconds}}}}')
        return TimeLimit(float(limit), max(0.0, (time.time_ns() - start) / 1e9),
                         f"Kubernetes {field}",
                         (self._kubectl("patch", self.ref.kind, self.ref.name, "--type=merge",
                                        "-p", patch),))

    def _read_events(self, pods: list[PodView], notices: list[str]) -> list[ServiceAnomaly]:
        targets = [(self.ref.name, None)] + [(p.name, p.rank) for p in pods]
        raised: list[ServiceAnomaly] = []
        for name, rank in targets:
            body = self._secondary("events", lambda n=name: self.service.read(
                self.service.core.list_namespaced_event, f"the events of {n}",
                self._resource, self.namespace, field_selector=f"involvedObject.name={n}"),
                notices)
            if body is None:
                if "events" in self._denied:
                    break
                continue
            for event in self._events.fresh(parse_events(body)):
                anomaly, notice = judge(event, rank)
                if anomaly is not None:
                    raised.append(anomaly)
                    if anomaly.type is AnomalyType.CRASH:
                        self._causes.append(anomaly.description)
                if notice is not None:
                    notices.append(notice)
        return raised

    def _read_logs(self, pods: list[PodView], notices: list[str]) -> tuple[list[Record], int]:
        records: list[Record] = []
        count = 0
        for pod in pods:
            for status in pod.containers:
                name = str(status.get("name") or "")
                key = (pod.identity, name)
                state = status.get("state") or {}
                restarts = int(status.get("restartCount") or 0)
                started = "running" in state or "terminated" in state or restarts > 0
                if not started or key in self._finished or "logs" in self._denied:
                    continue
                reader = self._readers.setdefault(key, ContainerLog())
                reads = []
                if restarts > self._restarts.get(key, 0) and reader.last_ns is not None:
                    reads.append(True)  # what the previous instance wrote since last time
                self._restarts[key] = restarts
                reads.append(False)
                for previous in reads:
                    lines = self._read_container(pod, name, reader, previous, notices)
                    count += len(lines)
                    records += self._logs.feed(pod.identity, pod.name, pod.rank, lines)
                if "terminated" in state:
                    self._finished.add(key)  # its last words are read: done with it
        return records, count

    def _read_container(self, pod: PodView, container: str, reader: ContainerLog,
                        previous: bool, notices: list[str]) -> list[tuple[int, str]]:
        asked = time.time_ns()
        query = reader.query(asked)
        text = self._secondary("logs", lambda: self.service.text(
            self.service.core.read_namespaced_pod_log, f"the log of {pod.name}/{container}",
            self._resource, pod.name, self.namespace, container=container, timestamps=True,
            limit_bytes=MAX_BYTES, previous=previous, **query), notices)
        if text is None:
            return []
        lines, more = reader.take(text, capped=len(text.encode()) >= MAX_BYTES, now_ns=asked)
        if more:
            notices.append(f"{pod.name}/{container} wrote more than one poll takes; babysit "
                           f"reads the rest at the next polls")
        return lines

    # --- for people --------------------------------------------------------------------

    def _failure(self, state: JobState) -> ServiceAnomaly:
        what = f"{self.ref.title} {self.ref.name}"
        verb = "timed out" if state.run_state is TerminalState.TIMEOUT else "failed"
        text = f"{what} {verb}"
        if state.reason:
            text += f": {state.reason}"
        if state.message:
            text += f" ({clip(state.message, 300)})"
        if self._causes:
            text += f" — likely cause: {clip(self._causes[0], 300)}"
        last_error = next((line for line in reversed(self._logs.tail)
                           if _ERROR_LINE.search(line)), None)
        if last_error:
            text += f"; last error in the logs: {clip(last_error, 300)}"
        return ServiceAnomaly(AnomalyType.JOB_FAILURE, Severity.BLOCKER, text)

    def _times(self, job: dict[str, Any], state: JobState) -> str:
        status = job.get("status") or {}
        start = stamp_ns(str(status.get("startTime") or ""))
        end = stamp_ns(str(status.get("completionTime") or ""))
        from babysit.units import format_duration

        if start is None:
            return f"State: {state.words}"
        took = ((end or time.time_ns()) - start) / 1e9
        line = (f"State: {state.words} | {'Duration' if end else 'Elapsed'}: "
                f"{format_duration(max(0.0, took))}")
        limit = self._time_limit(job) if state.words == "RUNNING" else None
        if limit is not None:
            line += f" of {format_duration(limit.limit_seconds)} | Left: " \
                    f"{format_duration(limit.left_seconds)}"
        return line

    @staticmethod
    def _pods_line(pods: list[PodView]) -> str:
        if not pods:
            return "Pods: none yet"
        counts: dict[str, int] = {}
        for pod in pods:
            counts[pod.phase] = counts.get(pod.phase, 0) + 1
        text = ", ".join(f"{n} {phase}" for phase, n in counts.items())
        restarts = sum(p.restarts for p in pods)
        return f"Pods: {text}" + (f" | Restarts: {restarts}" if restarts else "")

    def _status(self, job: dict[str, Any], state: JobState,
                pods: list[PodView]) -> tuple[str, ...]:
        lines = [f"{self.ref.title}: {self.ref.name} (namespace {self.namespace})",
                 f"{self._times(job, state)} | {self._pods_line(pods)}"]
        if state.run_state is not None and self._logs.last_line:
            lines.append(f"Final log: {clip(self._logs.last_line, 300)}")
        return tuple(lines)

    def _headline(self, job: dict[str, Any], state: JobState, pods: list[PodView]) -> str:
        line = f"State: {state.words} | {self._pods_line(pods)}"
        limit = self._time_limit(job) if state.words == "RUNNING" else None
        if limit is not None:
            from babysit.units import format_duration

            line += f" | Left: {format_duration(limit.left_seconds)}"
        if state.run_state is not None and self._logs.last_line:
            line += f" | Final log: {clip(self._logs.last_line, 300)}"
        return line

    def _kubectl(self, *args: str) -> str:
        """A kubectl command against the cluster and namespace babysit read: the
        kubeconfig and context are named (an approved delete must not run against
        whatever context is current by then); every part is quoted."""
        where = [f"--kubeconfig={self.service.kubeconfig}"] if self.service.kubeconfig else []
        if self.service.context:
            where.append(f"--context={self.service.context}")
        return shlex.join(["kubectl", *where, *args, "-n", self.namespace])

    def _commands(self, run_state: TerminalState | None,
                  pods: list[PodView]) -> tuple[str, ...]:
        commands = [self._kubectl("describe", self.ref.kind, self.ref.name)]
        first = pods[0].name if pods else None
        if first is not None and is_object_name(first):  # the API's text: checked
            commands.append(self._kubectl("logs", first, "--timestamps")
                            + (" -f" if run_state is None else ""))
        commands.append(self._kubectl("get", "events", "--field-selector",
                                      f"involvedObject.name={self.ref.name}"))
        return tuple(commands)

    def close(self) -> None:
        self.service.close()


def open_job(ref: JobReference, service: KubeService) -> KubeJobTarget:
    return KubeJobTarget(ref, service)
