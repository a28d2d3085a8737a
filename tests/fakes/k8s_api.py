"""A loopback server speaking the Kubernetes API's JSON, for the official `kubernetes`
client, with jobs that change as they are polled.

Shapes follow the API reference:
- Job (batch/v1), its status and conditions (Complete / Failed, reasons
  BackoffLimitExceeded and DeadlineExceeded):
  https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/job-v1/ and
  https://kubernetes.io/docs/concepts/workloads/controllers/job/#job-termination-and-cleanup
- Pod (core/v1), containerStatuses with state / lastState / restartCount:
  https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/
- a container's log (text/plain; sinceSeconds, tailLines, limitBytes, timestamps,
  previous): https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#read-log-read-log-of-the-specified-pod
- Event (core/v1, listed with a fieldSelector on involvedObject.name):
  https://kubernetes.io/docs/reference/kubernetes-api/cluster-resources/event-v1/
- the Status body of an error: https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/status/
- PyTorchJob (kubeflow.org/v1): conditions Created / Running / Restarting / Succeeded /
  Failed and the `training.kubeflow.org/{job-name,replica-type,replica-index}` pod labels:
  https://www.kubeflow.org/docs/components/trainer/legacy-v1/user-guides/pytorch/ and
  https://github.com/kubeflow/training-operator/blob/v1.8.1/pkg/apis/kubeflow.org/v1/common_types.go
- TrainJob (trainer.kubeflow.org/v1alpha1, Kubeflow Trainer v2): conditions Complete /
  Failed (reason DeadlineExceeded, message "TrainJob exceeded its active deadline") /
  Suspended, `spec.activeDeadlineSeconds` (kubeflow/trainer
  pkg/apis/trainer/v1alpha1/trainjob_types.go, pkg/constants/constants.go); it runs as a
  JobSet of the same name whose pods carry `jobset.sigs.k8s.io/jobset-name`,
  `jobset.sigs.k8s.io/replicatedjob-name` (`node`, `dataset-initializer`, …) and the
  Indexed Job's `batch.kubernetes.io/job-completion-index`

A scenario gives a job a list of frames; the n-th GET of the job answers its n-th frame
(the last one forever after). A frame holds the job object (`job`), the pods that exist
while it is current (`pods`), log lines the containers write when it is served (`logs`:
(pod, container, text) triples; `logs_before`: written by a container's instance before
the restart the frame shows), events that happen then (`events`) and, instead of all
that, an HTTP status to answer (`fail`). As the kubelet does, a container whose
restartCount goes up keeps its earlier output as the `previous=true` log.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

_REASONS = {401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 429: "TooManyRequests",
            500: "InternalError", 503: "ServiceUnavailable"}


def rfc3339(ns: int) -> str:
    """The kubelet's RFC3339Nano: nine fraction digits, trailing zeros trimmed."""
    seconds, fraction = divmod(ns, 1_000_000_000)
    text = datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    digits = f"{fraction:09d}".rstrip("0")
    return f"{text}.{digits}Z" if digits else f"{text}Z"


def ago(seconds: float) -> str:
    return rfc3339(time.time_ns() - int(seconds * 1e9)).split(".")[0].rstrip("Z") + "Z"


def condition(kind: str, reason: str = "", message: str = "", *,
              seconds_ago: float = 0) -> dict[str, Any]:
    return {"type": kind, "status": "True", "reason": reason, "message": message,
            "lastProbeTime": ago(seconds_ago), "lastTransitionTime": ago(seconds_ago)}


def operator_failed(job_name: str, *, deadline: bool, kind: str = "PyTorchJob",
                    seconds_ago: float = 0) -> dict[str, Any]:
    """The Failed condition the Kubeflow training-operator (v1.7+) writes when a job runs
    past `runPolicy.activeDeadlineSeconds` or its backoff limit, as
    `pkg/controller.v1/common/job.go` (`ReconcileJobs`) builds it: reason
    `commonutil.NewReason(jobKind, commonutil.JobFailedReason)`, i.e. `<Kind>Failed`
    (`pkg/util/status.go`), and the message `Job <name> has failed because it was active
    longer than specified deadline` / `... it has reached the specified backoff limit`.
    Nothing in it says "DeadlineExceeded": only the message tells a timeout apart."""
    why = ("it was active longer than specified deadline" if deadline
           else "it has reached the specified backoff limit")
    return condition("Failed", f"{kind}Failed", f"Job {job_name} has failed because {why}",
                     seconds_ago=seconds_ago)


