"""What the user is shown: the poll and summary reports built from a RunView, the notes
on the interval, the order of a poll, its anomalies and its summary, and the outcome."""

from __future__ import annotations

from babysit.config import PollSettings
from babysit.core.backoff import PollOutcome
from babysit.core.checkpoints import CheckpointChoice
from babysit.core.present import Presenter, Subject, interval_note
from babysit.model import Action, ActionStatus, AnomalyType, TerminalState
from babysit.snapshot import LogSnapshot, Snapshot
from tests.conftest import FakeClock
from tests.core.scripted import Recorder, anomaly, view

SUBJECT = Subject("train.log", "local-log", "/runs/train.log")


def presenter(every: int = 0) -> tuple[Presenter, Recorder]:
    seen = Recorder()
    return Presenter(seen, SUBJECT, FakeClock(), 1000.0, summary_every=every), seen


def test_eta_from_the_rate_and_the_steps_left():
    show, _ = presenter()
    report = show.report(view(step=40, target_steps=100, steps_per_second=2.0),
                         Snapshot(log=LogSnapshot(new_lines=3)), (), interval=30, poll=1)
    assert report.throughput == (2.0, "steps/s")
    assert report.eta_seconds == 30.0
    assert report.loss == ("loss", 2.0) and report.log_path == "/runs/train.log"
    assert report.percent == 40.0


def test_a_quiet_run_has_no_rate_but_how_long_it_has_been_quiet():
    show, _ = presenter()
    quiet = view(steps_per_second=2.0, quiet_polls=2, quiet_since_progress=50.0)
    report = show.report(quiet, Snapshot(log=LogSnapshot(quiet_for=90.0)), (), interval=30, poll=3)
    assert report.throughput is None and report.eta_seconds is None
    assert report.no_progress_for == 90.0  # the log was quiet longer than babysit saw


def test_progress_a_moment_ago_is_not_no_progress():
    show, _ = presenter()
    report = show.report(view(quiet_polls=1, quiet_since_progress=0.4), Snapshot(), (),
                         interval=30, poll=3)
    assert report.no_progress_for is None


def test_lines_read_early_count_in_the_next_report_once():
    show, _ = presenter()
    show.read_early(5)
    first = show.report(view(), Snapshot(log=LogSnapshot(new_lines=2)), (), interval=30, poll=1)
    second = show.report(view(), Snapshot(log=LogSnapshot(new_lines=2)), (), interval=30, poll=2)
    assert (first.new_lines, second.new_lines) == (7, 2)


def test_interval_notes_say_what_changed_and_why():
    backoff = PollSettings(interval=30, backoff_factor=2)
    assert interval_note(30, PollOutcome(), backoff) == "backed off 30s→60s"
    assert interval_note(120, PollOutcome(anomaly=True), backoff) == \
        "interval reset to 30s (anomaly)"
    assert interval_note(30, PollOutcome(anomaly=True), backoff) == ""  # nothing changed
    schedule = PollSettings(schedule=(600, 1200))
    assert interval_note(600, PollOutcome(), schedule) == "schedule 600s→1200s"


def test_summaries_every_n_polls_on_an_anomaly_and_when_stopping():
    show, seen = presenter(every=3)
    plain = view()
    for poll in range(4):
        show.emit(plain, show.report(plain, Snapshot(), (), 30, poll), 30.0, "", poll)
    spike = (anomaly(AnomalyType.LOSS_SPIKE),)
    show.emit(plain, show.report(plain, Snapshot(), spike, 30, 4), 30.0, "", 4)
    show.emit(plain, show.report(plain, Snapshot(), spike, 30, 5), None, "", 5)
    assert [s.reason for s in seen.summaries] == ["every 3 polls", "stopping"]
    assert seen.lines[0] == "baseline step 10"
    assert seen.lines[-3:] == ["poll step 10 next None", "anomaly loss-spike",
                               "summary (stopping)"]


def test_an_anomaly_earns_a_summary_but_not_two_in_a_row():
    show, seen = presenter(every=0)
    spike = (anomaly(AnomalyType.LOSS_SPIKE),)
    for poll in range(1, 5):
        show.emit(view(), show.report(view(), Snapshot(), spike, 30, poll), 30.0, "", poll)
    assert [s.reason for s in seen.summaries] == ["anomaly", "anomaly"]  # polls 1 and 3


def test_a_poll_shown_before_a_question_is_not_shown_again():
    show, seen = presenter()
    spike = (anomaly(AnomalyType.LOSS_SPIKE),)
    report = show.report(view(), Snapshot(), spike, 30, 2)
    show.show_first(lambda: report, baseline=False)
    seen.lines.append("question")
    show.show_first(lambda: report, baseline=False)  # a second question: shown once
    show.emit(view(), report, 30.0, "", 2)
    assert seen.lines == ["poll step 10 next None", "anomaly loss-spike", "question",
                          "summary (anomaly)"]
    show.emit(view(), show.report(view(), Snapshot(), (), 30, 3), 30.0, "", 3)
    assert seen.lines[-1] == "poll step 10 next 30.0"  # the next poll is shown again


def test_the_emitted_poll_says_the_state_now_and_the_next_poll():
    show, seen = presenter()
    report = show.report(view(), Snapshot(), (), 30, 1)
    ended = view(state=TerminalState.FAILED, running=False)
    show.emit(ended, report, None, "", 1)
    assert seen.reports[-1].state is TerminalState.FAILED  # not as built
    assert seen.reports[-1].next_poll_seconds is None


def test_the_outcome_has_every_decision_in_time_order_and_the_service_commands():
    show, _ = presenter()
    late = Action("cancel-run", ActionStatus.NEEDS_APPROVAL, "stop it", "2026-11-29T10:05:00Z")
    early = Action("ask-reviewer", ActionStatus.APPLIED, "about loss-spike: STOP",
                   "2026-11-29T10:01:00Z")
    final = view(service_commands=("gcloud ai custom-jobs describe 1",),
                 checkpoint=CheckpointChoice("ckpt-20", "newest complete save"))
    outcome = show.outcome(final, actions=[late, early], awaiting=["stop it"],
                           commands=["kill -TERM 42"], rewatch=("babysit train.log",),
                           stop_reason="waiting for your approval: stop it",
                           interrupted=False, polls=4)
    assert outcome.actions == (early, late)
    assert outcome.commands == ("kill -TERM 42", "gcloud ai custom-jobs describe 1")
    assert outcome.awaiting_approval and outcome.polls == 5
    assert outcome.checkpoint is not None and outcome.checkpoint.path == "ckpt-20"
    assert (outcome.target, outcome.target_type) == ("train.log", "local-log")
