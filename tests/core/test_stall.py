"""A stall is judged against the run's own cadence, with longer allowances for start-up,
checkpoint saves and evaluations; a file's age alone is not a stall."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from babysit.config import PollSettings, RuleSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import run_session
from babysit.exit_codes import ExitCode
from babysit.targets.common.log_file import LocalLogTarget
from tests.conftest import FakeClock, append, artifact_in
from tests.core.test_fixer import FastClock, _no_strays, watch  # noqa: F401
from tests.core.test_session import Recorder


def settings(tmp_path: Path, **poll: object) -> Settings:
    return Settings(poll=replace(PollSettings(), **poll), out_dir=tmp_path / "out")


def aged(log: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(log, (then, then))


def test_once_on_a_quiet_log_without_timestamps_notes_its_age_instead_of_a_stall(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("".join(f"step {s}/100 | loss={3 - s * 0.01:.3f}\n" for s in range(1, 41)))
    aged(log, 90)
    notes: list[str] = []
    observer = Recorder()
    observer.notice = notes.append  # type: ignore[method-assign]
    result = run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                         settings(tmp_path, once=True), observer, clock=FakeClock())
    data = artifact_in(tmp_path / "out")
    assert [a["type"] for a in data["anomalies_detected"]] == []
    assert any("last written 1m 30s ago" in n and "does not call that a stall" in n
               for n in notes)
    assert result.exit_code is ExitCode.CONDITIONAL


def test_once_on_a_log_far_quieter_than_its_own_timestamps_is_stalled(tmp_path: Path):
    lines = [f"2026-11-30 10:{s // 10:02d}:{(s % 10) * 6:02d} | step {s}/500 | "
             f"loss={2.0 - 0.005 * s:.3f}\n"
             for s in range(1, 41)]
    log = tmp_path / "train.log"
    log.write_text("".join(lines))
    aged(log, 2 * 3600)
    run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                settings(tmp_path, once=True), NullObserver(), clock=FakeClock())
    [stalled] = artifact_in(tmp_path / "out")["anomalies_detected"]
    assert stalled["type"] == "stalled"
    assert "2h 0m" in stalled["description"]
    assert "a progress line every ~6s (from its timestamps)" in stalled["description"]


def test_a_run_that_logs_every_six_seconds_is_not_stalled_at_a_one_second_interval(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("step 1/100 | loss=3.0\n")
    state = {"next": 2, "since": 0.0}

    def world(clock: FakeClock) -> None:
        if clock.t - 1000 - state["since"] >= 6:  # a line every 6 s of (fake) time
            state["since"] = clock.t - 1000
            append(log, f"step {state['next']}/100 | loss={3.0 - 0.01 * state['next']:.2f}\n")
            state["next"] += 1

    run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                settings(tmp_path, interval=1.0, backoff=False, max_polls=120),
                NullObserver(), clock=FakeClock(on_sleep=world))
    data = artifact_in(tmp_path / "out")
    assert [a["type"] for a in data["anomalies_detected"]] == []
    assert data["total_steps"] >= 18


def test_a_run_that_really_stops_is_stalled_after_five_of_its_gaps(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step 1/100 | loss=3.0\n")
    state = {"next": 2, "since": 0.0}

    def world(clock: FakeClock) -> None:
        if state["next"] <= 10 and clock.t - 1000 - state["since"] >= 6:
            state["since"] = clock.t - 1000
            append(log, f"step {state['next']}/100 | loss=3.0\n")
            state["next"] += 1

    run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                settings(tmp_path, interval=1.0, backoff=False, max_polls=200),
                NullObserver(), clock=FakeClock(on_sleep=world))
    [stalled] = artifact_in(tmp_path / "out")["anomalies_detected"]
    assert stalled["type"] == "stalled" and stalled["step"] == 10
    assert "5× its usual 6s between progress lines (seen between polls)" in \
        stalled["description"]


SAVER = """
import sys, time
for step in range(1, 41):
    print(f"step {step}/40 | loss={3 - step * 0.01:.3f}", flush=True)
    if step == 20:
        print("Saving checkpoint to out/ckpt-20", flush=True)
        time.sleep(float(sys.argv[1]))  # an NFS write: no CPU, no output
    time.sleep(0.02)
print("Training finished", flush=True)
"""


class ScaledClock(FakeClock):
    """Time that runs ten times faster than the real clock, evenly, so a real process
    and the watch keep their proportions (a 2.5 s save is 25 s of watched time)."""

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds / 10)
        super().sleep(seconds)


def test_a_long_checkpoint_save_is_not_a_hang_to_restart(tmp_path: Path):
    """--pid with --interval 3: a healthy run spends 25 s writing a checkpoint with no CPU
    and no output. That is not a hang, and it must not be killed and restarted."""
    from babysit.core.session import run_session as session
    from babysit.targets.process.target import ProcessTarget
    from babysit.telemetry.gpu import GpuProbe

    log = tmp_path / "train.log"
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-c", SAVER, "2.5"], stdout=out,
                                stderr=subprocess.STDOUT)
    while log.stat().st_size == 0:
        time.sleep(0.02)
    restart = [sys.executable, "-c", SAVER, "0"]
    result = session(lambda: ProcessTarget(proc.pid, restart_cmd=restart,
                                           gpu=GpuProbe(use_nvml=False, smi="/no/smi")),
                     str(proc.pid), "pid",
                     settings(tmp_path, interval=3.0, backoff=False, max_polls=400),
                     NullObserver(), clock=ScaledClock())
    data = artifact_in(tmp_path / "out")
    assert result.exit_code is ExitCode.GO, data["summary"]
    assert data["actions"] == []  # never restarted during the save
    assert [a["type"] for a in data["anomalies_detected"]] == []


def test_a_hang_outside_a_save_is_still_restarted(tmp_path: Path):
    from tests.core.test_fixer import start, starts

    proc = start(tmp_path, "--mode", "hang", "--at", "6", "--steps", "20", "--state",
                 str(tmp_path / "state"), "--fail-times", "1")
    result, data = watch(tmp_path, proc)
    assert starts(tmp_path) == 2
    assert ("restart-hung-process", "applied") in [(a["kind"], a["status"])
                                                    for a in data["actions"]]
    assert RuleSettings().stall_save_seconds > 60  # saves get much longer than a step