def job(name: str, *, active: int = 1, succeeded: int = 0, failed: int = 0,
        conditions: tuple[dict[str, Any], ...] = (), started: float | None = 600,
        completed: float | None = None, backoff_limit: int = 6,
        ttl: int | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"active": active, "succeeded": succeeded, "failed": failed,
                              "ready": active, "conditions": list(conditions)}
    if started is not None:
        status["startTime"] = ago(started)
    if completed is not None:
        status["completionTime"] = ago(completed)
    return {"kind": "Job", "apiVersion": "batch/v1",
            "metadata": {"name": name, "namespace": "research", "uid": f"uid-{name}",
                         "labels": {"job-name": name}, "creationTimestamp": ago(700)},
            "spec": {"parallelism": 1, "completions": 1, "backoffLimit": backoff_limit,
                     **({"ttlSecondsAfterFinished": ttl} if ttl is not None else {}),
                     "template": {"spec": {"restartPolicy": "Never", "containers": [
                         {"name": "trainer", "image": "ghcr.io/acme/trainer:1"}]}}},
            "status": {k: v for k, v in status.items() if v or k == "conditions"}}


def pytorchjob(name: str, *, conditions: tuple[dict[str, Any], ...] = (),
               workers: int = 2, started: float | None = 600,
               deadline: int | None = None, master: bool = True) -> dict[str, Any]:
    """master=False: workers only (torchrun / elastic), worker 0 is rank 0."""
    status: dict[str, Any] = {"conditions": list(conditions), "replicaStatuses": {
        **({"Master": {"active": 1}} if master else {}), "Worker": {"active": workers}}}
    if started is not None:
        status["startTime"] = ago(started)
    replica = {"restartPolicy": "OnFailure", "template": {"spec": {"containers": [
        {"name": "pytorch", "image": "ghcr.io/acme/trainer:1"}]}}}
    return {"kind": "PyTorchJob", "apiVersion": "kubeflow.org/v1",
            "metadata": {"name": name, "namespace": "research", "uid": f"uid-{name}",
                         "creationTimestamp": ago(700)},
            "spec": {"pytorchReplicaSpecs": {
                         **({"Master": {**replica, "replicas": 1}} if master else {}),
                         "Worker": {**replica, "replicas": workers}},
                     "runPolicy": {"backoffLimit": 3, **(
                         {"activeDeadlineSeconds": deadline} if deadline else {})}},
            "status": status}


def trainjob(name: str, *, conditions: tuple[dict[str, Any], ...] = (), nodes: int = 2,
             started: float | None = 600, deadline: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"runtimeRef": {"name": "torch-distributed"},
                            "trainer": {"numNodes": nodes,
                                        "image": "ghcr.io/acme/trainer:1"}}
    if deadline:
        spec["activeDeadlineSeconds"] = deadline
    status: dict[str, Any] = {"conditions": list(conditions)}
    if started is not None:
        status["startTime"] = ago(started)  # what babysit counts a deadline from
    return {"kind": "TrainJob", "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "metadata": {"name": name, "namespace": "research", "uid": f"uid-{name}",
                         "creationTimestamp": ago(700)},
            "spec": spec, "status": status}


