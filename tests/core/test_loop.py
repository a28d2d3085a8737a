"""The watch loop on a fake clock: how often it polls, when it stops and why, what it
does on Ctrl-C and when the target cannot be reached. Nothing really sleeps."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from babysit.config import PollSettings, Settings
from babysit.core.loop import WatchLoop, WatchStop
from babysit.core.reviewer import Answer, Judgment
from babysit.core.stops import (
    LoopState,
    stop_after_deadline,
    stop_after_polls,
    stop_conditions,
    stop_on_approval_needed,
    stop_on_event,
    stop_on_terminal,
)
from babysit.model import AnomalyType, Severity, TerminalState
from babysit.snapshot import ServiceAnomaly, Snapshot
from babysit.targets.base import TargetError
from tests.conftest import FakeClock
from tests.core.scripted import (
    UNREACHABLE,
    Recorder,
    ScriptedTarget,
    anomaly,
    said,
    steps,
    view,
)


def settings(tmp_path: Path, **poll: object) -> Settings:
    return Settings(poll=replace(PollSettings(), **poll), fix=False, out_dir=tmp_path)


def climbing(poll: int) -> Snapshot:
    return steps(10 * (poll + 1))


def watch(tmp_path: Path, target: ScriptedTarget, clock: FakeClock | None = None,
          **poll: object) -> tuple[WatchLoop, Recorder, str, bool]:
    observer = Recorder()
    loop = WatchLoop(target, settings(tmp_path, **poll), observer, clock or FakeClock())
    stop = loop.run()
    return loop, observer, stop.reason, stop.interrupted


def state(**changes: object) -> LoopState:
    plain = LoopState(view=view(), awaiting=(), polls=0, elapsed=0.0, new_anomalies=())
    return replace(plain, **changes)


# --- stop conditions ---------------------------------------------------------------


def test_or_gives_the_first_reason_that_fires():
    stop = stop_on_terminal() | stop_after_polls(3)
    assert stop(state(polls=1)) == ""
    assert stop(state(polls=2)) == "--max-polls 3 reached"
    ended = view(running=False, state=TerminalState.FAILED)
    assert stop(state(view=ended, polls=2)) == "the run ended: FAILED"


def test_and_stops_only_when_every_condition_does():
    stop = stop_after_polls(3) & stop_after_deadline(60)
    assert stop(state(polls=5, elapsed=10)) == ""
    assert stop(state(polls=1, elapsed=90)) == ""
    assert stop(state(polls=5, elapsed=90)) == "--max-polls 3 reached; --timeout 1m 0s reached"


def test_a_known_anomaly_does_not_wake_an_agent_a_new_one_does():
    known = frozenset({("loss-spike", 10)})
    stop = stop_on_event(known)
    assert stop(state(new_anomalies=(anomaly(AnomalyType.LOSS_SPIKE, step=10),))) == ""
    assert stop(state(new_anomalies=(anomaly(AnomalyType.LOSS_SPIKE, step=20),))) == \
        "event: loss-spike (high) at step 20"


def test_a_proposal_an_agent_was_shown_does_not_stop_its_next_wait_a_new_one_does():
    rollback = "roll back to checkpoint-400 — because loss=nan at step 412"
    stop = stop_on_approval_needed(frozenset({"roll back to checkpoint-400"}))
    assert stop(state(awaiting=(rollback,))) == ""  # its loop would only spin
    assert stop(state(awaiting=(rollback, "lower the learning rate — because …"))) == \
        "waiting for your approval: lower the learning rate — because …"
    assert stop_on_approval_needed()(state(awaiting=(rollback,))) == \
        f"waiting for your approval: {rollback}"


def test_the_run_ending_outranks_every_limit():
    stop = stop_conditions(PollSettings(once=True, max_polls=1, timeout=5))
    ended = view(running=False, state=TerminalState.SUCCEEDED)
    assert stop(state(view=ended, elapsed=10)) == "the run ended: SUCCEEDED"
    assert stop(state(awaiting=("roll back",))) == "waiting for your approval: roll back"
    assert stop(state(elapsed=10)) == "--once: single snapshot taken"


def test_without_limits_a_healthy_run_is_watched_on():
    assert stop_conditions(PollSettings())(state(polls=10**6, elapsed=1e9)) == ""


# --- the loop ---------------------------------------------------------------------


def test_polls_back_off_until_max_polls_then_a_stopping_summary(tmp_path: Path):
    clock = FakeClock()
    _, seen, reason, interrupted = watch(tmp_path, ScriptedTarget(climbing), clock,
                                         interval=10, backoff_factor=2, max_polls=4,
                                         summary_every=0)
    assert (reason, interrupted) == ("--max-polls 4 reached", False)
    assert clock.slept == [20, 40, 80]  # each uneventful poll doubles the wait
    assert seen.lines == ["baseline step 10", "poll step 20 next 40", "poll step 30 next 80",
                          "poll step 40 next None", "summary (stopping)"]


def test_the_watch_ends_with_the_run_and_reads_its_last_words(tmp_path: Path):
    ended = said(steps(30), run_state=TerminalState.SUCCEEDED)
    target = ScriptedTarget(steps(10), steps(20), ended, Snapshot())
    loop, _, reason, _ = watch(tmp_path, target, interval=5, backoff=False)
    assert reason == "the run ended: SUCCEEDED"
    assert target.finals == [False, False, False, True]  # then the final read
    outcome = loop.outcome(WatchStop(reason, interrupted=False))
    assert (outcome.state, outcome.step, outcome.polls) == (TerminalState.SUCCEEDED, 30, 3)
    assert outcome.stop_reason == reason and outcome.target == "scripted run"


def test_timeout_stops_a_run_that_goes_on(tmp_path: Path):
    clock = FakeClock()
    _, _, reason, _ = watch(tmp_path, ScriptedTarget(climbing), clock, interval=30,
                            backoff=False, timeout=100)
    assert reason == "--timeout 1m 40s reached"
    assert sum(clock.slept) == 100  # the last wait is cut to the time left


def test_until_event_wakes_on_a_new_anomaly(tmp_path: Path):
    fault = ServiceAnomaly(AnomalyType.TASK_FAILURE, Severity.HIGH, "task 3 failed")
    target = ScriptedTarget(steps(10), steps(20), said(steps(30), raised=(fault,)))
    _, seen, reason, _ = watch(tmp_path, target, until_event=True, interval=5)
    assert reason == "event: task-failure (high) at step 30"
    assert "anomaly task-failure" in seen.lines


def test_ctrl_c_while_waiting_ends_the_watch_as_interrupted(tmp_path: Path):
    def press(clock: FakeClock) -> None:
        raise KeyboardInterrupt

    loop, seen, reason, interrupted = watch(tmp_path, ScriptedTarget(climbing),
                                            FakeClock(on_sleep=press), interval=5)
    assert interrupted and reason
    assert seen.lines == ["baseline step 10"]


def test_an_unreachable_target_is_reported_then_watched_again(tmp_path: Path):
    target = ScriptedTarget(steps(10), UNREACHABLE, steps(20))
    loop, seen, _, _ = watch(tmp_path, target, interval=5, max_polls=3, summary_every=0)
    dropped = seen.reports[1]
    assert dropped.notices == ("unreachable: connection refused",)
    assert [a.type for a in dropped.new_anomalies] == [AnomalyType.CONNECTIVITY]
    connectivity = [a for a in loop.run_state.ledger.anomalies
                    if a.type is AnomalyType.CONNECTIVITY]
    assert connectivity and connectivity[0].resolved


def test_no_baseline_is_a_target_error(tmp_path: Path):
    with pytest.raises(TargetError, match="connection refused"):
        watch(tmp_path, ScriptedTarget(UNREACHABLE))


def test_once_is_one_final_read_and_no_wait(tmp_path: Path):
    clock = FakeClock()
    target = ScriptedTarget(steps(10))
    _, seen, reason, _ = watch(tmp_path, target, clock, once=True)
    assert reason == "--once: single snapshot taken"
    assert target.finals == [True] and clock.slept == []
    assert seen.lines == ["baseline step 10", "summary (stopping)"]


def test_a_blocker_ends_the_watch(tmp_path: Path):
    fault = ServiceAnomaly(AnomalyType.JOB_FAILURE, Severity.BLOCKER, "job failed")
    target = ScriptedTarget(steps(10), said(steps(20), raised=(fault,)))
    _, seen, reason, _ = watch(tmp_path, target, interval=5)
    assert reason == "unrecoverable problem: job-failure at step 20"
    assert seen.lines[-2:] == ["anomaly job-failure", "summary (stopping)"]


class Says:
    """A reviewer (--judge) that always gives the same answer."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer

    def review(self, packet: object) -> Judgment:
        return Judgment(self.answer, "")


