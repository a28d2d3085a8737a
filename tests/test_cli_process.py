"""`babysit --pid` / `--proc` through the real command line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests.conftest import artifact_in
from tests.core.test_fixer import TRAINER, kill_strays, start
from tests.test_cli import babysit
from tests.ui.terminal import at_a_terminal


@pytest.fixture(autouse=True)
def _cleanup(tmp_path: Path):
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    yield
    kill_strays(tmp_path, before)


def test_pid_once_finds_the_process_and_its_log(tmp_path: Path):
    proc = start(tmp_path, "--steps", "100000", "--delay", "0.05")
    done = babysit("--pid", str(proc.pid), "--once", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert f"process found: PID {proc.pid}" in done.stdout
    assert f"log: {tmp_path / 'train.log'} (the stdout of PID {proc.pid} is redirected" \
           in done.stdout
    data = artifact_in(tmp_path)
    assert (data["target"], data["target_type"], data["terminal_state"]) == (
        str(proc.pid), "pid", "RUNNING")
    assert data["total_steps"] >= 1


def test_pid_watch_until_the_run_finishes(tmp_path: Path):
    proc = start(tmp_path, "--steps", "30", "--delay", "0.05")
    # The log is named: on a busy machine the run may be over (a zombie, whose open files
    # are gone) before babysit looks for it. Finding the log is the test above's subject.
    done = babysit("--pid", str(proc.pid), "train.log", "--json", "--interval", "0.3",
                   cwd=tmp_path)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0, done.stderr
    final = events[-1]["artifact"]
    assert (final["terminal_state"], final["total_steps"]) == ("SUCCEEDED", 30)


def named_trainer(tmp_path: Path) -> Path:
    """The trainer under a name no other test's process has (tests run side by side)."""
    script = tmp_path / f"trainer_{tmp_path.name}.py"
    shutil.copyfile(TRAINER, script)
    return script


def test_proc_with_several_unrelated_matches_is_a_clear_usage_error(tmp_path: Path):
    script = named_trainer(tmp_path)
    first = start(tmp_path, "--steps", "100000", "--delay", "0.05", script=script)
    second = subprocess.Popen([sys.executable, str(script), "--steps", "100000"],
                              stdout=subprocess.DEVNULL)
    done = babysit("--proc", script.name, "--once", cwd=tmp_path)
    assert done.returncode == 2
    # One line (the message takes the outbound pass, which would show a newline as `\n`).
    assert f"1. PID {first.pid}  " in done.stderr and f"2. PID {second.pid}  " in done.stderr
    assert done.stderr.startswith(f"babysit: error: 2 unrelated processes match "
                                  f"'{script.name}': 1. PID ")
    assert done.stderr.rstrip().endswith("pick one with --pid")
    # Not a complaint about TARGET, which the user never typed.
    assert "TARGET" not in done.stderr and "watch -h" not in done.stderr


def two_matches(tmp_path: Path) -> tuple[Path, subprocess.Popen[bytes], subprocess.Popen[bytes]]:
    script = named_trainer(tmp_path)
    first = start(tmp_path, "--steps", "100000", "--delay", "0.05", script=script)
    second = subprocess.Popen([sys.executable, str(script), "--steps", "100000"],
                              stdout=subprocess.DEVNULL)
    return script, first, second


def test_at_a_terminal_the_picker_takes_the_pid_the_user_typed(tmp_path: Path):
    script, _, second = two_matches(tmp_path)
    screen = at_a_terminal(["--proc", script.name, "--once", "--no-fix"], tmp_path,
                           answers=[("or a PID): ", f"{second.pid}\n".encode())])
    assert screen.code == 3, screen.text
    assert f"process found: PID {second.pid}" in screen.text


def test_at_a_terminal_end_of_input_at_the_picker_is_a_usage_error_that_says_so(
        tmp_path: Path):
    script, first, _ = two_matches(tmp_path)
    screen = at_a_terminal(["--proc", script.name, "--once"], tmp_path,
                           close_after="or a PID): ")
    assert screen.code == 2, screen.text
    assert "Aborted" not in screen.text
    assert "pick one with --pid" in screen.text and f"PID {first.pid}" in screen.text


def test_proc_with_one_match_and_an_explicit_log(tmp_path: Path):
    script = named_trainer(tmp_path)
    start(tmp_path, "--steps", "100000", "--delay", "0.05", script=script)
    other_log = tmp_path / "explicit.log"
    other_log.write_text("step 7/100 | loss=1.5\n")
    done = babysit("--proc", script.name, str(other_log), "--once", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert "given on the command line" in done.stdout
    data = artifact_in(tmp_path)
    assert (data["target"], data["target_type"], data["total_steps"]) == (
        script.name, "process", 7)


def test_proc_without_a_match_exits_4(tmp_path: Path):
    done = babysit("--proc", "no-such-trainer-xyz", "--once", cwd=tmp_path)
    assert done.returncode == 4
    assert "no running process matches 'no-such-trainer-xyz'" in done.stderr


@pytest.mark.parametrize("args", [
    ["--restart-cmd", "python train.py", "train.log"],
    ["--pid", "1", "--proc", "x"],
    [],
])
def test_process_usage_errors(tmp_path: Path, args: list[str]):
    (tmp_path / "train.log").write_text("step 1 | loss=1\n")
    assert babysit(*args, cwd=tmp_path).returncode == 2


def test_no_fix_through_the_cli_never_restarts(tmp_path: Path):
    proc = start(tmp_path, "--mode", "transient", "--at", "5", "--state",
                 str(tmp_path / "state"), "--fail-times", "1", "--delay", "0.05")
    done = babysit("--pid", str(proc.pid), "--no-fix", "--interval", "0.3", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert (tmp_path / "state.starts").read_text() == "1"  # never restarted
    data = artifact_in(tmp_path)
    assert [a["status"] for a in data["actions"]] == ["skipped"]


def test_at_a_terminal_babysit_asks_before_cancelling(tmp_path: Path):
    """A real pseudo-terminal: the question appears, `y` cancels the run."""
    import os
    import pty
    import select
    import time

    proc = start(tmp_path, "--mode", "nan", "--at", "4", "--steps", "100000", "--delay", "0.05")
    leader, follower = pty.openpty()
    child = subprocess.Popen([sys.executable, "-m", "babysit", "--pid", str(proc.pid),
                              "--interval", "0.3"], cwd=tmp_path, stdin=follower,
                             stdout=follower, stderr=follower, close_fds=True)
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 30
    try:
        while b"Stop the run now" not in seen:
            assert time.monotonic() < deadline, seen.decode(errors="replace")
            if select.select([leader], [], [], 0.2)[0]:
                seen += os.read(leader, 65536)
        # What the question is about comes first: the anomaly, then the question.
        assert seen.index(b"nan-inf") < seen.index(b"Stop the run now")
        os.write(leader, b"y\n")
        assert child.wait(timeout=30) == 1
    finally:
        child.kill()
        os.close(leader)
    data = artifact_in(tmp_path)
    assert data["terminal_state"] == "CANCELLED"
    assert ("cancel-run", "applied") in [(a["kind"], a["status"]) for a in data["actions"]]
    assert not psutil.pid_exists(proc.pid) or psutil.Process(proc.pid).status() == "zombie"
