"""Whole sessions on real log files, driven by a fake clock: what the user ends up
with (verdict, exit code, artifact) for runs that finish, break, hang or vanish."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from babysit.config import PollSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import run_session
from babysit.exit_codes import ExitCode
from babysit.model import AnomalyType
from babysit.snapshot import Snapshot
from babysit.targets.base import TargetUnavailable
from babysit.targets.common.log_file import LocalLogTarget
from babysit.targets.common.open_log import open_log
from tests.conftest import FakeClock, append, artifact_in


class Recorder(NullObserver):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def baseline(self, report):
        self.events.append(("baseline", report))

    def poll(self, report):
        self.events.append(("poll", report))

    def anomaly(self, anomaly, report):
        self.events.append(("anomaly", anomaly))

    def summary(self, report):
        self.events.append(("summary", report))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]


def settings(tmp_path: Path, **poll: Any) -> Settings:
    return Settings(poll=replace(PollSettings(), **poll), out_dir=tmp_path / "out")


def watch(tmp_path: Path, log: Path, clock: FakeClock, observer=None, **poll: Any):
    observer = observer or Recorder()
    result = run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                         settings(tmp_path, **poll), observer, clock=clock,
                         rewatch=["babysit", str(log)])
    return result, observer


def lines(start: int, stop: int, loss=lambda s: 3.0 - s * 0.01) -> str:
    return "".join(f"step {s}/100 | loss={loss(s):.4f} | lr=1e-4\n" for s in range(start, stop))


def test_appended_nan_is_reported_with_its_step_and_ends_no_go(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(lines(1, 11))
    feed = iter([lines(11, 21), lines(21, 25) + "step 25/100 | loss=nan | lr=1e-4\n"])
    clock = FakeClock(on_sleep=lambda _: append(log, next(feed, "")))
    result, observer = watch(tmp_path, log, clock)
    assert result.exit_code is ExitCode.NO_GO
    anomalies = [a for kind, a in observer.events if kind == "anomaly"]
    assert [(a.type, a.step) for a in anomalies] == [(AnomalyType.NAN_INF, 25)]
    data = artifact_in(tmp_path / "out")
    assert data["decision"] == "NO-GO" and data["terminal_state"] == "RUNNING"
    assert data["final_metrics"]["loss"] == "nan"
    assert data["findings"][0]["severity"] == "blocker"


def test_run_that_reaches_its_completion_line_is_go(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(lines(1, 50))
    clock = FakeClock(on_sleep=lambda _: append(log, lines(50, 101) + "Training finished\n"))
    result, _ = watch(tmp_path, log, clock)
    assert result.exit_code is ExitCode.GO
    data = artifact_in(tmp_path / "out")
    assert (data["terminal_state"], data["total_steps"], data["target_steps"]) == (
        "SUCCEEDED", 100, 100)
    assert data["confidence"] == "high"


def test_quiet_log_backs_off_then_is_reported_stalled(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(lines(1, 11))
    clock = FakeClock()
    result, observer = watch(tmp_path, log, clock, max_polls=4)
    assert clock.slept[:2] == [45.0, 67.5]
    stalled = [a for kind, a in observer.events if kind == "anomaly"]
    assert [a.type for a in stalled] == [AnomalyType.STALLED]
    assert clock.slept[2] == 30.0  # the anomaly reset the interval
    assert result.exit_code is ExitCode.CONDITIONAL
    assert artifact_in(tmp_path / "out")["anomalies_detected"][0]["type"] == "stalled"


def test_traceback_at_the_end_is_confirmed_as_a_crash_on_the_next_quiet_poll(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(lines(1, 11))
    feed = iter([lines(11, 15) + 'Traceback (most recent call last):\n  File "t.py", line 9\n'
                 "KeyError: 'input_ids'\n"])
    clock = FakeClock(on_sleep=lambda _: append(log, next(feed, "")))
    result, _ = watch(tmp_path, log, clock)
    data = artifact_in(tmp_path / "out")
    assert result.exit_code is ExitCode.NO_GO
    assert data["terminal_state"] == "FAILED"
    assert [(a["type"], a["step"]) for a in data["anomalies_detected"]] == [("crash", 14)]
    assert "KeyError" in data["summary"]


def test_traceback_followed_by_more_training_is_not_a_crash(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(lines(1, 11))
    feed = iter([
        'Traceback (most recent call last):\n  File "wandb.py", line 9\nConnectionError: x\n',
        lines(11, 101) + "Training finished\n",
    ])
    clock = FakeClock(on_sleep=lambda _: append(log, next(feed, "")))
    result, _ = watch(tmp_path, log, clock)
    assert result.exit_code is ExitCode.GO


def test_once_on_a_log_still_being_written_is_conditional(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(lines(1, 40))
    result, observer = watch(tmp_path, log, FakeClock(), once=True)
    assert result.exit_code is ExitCode.CONDITIONAL
    assert observer.kinds()[0] == "baseline"
    data = artifact_in(tmp_path / "out")
    assert data["terminal_state"] == "RUNNING" and data["total_steps"] == 39


def test_ctrl_c_still_writes_the_artifact_and_exits_130(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(lines(1, 11))

    def interrupt(_: FakeClock) -> None:
        raise KeyboardInterrupt

    result, _ = watch(tmp_path, log, FakeClock(on_sleep=interrupt))
    assert result.exit_code is ExitCode.INTERRUPTED
    data = artifact_in(tmp_path / "out")
    assert data["terminal_state"] == "RUNNING" and data["total_steps"] == 10


def test_missing_log_exits_4_and_still_leaves_an_artifact(tmp_path: Path):
    missing = tmp_path / "nope.log"
    result = run_session(lambda: open_log(str(missing)), str(missing), "local-log",
                         settings(tmp_path), NullObserver(), clock=FakeClock())
    assert result.exit_code is ExitCode.UNREACHABLE
    data = artifact_in(tmp_path / "out")
    assert data["decision"] == "CONDITIONAL" and data["confidence"] == "low"
    assert "not found" in data["findings"][0]["description"]


def test_full_summary_every_five_polls(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(lines(1, 2))
    counter = iter(range(2, 100))

    def more(_: FakeClock) -> None:
        step = next(counter)
        append(log, lines(step, step + 1, loss=lambda s: 2.0))

    _, observer = watch(tmp_path, log, FakeClock(on_sleep=more), max_polls=12, backoff=False)
    summaries = [r.reason for kind, r in observer.events if kind == "summary"]
    assert summaries == ["every 5 polls", "every 5 polls", "stopping"]


class FlakyTarget:
    """A real log target whose link drops for a while, as an SSH or API target's would."""

    target_type = "local-log"

    def __init__(self, log: Path, down: set[int]) -> None:
        self.inner = LocalLogTarget(log)
        self.down = down
        self.calls = 0

    @property
    def label(self) -> str:
        return self.inner.label

    def poll(self, final: bool = False) -> Snapshot:
        self.calls += 1
        if self.calls in self.down:
            raise TargetUnavailable("connection reset by peer")
        return self.inner.poll(final)

    def close(self) -> None:
        self.inner.close()


