"""Bad input and faults end in a clear message and a verdict file, never a hang or a
traceback: slow notifiers, FIFOs, odd previous verdicts, unruly reviewers, absurd
settings, closed pipes, full disks, signals at any moment, SSH ports that never speak."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import babysit as babysit_package
from babysit.exit_codes import ExitCode
from tests.conftest import artifact_in
from tests.test_cli import babysit

NAN_LOG = "step 1/10 | loss=2.0\nstep 2/10 | loss=nan\n"


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-2000:]


@pytest.fixture
def trickling_server() -> Iterator[int]:
    """Answers 200 with a long Content-Length, then one byte a second, forever."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
            while not stop.is_set():
                try:
                    conn.sendall(b"x")
                except OSError:
                    return
                time.sleep(1)

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()[1]
    stop.set()
    listener.close()


def test_a_notifier_that_trickles_its_answer_does_not_hold_the_verdict(tmp_path: Path,
                                                                        trickling_server: int):
    (tmp_path / "train.log").write_text(NAN_LOG)
    (tmp_path / "babysit.toml").write_text("[notify]\ndeadline_seconds = 2\n")
    started = time.monotonic()
    done = babysit("train.log", "--once", "--notify",
                   f"json://127.0.0.1:{trickling_server}/hook", cwd=tmp_path, timeout=60)
    took = time.monotonic() - started
    # The verdict, within the deadline (the server would trickle for a minute).
    assert done.returncode == 1 and took < 8, took
    assert artifact_in(tmp_path)["decision"] == "NO-GO"
    no_traceback(done)


def test_a_fifo_is_refused_at_once(tmp_path: Path):
    os.mkfifo(tmp_path / "pipe.log")
    done = babysit("pipe.log", "--once", cwd=tmp_path, timeout=20)
    assert done.returncode == 4 and "named pipe (FIFO)" in done.stderr
    assert artifact_in(tmp_path)["confidence"] == "low"


