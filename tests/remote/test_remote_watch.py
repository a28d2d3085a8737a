"""Remote logs in whole sessions: the same verdict as the same log read locally, every
line prefixed with the host, and a dropped link reported as connectivity."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from babysit.config import PollSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import run_session
from babysit.exit_codes import ExitCode
from babysit.remote.address import parse_remote
from babysit.snapshot import Snapshot
from babysit.targets.base import Target
from babysit.targets.common.ssh_log import RemoteLogTarget
from tests.conftest import LOGS, FakeClock, append, artifact_in
from tests.remote.conftest import Sshd

pytestmark = pytest.mark.service  # a real service, slow: `-m service` (.ci/run's second stage)

COMPARED = ("decision", "confidence", "terminal_state", "total_steps", "target_steps",
            "final_metrics", "best_checkpoint", "anomalies_detected", "findings")


def run_cli(args: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    env.pop("SSH_AUTH_SOCK", None)
    return subprocess.run([sys.executable, "-m", "babysit", *args], cwd=cwd, env=env,
                          text=True, capture_output=True, timeout=120)


@pytest.mark.parametrize("name", ["hf5_nan", "torch_cpu_oom", "torch_user_exception",
                                  "lightning_tqdm_clean", "torchrun_gloo_timeout"])
def test_remote_verdict_equals_the_local_verdict(ssh_home: Sshd, tmp_path: Path, name: str):
    log = tmp_path / f"{name}.log"
    shutil.copyfile(LOGS / f"{name}.log", log)
    now = time.time()
    os.utime(log, (now, now))
    local = run_cli([str(log), "--once", "--out-dir", "local"], tmp_path, ssh_home.home)
    remote = run_cli([f"{ssh_home.alias}:{log}", "--once", "--out-dir", "remote"], tmp_path,
                     ssh_home.home)
    assert remote.returncode == local.returncode, remote.stderr
    local_data = artifact_in(tmp_path / "local")
    remote_data = artifact_in(tmp_path / "remote")
    assert remote_data["target_type"] == "remote-log"
    for field in COMPARED:
        assert remote_data[field] == local_data[field], field
    lines = [line for line in remote.stdout.splitlines() if line.strip()]
    stamped = [line for line in lines if line.lstrip().startswith("[")]
    assert stamped and all(line.startswith(f"[{ssh_home.alias}] ") for line in stamped)


def test_a_dropped_link_is_connectivity_not_a_stall_and_nothing_is_lost(ssh_home: Sshd,
                                                                       tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step 1/30 | loss=3.0\n")
    step = iter(range(2, 31))
    polls = {"n": 0}

    def world(_: FakeClock) -> None:
        polls["n"] += 1
        if polls["n"] == 3:
            ssh_home.kill()
        if polls["n"] == 7:
            ssh_home.start()
        number = next(step, None)
        if number is not None:
            append(log, f"step {number}/30 | loss={3 - number * 0.05:.2f}\n")
        if number == 30:
            append(log, "Training finished\n")

    text = f"{ssh_home.alias}:{log}"
    target = RemoteLogTarget(text, parse_remote(text))
    result = run_session(lambda: target, text, "remote-log",
                         Settings(poll=replace(PollSettings(), max_polls=60, backoff=False),
                                  out_dir=tmp_path / "out"),
                         NullObserver(), clock=FakeClock(on_sleep=world))
    data = artifact_in(tmp_path / "out")
    assert result.exit_code is ExitCode.GO
    assert (data["terminal_state"], data["total_steps"]) == ("SUCCEEDED", 30)
    kinds = [a["type"] for a in data["anomalies_detected"]]
    assert kinds == ["connectivity"]
    description = data["anomalies_detected"][0]["description"]
    assert "dropped" in description or "refused" in description
    assert "resolved" in data["anomalies_detected"][0]["description"]
    assert target.connection.connects == 2


def test_remote_pid_killed_stays_failed_whatever_the_log_says_after(ssh_home: Sshd,
                                                                   tmp_path: Path):
    """The remote process is gone (kill -9); a line the SFTP read brings in after that was
    written before it, and cannot bring the run back."""
    from babysit.targets.process.remote import remote_process_target

    log = tmp_path / "train.log"
    log.write_text("Starting training: max_steps=400\n"
                   + "".join(f"step {s}/400 | loss=2.0\n" for s in range(1, 11)))
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    text = f"{ssh_home.alias}:{log}"
    polls = {"n": 0}

    def world(_: FakeClock) -> None:
        polls["n"] += 1
        if polls["n"] == 2:
            sleeper.kill()
            sleeper.wait()

    class LateLine(WatchedRunWrapper):
        def poll(self, final: bool = False) -> Snapshot:
            snapshot = self.inner.poll(final)
            if snapshot.process.alive is False and not self.done:
                self.done = True  # read after the kill was seen, written before it
                append(log, "step 11/400 | loss=2.0\n")
            return snapshot

    try:
        result = run_session(lambda: LateLine(remote_process_target(text, pid=sleeper.pid)),
                             text,
                             "remote-log",
                             Settings(poll=replace(PollSettings(), max_polls=30,
                                                   backoff=False), out_dir=tmp_path / "out"),
                             NullObserver(), clock=FakeClock(on_sleep=world))
    finally:
        sleeper.kill()
    data = artifact_in(tmp_path / "out")
    assert result.exit_code is ExitCode.NO_GO
    assert (data["terminal_state"], data["decision"]) == ("FAILED", "NO-GO")
    [crash] = data["anomalies_detected"]
    assert crash["type"] == "crash" and "of 400 planned" in crash["description"]
    assert "resolved" not in crash["description"]
    assert data["total_steps"] == 11


class WatchedRunWrapper:
    def __init__(self, inner: Target) -> None:
        self.inner = inner
        self.done = False
        self.target_type = inner.target_type
        self.label = inner.label

    def close(self) -> None:
        self.inner.close()
