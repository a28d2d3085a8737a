"""How a run ends, with real processes: the cases where babysit used to get the run's
lifecycle wrong (a restart that does nothing, a clean exit without a completion line,
a late line after a confirmed death, a launcher that hands over to its workers, a
reviewer's STOP after the end)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from babysit.config import PollSettings, RuleSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import run_session
from babysit.exit_codes import ExitCode
from babysit.snapshot import Snapshot
from babysit.targets.process.target import ProcessTarget
from babysit.telemetry.gpu import GpuProbe
from tests.conftest import append, artifact_in
from tests.core.test_fixer import TRAINER, FastClock, _no_strays, start, watch  # noqa: F401
from tests.test_cli import babysit


def test_a_restart_command_that_returns_at_once_is_not_a_success(tmp_path: Path):
    """`sbatch …`, `docker run -d …`, `nohup … &` or `true`: babysit's own child exits 0
    at once and trains nothing; the crash it was meant to fix still stands."""
    proc = start(tmp_path, "--mode", "transient", "--at", "8", "--steps", "400")
    result, data = watch(tmp_path, proc, restart_cmd=["true"])
    assert result.exit_code is ExitCode.NO_GO
    assert (data["decision"], data["terminal_state"], data["total_steps"]) == (
        "NO-GO", "FAILED", 8)
    [crash] = [a for a in data["anomalies_detected"] if a["type"] == "crash"]
    assert "ended without training" in crash["action_taken"]
    assert "sbatch" in crash["action_taken"]
    assert "restarted the run, but the new attempt ended without training" in data["summary"]
    assert ("restart-crashed-process", "applied") in [(a["kind"], a["status"])
                                                       for a in data["actions"]]


_PLAIN_LOOP = ("import time\nfor s in range(1, 13):\n"
               "    print(f'step {s} loss {3 - s * 0.1:.2f}', flush=True); time.sleep(0.05)")


def plain_loop(tmp_path: Path) -> subprocess.Popen[bytes]:
    """A hand-written loop: `step N loss X`, no planned total, no completion line."""
    log = tmp_path / "train.log"
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, "-c", _PLAIN_LOOP], stdout=out,
                                stderr=subprocess.STDOUT)


def test_a_clean_exit_babysit_saw_is_the_runs_word_that_it_finished(tmp_path: Path):
    """No completion line and no planned total, but babysit saw the exit status 0 of
    its own child: that is evidence of success (issue 23)."""
    proc = plain_loop(tmp_path)
    result, data = watch(tmp_path, proc)
    assert result.exit_code is ExitCode.GO, data["summary"]
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED")
    assert data["anomalies_detected"] == []
    assert data["findings"] == []


def test_an_unseen_exit_of_a_loop_without_a_planned_total_is_ended_not_succeeded(
        tmp_path: Path):
    """Not babysit's child and reaped by its parent at once (as after `kill -9`): the exit
    status is not visible and nothing in the log says how it ended — ENDED, never
    SUCCEEDED, and at best CONDITIONAL."""
    from types import SimpleNamespace

    from tests.core.test_endings import under_a_parent

    parent, pid = under_a_parent(tmp_path / "train.log", _PLAIN_LOOP)
    try:
        result, data = watch(tmp_path, SimpleNamespace(pid=pid))  # type: ignore[arg-type]
    finally:
        parent.wait(timeout=60)
    if data["terminal_state"] == "SUCCEEDED":
        # On a busy machine babysit may look while the run is still a zombie its parent has
        # not reaped yet, whose exit status /proc shows to anyone: then it saw the exit 0,
        # the run's own word that it finished (CI saw it once under load).
        assert result.exit_code is ExitCode.GO and data["anomalies_detected"] == []
        return
    assert result.exit_code is ExitCode.CONDITIONAL, data["summary"]
    assert (data["decision"], data["terminal_state"]) == ("CONDITIONAL", "ENDED")
    assert data["anomalies_detected"] == []
    assert data["findings"][0]["title"] == "completion not confirmed"
    assert data["summary"].count("not visible") == 1


class LateLine:
    """A process target whose log gets one more line right after babysit has seen the
    process die (an SFTP read that lags behind, a buffered write flushed late)."""

    def __init__(self, inner: ProcessTarget, log: Path) -> None:
        self.inner = inner
        self.log = log
        self.done = False
        self.target_type = inner.target_type

    @property
    def label(self) -> str:
        return self.inner.label

    @property
    def log_path(self) -> str | None:
        return self.inner.log_path

    def poll(self, final: bool = False) -> Snapshot:
        snapshot = self.inner.poll(final)
        if snapshot.process.alive is False and not self.done:
            self.done = True
            append(self.log, "step 99/400 | loss=1.0000 | lr=3.0e-04\n")
        return snapshot

    def close(self) -> None:
        self.inner.close()


def test_a_line_read_after_a_confirmed_death_does_not_bring_the_run_back(tmp_path: Path):
    proc = start(tmp_path, "--mode", "kill", "--at", "6", "--steps", "400")
    log = tmp_path / "train.log"

    def factory() -> LateLine:
        return LateLine(ProcessTarget(proc.pid, gpu=GpuProbe(use_nvml=False, smi="/no/smi"),
                                      kernel_log=lambda argv: "nothing about it\n"), log)

    settings = Settings(poll=replace(PollSettings(), max_polls=200),
                        rules=RuleSettings(stall_polls=6), out_dir=tmp_path / "out")
    result = run_session(factory, str(proc.pid), "pid", settings, NullObserver(),
                         clock=FastClock())
    data = artifact_in(tmp_path / "out")
    assert result.exit_code is ExitCode.NO_GO
    assert (data["terminal_state"], data["decision"]) == ("FAILED", "NO-GO")
    assert data["total_steps"] == 99  # the late line is read, but cannot revive the run
    assert [a["type"] for a in data["anomalies_detected"]] == ["crash"]
    assert not data["anomalies_detected"][0]["description"].endswith("resolved")


def test_a_launcher_that_double_forks_is_followed_to_its_workers(tmp_path: Path):
    proc = start(tmp_path, "--mode", "daemonize", "--at", "16", "--steps", "60",
                 "--delay", "0.05")
    result, data = watch(tmp_path, proc)
    assert result.exit_code is ExitCode.GO, data["summary"]
    assert (data["terminal_state"], data["total_steps"], data["target_steps"]) == (
        "SUCCEEDED", 60, 60)
    # (Fake time against a real process makes the measured rate noisy: GO is the point.)
    assert not [a for a in data["anomalies_detected"] if a["type"] == "crash"]


def test_the_workers_of_a_crashed_run_are_not_taken_for_the_run_going_on(tmp_path: Path):
    proc = start(tmp_path, "--mode", "child", "--at", "5", "--steps", "400",
                 "--child-pidfile", str(tmp_path / "child.pid"))
    result, data = watch(tmp_path, proc, fix=False)
    assert result.exit_code is ExitCode.NO_GO
    assert data["terminal_state"] == "FAILED"
    child = int((tmp_path / "child.pid").read_text())
    subprocess.run(["kill", "-9", str(child)], check=False)


def test_a_reviewer_stop_on_a_finished_run_proposes_nothing(tmp_path: Path):
    lines = [f"step {s}/60 | loss={2.0 - 0.005 * s + 0.01 * (s % 3):.3f}" for s in range(1, 34)]
    lines += ["step 34/60 | loss=40.000"]
    lines += [f"step {s}/60 | loss={2.0 - 0.005 * s + 0.01 * (s % 3):.3f}"
              for s in range(35, 61)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\nTraining finished\n")
    reviewer = tmp_path / "reviewer.py"
    reviewer.write_text("import sys\nsys.stdin.read()\nprint('STOP')\n")
    done = babysit("train.log", "--once", "--judge", f"{sys.executable} {reviewer}",
                   cwd=tmp_path)
    data = artifact_in(tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "CONDITIONAL")
    assert not [a for a in data["actions"] if a["status"] == "needs-approval"]
    assert any("nothing to stop" in a["reason"] for a in data["actions"])
    [spike] = [a for a in data["anomalies_detected"] if a["type"] == "loss-spike"]
    assert spike["severity"] == "high" and "reviewer said STOP" in spike["description"]
    assert not any(c.startswith("kill") for c in data["next_commands"])
    json.dumps(data)


def test_sigterm_of_a_watched_process_is_a_cancellation(tmp_path: Path):
    proc = start(tmp_path, "--steps", "400", "--delay", "0.05")

    sent: list[bool] = []

    def stop_it(clock: FastClock) -> None:
        # Once, and without `proc.poll()`: that would reap the child and take its exit
        # status from babysit, which learns how the run ended from exactly that.
        if clock.t > 1010 and not sent:
            sent.append(True)
            proc.send_signal(signal.SIGTERM)

    clock = FastClock()
    clock.on_sleep = stop_it
    settings = Settings(poll=replace(PollSettings(), max_polls=200),
                        rules=RuleSettings(stall_polls=6), out_dir=tmp_path / "out")
    run_session(lambda: ProcessTarget(proc.pid, gpu=GpuProbe(use_nvml=False, smi="/no/smi")),
                str(proc.pid), "pid", settings, NullObserver(), clock=clock)
    data = artifact_in(tmp_path / "out")
    assert (data["terminal_state"], data["decision"]) == ("CANCELLED", "NO-GO")
    assert "SIGTERM" in data["summary"]
