"""A loopback server speaking the Vertex AI v1 and Cloud Logging v2 REST shapes, for the
real `aiplatform_v1` and `google.cloud.logging` clients.

A scenario gives each job a list of frames (its JSON as the service would return it);
the n-th `get` of a job answers its n-th frame (the last one forever after), so the
job changes as babysit polls it. A frame may carry `logs` (entries that appear in
Cloud Logging when the frame is served) and `fail` (an HTTP status to answer instead,
with Google's JSON error body). Served: `GET …/customJobs/ID`, `GET …/pipelineJobs/ID`,
their list endpoints with a `display_name="…"` filter, and `POST /v2/entries:list`
with `resource.labels.job_id` / `pipeline_job_id`, `severity>=ERROR` and
`timestamp>=` terms, `orderBy` and paging (no `nextPageToken` on the last page).

Jobs are served as the service serialises its protos: each frame is read into the
installed library's `CustomJob` / `PipelineJob` message (so a field or enum name that
the API does not have fails the test) and written back out, with enums as numbers when
the client asks for them. The `aiplatform_v1` REST transports send
`$alt=json;enum-encoding=int` on every call (`rest_numeric_enums=True` in each
`transcode_request` of `services/job_service/transports/rest.py`, google-api-core's
`rest_helpers.flatten_query_params`), and the service then answers `"state": 3`,
`"acceleratorType": 15`. A frame may hold a number where an enum goes: a value newer
than the installed library knows, which the service sends all the same and the client
keeps as a plain `int` (proto-plus `marshal/rules/enums.py`).

Jobs are asked for by project ID or number alike, and answered with the project's number
in their `name`, as Vertex AI does (`projects/123456789012/locations/…`): `numbers`
maps the IDs of a scenario to their numbers.

A job's `error` comes a poll after its FAILED state: the first `get` that finds a frame
FAILED answers it without `error`, the next one with it (Vertex AI writes the state
first and the error about a minute later, as watched on real jobs and reported in
issue 25; the API promises nothing about the two arriving together).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

_STATUS = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
_SEVERITY = ["DEFAULT", "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "CRITICAL", "ALERT",
             "EMERGENCY"]


def ago(seconds: float) -> str:
    """An RFC 3339 time `seconds` before now (the service's times are real times)."""
    moment = datetime.now(timezone.utc) - timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def job_log(job_id: str, text: str, *, task: str = "workerpool0-0", seconds_ago: float = 0,
            severity: str = "INFO") -> dict[str, Any]:
    """A custom job replica's log entry, as Vertex AI writes it."""
    return {"logName": f"projects/PROJECT/logs/{task}",
            "resource": {"type": "ml_job",
                         "labels": {"job_id": job_id, "task_name": task,
                                    "project_id": "PROJECT"}},
            "timestamp": ago(seconds_ago), "severity": severity,
            "jsonPayload": {"message": text}}


def pipeline_log(pipeline_id: str, text: str, *, severity: str = "ERROR",
                 seconds_ago: float = 0) -> dict[str, Any]:
    return {"logName": "projects/PROJECT/logs/aiplatform.googleapis.com%2Fpipeline_job_events",
            "resource": {"type": "aiplatform.googleapis.com/PipelineJob",
                         "labels": {"pipeline_job_id": pipeline_id}},
            "timestamp": ago(seconds_ago), "severity": severity, "textPayload": text}


@dataclass
class FakeVertex:
    """Scenario state, shared with the handler threads."""

    jobs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # name → frames
    entries: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, str, str]] = field(default_factory=list)  # method, path, host
    gets: dict[str, int] = field(default_factory=dict)
    fail_next: list[int] = field(default_factory=list)  # statuses for the next requests
    lock: threading.Lock = field(default_factory=threading.Lock)
    failed_seen: set[str] = field(default_factory=set)  # jobs already served FAILED once
    numbers: dict[str, str] = field(default_factory=dict)  # project ID → project number
    _ids: int = 0

    def add_job(self, name: str, frames: list[dict[str, Any]]) -> None:
        self.jobs[name] = [{**frame, "name": self.numbered(name)} for frame in frames]

    def numbered(self, name: str) -> str:
        """A resource name as the service writes it: with the project's number."""
        parts = name.split("/")
        if len(parts) > 1 and parts[0] == "projects":
            parts[1] = self.numbers.get(parts[1], parts[1])
        return "/".join(parts)

    def by_id(self, name: str) -> str:
        """A resource name as the scenario keys it: with the project's ID."""
        ids = {number: project for project, number in self.numbers.items()}
        parts = name.split("/")
        if len(parts) > 1 and parts[0] == "projects":
            parts[1] = ids.get(parts[1], parts[1])
        return "/".join(parts)

    def frame(self, name: str) -> dict[str, Any] | None:
        frames = self.jobs.get(name)
        if frames is None:
            return None
        index = self.gets.get(name, 0)
        self.gets[name] = index + 1
        frame = frames[min(index, len(frames) - 1)]
        if index < len(frames):
            for entry in frame.get("logs", ()):
                self._ids += 1
                self.entries.append({**entry, "insertId": f"e{self._ids:08d}"})
        if str(frame.get("state", "")).endswith("FAILED") and name not in self.failed_seen:
            self.failed_seen.add(name)
            return {k: v for k, v in frame.items() if k != "error"}
        return frame

    def latest(self, name: str) -> dict[str, Any]:
        frames = self.jobs[name]
        return frames[min(max(self.gets.get(name, 0) - 1, 0), len(frames) - 1)]


