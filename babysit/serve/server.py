"""The dashboard's HTTP server: stdlib `http.server` on a daemon thread.

Loopback by default, and a token on every request, loopback included (every local user
can reach 127.0.0.1), compared in constant time; a request without it gets 401 and
nothing else. On loopback the `Host` header must name the bound address (`127.0.0.1`,
`localhost`, `[::1]` with its port): a page whose name was rebound to 127.0.0.1 gets 421.
No endpoint changes a run: the server only reads. Every response is bounded (the page,
its static files, one metrics document built at a time), and so are connections: at
most MAX_CONNECTIONS at once, each dropped after IDLE_SECONDS of silence."""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import socket
import sys
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


MAX_CONNECTIONS = 32
IDLE_SECONDS = 10.0
# How long a new connection waits for the slot a dropped silent one frees.
_EVICTION_WAIT = 2.0


class ServeError(Exception):
    """The dashboard cannot start as asked (the message says why)."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _BoundedServer(ThreadingHTTPServer):
    """A thread per connection, but never more than `limit` at once. When all are taken,
    the connection that has waited longest without sending its request is dropped for
    the new one (a local user trickling a byte at a time into every slot would otherwise
    lock the owner out for as long as it likes); with none such, the new one is closed."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 limit: int) -> None:
        self._slots = threading.BoundedSemaphore(limit)
        self._silent: dict[Any, None] = {}  # connections yet to send a whole request head
        self._silent_lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False) and not (
                self._drop_oldest_silent() and self._slots.acquire(timeout=_EVICTION_WAIT)):
            self.shutdown_request(request)
            return
        with self._silent_lock:
            self._silent[request] = None
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.spoke(request)
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.spoke(request)
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # socketserver prints a traceback for any error in a request's thread, onto the
        # watch's own terminal. A browser that closes its tab mid-answer is not an error;
        # anything else is named in one line, never as a traceback.
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            return
        print(f"babysit: the dashboard could not answer a request "
              f"({type(error).__name__})", file=sys.stderr)

    def spoke(self, request: Any) -> None:
        """The connection sent its request head (or is gone): no longer one to drop."""
        with self._silent_lock:
            self._silent.pop(request, None)

    def _drop_oldest_silent(self) -> bool:
        with self._silent_lock:
            oldest = next(iter(self._silent), None)
            if oldest is None:
                return False
            del self._silent[oldest]
        with contextlib.suppress(OSError):
            oldest.shutdown(socket.SHUT_RDWR)  # its thread's read returns: the slot frees
        return True


class Dashboard:
    def __init__(self, runs: Callable[[], list[dict[str, Any]]], host: str = "127.0.0.1",
                 port: int = 8765, token: str | None = None,
                 max_connections: int = MAX_CONNECTIONS) -> None:
        if not is_loopback(host) and not token:
            raise ServeError(f"serving on {host} makes the dashboard reachable from other "
                             f"machines: give a token (--token-file), or bind 127.0.0.1")
        if not 0 <= port <= 65535:
            raise ServeError(f"port {port} is out of range (0-65535)")
        self._runs = runs
        self._building = threading.Lock()  # one document at a time: bounded memory
        self._token = token.encode() if token else None
        try:
            self._server = _BoundedServer((host, port), self._handler(), max_connections)
        except (OSError, OverflowError) as error:
            reason = error.strerror if isinstance(error, OSError) else None
            raise ServeError(f"cannot serve on {host}:{port}: {reason or error}") from error
        self._hosts = _host_names(host, self._server.server_address[1]) \
            if is_loopback(host) else None
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

    def _right_host(self, header: str | None) -> bool:
        return self._hosts is None or (header or "").strip().lower() in self._hosts

    def _document(self) -> bytes:
        with self._building:
            document = metrics_document(self._runs())
            return json.dumps(document, allow_nan=False).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        dashboard = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "babysit"
            sys_version = ""
            timeout = IDLE_SECONDS  # a half-open or silent connection lets go of its thread

            def log_message(self, *args: Any) -> None:
                pass  # the watch's output is the user's terminal, not an access log

            def parse_request(self) -> bool:
                parsed = super().parse_request()  # the request line and its headers
                server = self.server
                if isinstance(server, _BoundedServer):
                    server.spoke(self.request)
                return parsed

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("X-Content-Type-Options", "nosniff")
                # The page's address may carry ?token=: a link to the run's page on W&B
                # or MLflow must not send it along as the Referer.
                self.send_header("Referrer-Policy", "no-referrer")
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                url = urlparse(self.path)
                if not dashboard._right_host(self.headers.get("Host")):
                    self._send(421, b"wrong Host: this server answers for its own "
                                    b"address only\n", "text/plain")
                    return
                public = url.path.startswith("/static/")  # the package's own files: no data
                if not public and not dashboard._allowed(self.headers.get("Authorization"),
                                                         url.query):
                    self._send(401, b'{"error": "a valid token is required"}\n',
                               "application/json")
                    return
                if url.path == "/api/metrics":
                    self._send(200, dashboard._document(), "application/json")
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


def _host_names(host: str, port: int) -> frozenset[str]:
    """The `Host` values a browser sends for this loopback server: its address or
    `localhost`, with the port (bare too on port 80)."""
    names = {"127.0.0.1", "localhost", "[::1]",
             f"[{host}]" if ":" in host else host.lower()}
    with_port = {f"{name}:{port}" for name in names}
    return frozenset(with_port | names if port == 80 else with_port)