def node_pod(job_name: str, replicated: str, index: int, phase: str,
             containers: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    """A pod of a TrainJob's JobSet: `<jobset>-<replicatedjob>-<job index>-<completion
    index>-<suffix>` (JobSet names its Jobs `<jobset>-<replicatedjob>-<job index>`)."""
    labels = {"jobset.sigs.k8s.io/jobset-name": job_name,
              "jobset.sigs.k8s.io/replicatedjob-name": replicated,
              "jobset.sigs.k8s.io/job-index": "0",
              "batch.kubernetes.io/job-completion-index": str(index),
              "batch.kubernetes.io/job-name": f"{job_name}-{replicated}-0"}
    return pod(f"{job_name}-{replicated}-0-{index}-x{index}k", phase, containers,
               labels=labels, **kw)


def running(started: float = 500) -> dict[str, Any]:
    return {"running": {"startedAt": ago(started)}}


def waiting(reason: str, message: str = "") -> dict[str, Any]:
    return {"waiting": {"reason": reason, "message": message}}


def terminated(code: int, reason: str = "Error", *, finished: float = 1) -> dict[str, Any]:
    return {"terminated": {"exitCode": code, "reason": reason, "startedAt": ago(finished + 60),
                           "finishedAt": ago(finished)}}


def container(name: str, state: dict[str, Any], *, restarts: int = 0,
              last: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "state": state, "lastState": last or {}, "ready": "running" in state,
            "restartCount": restarts, "image": "ghcr.io/acme/trainer:1",
            "imageID": "ghcr.io/acme/trainer@sha256:0", "started": "running" in state}


def pod(name: str, phase: str, containers: list[dict[str, Any]], *,
        labels: dict[str, str] | None = None, memory: str = "64Gi",
        reason: str = "", attempt: int = 0) -> dict[str, Any]:
    """attempt: which pod of that name this is. Controllers name pods for their place
    (the training-operator's `<job>-<type>-<index>`, a StatefulSet's `<set>-<ordinal>`),
    so a failed or evicted pod is deleted and a new one made under the same name; only
    its `metadata.uid` is new (and its log starts empty)."""
    spec_containers = [{"name": c["name"], "image": "ghcr.io/acme/trainer:1",
                        "resources": {"limits": {"memory": memory, "nvidia.com/gpu": "8"}}}
                       for c in containers]
    status: dict[str, Any] = {"phase": phase, "containerStatuses": containers,
                              "startTime": ago(550)}
    if reason:
        status["reason"] = reason
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": name, "namespace": "research",
                         "uid": f"uid-{name}" + (f"-{attempt}" if attempt else ""),
                         "labels": labels or {}, "creationTimestamp": ago(600)},
            "spec": {"containers": spec_containers, "nodeName": "gpu-node-1"},
            "status": status}


def job_pod(job_name: str, name: str, phase: str, containers: list[dict[str, Any]],
            **kw: Any) -> dict[str, Any]:
    return pod(name, phase, containers, labels={
        "job-name": job_name, "batch.kubernetes.io/job-name": job_name,
        "controller-uid": f"uid-{job_name}"}, **kw)