def _public(frame: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in frame.items() if k not in ("logs", "fail")}


# Fields the service sends that google-cloud-aiplatform learned after the oldest version
# babysit allows (1.60): an older client drops them (`ignore_unknown_fields=True` in its
# REST transport), so the fake may too when the installed library does not know them.
_NEWER_FIELDS = ("taskUniqueName",)  # PipelineTaskDetail.task_unique_name


def served(collection: str, frame: dict[str, Any], numeric_enums: bool) -> dict[str, Any]:
    """A frame as the service writes it: through the API's own message type (unknown
    fields or enum names raise), enums as numbers when asked for."""
    from google.cloud.aiplatform_v1.types import CustomJob, PipelineJob
    from google.protobuf import json_format

    message = (CustomJob if collection == "customJobs" else PipelineJob).pb()()
    try:
        json_format.ParseDict(_public(frame), message)
    except json_format.ParseError as error:
        if not any(f'no field named "{name}"' in str(error) for name in _NEWER_FIELDS):
            raise
        message = (CustomJob if collection == "customJobs" else PipelineJob).pb()()
        json_format.ParseDict(_public(frame), message, ignore_unknown_fields=True)
    return json_format.MessageToDict(message, use_integers_for_enums=numeric_enums)


def _numeric(query: dict[str, list[str]]) -> bool:
    return any("enum-encoding=int" in value for value in query.get("$alt", []))


def _matches(entry: dict[str, Any], query: str) -> bool:
    labels = entry.get("resource", {}).get("labels", {})
    for key, value in re.findall(r'resource\.labels\.(\w+)="([^"]*)"', query):
        if labels.get(key) != value:
            return False
    kind = re.search(r'resource\.type="([^"]*)"', query)
    if kind and entry.get("resource", {}).get("type") != kind[1]:
        return False
    floor = re.search(r"severity>=(\w+)", query)
    if floor and _SEVERITY.index(entry.get("severity", "DEFAULT")) < _SEVERITY.index(floor[1]):
        return False
    since = re.search(r'timestamp>="([^"]+)"', query)
    return not (since and _time(entry["timestamp"]) < _time(since[1]))


def _time(text: str) -> datetime:
    text = text.replace("Z", "+00:00")
    if re.search(r"[+-]\d{4}$", text):
        text = text[:-2] + ":" + text[-2:]
    return datetime.fromisoformat(text)


def _handler(state: FakeVertex) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            self._send(status, {"error": {"code": status, "message": message,
                                          "status": _STATUS.get(status, "UNKNOWN")}})

        def _record(self, method: str) -> bool:
            with state.lock:
                state.requests.append((method, self.path, self.headers.get("Host", "")))
                if state.fail_next:
                    status = state.fail_next.pop(0)
                    self._error(status, "the fake service is unavailable")
                    return False
            return True

        def do_GET(self) -> None:
            if not self._record("GET"):
                return
            url = urlparse(self.path)
            path = unquote(url.path)
            match = re.fullmatch(r"/v1/(projects/[^/]+/locations/[^/]+)/(customJobs|pipelineJobs)"
                                 r"(?:/([^/:]+))?", path)
            if match is None:
                self._error(404, f"no such path {path}")
                return
            parent, collection, job = match.groups()
            parent = state.by_id(parent)
            query = parse_qs(url.query)
            with state.lock:
                if job is None:
                    self._list(parent, collection, query)
                    return
                frame = state.frame(f"{parent}/{collection}/{job}")
            if frame is None:
                self._error(404, f"{collection[:-1]} {path} not found")
            elif "fail" in frame:
                self._error(int(frame["fail"]), "the fake service failed this request")
            else:
                self._send(200, served(collection, frame, _numeric(query)))

        def _list(self, parent: str, collection: str, query: dict[str, list[str]]) -> None:
            wanted = re.search(r'display_name="([^"]*)"', query.get("filter", [""])[0])
            found = []
            for name in state.jobs:
                if not name.startswith(f"{parent}/{collection}/"):
                    continue
                job = state.latest(name)
                if wanted is None or job.get("displayName") == wanted[1]:
                    found.append(served(collection, job, _numeric(query)))
            self._send(200, {collection: found})

        def do_POST(self) -> None:
            if not self._record("POST"):
                return
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            if urlparse(self.path).path != "/v2/entries:list":
                self._error(404, "no such path")
                return
            query = body.get("filter", "")
            with state.lock:
                found = [e for e in state.entries if _matches(e, query)]
            found.sort(key=lambda e: (_time(e["timestamp"]), e["insertId"]),
                       reverse="desc" in body.get("orderBy", ""))
            start = int(body.get("pageToken") or 0)
            size = int(body.get("pageSize") or 50)
            page: dict[str, Any] = {"entries": found[start:start + size]}
            if start + size < len(found):
                page["nextPageToken"] = str(start + size)  # omitted on the last page
            self._send(200, page)

    return Handler


class VertexServer:
    def __init__(self, numbers: dict[str, str] | None = None) -> None:
        self.state = FakeVertex(numbers=dict(numbers or {}))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.state))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> VertexServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


