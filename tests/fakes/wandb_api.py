"""A W&B server on loopback that answers what `wandb.Api` 0.31 really sends.

The shapes come from recording the real client (see wandb_api_requests.md): every call goes
through wandb-core as a GraphQL POST to /graphql with HTTP Basic auth `api:<key>`; wandb-core
also posts its own telemetry to /sdk/otel/v1/{metrics,logs}, answered here with 200 and
counted apart.

Tests hold a `FakeRun` and change it while a client polls: `log()` rows, `log_system()`
system samples, set `state` ("running", "finished", "crashed", "failed", "killed"), edit
`config` / `summary`. The server counts requests per operation and the bytes it sends, for
benchmarks of requests per poll.

    with FakeWandbServer() as server:
        run = server.add_run("team/proj/abc123", config={"lr": 0.1})
        run.log(loss=2.0)
        api = wandb.Api(api_key=server.api_key, overrides={"base_url": server.base_url})
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DUMMY_API_KEY = "babysit" + "0" * 33  # 40 characters, like a real key; never valid anywhere


@dataclass
class FakeRun:
    """One run's server-side state. Mutate it from the test; the server reads it under lock."""

    entity: str
    project: str
    run_id: str
    display_name: str = "fake-run"
    state: str = "running"
    config: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)  # each row has "_step"
    system: list[dict[str, Any]] = field(default_factory=list)  # "system.gpu.0.gpu", …
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def log(self, step: int | None = None, **values: Any) -> dict[str, Any]:
        """Append a history row (step defaults to the next one) and update the summary."""
        with self.lock:
            if step is None:
                step = self.history[-1]["_step"] + 1 if self.history else 0
            row = {"_step": step, "_runtime": float(step), "_timestamp": 1.8e9 + step, **values}
            self.history.append(row)
            self.summary.update(row)
            return row

    def log_system(self, **values: float) -> None:
        with self.lock:
            runtime = 10.0 * len(self.system)
            self.system.append({**values, "_runtime": runtime, "_timestamp": 1.8e9 + runtime})

    @property
    def last_step(self) -> int:
        return self.history[-1]["_step"] if self.history else -1


@dataclass(frozen=True)
class SeenRequest:
    """One GraphQL request as the server saw it, and what its answer cost."""

    operation: str
    variables: dict[str, Any]
    response_bytes: int


_OPERATION = re.compile(r"\b(?:query|mutation)\s+(\w+)")


