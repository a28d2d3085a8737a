"""The fix policy end to end, with real training processes: what babysit does, and
above all what it refuses to do."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import psutil
import pytest

from babysit.config import PollSettings, RuleSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import run_session
from babysit.exit_codes import ExitCode
from babysit.targets.process.target import ProcessTarget
from babysit.telemetry.gpu import GpuProbe
from tests.conftest import FakeClock, artifact_in

TRAINER = Path(__file__).parents[1] / "fake_trainer.py"


class FastClock(FakeClock):
    """Fake time for the loop (a 30 s interval passes at once) while the real training
    process gets a little real time between polls.

    Given the run's log, a pause lasts until the log grew (up to `most` real seconds):
    on a busy machine a fixed pause may give the run no time at all, and a working run
    would look stalled, or a restarted one hung (a new Python process beside a full test
    suite took over a second to print its first line). A run that really stopped writing
    costs `most` per poll."""

    def __init__(self, log: Path | None = None, most: float = 3.0) -> None:
        super().__init__()
        self.log = log
        self.most = most
        self._size = -1

    def sleep(self, seconds: float) -> None:
        if self.log is None:
            time.sleep(0.08)
        else:
            deadline = time.monotonic() + self.most
            while True:
                time.sleep(0.02)
                size = self.log.stat().st_size if self.log.exists() else -1
                if size != self._size or time.monotonic() >= deadline:
                    self._size = size
                    break
        super().sleep(seconds)


class Approver:
    def __init__(self, answer: bool | None) -> None:
        self.answer = answer
        self.questions: list[str] = []

    def ask(self, question: str) -> bool | None:
        self.questions.append(question)
        return self.answer


def start(tmp_path: Path, *args: str, script: Path = TRAINER) -> subprocess.Popen[bytes]:
    log = tmp_path / "train.log"
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, str(script), *args], stdout=out,
                                stderr=subprocess.STDOUT, cwd=tmp_path)
    deadline = time.monotonic() + 10
    while log.stat().st_size == 0:  # started and printing: its log can be found
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return proc


def watch(tmp_path: Path, proc: subprocess.Popen[bytes], *, fix: bool = True,
          restart_cmd: list[str] | None = None, approver: Approver | None = None,
          kernel_log=None, gpu: GpuProbe | None = None, max_polls: int = 400,
          rules: RuleSettings | None = None):
    def factory() -> ProcessTarget:
        return ProcessTarget(proc.pid, restart_cmd=restart_cmd,
                             gpu=gpu or GpuProbe(use_nvml=False, smi="/nonexistent/smi"),
                             kernel_log=kernel_log or _unreadable_kernel_log)
    # Fake time runs ~400× faster than real time here; a slow step on a loaded machine
    # must not look like a stall, so ask for more quiet polls than the default.
    settings = Settings(poll=replace(PollSettings(), max_polls=max_polls),
                        rules=rules or RuleSettings(stall_polls=6), fix=fix,
                        out_dir=tmp_path / "out")
    result = run_session(factory, str(proc.pid), "pid", settings, NullObserver(),
                         clock=FastClock(tmp_path / "train.log"), approver=approver)
    return result, artifact_in(tmp_path / "out")


def _unreadable_kernel_log(argv: list[str]) -> str:
    raise PermissionError("dmesg: read kernel buffer failed: Operation not permitted")


def starts(tmp_path: Path) -> int:
    marker = tmp_path / "state.starts"
    return int(marker.read_text()) if marker.exists() else 1


def actions(data: dict) -> list[tuple[str, str]]:
    return [(a["kind"], a["status"]) for a in data["actions"]]


def kill_strays(tmp_path: Path, before: set[int]) -> None:
    """This test's leftovers only (tests run side by side): its own new children, and
    trainers working in its directory (a double-forked one is no longer a child)."""
    for child in psutil.Process().children(recursive=True):
        if child.pid not in before:
            with contextlib.suppress(psutil.Error):
                child.kill()
    for proc in psutil.process_iter(["cmdline", "cwd"]):
        if str(TRAINER) in " ".join(proc.info["cmdline"] or []) \
                and proc.info["cwd"] == str(tmp_path):
            with contextlib.suppress(psutil.Error):
                proc.kill()


@pytest.fixture(autouse=True)
def _no_strays(tmp_path: Path):
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    yield
    kill_strays(tmp_path, before)


def test_clean_exit_is_succeeded_and_go(tmp_path: Path):
    proc = start(tmp_path, "--steps", "15")
    result, data = watch(tmp_path, proc)
    assert result.exit_code is ExitCode.GO
    assert (data["terminal_state"], data["total_steps"], data["target_steps"]) == (
        "SUCCEEDED", 15, 15)
    assert data["actions"] == []


def test_exception_in_user_code_is_failed_and_never_restarted(tmp_path: Path):
    proc = start(tmp_path, "--mode", "raise", "--at", "6", "--state", str(tmp_path / "state"))
    result, data = watch(tmp_path, proc)
    assert result.exit_code is ExitCode.NO_GO
    assert data["terminal_state"] == "FAILED"
    [crash] = data["anomalies_detected"]
    assert crash["type"] == "crash" and crash["step"] == 6
    assert "ValueError: learning_rate must be positive" in crash["description"]
    assert "exited with code 1" in crash["description"]
    assert crash["action_taken"].startswith("not restarted: a Python exception")
    assert actions(data) == [("restart-crashed-process", "skipped")]
    assert starts(tmp_path) == 1


def test_sigkill_without_traceback_is_a_likely_oom_kill_when_the_kernel_log_is_closed(
        tmp_path: Path):
    proc = start(tmp_path, "--mode", "kill", "--at", "5")
    result, data = watch(tmp_path, proc)
    assert data["terminal_state"] == "FAILED"
    [anomaly] = data["anomalies_detected"]
    assert anomaly["type"] == "oom" and "unknown" in anomaly["description"]
    assert actions(data) == [("restart-crashed-process", "skipped")]


def test_sigkill_confirmed_by_the_kernel_log(tmp_path: Path):
    proc = start(tmp_path, "--mode", "kill", "--at", "5")
    line = (f"[77.1] Out of memory: Killed process {proc.pid} (python) total-vm:9876kB, "
            f"anon-rss:6123kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:12kB "
            f"oom_score_adj:0\n")
    _, data = watch(tmp_path, proc, kernel_log=lambda argv: line)
    [anomaly] = data["anomalies_detected"]
    assert anomaly["description"] == "killed by the kernel's OOM killer (kernel log)"


def test_transient_crash_is_restarted_once_and_the_new_process_is_watched(tmp_path: Path):
    proc = start(tmp_path, "--mode", "transient", "--at", "8", "--steps", "20",
                 "--state", str(tmp_path / "state"), "--fail-times", "1")
    # The rate babysit measures here is steps per fake poll, and a busy machine that
    # slows the trainer down in real time slows it in fake time too: judged, it would
    # be a true "slow throughput" that this test does not ask about.
    unjudged_rate = RuleSettings(stall_polls=6, slow_baseline_samples=100000)
    result, data = watch(tmp_path, proc, rules=unjudged_rate)
    assert starts(tmp_path) == 2
    assert actions(data) == [("restart-crashed-process", "applied")]
    assert result.exit_code is ExitCode.GO
    assert (data["terminal_state"], data["total_steps"]) == ("SUCCEEDED", 20)
    assert len(data["anomalies_detected"]) == 1, data["anomalies_detected"]  # says what else
    [crash] = data["anomalies_detected"]
    assert "ConnectionResetError" in crash["description"]
    assert crash["action_taken"].startswith("restart the crashed run: restarted as PID")


def test_restarts_stop_after_three_even_with_progress(tmp_path: Path):
    proc = start(tmp_path, "--mode", "transient", "--every", "5", "--steps", "40",
                 "--state", str(tmp_path / "state"))
    result, data = watch(tmp_path, proc)
    assert starts(tmp_path) == 4
    assert actions(data) == [("restart-crashed-process", "applied")] * 3 + [
        ("restart-crashed-process", "skipped")]
    assert "limit 3" in data["actions"][-1]["reason"]
    assert result.exit_code is ExitCode.NO_GO


def test_no_restart_without_progress_since_the_previous_restart(tmp_path: Path):
    # No --state: every start begins at step 1 and dies at step 8 again.
    proc = start(tmp_path, "--mode", "transient", "--at", "8")
    _, data = watch(tmp_path, proc)
    assert actions(data) == [("restart-crashed-process", "applied"),
                             ("restart-crashed-process", "skipped")]
    assert "no training progress since the previous restart" in data["actions"][-1]["reason"]


def test_no_fix_never_acts(tmp_path: Path):
    proc = start(tmp_path, "--mode", "transient", "--at", "8", "--state",
                 str(tmp_path / "state"), "--fail-times", "1")
    result, data = watch(tmp_path, proc, fix=False)
    assert starts(tmp_path) == 1
    assert actions(data) == [("restart-crashed-process", "skipped")]
    assert data["actions"][0]["reason"].startswith("--no-fix")
    assert result.exit_code is ExitCode.NO_GO


@pytest.mark.slow
def test_hung_run_is_stopped_and_restarted(tmp_path: Path):
    """Slow (~18 s): the fake clock gives a silent run up to 3 real seconds a poll to
    write (a restarted process starting on a loaded machine needs that), and a hung run
    stays silent for the six quiet polls that call it hung."""
    proc = start(tmp_path, "--mode", "hang", "--at", "6", "--steps", "12",
                 "--state", str(tmp_path / "state"), "--fail-times", "1")
    result, data = watch(tmp_path, proc)
    assert actions(data) == [("restart-hung-process", "applied")]
    assert starts(tmp_path) == 2
    assert result.exit_code is ExitCode.GO
    stalled = [a for a in data["anomalies_detected"] if a["type"] == "stalled"]
    assert stalled and "resolved" in stalled[0]["description"]


def test_nan_in_a_live_run_needs_approval_and_nothing_is_done_without_it(tmp_path: Path):
    proc = start(tmp_path, "--mode", "nan", "--at", "6", "--steps", "100000", "--delay", "0.05")
    result, data = watch(tmp_path, proc)
    # The exit status agrees with the decision printed: a NaN is a NO-GO, whatever waits
    # for approval (an agent's loop stops on 1 and puts the proposals to its user).
    assert result.exit_code is ExitCode.NO_GO
    assert data["decision"] == "NO-GO"
    assert set(actions(data)) == {("lower-learning-rate", "needs-approval"),
                                  ("cancel-run", "needs-approval")}
    assert f"kill -TERM {proc.pid}" in data["next_commands"]
    assert any(f["title"] == "needs your approval: cancel-run" for f in data["findings"])
    assert proc.poll() is None  # still running: nobody approved anything
    # An agent re-running `--until-event` was shown these: they do not stop it again.
    from babysit.core.session import _previous_verdict, _proposals_shown
    shown = _proposals_shown(_previous_verdict(Settings(out_dir=tmp_path / "out"),
                                               data["target"]))
    assert f"cancel the run now (terminate PID {proc.pid} and its workers)" in shown, shown
    assert any(head.startswith("relaunch with a lower learning rate") for head in shown)


def test_approved_cancel_stops_the_run(tmp_path: Path):
    proc = start(tmp_path, "--mode", "nan", "--at", "6", "--steps", "100000", "--delay", "0.05")
    approver = Approver(True)
    result, data = watch(tmp_path, proc, approver=approver)
    assert approver.questions and "Stop the run now" in approver.questions[0]
    assert approver.questions[0].endswith("and its workers)?")
    assert ("cancel-run", "applied") in actions(data)
    assert data["terminal_state"] == "CANCELLED" and result.exit_code is ExitCode.NO_GO
    proc.wait(timeout=10)  # (babysit already reaped it: it is this test's child)
    assert not psutil.pid_exists(proc.pid)
    assert "Training finished" not in (tmp_path / "train.log").read_text()


def test_declined_cancel_leaves_the_run_alone(tmp_path: Path):
    proc = start(tmp_path, "--mode", "nan", "--at", "6", "--steps", "100000", "--delay", "0.05")
    _, data = watch(tmp_path, proc, approver=Approver(False))
    assert ("cancel-run", "skipped") in actions(data)
    assert proc.poll() is None


def test_restart_command_from_the_user_is_used_as_given(tmp_path: Path):
    proc = start(tmp_path, "--mode", "transient", "--at", "5", "--state",
                 str(tmp_path / "state"), "--fail-times", "1", "--steps", "10")
    command = [sys.executable, str(TRAINER), "--steps", "10", "--state", str(tmp_path / "state"),
               "--api-token", "hunter2"]
    _, data = watch(tmp_path, proc, restart_cmd=command)
    assert actions(data) == [("restart-crashed-process", "applied")]
    assert "--api-token REDACTED" in data["actions"][0]["reason"]
    assert "hunter2" not in str(data)
    assert os.path.exists(tmp_path / "state.starts")


def test_busy_process_without_a_log_is_not_called_stalled(tmp_path: Path):
    busy = subprocess.Popen([sys.executable, "-c",
                             "import time\nend = time.time() + 60\nwhile time.time() < end: pass"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def factory() -> ProcessTarget:
            return ProcessTarget(busy.pid, gpu=GpuProbe(use_nvml=False, smi="/nonexistent/smi"))

        watched = psutil.Process(busy.pid)

        class Slow(FakeClock):
            def sleep(self, seconds: float) -> None:
                # Wait until the busy loop has really burnt CPU time: under a loaded
                # machine a fixed real pause may give it too little.
                times = watched.cpu_times()
                start = times.user + times.system
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    times = watched.cpu_times()
                    if times.user + times.system - start > 0.7:
                        break
                    time.sleep(0.05)
                super().sleep(seconds)

        # A baseline and three polls: two quiet ones would call it stalled (stall_polls=2),
        # so the run can fail; each poll waits for 0.7 s of the busy loop's CPU.
        settings = Settings(poll=replace(PollSettings(), max_polls=4), fix=False,
                            rules=RuleSettings(stall_polls=2), out_dir=tmp_path / "out")
        run_session(factory, str(busy.pid), "pid", settings, NullObserver(), clock=Slow())
        data = artifact_in(tmp_path / "out")
        assert [a["type"] for a in data["anomalies_detected"]] == []
    finally:
        busy.kill()
        busy.wait()


def test_the_question_comes_after_the_anomaly_that_raised_it(tmp_path: Path):
    proc = start(tmp_path, "--mode", "nan", "--at", "6", "--steps", "100000", "--delay", "0.05")
    seen: list[str] = []

    class Recorder(NullObserver):
        def poll(self, report) -> None:  # type: ignore[no-untyped-def]
            seen.append(f"poll {report.step}")

        def anomaly(self, anomaly, report) -> None:  # type: ignore[no-untyped-def]
            seen.append(f"anomaly {anomaly.type.value}")

    class Asker(Approver):
        def ask(self, question: str) -> bool | None:
            seen.append("question")
            return False

    def factory() -> ProcessTarget:
        return ProcessTarget(proc.pid, gpu=GpuProbe(use_nvml=False, smi="/nonexistent/smi"),
                             kernel_log=_unreadable_kernel_log)

    settings = Settings(poll=replace(PollSettings(), max_polls=400),
                        rules=RuleSettings(stall_polls=6), out_dir=tmp_path / "out")
    run_session(factory, str(proc.pid), "pid", settings, Recorder(), clock=FastClock(),
                approver=Asker(None))
    asked = seen.index("question")
    assert "anomaly nan-inf" in seen[:asked]
    last_poll = max(i for i, event in enumerate(seen[:asked]) if event.startswith("poll"))
    assert seen.index("anomaly nan-inf") > last_poll  # the poll's line, its anomaly, then ask
    assert seen.count("anomaly nan-inf") == 1  # shown once, not again after the answer