def spike(step: int, severity: Severity = Severity.HIGH) -> Snapshot:
    return said(steps(step), raised=(ServiceAnomaly(AnomalyType.LOSS_SPIKE, severity,
                                                       "loss spiked"),))


def test_a_reviewers_stop_waits_for_the_users_approval(tmp_path: Path):
    observer = Recorder()
    loop = WatchLoop(ScriptedTarget(steps(10), spike(20)),
                     settings(tmp_path, interval=5, max_polls=5),
                     observer, FakeClock(), reviewer=Says(Answer.STOP))
    stop = loop.run()
    assert stop.reason == ("waiting for your approval: stop the run — because the reviewer "
                           "said STOP about loss-spike at step 20: loss spiked")
    assert "notice reviewer says STOP about loss-spike" in observer.lines
    outcome = loop.outcome(stop)
    assert [a.kind for a in outcome.actions] == ["ask-reviewer", "cancel-run"]
    assert outcome.awaiting_approval
    assert outcome.anomalies[-1].action_taken == "reviewer said STOP"


def test_a_reviewers_stop_after_the_end_keeps_the_concern_serious(tmp_path: Path):
    ended = said(spike(20, Severity.MEDIUM), run_state=TerminalState.SUCCEEDED)
    loop = WatchLoop(ScriptedTarget(steps(10), ended, Snapshot()),
                     settings(tmp_path, interval=5), Recorder(), FakeClock(),
                     reviewer=Says(Answer.STOP))
    outcome = loop.outcome(loop.run())
    concern = next(a for a in outcome.anomalies if a.type is AnomalyType.LOSS_SPIKE)
    assert concern.severity is Severity.HIGH and not concern.resolved
    assert not outcome.awaiting