def replica_pod(job_name: str, replica: str, index: int, phase: str,
                containers: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    labels = {"training.kubeflow.org/job-name": job_name,
              "training.kubeflow.org/operator-name": "pytorchjob-controller",
              "training.kubeflow.org/replica-type": replica.lower(),
              "training.kubeflow.org/replica-index": str(index)}
    if replica.lower() == "master":
        labels["training.kubeflow.org/job-role"] = "master"
    return pod(f"{job_name}-{replica.lower()}-{index}", phase, containers, labels=labels, **kw)


def event(kind: str, name: str, reason: str, message: str, *, type_: str = "Warning",
          count: int = 1) -> dict[str, Any]:
    return {"kind": "Event", "apiVersion": "v1",
            "metadata": {"name": f"{name}.{abs(hash((reason, message))):x}",
                         "namespace": "research", "uid": f"ev-{name}-{reason}"},
            "involvedObject": {"kind": kind, "name": name, "namespace": "research",
                               "uid": f"uid-{name}", "apiVersion": "v1"},
            "reason": reason, "message": message, "type": type_, "count": count,
            "firstTimestamp": ago(1), "lastTimestamp": ago(0),
            "source": {"component": "default-scheduler" if reason == "FailedScheduling"
                       else "kubelet"}}


@dataclass
class FakeKube:
    """Scenario state, shared with the handler threads."""

    jobs: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    pods: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    # (pod UID, container) → lines: a log belongs to one pod, not to a name
    logs: dict[tuple[str, str], list[tuple[int, str]]] = field(default_factory=dict)
    previous: dict[tuple[str, str], list[tuple[int, str]]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)  # path, Authorization
    gets: dict[tuple[str, str], int] = field(default_factory=dict)
    fail_next: list[int] = field(default_factory=list)  # statuses for the next requests
    node_ahead_ns: int = 0  # the node's clock against the test's (logs are stamped by it)
    deleted: set[tuple[str, str]] = field(default_factory=set)  # jobs the TTL removed
    lock: threading.Lock = field(default_factory=threading.Lock)
    _last_ns: int = 0

    def add(self, collection: str, name: str, frames: list[dict[str, Any]]) -> None:
        """collection: "jobs", "pytorchjobs" or "trainjobs"."""
        self.jobs[(collection, name)] = frames

    def _stamp(self) -> int:
        self._last_ns = max(time.time_ns() + self.node_ahead_ns, self._last_ns + 1000)
        return self._last_ns

    def frame(self, collection: str, name: str) -> dict[str, Any] | None:
        frames = self.jobs.get((collection, name))
        if frames is None or (collection, name) in self.deleted:
            return None
        index = self.gets.get((collection, name), 0)
        self.gets[(collection, name)] = index + 1
        frame = frames[min(index, len(frames) - 1)]
        if index < len(frames) and "fail" not in frame:
            self._enter(frame)
        if "job" in frame and _expired(frame["job"]):
            # The TTL-after-finished controller deletes the finished Job, and the garbage
            # collector its pods with it (pkg/controller/ttlafterfinished; the Job API
            # reference, `ttlSecondsAfterFinished`).
            self.deleted.add((collection, name))
            self.pods = {}
            return None
        return frame

    def _enter(self, frame: dict[str, Any]) -> None:
        # Written by the instance that then ended (before the restart this frame shows).
        for pod_name, container_name, text in frame.get("logs_before", ()):
            uid = self.pods[pod_name]["metadata"]["uid"]
            lines = self.logs.setdefault((uid, container_name), [])
            lines.extend((self._stamp(), line) for line in text.split("\n"))
        for new in frame.get("pods", ()):
            name, uid = new["metadata"]["name"], new["metadata"]["uid"]
            old = self.pods.get(name)
            if old is not None and old["metadata"]["uid"] != uid:
                old = None  # deleted and made again: a new pod, nothing carried over
            for status in new["status"].get("containerStatuses", ()):
                key = (uid, status["name"])
                before = next((c["restartCount"] for c in (old or {}).get("status", {})
                               .get("containerStatuses", ()) if c["name"] == status["name"]), 0)
                if status["restartCount"] > before:
                    self.previous[key] = self.logs.pop(key, [])
        self.pods = {p["metadata"]["name"]: p for p in frame.get("pods", ())}
        for pod_name, container_name, text in frame.get("logs", ()):
            uid = self.pods[pod_name]["metadata"]["uid"]
            lines = self.logs.setdefault((uid, container_name), [])
            lines.extend((self._stamp(), line) for line in text.split("\n"))
        self.events.extend(frame.get("events", ()))


def _expired(job: dict[str, Any]) -> bool:
    """A finished Job whose ttlSecondsAfterFinished has passed since it completed."""
    spec = job.get("spec") or {}
    ttl = spec.get("ttlSecondsAfterFinished", (spec.get("runPolicy") or {})
                   .get("ttlSecondsAfterFinished"))
    finished = next((c.get("lastTransitionTime") for c in
                     (job.get("status") or {}).get("conditions") or []
                     if c.get("type") in ("Complete", "Failed", "Succeeded")
                     and c.get("status") == "True"), None)
    if ttl is None or finished is None:
        return False
    moment = datetime.fromisoformat(str(finished).replace("Z", "+00:00"))
    return moment.timestamp() + int(ttl) <= time.time()


def flag(query: dict[str, str], name: str) -> bool:
    """A boolean query parameter as the API server reads it (apimachinery
    `pkg/runtime/conversion.go`, `Convert_Slice_string_To_bool`): absent, "0" or "false"
    in any case is false; anything else, "True" and "" included, is true. The Python
    client sends `True` / `False`."""
    if name not in query:
        return False
    value = query[name]
    return not (value == "0" or value.lower() == "false")


def kubelet_log(lines: list[tuple[int, str]], query: dict[str, str], node_now_ns: int) -> bytes:
    """A container's log as the kubelet serves it (kubernetes
    `pkg/kubelet/kuberuntime/logs/logs.go`: `NewLogOptions` sets `since` to the kubelet's
    `time.Now()` less `sinceSeconds`, so the node's clock counts), then `tailLines`,
    each line prefixed with its RFC3339Nano time when `timestamps` is set, and the
    answer cut at `limitBytes` (mid-line)."""
    if "sinceSeconds" in query:
        floor = node_now_ns - int(query["sinceSeconds"]) * 1_000_000_000
        lines = [(t, line) for t, line in lines if t >= floor]
    if "tailLines" in query:
        lines = lines[-int(query["tailLines"]):] if int(query["tailLines"]) else []
    stamped = flag(query, "timestamps")
    text = "".join(f"{rfc3339(t)} {line}\n" if stamped else f"{line}\n"
                   for t, line in lines).encode()
    if "limitBytes" in query:
        text = text[:int(query["limitBytes"])]
    return text


def _status_body(code: int, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": _REASONS.get(code, "Unknown"), "code": code}


def _handler(state: FakeKube) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, body: dict[str, Any]) -> None:
            self._send(status, json.dumps(body).encode(), "application/json")

        def _error(self, status: int, message: str) -> None:
            self._json(status, _status_body(status, message))

        def do_GET(self) -> None:
            url = urlparse(self.path)
            path = unquote(url.path)
            query = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
            with state.lock:
                state.requests.append((self.path, self.headers.get("Authorization", "")))
                if state.fail_next:
                    self._error(state.fail_next.pop(0), "the fake API server is unavailable")
                    return
                self._route(path, query)

        def _route(self, path: str, query: dict[str, str]) -> None:
            found = re.fullmatch(r"/apis/(?:batch/v1|kubeflow\.org/v1|trainer\.kubeflow\.org/"
                                 r"v1alpha1)/namespaces/([^/]+)/(jobs|pytorchjobs|trainjobs)/"
                                 r"([^/]+)", path)
            if found:
                _, collection, name = found.groups()
                frame = state.frame(collection, name)
                if frame is None:
                    self._error(404, f'{collection}.batch "{name}" not found')
                elif "fail" in frame:
                    code = int(frame["fail"])
                    self._error(code, f'{collection} "{name}" is forbidden: User '
                                      f'"system:serviceaccount:research:babysit" cannot get '
                                      f'resource "{collection}" in the namespace "research"'
                                if code == 403 else "the fake API server failed")
                else:
                    self._json(200, frame["job"])
                return
            if re.fullmatch(r"/api/v1/namespaces/[^/]+/pods", path):
                key, _, value = query.get("labelSelector", "").partition("=")
                items = [p for p in state.pods.values()
                         if p["metadata"]["labels"].get(key) == value]
                self._json(200, {"kind": "PodList", "apiVersion": "v1",
                                 "metadata": {"resourceVersion": "1"}, "items": items})
                return
            found = re.fullmatch(r"/api/v1/namespaces/[^/]+/pods/([^/]+)/log", path)
            if found:
                self._log(found[1], query)
                return
            if re.fullmatch(r"/api/v1/namespaces/[^/]+/events", path):
                terms = dict(term.split("=", 1) for term in
                             query.get("fieldSelector", "").split(",") if "=" in term)
                items = [e for e in state.events
                         if all(str(e["involvedObject"].get(k.split(".", 1)[1])) == v
                                for k, v in terms.items() if k.startswith("involvedObject."))]
                self._json(200, {"kind": "EventList", "apiVersion": "v1",
                                 "metadata": {"resourceVersion": "1"}, "items": items})
                return
            self._error(404, f"the server could not find the requested resource ({path})")

        def _log(self, pod_name: str, query: dict[str, str]) -> None:
            if pod_name not in state.pods:
                self._error(404, f'pods "{pod_name}" not found')
                return
            container_name = query.get("container", "")
            store = state.previous if flag(query, "previous") else state.logs
            uid = state.pods[pod_name]["metadata"]["uid"]
            lines = list(store.get((uid, container_name), []))
            text = kubelet_log(lines, query, time.time_ns() + state.node_ahead_ns)
            self._send(200, text, "text/plain")

    return Handler


class KubeServer:
    def __init__(self) -> None:
        self.state = FakeKube()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.state))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def kubeconfig(self, path: Any, namespace: str = "research") -> str:
        """A kubeconfig (JSON is YAML) that points the real client here with a token."""
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": "fake",
            "clusters": [{"name": "fake", "cluster": {"server": self.endpoint}}],
            "users": [{"name": "babysit", "user": {"token": "fake-token"}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "babysit",
                                                      "namespace": namespace}}],
        }
        path.write_text(json.dumps(config), encoding="utf-8")
        return str(path)

    def __enter__(self) -> KubeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