def test_unreachable_target_is_connectivity_not_a_stall(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(lines(1, 5))
    target = FlakyTarget(log, down={2, 3, 4})
    clock = FakeClock(on_sleep=lambda c: append(log, lines(int(c.t), int(c.t) + 1)))
    observer = Recorder()
    run_session(lambda: target, str(log), "local-log", settings(tmp_path, max_polls=7),
                observer, clock=clock)
    data = artifact_in(tmp_path / "out")
    types = [a["type"] for a in data["anomalies_detected"]]
    assert types == ["connectivity"]
    assert "resolved" in data["anomalies_detected"][0]["description"]


@pytest.mark.parametrize("text, state, decision", [
    ("step 100/100 | loss=1.0\n", "SUCCEEDED", "GO"),
    ("step 50/100 | loss=1.0\nKilled\n", "FAILED", "NO-GO"),
    ("step 50/100 | loss=1.0\nTraceback (most recent call last):\nKeyboardInterrupt\n",
     "CANCELLED", "NO-GO"),
])
def test_once_on_finished_logs(tmp_path: Path, text: str, state: str, decision: str):
    log = tmp_path / "train.log"
    log.write_text(text)
    watch(tmp_path, log, FakeClock(), once=True)
    data = artifact_in(tmp_path / "out")
    assert (data["terminal_state"], data["decision"]) == (state, decision)


class BrokenTarget(FlakyTarget):
    """A target with a bug: it raises something that is not a TargetError."""

    def poll(self, final: bool = False) -> Snapshot:
        self.calls += 1
        if self.calls == 3:
            raise ZeroDivisionError("bug")
        return self.inner.poll(final)


def test_internal_error_still_leaves_a_valid_artifact(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(lines(1, 5))
    target = BrokenTarget(log, down=set())
    with pytest.raises(ZeroDivisionError):
        run_session(lambda: target, str(log), "local-log", settings(tmp_path), NullObserver(),
                    clock=FakeClock())
    data = artifact_in(tmp_path / "out")
    assert data["decision"] == "CONDITIONAL" and data["total_steps"] == 4
    assert "internal error" in data["summary"]


def test_checkpoint_saved_after_the_nan_is_not_offered_as_the_good_one(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(lines(1, 11) + "Saving checkpoint to out/ckpt-10\n"
                   + "step 11/100 | loss=nan\nSaving checkpoint to out/ckpt-11\n")
    watch(tmp_path, log, FakeClock(), once=True)
    data = artifact_in(tmp_path / "out")
    assert data["best_checkpoint"] == "out/ckpt-10"
    assert "out/ckpt-10" in data["findings"][0]["fix"]
