"""The dashboard's HTTP server: stdlib `http.server` on a daemon thread.

Loopback by default. Any other address needs a token, compared in constant time; a
request without it gets 401 and nothing else. No endpoint changes a run: the server
only reads. Every response is bounded: the page and its two static files, and the
metrics document built on request."""

from __future__ import annotations

import hmac
import ipaddress
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlparse

from babysit.serve.api import metrics_document

_STATIC = {"/": ("index.html", "text/html; charset=utf-8"),
           "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
           "/static/uPlot.iife.min.js": ("uPlot.iife.min.js", "text/javascript; charset=utf-8"),
           "/static/uPlot.min.css": ("uPlot.min.css", "text/css; charset=utf-8")}


class ServeError(Exception):
    """The dashboard cannot start as asked (the message says why)."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Dashboard:
    def __init__(self, runs: Callable[[], list[dict[str, Any]]], host: str = "127.0.0.1",
                 port: int = 8765, token: str | None = None) -> None:
        if not is_loopback(host) and not token:
            raise ServeError(f"serving on {host} makes the dashboard reachable from other "
                             f"machines: give a token (--token-file), or bind 127.0.0.1")
        self._runs = runs
        self._token = token.encode() if token else None
        try:
            self._server = ThreadingHTTPServer((host, port), self._handler())
        except OSError as error:
            raise ServeError(f"cannot serve on {host}:{port}: "
                             f"{error.strerror or error}") from error
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="dashboard",
                                        daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        shown = host.decode() if isinstance(host, bytes) else host
        return f"http://{shown}:{port}/"

    def start(self) -> Dashboard:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _allowed(self, header: str | None, query: str) -> bool:
        if self._token is None:
            return True
        given = ""
        if header and header.startswith("Bearer "):
            given = header[len("Bearer "):]
        else:
            given = (parse_qs(query).get("token") or [""])[0]
        return hmac.compare_digest(given.encode(), self._token)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        dashboard = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "babysit"
            sys_version = ""

            def log_message(self, *args: Any) -> None:
                pass  # the watch's output is the user's terminal, not an access log

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("X-Content-Type-Options", "nosniff")
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                url = urlparse(self.path)
                if not dashboard._allowed(self.headers.get("Authorization"), url.query):
                    self._send(401, b'{"error": "a valid token is required"}\n',
                               "application/json")
                    return
                if url.path == "/api/metrics":
                    document = metrics_document(dashboard._runs())
                    body = json.dumps(document, allow_nan=False).encode()
                    self._send(200, body, "application/json")
                    return
                static = _STATIC.get(url.path)
                if static is None:
                    self._send(404, b"not found\n", "text/plain")
                    return
                name, kind = static
                body = resources.files("babysit").joinpath(f"serve/static/{name}").read_bytes()
                self._send(200, body, kind)

            def do_POST(self) -> None:
                self._send(405, b"the dashboard only reads\n", "text/plain")

        return Handler
