"""A log watched alone that nobody writes any more: days unwritten, and no process on this
machine holding it open for writing. Such a run is over and the log does not say how
(ENDED, CONDITIONAL) — not "still running". A real process holding the file open keeps
it running; a log whose own lines say how the run ended is judged by them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from babysit.config import PollSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import run_session
from babysit.targets.common.log_file import LocalLogTarget
from babysit.telemetry.writers import has_writer
from tests.conftest import FakeClock, artifact_in

_DAYS = 3 * 86400
_TRAINING = "".join(f"step={i} loss={2.0 - i * 0.01:.3f}\n" for i in range(1, 40))


def _aged(log: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(log, (then, then))


def _once(log: Path, out: Path) -> dict[str, Any]:
    run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                Settings(poll=replace(PollSettings(), once=True), out_dir=out),
                NullObserver(), clock=FakeClock())
    return artifact_in(out)


@pytest.fixture
def writer(tmp_path: Path):
    """A real process holding the log open for appending, as a training run's stdout."""
    log = tmp_path / "train.log"
    log.write_text(_TRAINING)
    ready = tmp_path / "ready"
    proc = subprocess.Popen([sys.executable, "-c", (
        "import sys, time, pathlib\n"
        "handle = open(sys.argv[1], 'a')\n"
        "pathlib.Path(sys.argv[2]).write_text('open')\n"
        "time.sleep(120)\n"), str(log), str(ready)])
    deadline = time.monotonic() + 30
    while not ready.exists():
        assert time.monotonic() < deadline, "the writer never opened the log"
        time.sleep(0.05)
    try:
        yield log
    finally:
        proc.kill()
        proc.wait()


def test_a_log_days_old_that_no_process_writes_has_ended_unconfirmed(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(_TRAINING)
    _aged(log, _DAYS)
    data = _once(log, tmp_path / "out")
    assert data["terminal_state"] == "ENDED"
    assert data["decision"] == "CONDITIONAL"
    assert "last written 3d" in data["summary"]
    assert "no process on this machine" in data["summary"]


def test_a_log_days_old_still_held_open_by_its_writer_is_running(tmp_path: Path, writer: Path):
    _aged(writer, _DAYS)
    assert has_writer(str(writer)) is True
    data = _once(writer, tmp_path / "out")
    assert data["terminal_state"] == "RUNNING"


def test_a_log_written_minutes_ago_is_running_whoever_holds_it(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(_TRAINING)
    _aged(log, 600)
    assert has_writer(str(log)) is False
    assert _once(log, tmp_path / "out")["terminal_state"] == "RUNNING"


def test_an_old_log_that_says_how_it_ended_is_judged_by_its_lines(tmp_path: Path):
    finished = tmp_path / "finished.log"
    finished.write_text(_TRAINING + "Training complete.\n")
    _aged(finished, _DAYS)
    assert _once(finished, tmp_path / "a")["terminal_state"] == "SUCCEEDED"
    crashed = tmp_path / "crashed.log"
    crashed.write_text(_TRAINING + "Traceback (most recent call last):\n"
                       '  File "train.py", line 9, in <module>\n'
                       "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    _aged(crashed, _DAYS)
    data = _once(crashed, tmp_path / "b")
    assert (data["terminal_state"], data["decision"]) == ("FAILED", "NO-GO")
