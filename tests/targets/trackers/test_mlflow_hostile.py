"""An MLflow tracking server (or something posing as one) that answers too much, too
deep, too slowly or with fields of the wrong type: one clear error or a skipped field,
bounded memory, never a traceback. The server is a real HTTP server on loopback; the
client is MLflow's own, as babysit uses it."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from babysit.targets.base import TargetError
from babysit.targets.mlflow import run as mlflow_run
from babysit.targets.mlflow.run import MlflowTarget
from tests.conftest import require

# Found, not imported: every worker collects this module, and importing MLflow costs
# seconds; babysit imports it when a test opens the target.
require("mlflow", "mlflow is not installed (pip install -e '.[test-services]')")

Answer = Callable[[str], tuple[bytes, dict[str, str]]]


@pytest.fixture
def server() -> Iterator[Callable[[Answer], str]]:
    servers: list[ThreadingHTTPServer] = []

    def start(answer: Answer) -> str:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                body, headers = answer(self.path)
                self.send_response(200)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}"

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def test_an_answer_larger_than_the_cap_is_refused(server: Callable[[Answer], str],
                                                  monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(mlflow_run, "MAX_RESPONSE_BYTES", 1 << 20)
    uri = server(lambda path: (b'{"run": "' + b"x" * (2 << 20) + b'"}', {}))
    with pytest.raises(TargetError, match=r"sent more than 1 MiB in one answer"):
        MlflowTarget("abc", uri, timeout=10)


def test_a_compressed_answer_is_capped_after_decompression(server: Callable[[Answer], str],
                                                           monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(mlflow_run, "MAX_RESPONSE_BYTES", 1 << 20)
    bomb = gzip.compress(b'{"run": "' + b" " * (64 << 20) + b'"}')
    uri = server(lambda path: (bomb, {"Content-Encoding": "gzip"}))
    with pytest.raises(TargetError, match=r"sent more than 1 MiB in one answer"):
        MlflowTarget("abc", uri, timeout=10)


def test_a_deeply_nested_answer_is_refused_in_one_line(server: Callable[[Answer], str]):
    uri = server(lambda path: (b'{"run": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", {}))
    with pytest.raises(TargetError, match="nested too deeply"):
        MlflowTarget("abc", uri, timeout=10)


@pytest.mark.parametrize("body", [b"[1, 2]", b'"run"', b"null"])
def test_json_that_is_not_an_object_is_refused(server: Callable[[Answer], str], body: bytes):
    uri = server(lambda path: (body, {}))
    with pytest.raises(TargetError, match="not an object"):
        MlflowTarget("abc", uri, timeout=10)


def test_fields_of_the_wrong_type_are_skipped_not_a_crash(server: Callable[[Answer], str]):
    run = {"info": ["not", "an", "object"], "data": {
        "metrics": [{"key": "loss", "step": "²", "value": 2.5, "timestamp": "soon"}, 5, "s",
                    {"key": ["x"], "step": 1, "value": 1.0},
                    {"key": "lr", "step": 10 ** 40, "value": 3e-4, "timestamp": None}],
        "params": "not a list"}}

    def answer(path: str) -> tuple[bytes, dict[str, str]]:
        if "runs/get" in path:
            return json.dumps({"run": run}).encode(), {}
        return json.dumps({"metrics": [{"key": "loss", "step": "²", "value": 2.5},
                                       {"key": "loss", "step": 0, "value": "nan"}, 7]}).encode(), {}

    target = MlflowTarget("abc", server(answer), timeout=10)
    snapshot = target.poll()
    service = snapshot.service
    assert service.run_state is None and "MLflow status" in service.run_state_detail