@pytest.mark.parametrize("previous", [
    {"target": "train.log", "anomalies_detected": 5},
    {"target": "train.log", "anomalies_detected": [{"type": "nan-inf", "step": [1, 2]}]},
    {"target": "train.log", "anomalies_detected": [{"type": ["x"], "step": "3"}, 7, None]},
    ["not", "an", "object"],
])
def test_an_oddly_shaped_previous_verdict_is_ignored(tmp_path: Path, previous: object):
    (tmp_path / "train.log").write_text(NAN_LOG)
    (tmp_path / "babysit-training.json").write_text(json.dumps(previous))
    done = babysit("train.log", "--json", "--until-event", "--interval", "0.1", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    no_traceback(done)
    assert artifact_in(tmp_path)["decision"] == "NO-GO"  # replaced by a valid one


def spike_log(tmp_path: Path) -> None:
    lines = [f"step {s}/60 | loss=2.0" for s in range(1, 30)] + ["step 30/60 | loss=40.0"]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")


def test_a_reviewer_answering_in_invalid_utf8_is_read_leniently(tmp_path: Path):
    spike_log(tmp_path)
    (tmp_path / "r.py").write_text("import sys; sys.stdin.read(); "
                                   "sys.stdout.buffer.write(b'\\xff\\xfe STOP \\x80')")
    done = babysit("train.log", "--once", "--judge", f"{sys.executable} r.py", cwd=tmp_path)
    no_traceback(done)
    assert "reviewer says STOP" in done.stdout


def test_a_reviewer_printing_100_mb_is_read_only_in_part(tmp_path: Path):
    spike_log(tmp_path)
    (tmp_path / "r.py").write_text("import sys\nsys.stdin.read()\nfor _ in range(1600):\n"
                                   "    sys.stdout.write('x' * 65536)\nprint('STOP')\n")
    # babysit's own peak memory. VmHWM belongs to this address space; ru_maxrss would
    # also carry the forking pytest's peak across exec.
    probe = ("import re, sys\nfrom babysit.entry import main\ncode = main(sys.argv[1:])\n"
             "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1]\n"
             "open('rss', 'w').write(hwm)\nsys.exit(code)\n")
    done = subprocess.run([sys.executable, "-c", probe, "train.log", "--once", "--judge",
                           f"{sys.executable} r.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    no_traceback(done)
    reasons = " ".join(a["reason"] for a in artifact_in(tmp_path)["actions"])
    assert "not exactly one of STOP, CONTINUE, WAIT" in reasons  # it never saw the STOP
    peak_mib = int((tmp_path / "rss").read_text()) / 1024
    assert peak_mib < 120, peak_mib


def test_a_reviewers_background_child_does_not_outlive_its_timeout(tmp_path: Path):
    lines = [f"step {s}/60 | loss=2.0" for s in range(1, 30)] + ["step 30/60 | loss=40.0"]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    (tmp_path / "r.py").write_text(
        "import subprocess, sys, time, pathlib\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "pathlib.Path('child.pid').write_text(str(child.pid))\n"
        "time.sleep(600)\n")
    done = babysit("train.log", "--once", "--judge", f"{sys.executable} r.py",
                   "--judge-timeout", "2", cwd=tmp_path)
    no_traceback(done)
    import psutil

    child = int((tmp_path / "child.pid").read_text())
    time.sleep(0.5)
    with contextlib.suppress(psutil.NoSuchProcess):  # gone, or a zombie (no init reaps)
        assert psutil.Process(child).status() == psutil.STATUS_ZOMBIE


@pytest.mark.parametrize("args, toml", [
    (["--interval", "1e10"], None),
    (["--schedule", "99999999999d"], None),
    ([], "[poll]\ninterval = -3\n"),
    ([], "[poll]\ninterval = nan\n"),
    ([], "[rules]\nspike_k = -1\n"),
    ([], "[rules]\ndivergence_steps = 0\n"),
    ([], b"\xff\xfe\x00binary\x80"),
    ([], "[poll\n"),
])
def test_absurd_settings_are_usage_errors(tmp_path: Path, args: list[str], toml):
    (tmp_path / "train.log").write_text(NAN_LOG)
    if isinstance(toml, bytes):
        (tmp_path / "babysit.toml").write_bytes(toml)
    elif toml:
        (tmp_path / "babysit.toml").write_text(toml)
    done = babysit("train.log", "--once", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    no_traceback(done)


def test_a_non_table_in_pyproject_is_a_usage_error(tmp_path: Path):
    (tmp_path / "train.log").write_text(NAN_LOG)
    (tmp_path / "pyproject.toml").write_text("[tool.babysit]\npoll = 5\n")
    done = babysit("train.log", "--once", cwd=tmp_path)
    assert done.returncode == 2 and "must be a table" in " ".join(
        done.stderr.replace("│", " ").split())
    no_traceback(done)


def test_an_empty_target_is_a_usage_error(tmp_path: Path):
    done = babysit("", "--once", cwd=tmp_path)
    assert done.returncode == 2 and "TARGET is empty" in done.stderr
    assert not (tmp_path / "babysit-training.json").exists()


def test_stdout_to_a_full_device_still_leaves_the_verdict(tmp_path: Path):
    (tmp_path / "train.log").write_text(NAN_LOG)
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "babysit", "train.log", "--once"],
                              cwd=tmp_path, stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=60)
    assert "Traceback" not in done.stderr
    assert done.returncode == 130  # the output is gone: an interruption, not a verdict
    assert artifact_in(tmp_path)["decision"] == "NO-GO"


def test_a_reader_that_goes_away_ends_the_watch_with_a_verdict(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("".join(f"step {s}/1000 | loss=2.0\n" for s in range(1, 5)))
    done = subprocess.run(f"{sys.executable} -m babysit train.log --interval 0.1 | head -n 2",
                          shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          executable="/bin/bash")
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    data = artifact_in(tmp_path)
    assert data["terminal_state"] == "RUNNING" and "broken pipe" in data["summary"]


def test_a_reader_that_goes_away_is_noticed_before_the_next_print(tmp_path: Path):
    """`babysit train.log | head -3` at the backoff's cap: the next print is 300 s away,
    the closed pipe is noticed when it closes."""
    log = tmp_path / "train.log"
    log.write_text("".join(f"step {s}/1000 | loss=2.0\n" for s in range(1, 5)))
    reader, writer = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "babysit", "train.log", "--interval", "300"],
                            cwd=tmp_path, stdout=writer, stderr=subprocess.PIPE, text=True)
    os.close(writer)
    with os.fdopen(reader, "rb") as head:
        assert head.readline()  # what `head` reads before it exits
    try:
        assert proc.wait(timeout=60) == 130  # long before the 300 s report
    finally:
        proc.kill()
        proc.wait()
    assert proc.stderr is not None and "Traceback" not in proc.stderr.read()
    data = artifact_in(tmp_path)
    assert data["terminal_state"] == "RUNNING" and "broken pipe" in data["summary"]


@pytest.mark.parametrize("sig, words", [(signal.SIGHUP, "SIGHUP"), (signal.SIGTERM, "SIGTERM")])
def test_hangup_and_terminate_leave_a_verdict_saying_which(tmp_path: Path, sig: int,
                                                            words: str):
    (tmp_path / "train.log").write_text("step 1/100 | loss=2.0\n")
    proc = subprocess.Popen([sys.executable, "-m", "babysit", "train.log", "--interval", "0.2"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    # Signalled once the watch has begun (its first line), however slow the start: a
    # sleep here lands before the session on a busy machine, where no verdict is due.
    while "Watching" not in (line := proc.stdout.readline()):
        assert line, "babysit ended before it began watching"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err
    assert words in artifact_in(tmp_path)["summary"]


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.15, 0.3])
def test_a_signal_at_any_moment_of_start_up_is_clear(tmp_path: Path, delay: float):
    (tmp_path / "train.log").write_text("step 1/100 | loss=2.0\n")
    for sig in (signal.SIGTERM, signal.SIGINT):
        proc = subprocess.Popen([sys.executable, "-m", "babysit", "train.log"], cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        # Python's own start-up (site, runpy finding the module) may take the Ctrl-C
        # before a line of babysit runs: then the traceback names no file of the package.
        # The package's own folder: a clone or venv named `babysit` holds Python's files
        # too, and their names must not count as babysit's.
        package = os.path.dirname(babysit_package.__file__) + os.sep
        before_babysit = "KeyboardInterrupt" in err and package not in err
        assert "Traceback" not in err or before_babysit, err
        artifact = tmp_path / "babysit-training.json"
        # A verdict, or a sentence saying why there is none; or the signal arrived before
        # the interpreter ran any of babysit's code.
        assert artifact.exists() or "no verdict written" in err or proc.returncode == -sig \
            or before_babysit
        if artifact.exists():
            artifact_in(tmp_path)
            artifact.unlink()


def test_a_signal_while_the_watch_is_set_up_still_ends_with_a_verdict(tmp_path: Path,
                                                                      monkeypatch):
    """A Ctrl-C that lands after the session began but before the watch itself runs (here:
    while the loop is built) is held, then ends the watch at once: a verdict file saying
    was interrupted (exit 130) before it read anything, not a silent exit with none."""
    from babysit import stopping
    from babysit.config import PollSettings, Settings
    from babysit.core import session
    from babysit.core.reports import NullObserver
    from babysit.entry import _stop
    from babysit.exit_codes import ExitCode
    from babysit.targets.common.log_file import LocalLogTarget
    from tests.conftest import FakeClock

    log = tmp_path / "train.log"
    log.write_text("step 1/100 | loss=2.0\n")
    built = session.WatchLoop

    def interrupted_while_built(*args, **kwargs):
        loop = built(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)  # delivered before kill returns (own process)
        return loop

    monkeypatch.setattr(session, "WatchLoop", interrupted_while_built)
    previous = signal.signal(signal.SIGINT, _stop)
    try:
        result = session.run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                                     Settings(poll=PollSettings(), out_dir=tmp_path),
                                     NullObserver(), clock=FakeClock())
    finally:
        signal.signal(signal.SIGINT, previous)
        stopping.mark_session_started()  # the next test's watch starts with no stop asked
    assert result.exit_code == ExitCode.INTERRUPTED
    # (no poll ran: the file is the short one, of a watch that read nothing yet)
    assert artifact_in(tmp_path)["terminal_state"] == "RUNNING"


# What Python's default Ctrl-C handler does when the signal lands in a callback while
# babysit is still being imported (before its own handlers are in): the KeyboardInterrupt
# is raised inside a weakref's callback (importlib's module locks use one) and Python
# cannot pass it on. Here it is made to happen just as `babysit.entry` is looked for.
_SWALLOWED_AT_START_UP = """
import runpy, sys, weakref

class _Swallowing:
    def find_spec(self, name, path=None, target=None):
        if name == "babysit.entry":
            sys.meta_path.remove(self)
            class Held: pass
            held = Held()
            def interrupted(_):
                raise KeyboardInterrupt
            ref = weakref.ref(held, interrupted)
            del held
        return None

sys.meta_path.insert(0, _Swallowing())
sys.argv = ["babysit", "train.log"]
runpy.run_module("babysit", run_name="__main__", alter_sys=True)
"""


def test_a_ctrl_c_swallowed_while_babysit_is_imported_still_ends_the_watch(tmp_path: Path):
    """The watch (no --once: it would run for ever) ends at once with a verdict saying it
    was interrupted, not on and on as if no Ctrl-C had come."""
    (tmp_path / "train.log").write_text("step 1/100 | loss=2.0\n")
    done = subprocess.run([sys.executable, "-c", _SWALLOWED_AT_START_UP], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == ExitCode.INTERRUPTED, done.stderr
    assert "Exception ignored" not in done.stderr, done.stderr
    assert artifact_in(tmp_path)["terminal_state"] == "RUNNING"


def test_an_ssh_port_that_never_sends_a_banner_is_named_as_such(tmp_path: Path):
    pytest.importorskip("paramiko")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    script = ("from babysit.remote.connection import SshSettings\n"
              "from babysit.targets.common.ssh_log import RemoteLogTarget\n"
              "from babysit.remote.address import parse_remote\n"
              "from babysit.targets.base import TargetError\n"
              f"text = 'ssh://me@127.0.0.1:{port}/tmp/x.log'\n"
              "try:\n"
              "    RemoteLogTarget(text, parse_remote(text), settings=SshSettings("
              "connect_timeout=1.0))\n"
              "except TargetError as error:\n"
              "    print(error)\n")
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "HOME": str(tmp_path)})
    finally:
        listener.close()
    assert f"no SSH banner from 127.0.0.1:{port} within 1s" in done.stdout, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