class FakeWandbServer:
    """A threaded HTTP server on 127.0.0.1 answering the public API's GraphQL queries."""

    def __init__(self, *, api_key: str = DUMMY_API_KEY, username: str = "babysit-tester",
                 gzip_responses: bool = False) -> None:
        self.api_key = api_key
        self.username = username
        self.gzip_responses = gzip_responses
        self.runs: dict[str, FakeRun] = {}
        self.seen: list[SeenRequest] = []
        self.telemetry_requests = 0
        self.connections = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeWandbServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def add_run(self, path: str, **fields: Any) -> FakeRun:
        entity, project, run_id = path.split("/")
        run = FakeRun(entity, project, run_id, **fields)
        self.runs[path] = run
        return run

    # -- counters ---------------------------------------------------------------------------

    def operations(self) -> Counter[str]:
        """How many requests of each GraphQL operation so far."""
        with self._lock:
            return Counter(seen.operation for seen in self.seen)

    def response_bytes(self) -> int:
        with self._lock:
            return sum(seen.response_bytes for seen in self.seen)

    def reset_counts(self) -> None:
        with self._lock:
            self.seen.clear()
            self.telemetry_requests = 0
            self.connections = 0

    # -- GraphQL ----------------------------------------------------------------------------

    def answer(self, query: str, variables: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The operation's name and the GraphQL response body for it."""
        match = _OPERATION.search(query)
        operation = match.group(1) if match else "?"
        if operation in ("Viewer", "GetDefaultEntity"):
            return operation, {"data": {"viewer": {
                "id": "VXNlcjox", "entity": self.username, "username": self.username,
                "email": f"{self.username}@example.invalid", "flags": "{}",
                "teams": {"edges": []}}}}
        path = "/".join((variables.get("entity", ""), variables.get("project", ""),
                         variables.get("name") or variables.get("runName")
                         or variables.get("run") or ""))
        run = self.runs.get(path)
        if run is None:
            return operation, {"data": {"project": {"run": None}}}
        with run.lock:
            node = _run_node(operation, query, variables, run)
        if node is None:
            return operation, {"errors": [
                {"message": f"fake W&B server: operation {operation} is not supported"}]}
        return operation, {"data": {"project": {"run": node}}}

    def record(self, operation: str, variables: dict[str, Any], size: int) -> None:
        with self._lock:
            self.seen.append(SeenRequest(operation, variables, size))


def _run_node(operation: str, query: str, variables: dict[str, Any],
              run: FakeRun) -> dict[str, Any] | None:
    if operation == "Run":
        return _run_fields(run)
    if operation == "RunState":
        return {"state": run.state}
    if operation == "RunHistoryKeys":
        return {"historyKeys": _history_keys(run)}
    if operation == "RunParquetHistory":
        # Nothing exported to parquet yet: every row is "live", listed by the liveKeys asked.
        keys = variables.get("liveKeys") or ["_step"]
        live = [{k: row[k] for k in keys if k in row} for row in run.history]
        return {"parquetHistory": {"parquetUrls": [], "liveData": live}}
    if operation == "HistoryPage":
        low, high = int(variables["minStep"]), int(variables["maxStep"])
        rows = sorted((r for r in run.history if low <= r["_step"] < high),
                      key=lambda r: r["_step"])[: int(variables["pageSize"])]
        return {"history": [_json_line(row) for row in rows]}
    if operation == "RunFullHistory":
        stream = "events" if re.search(r"\bevents\s*\(", query) else "history"
        rows = run.system if stream == "events" else run.history
        samples = int(variables.get("samples") or 500)
        return {stream: [_json_line(row) for row in _sample(rows, samples)]}
    if operation == "RunSampledHistory":
        out = []
        for spec_text in variables.get("specs", []):
            spec = json.loads(spec_text)
            keys = spec.get("keys", [])
            rows = [{k: r[k] for k in keys if k in r} for r in run.history
                    if all(k in r for k in keys)]
            out.append(_sample(rows, int(spec.get("samples", 500))))
        return {"sampledHistory": out}
    return None


def _run_fields(run: FakeRun) -> dict[str, Any]:
    """The RunFragment the client asks for (config values wrapped as the server stores them)."""
    return {
        "id": base64.b64encode(f"Run:{run.run_id}".encode()).decode(),
        "projectId": 1,
        "name": run.run_id,
        "displayName": run.display_name,
        "state": run.state,
        "tags": [], "sweepName": None, "group": None, "jobType": None, "commit": None,
        "readOnly": False, "description": None, "notes": None,
        "createdAt": "2026-11-30T00:00:00", "heartbeatAt": "2026-11-30T00:05:00",
        "config": _json_line({k: {"value": v, "desc": None} for k, v in run.config.items()}),
        "summaryMetrics": _json_line(run.summary),
        "systemMetrics": _json_line(run.system[-1] if run.system else {}),
        "historyLineCount": len(run.history),
        "historyKeys": _history_keys(run),
        "user": {"name": "Babysit Tester", "username": "babysit-tester"},
    }


def _history_keys(run: FakeRun) -> dict[str, Any]:
    counts: Counter[str] = Counter(k for row in run.history for k in row)
    return {"lastStep": run.last_step,
            "keys": {k: {"typeCounts": [{"type": "number", "count": n}]}
                     for k, n in counts.items()}}


def _sample(rows: list[dict[str, Any]], samples: int) -> list[dict[str, Any]]:
    """At most `samples` rows, evenly spread, first and last kept (as W&B's sampling does)."""
    if len(rows) <= samples:
        return list(rows)
    if samples < 2:
        return rows[-samples:] if samples == 1 else []
    stride = (len(rows) - 1) / (samples - 1)
    return [rows[round(i * stride)] for i in range(samples)]


def _json_line(value: Any) -> str:
    # Python's NaN / Infinity literals: wandb-core accepts them and the client gets floats.
    return json.dumps(value)


def _handler_for(server: FakeWandbServer) -> type[BaseHTTPRequestHandler]:
    expected_auth = "Basic " + base64.b64encode(f"api:{server.api_key}".encode()).decode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as wandb-core's Go client expects

        def setup(self) -> None:
            super().setup()
            with server._lock:
                server.connections += 1

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path.startswith("/sdk/otel/"):
                with server._lock:
                    server.telemetry_requests += 1
                self._send(200, b"", "application/x-protobuf")
                return
            if self.path.rstrip("/") != "/graphql":
                self._send(404, b'{"errors":[{"message":"not found"}]}')
                return
            if self.headers.get("Authorization") != expected_auth:
                self._send(401, b'{"errors":[{"message":"user is not logged in"}]}')
                return
            request = json.loads(body or b"{}")
            operation, answer = server.answer(request.get("query", ""),
                                              request.get("variables") or {})
            payload = json.dumps(answer).encode()
            # Counted before the answer goes out: a client that has its answer must find
            # the request in the counters (counting after sending raced with the tests).
            self._send(200, payload, record=(operation, request.get("variables") or {}))

        def _send(self, status: int, payload: bytes, content_type: str = "application/json",
                  record: tuple[str, dict[str, Any]] | None = None) -> int:
            encoding = None
            if server.gzip_responses and "gzip" in self.headers.get("Accept-Encoding", ""):
                payload, encoding = gzip.compress(payload), "gzip"
            if record is not None:
                server.record(record[0], record[1], len(payload))
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            if encoding:
                self.send_header("Content-Encoding", encoding)
            self.end_headers()
            self.wfile.write(payload)
            return len(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: tests read the counters instead

    return Handler
