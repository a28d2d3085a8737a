"""A path that is not a log: a typo fails at once with the name it resembles, a folder
names the logs inside, a log still to come is waited for (saying how long), and a
verdict on another target is never replaced by the stub of a target never read."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import artifact_in
from tests.forked_cli import python_m_babysit
from tests.ui.terminal import at_a_terminal

GOOD = "".join(f"Step {n}/10 | loss={3 - n / 10:.2f}\n" for n in range(1, 11)) + \
    "Training finished\n"


def babysit(*args: str, cwd: Path, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    # No --once: a path worth waiting for would be waited for (600 s by default).
    return python_m_babysit(*args, cwd=cwd, env={**os.environ, "COLUMNS": "200", **(env or {})},
                            timeout=120)


@pytest.mark.parametrize("typed, meant", [
    ("trian.log", "train.log"),
    ("Train.log", "train.log"),
    ("lgos/train.log", "logs/train.log"),
])
def test_a_typo_fails_at_once_and_names_the_log_it_resembles(tmp_path: Path, typed: str,
                                                             meant: str):
    (tmp_path / "logs").mkdir()
    (tmp_path / meant).write_text(GOOD)
    done = babysit(typed, "--interval", "0.2", cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    assert f"log file not found: {typed} (did you mean {meant}?)" in done.stderr
    assert "waiting for" not in done.stderr


@pytest.mark.parametrize("earlier, coming", [("run1.log", "run2.log"),
                                              ("train.log", "train_v2.log")])
def test_the_next_run_of_a_series_is_waited_for_not_taken_for_a_typo(
        tmp_path: Path, earlier: str, coming: str):
    """Starting babysit before the run: `run2.log` beside last time's `run1.log` is the
    log to come, not a typo of it."""
    (tmp_path / earlier).write_text(GOOD)
    proc = subprocess.Popen([sys.executable, "-m", "babysit", coming, "--interval", "0.2",
                             "--out-dir", "out"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "BABYSIT_WAIT_FOR_LOG": "600"})
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline()
        assert f"waiting for {coming} to appear" in line, line
        (tmp_path / coming).write_text(GOOD)
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        proc.wait()
    assert artifact_in(tmp_path / "out")["target"] == coming


def test_a_log_in_a_folder_that_does_not_exist_is_not_waited_for(tmp_path: Path):
    done = babysit("ouputs/run1/train.log", cwd=tmp_path)
    assert done.returncode == 4
    assert "log file not found: ouputs/run1/train.log (there is no folder ouputs/run1/)" \
        in done.stderr


def test_a_folder_given_for_its_log_names_the_logs_inside(tmp_path: Path):
    run = tmp_path / "run1"
    run.mkdir()
    (run / "model.safetensors").write_bytes(b"\0" * 16)
    (run / "train.log").write_text(GOOD)
    done = babysit("run1", "--once", cwd=tmp_path)
    assert done.returncode == 4
    assert "run1 is a directory; give the path of the log file (did you mean run1/train.log?)" \
        in done.stderr


def test_sigterm_while_waiting_for_the_log_writes_a_verdict(tmp_path: Path):
    proc = subprocess.Popen([sys.executable, "-m", "babysit", "train.log", "--out-dir", "out"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "BABYSIT_WAIT_FOR_LOG": "600"})
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline()  # the wait is announced before it begins
        assert "waiting for train.log to appear (up to 10m 0s, until " in line, line
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 130
    finally:
        proc.kill()
        proc.wait()
    data = artifact_in(tmp_path / "out")
    assert data["terminal_state"] == "RUNNING" and data["target"] == "train.log"


def test_a_target_never_read_keeps_the_verdict_on_another_target(tmp_path: Path):
    (tmp_path / "train.log").write_text(GOOD)
    assert babysit("train.log", "--once", cwd=tmp_path).returncode == 0
    good = (tmp_path / "babysit-training.json").read_bytes()
    done = babysit("trian.log", "--once", cwd=tmp_path)
    assert done.returncode == 4
    assert (tmp_path / "babysit-training.json").read_bytes() == good  # the GO is kept
    stub = json.loads((tmp_path / "babysit-training.unread.json").read_text())
    assert stub["target"] == "trian.log" and stub["confidence"] == "low"
    assert "babysit-training.json beside it holds the verdict on another target: kept" \
        in done.stdout
    # The same target, unreadable now, is news about that target: it replaces its verdict.
    (tmp_path / "train.log").unlink()
    assert babysit("train.log", "--once", cwd=tmp_path).returncode == 4
    assert artifact_in(tmp_path)["confidence"] == "low"


def test_a_verdict_on_another_target_is_not_replaced_in_silence(tmp_path: Path):
    (tmp_path / "b.log").write_text("step 1/10 | loss=nan\n")
    (tmp_path / "a.log").write_text(GOOD)
    assert babysit("b.log", "--once", cwd=tmp_path).returncode == 1
    done = babysit("a.log", "--once", cwd=tmp_path)
    assert done.returncode == 0
    assert "this verdict replaces the one on b.log (NO-GO)" in " ".join(done.stdout.split())
    again = babysit("a.log", "--once", cwd=tmp_path)  # its own verdict: nothing to say
    assert "replaces" not in again.stdout + again.stderr


def test_at_a_terminal_an_unreadable_target_is_explained_once(tmp_path: Path):
    screen = at_a_terminal(["missing.log", "--once"], tmp_path)
    assert screen.code == 4
    assert screen.text.count("log file not found: missing.log") == 1, screen.text
