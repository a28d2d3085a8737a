"""The dashboard on a machine other users share: a page whose name was rebound to
127.0.0.1, a runtime directory or session files someone else prepared, token files that
are not what they seem, floods of connections, ports that cannot be bound. Real files,
real sockets, the real `babysit serve` command line."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from babysit.cli import main
from babysit.safe_files import UnsafeFile, ensure_private_dir
from babysit.serve import registry
from babysit.serve.api import metrics_document
from babysit.serve.server import Dashboard
from babysit.serve.tokens import own_token, read_token_file
from tests.serve.test_dashboard import fetch, free_port, wait_for

TOKEN = "s3cret-token-of-some-length"


@pytest.fixture
def dashboard() -> Iterator[Dashboard]:
    served = Dashboard(lambda: [], "127.0.0.1", free_port(), TOKEN, max_connections=4).start()
    yield served
    served.stop()


def raw_get(port: int, host: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(f"GET /api/metrics HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer "
                     f"{TOKEN}\r\nConnection: close\r\n\r\n".encode())
        return b"".join(iter(lambda: sock.recv(65536), b""))


def test_a_rebound_name_gets_421_and_no_data(dashboard: Dashboard):
    port = int(dashboard.url.rsplit(":", 1)[1].strip("/"))
    for host in ("evil.example.com", f"evil.example.com:{port}", "127.0.0.1:1", ""):
        answer = raw_get(port, host)
        assert answer.startswith(b"HTTP/1.0 421") and b"runs" not in answer
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        answer = raw_get(port, host)
        assert answer.startswith(b"HTTP/1.0 200")
        assert b"Referrer-Policy: no-referrer" in answer  # ?token= never leaves in a Referer


def test_a_token_is_needed_on_loopback_too_and_the_static_files_hold_no_data(
        dashboard: Dashboard):
    assert fetch(dashboard.url + "api/metrics")[0] == 401
    assert fetch(dashboard.url)[0] == 401
    assert fetch(dashboard.url + "static/app.js")[0] == 200
    assert fetch(dashboard.url + "api/metrics", TOKEN)[0] == 200


def handler_threads() -> int:
    return sum("process_request_thread" in t.name for t in threading.enumerate())


def closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False  # still open, waiting for the request
    except ConnectionResetError:
        return True


def test_half_open_connections_hold_no_more_threads_than_the_cap(dashboard: Dashboard):
    port = int(dashboard.url.rsplit(":", 1)[1].strip("/"))
    before = handler_threads()
    silent = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(40)]
    try:
        for sock in silent:
            sock.setblocking(False)

        def refused() -> int:
            closed = sum(closed_by_server(sock) for sock in silent)
            return closed if closed >= 36 else 0

        # Four are held by a thread each (until their idle timeout); every one past the
        # cap is closed at once.
        assert wait_for(refused) >= 36
        assert handler_threads() - before <= 4
    finally:
        for sock in silent:
            sock.close()
    assert wait_for(lambda: fetch(dashboard.url + "api/metrics", TOKEN)[0] == 200)


def test_connections_trickling_their_request_do_not_lock_the_owner_out(dashboard: Dashboard):
    """Every slot held by a local user who sends a request a byte at a time (each byte
    within the idle timeout): the owner's request still gets its answer, in the place
    of the connection that has waited longest without a whole request."""
    port = int(dashboard.url.rsplit(":", 1)[1].strip("/"))
    trickling = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(4)]
    try:
        for sock in trickling:
            sock.sendall(b"GET /api/metrics HTTP/1.1\r\n")  # and never the rest
        assert fetch(dashboard.url + "api/metrics", TOKEN)[0] == 200
    finally:
        for sock in trickling:
            sock.close()


def test_clients_that_hang_up_mid_answer_print_nothing_on_the_watch_terminal(
        dashboard: Dashboard, capfd: pytest.CaptureFixture[str]):
    """A client that sends half a request and hangs up gets its 421 written into a closed
    socket (a broken pipe, in the server's thread); socketserver would print that as a
    traceback on the terminal the watch is writing to. Whether the kernel reports the
    hang-up on this write is timing, so the server's error hook is also called as the
    thread would call it, with the error it would see."""
    port = int(dashboard.url.rsplit(":", 1)[1].strip("/"))
    for _ in range(8):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"GET /api/metrics HTTP/1.1\r\n")
    assert wait_for(lambda: fetch(dashboard.url + "api/metrics", TOKEN)[0] == 200)
    server = dashboard._server
    for error in (BrokenPipeError(32, "Broken pipe"), ConnectionResetError(104, "reset")):
        try:
            raise error
        except OSError:
            server.handle_error(None, ("127.0.0.1", 1))
    try:
        raise ValueError("a bug of ours")
    except ValueError:
        server.handle_error(None, ("127.0.0.1", 1))
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert err.strip() == "babysit: the dashboard could not answer a request (ValueError)"


def serve(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["serve", *args])
    err = capsys.readouterr().err
    return code, " ".join(err.replace("│", " ").split())  # unwrapped from the panel


@pytest.mark.parametrize("port", ["70000", "-1"])
def test_a_port_out_of_range_is_a_usage_error(capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              port: str):
    monkeypatch.setenv("BABYSIT_RUNTIME_DIR", str(tmp_path))
    code, err = serve(capsys, "--port", port)
    assert code == 2 and "0<=x<=65535" in err and "Traceback" not in err


def test_a_busy_port_gives_way_to_the_next_free_one(tmp_path: Path):
    """`babysit serve` beside a watch's `--serve` (which took 8765): the page opens on
    the next free port, as the watch's own does, and says where."""
    import subprocess
    import sys

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.Popen([sys.executable, "-m", "babysit", "serve", "--port", str(port)],
                                env={**os.environ, "BABYSIT_RUNTIME_DIR": str(tmp_path)},
                                stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        try:
            assert proc.stderr is not None
            line = proc.stderr.readline()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert "babysit: dashboard at http://127.0.0.1:" in line, line
    assert f":{port}/" not in line


def test_no_free_port_is_a_usage_error_naming_it(capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("BABYSIT_RUNTIME_DIR", str(tmp_path))
    with socket.socket() as busy:
        try:
            busy.bind(("127.0.0.1", 65535))
        except OSError:
            pytest.skip("port 65535 is in use here")
        busy.listen()
        code, err = serve(capsys, "--port", "65535")
    assert code == 2 and "cannot serve on 127.0.0.1:65535" in err
    assert "Traceback" not in err


def test_the_watch_dashboard_on_the_last_ports_says_why_it_cannot_serve(tmp_path: Path):
    busy = socket.socket()
    try:
        busy.bind(("127.0.0.1", 65535))
    except OSError:
        pytest.skip("port 65535 is in use here")
    busy.listen()
    try:
        log = tmp_path / "t.log"
        log.write_text("step 1/10 | loss=2.5\n")
        import subprocess
        import sys

        done = subprocess.run([sys.executable, "-m", "babysit", str(log), "--once", "--serve",
                               "--serve-port", "65535", "--out-dir", str(tmp_path)],
                              env={**os.environ, "BABYSIT_RUNTIME_DIR": str(tmp_path)},
                              capture_output=True, text=True, timeout=60, check=False)
    finally:
        busy.close()
    assert done.returncode == 2 and "cannot serve on 127.0.0.1:65535" in done.stderr
    assert "Traceback" not in done.stderr


# --- the runtime directory -------------------------------------------------------------

def test_a_world_writable_runtime_directory_is_refused(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch):
    prepared = tmp_path / "babysit"
    prepared.mkdir()
    prepared.chmod(0o777)
    monkeypatch.setenv("BABYSIT_RUNTIME_DIR", str(tmp_path))
    code, err = serve(capsys, "--port", "0")
    assert code == 2 and "is open to other users (mode 777)" in err
    assert prepared.stat().st_mode & 0o777 == 0o777  # refused, not silently used


@pytest.mark.skipif(os.getuid() != 0, reason="giving a directory away needs root")
def test_a_runtime_directory_of_another_user_is_refused(tmp_path: Path):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 4242, -1)
    with pytest.raises(UnsafeFile, match="belongs to another user"):
        ensure_private_dir(theirs)


def test_a_runtime_directory_that_is_a_file_or_a_link_is_refused(tmp_path: Path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(UnsafeFile, match="is not a directory"):
        ensure_private_dir(tmp_path / "file")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(elsewhere)
    with pytest.raises(UnsafeFile, match="not a directory"):
        ensure_private_dir(tmp_path / "link")
    assert ensure_private_dir(tmp_path / "new").stat().st_mode & 0o777 == 0o700


# --- session files ---------------------------------------------------------------------

def session_entry(pid: int, **extra: object) -> dict[str, object]:
    return {"id": "r", "target": "t.log", "kind": "local-log", "babysit_pid": pid,
            "started_at": "2026-12-01T00:00:00Z", **extra}


def write_session(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    path.chmod(0o600)
    return path


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    return ensure_private_dir(tmp_path / "babysit")


def test_only_real_session_files_of_live_babysits_are_read(runtime: Path, tmp_path: Path):
    me = os.getpid()
    good = write_session(runtime, f"session-{me}.json", json.dumps(session_entry(me)))
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(session_entry(1, target="the secret")))
    write_session(runtime, "session--1.json", json.dumps(session_entry(-1)))
    write_session(runtime, "session-0.json", json.dumps(session_entry(0)))
    dead = write_session(runtime, "session-999999999.json",
                         json.dumps(session_entry(999999999)))
    assert [e["target"] for e in registry.collect(runtime)] == ["t.log"]
    assert not dead.exists()  # a session whose process is gone is cleaned up

    good.unlink()
    (runtime / f"session-{me}.json").symlink_to(secret)  # a link to a file elsewhere
    assert registry.collect(runtime) == []


def test_a_fifo_a_huge_or_a_deeply_nested_session_file_is_skipped_at_once(runtime: Path):
    me = os.getpid()
    path = runtime / f"session-{me}.json"
    os.mkfifo(path, 0o600)
    assert registry.collect(runtime) == []  # no reader waits for a writer
    path.unlink()
    write_session(runtime, path.name, "[" * 100_000 + "]" * 100_000)
    assert registry.collect(runtime) == []
    with path.open("w") as handle:
        handle.write(json.dumps(session_entry(me, pad="x" * (registry.MAX_SESSION_BYTES + 1))))
    assert registry.collect(runtime) == []
    write_session(runtime, path.name, json.dumps(session_entry(me)))
    path.chmod(0o644)  # readable by others: not one babysit wrote
    assert registry.collect(runtime) == []


def test_a_session_that_ended_stays_listed_for_an_hour(runtime: Path):
    """A run that went NO-GO while nobody looked must still be on the page later."""
    me = os.getpid()
    write_session(runtime, f"session-{me}.json", json.dumps(session_entry(me)))
    registry.withdraw(runtime)
    assert not (runtime / f"session-{me}.json").exists()
    assert [e["target"] for e in registry.collect(runtime)] == ["t.log"]
    old = write_session(runtime, f"ended-{me}-{int(time.time()) - 3700}.json",
                        json.dumps(session_entry(me, target="old.log")))
    forged = write_session(runtime, f"ended-1-{int(time.time())}.json",
                           json.dumps(session_entry(me, target="forged.log")))
    assert [e["target"] for e in registry.collect(runtime)] == ["t.log"]
    assert not old.exists() and forged.exists()  # too old: removed; not its own: skipped


def test_a_session_file_naming_another_process_is_not_shown(runtime: Path):
    me = os.getpid()
    write_session(runtime, f"session-{me}.json", json.dumps(session_entry(1)))
    assert registry.collect(runtime) == []


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,x", " http://x",
                                 "http://a b", 42])
def test_a_run_page_that_is_not_a_web_address_is_not_linked(url: object):
    document = metrics_document([session_entry(1, url=url)])
    assert document["runs"][0]["url"] is None
    kept = metrics_document([session_entry(1, url="https://wandb.ai/team/p/runs/abc")])
    assert kept["runs"][0]["url"] == "https://wandb.ai/team/p/runs/abc"


# --- token files ---------------------------------------------------------------------

def token_file(tmp_path: Path, content: bytes, mode: int = 0o600) -> Path:
    path = tmp_path / "token"
    path.write_bytes(content)
    path.chmod(mode)
    return path


@pytest.mark.parametrize(("content", "mode", "says"), [
    (TOKEN.encode(), 0o644, "readable or writable by other users (mode 644): chmod 600"),
    (TOKEN.encode(), 0o620, "readable or writable by other users"),
    (b"\xff\xfe" + TOKEN.encode(), 0o600, "is not UTF-8 text"),
    (b"short", 0o600, "at least 16 characters"),
    (b"x" * 5000, 0o600, "larger than 4,096 bytes"),
    (b"has a space in the token", 0o600, "printable ASCII without spaces"),
])
def test_a_token_file_that_protects_nothing_is_refused(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       content: bytes, mode: int, says: str):
    monkeypatch.setenv("BABYSIT_RUNTIME_DIR", str(tmp_path / "rt"))
    path = token_file(tmp_path, content, mode)
    code, err = serve(capsys, "--port", "0", "--token-file", str(path))
    assert code == 2 and says in err and "Traceback" not in err


def test_a_fifo_or_a_device_as_token_file_is_refused_before_any_read(tmp_path: Path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(UnsafeFile, match="not a regular file"):
        read_token_file(fifo)
    with pytest.raises(UnsafeFile, match="not a regular file"):
        read_token_file(Path("/dev/zero"))


def test_the_own_token_is_made_once_private_and_reused(runtime: Path):
    token = own_token(runtime)
    assert len(token) >= 40 and own_token(runtime) == token
    assert (runtime / "token").stat().st_mode & 0o777 == 0o600
