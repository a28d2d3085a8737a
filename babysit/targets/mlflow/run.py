"""An MLflow run, read incrementally through the tracking server's REST API.

Each poll asks for the run (status, params, the latest value and step of every metric)
and then, only for metrics that moved, the points after the last step already seen —
through the bulk-interval history endpoint, in step ranges small enough that the
server never down-samples them. The number of requests per poll depends on how many
metrics moved, not on how long the run is. Servers without that endpoint fall back to
the paginated full history, and babysit says so.

MLflow's status alone is not trusted: a run whose process died can stay RUNNING forever
(staleness of the newest metric then decides), and a script that died after a bare
`mlflow.start_run()` can end FINISHED (the planned steps then decide).

Every answer is bounded: at most MAX_RESPONSE_BYTES (decompressed), read within the
request's timeout as a whole (a server that trickles its answer is unreachable, not
waited for), JSON nested deeper than the parser allows refused; fields of the wrong type
are skipped, never a crash.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

from babysit.model import TerminalState
from babysit.parsing.text import number_from
from babysit.redact import clip
from babysit.snapshot import LogSnapshot, ProcessSnapshot, ServiceSnapshot, Snapshot
from babysit.targets.base import TargetError, TargetUnavailable
from babysit.targets.common.fallback import TrackerUnreachable
from babysit.targets.common.tracker_rows import (
    Point,
    StepOrigin,
    gpu_from_system,
    records_from_points,
    schedule_from_params,
    target_from_params,
    unreachable_reason,
)
from babysit.targets.kinds import require_extra
from babysit.targets.mlflow import KIND

_STATES = {"FINISHED": TerminalState.SUCCEEDED, "FAILED": TerminalState.FAILED,
           "KILLED": TerminalState.CANCELLED}
_CHUNK = 2000  # steps per bulk-interval request: below the server's 2500 sampling cap
# A bulk-interval page of 2,100 points is ~250 kB, a full-history page of 25,000 ~3 MB.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
_GATEWAY = (502, 503, 504)  # a proxy in front of the server cannot reach it


class MlflowTarget:
    target_type: ClassVar[str] = "mlflow"

    def __init__(self, run_id: str, tracking_uri: str | None = None, *,
                 timeout: float = 15.0) -> None:
        uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI")
        if not uri:
            raise TargetError("no MLflow tracking server: pass --tracking-uri or set "
                              "MLFLOW_TRACKING_URI")
        if not uri.startswith(("http://", "https://")):
            raise TargetError(f"--tracking-uri {uri!r}: babysit reads MLflow through a "
                              f"tracking server (http:// or https://)")
        try:
            from mlflow.utils.rest_utils import MlflowHostCreds
        except ImportError as error:
            raise require_extra(KIND, "watching MLflow runs") from error
        self.uri = uri.rstrip("/")
        self.run_id = run_id
        self._timeout = timeout
        self._creds = MlflowHostCreds(  # type: ignore[no-untyped-call]
            self.uri,
            username=os.environ.get("MLFLOW_TRACKING_USERNAME"),
            password=os.environ.get("MLFLOW_TRACKING_PASSWORD"),
            token=os.environ.get("MLFLOW_TRACKING_TOKEN"),
            ignore_tls_verification=os.environ.get("MLFLOW_TRACKING_INSECURE_TLS") == "true",
        )
        self.requests = 0  # made so far (the benchmark reads these two)
        self.bytes_received = 0
        self._last_step: dict[str, int] = {}
        self._system: dict[str, float] = {}
        self._bulk = True
        self._notices: list[str] = []
        self._origin = StepOrigin()
        try:
            run = self._get_run()
        except _Unreachable as error:  # --fallback-log can start without the server
            raise TrackerUnreachable(str(error)) from error
        except TargetUnavailable as error:
            raise TargetError(f"cannot read MLflow run {run_id} at {self.uri}: {error}") \
                from error
        info = _object(run.get("info"))
        self._experiment = str(info.get("experiment_id", ""))
        self._notices.append(f"MLflow run {info.get('run_name') or run_id} "
                             f"(experiment {self._experiment}) at {self.uri}")
        self._first: dict[str, Any] | None = run

    @property
    def label(self) -> str:
        return self.run_id

    @property
    def url(self) -> str:
        return f"{self.uri}/#/experiments/{self._experiment}/runs/{self.run_id}"

    # --- HTTP -------------------------------------------------------------------------

    def _call(self, endpoint: str, params: Mapping[str, object]) -> dict[str, Any]:
        from mlflow.exceptions import MlflowException
        from mlflow.utils.rest_utils import http_request

        self.requests += 1
        try:
            response = http_request(  # type: ignore[no-untyped-call]
                self._creds, endpoint, "GET", params=dict(params), max_retries=0,
                timeout=self._timeout, raise_on_status=False, stream=True)
            body = self._body(response)
        except (MlflowException, OSError) as error:
            # The client's own text names the whole request URL and the HTTP library's
            # exceptions: a few words say the same.
            raise _Unreachable(f"MLflow server {self.uri} unreachable: "
                               f"{unreachable_reason(error) or 'the request failed'}") \
                from error
        self.bytes_received += len(body)
        text = body.decode(response.encoding or "utf-8", errors="replace")
        if response.status_code == 404 and "bulk-interval" in endpoint:
            raise _NoBulkEndpoint
        if response.status_code == 404 and "RESOURCE_DOES_NOT_EXIST" in text:
            raise TargetUnavailable(f"MLflow run {self.run_id} not found at {self.uri}")
        if response.status_code in (401, 403):
            raise TargetUnavailable(f"MLflow server {self.uri} refused the credentials "
                                    f"(HTTP {response.status_code}): check "
                                    f"MLFLOW_TRACKING_TOKEN / _USERNAME / _PASSWORD")
        if response.status_code in _GATEWAY:
            raise _Unreachable(f"MLflow server {self.uri} unreachable: HTTP "
                               f"{response.status_code} from the server or a proxy before it")
        if response.status_code >= 400:
            detail = clip(text, 300).replace("\n", " ")
            raise TargetUnavailable(f"MLflow server {self.uri} answered HTTP "
                                    f"{response.status_code}: {detail}")
        try:
            data = json.loads(text)
        except ValueError as error:
            raise TargetUnavailable(f"MLflow server {self.uri} sent something that is not "
                                    f"JSON") from error
        except RecursionError:
            raise TargetUnavailable(f"MLflow server {self.uri} sent JSON nested too deeply "
                                    f"to be an answer of its API") from None
        if not isinstance(data, dict):
            raise TargetUnavailable(f"MLflow server {self.uri} sent JSON that is not an "
                                    f"object: not an answer of its API")
        return data

    def _body(self, response: Any) -> bytes:
        """The answer's body, decompressed, at most MAX_RESPONSE_BYTES, all of it within
        the timeout. Raises TargetUnavailable (too large), _Unreachable (too slow) or
        OSError (the connection failed)."""
        deadline = time.monotonic() + self._timeout
        chunks: list[bytes] = []
        total = 0
        try:
            for chunk in response.iter_content(1 << 16):
                total += len(chunk)
                if total > MAX_RESPONSE_BYTES:
                    raise TargetUnavailable(
                        f"MLflow server {self.uri} sent more than "
                        f"{MAX_RESPONSE_BYTES // (1024 * 1024)} MiB in one answer: not "
                        f"an answer of its API, not read further")
                if time.monotonic() > deadline:
                    raise _Unreachable(f"MLflow server {self.uri} unreachable: its answer "
                                       f"took more than {self._timeout:g}s to arrive")
                chunks.append(chunk)
        finally:
            response.close()
        return b"".join(chunks)

    def _get_run(self) -> dict[str, Any]:
        data = self._call("/api/2.0/mlflow/runs/get", {"run_id": self.run_id})
        run = data.get("run")
        if not isinstance(run, dict):
            raise TargetUnavailable(f"MLflow run {self.run_id} not found at {self.uri}")
        return run

    # --- polling ------------------------------------------------------------------------

    def poll(self, final: bool = False) -> Snapshot:
        run = self._first if self._first is not None else self._get_run()
        self._first = None
        info, data = _object(run.get("info")), _object(run.get("data"))
        latest = {m["key"]: m for m in _objects(data.get("metrics"))
                  if isinstance(m.get("key"), str)}
        points: list[Point] = []
        newest = 0.0
        for key, metric in latest.items():
            newest = max(newest, _whole(metric.get("timestamp")) / 1000.0)
            step = _whole(metric.get("step"))
            if key.startswith("system/"):
                value = number_from(metric.get("value"))
                if value is not None:
                    self._system[key] = value
                continue
            if step <= self._last_step.get(key, -1):
                continue
            points.extend(self._history(key, self._last_step.get(key, -1) + 1, step))
            self._last_step[key] = step
        params = {p["key"]: p.get("value") for p in _objects(data.get("params"))
                  if isinstance(p.get("key"), str)}
        target = target_from_params(params)
        records = records_from_points(points, "mlflow")
        from_zero = self._origin.see((r.step for r in records), target)
        if target is not None and records:
            records = [replace(r, target_steps=target) for r in records]
        status = str(info.get("status", "RUNNING"))
        state = _STATES.get(status)
        notices, self._notices = tuple(self._notices), []
        return Snapshot(
            log=LogSnapshot(
                records=tuple(records),
                new_lines=len(points),
                formats=("mlflow",),
                quiet_for=max(0.0, time.time() - newest) if newest else None,
                steps_from_zero=from_zero,
                lr_schedule=schedule_from_params(params)),
            process=ProcessSnapshot(
                gpu=gpu_from_system(self._system)),
            service=ServiceSnapshot(
                run_state=state,
                run_state_detail=f"MLflow status: {status}",
                run_state_source="MLflow",
                evidence_url=self.url),
            notices=notices,
            stall_hint=("MLflow still reports the run as RUNNING, which it does forever when "
                        "the process dies without ending the run (evidence: the newest "
                        "metric's age)") if state is None else "",
        )

    def _history(self, key: str, start: int, end: int) -> list[Point]:
        if self._bulk:
            try:
                return self._bulk_history(key, start, end)
            except _NoBulkEndpoint:
                self._bulk = False
                self._notices.append("this MLflow server has no bulk-interval history "
                                     "endpoint: reading each metric's full history every "
                                     "poll (slower on long runs)")
        return [p for p in self._full_history(key) if start <= p.step <= end]

    def _bulk_history(self, key: str, start: int, end: int) -> list[Point]:
        points: list[Point] = []
        low = start
        while low <= end:
            high = min(end, low + _CHUNK - 1)
            data = self._call("/ajax-api/2.0/mlflow/metrics/get-history-bulk-interval",
                              {"run_ids": self.run_id, "metric_key": key, "start_step": low,
                               "end_step": high, "max_results": _CHUNK + 100})
            points.extend(_points(data.get("metrics"), key))
            low = high + 1
        return points

    def _full_history(self, key: str) -> list[Point]:
        points: list[Point] = []
        token: str | None = None
        while True:
            params: dict[str, object] = {"run_id": self.run_id, "metric_key": key,
                                         "max_results": 25000}
            if token:
                params["page_token"] = token
            data = self._call("/api/2.0/mlflow/metrics/get-history", params)
            points.extend(_points(data.get("metrics"), key))
            token = data.get("next_page_token")
            if not token or not isinstance(token, str):
                return points

    def close(self) -> None:
        pass


class _NoBulkEndpoint(Exception):
    pass


class _Unreachable(TargetUnavailable):
    """The server did not answer (or a proxy before it could not reach it)."""


def _points(metrics: Any, key: str) -> list[Point]:
    out = []
    for metric in _objects(metrics):
        value = number_from(metric.get("value"))
        if value is None:
            continue
        out.append(Point(key, _whole(metric.get("step")), value,
                         _whole(metric.get("timestamp")) / 1000.0))
    return out


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _objects(values: Any) -> list[dict[str, Any]]:
    """The objects of a JSON list; anything else in it (or instead of it) left out."""
    return [v for v in values if isinstance(v, dict)] if isinstance(values, list) else []


def _whole(value: Any) -> int:
    """An integer field (MLflow writes int64 as a number or a string); 0 when absent or
    not an integer of at most 19 digits."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value if abs(value) < 10 ** 19 else 0
    if isinstance(value, str) and 0 < len(value) <= 20:
        try:
            return int(value)
        except ValueError:
            return 0
    return 0
