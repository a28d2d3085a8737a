"""Supervision returns effects: what to say, what was decided and what the run takes in.
Nothing here touches a run or a loop, so each answer is read off the value returned."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from babysit.core.fixer import Fixer
from babysit.core.lifecycle import Ending, EndingSource
from babysit.core.reviewer import Answer, Judgment
from babysit.core.supervise import Decisions, Effects, Supervisor, fix_view
from babysit.model import ActionStatus, AnomalyType, Severity, TerminalState
from babysit.rules.catalog import CATALOG, training_problems
from babysit.snapshot import LogSnapshot, ProcessSnapshot, ProcessView, Snapshot
from tests.core.scripted import anomaly, view

AT = "2026-11-29T10:00:00Z"
ALIVE = Snapshot(process=ProcessSnapshot(
    alive=True, view=ProcessView(pid=42, alive=True, status="running", command="python train.py")))


class FakeReviewer:
    def __init__(self, answer: Answer | None, detail: str = "") -> None:
        self.judgment = Judgment(answer, detail)
        self.packets: list[Mapping[str, object]] = []

    def review(self, packet: Mapping[str, object]) -> Judgment:
        self.packets.append(packet)
        return self.judgment


class FakeControls:
    restart_known = False
    control_pid = 42

    def __init__(self) -> None:
        self.cancelled = False

    def restart(self) -> str:
        raise AssertionError("not expected")

    def stop_hung(self) -> list[int]:
        return []

    def cancel(self) -> list[int]:
        self.cancelled = True
        return [42]

    def leftovers_holding_gpu(self) -> dict[int, float]:
        return {}

    def free_leftovers(self, pids: set[int]) -> list[int]:
        return []


class Asked:
    def __init__(self, log: list[str], answer: bool | None) -> None:
        self.log = log
        self.answer = answer

    def ask(self, question: str) -> bool | None:
        self.log.append("asked")
        return self.answer


SPIKE = anomaly(AnomalyType.LOSS_SPIKE, Severity.HIGH, step=30)


def supervisor(reviewer: FakeReviewer | None = None, fixer: Fixer | None = None) -> Supervisor:
    return Supervisor(fixer, reviewer, "train.log", lambda: AT)


def fixer(log: list[str], answer: bool | None, controls: FakeControls | None = None) -> Fixer:
    return Fixer(controls or FakeControls(), fix_enabled=True, notice=log.append,
                 now=lambda: AT, approver=Asked(log, answer))


# --- the fix view --------------------------------------------------------------------


def test_the_training_problems_are_the_catalogues():
    assert training_problems() == {t for t, e in CATALOG.items() if e.training_problem}
    assert {AnomalyType.NAN_INF, AnomalyType.OOM, AnomalyType.LOSS_SCALE} <= training_problems()
    assert AnomalyType.STALLED not in training_problems()


def test_open_problems_are_serious_training_problems_only():
    open_now = (anomaly(AnomalyType.NAN_INF, Severity.BLOCKER),
                anomaly(AnomalyType.LOSS_SPIKE, Severity.MEDIUM),
                anomaly(AnomalyType.STALLED, Severity.HIGH))
    seen = fix_view(view(unresolved=open_now), ALIVE)
    assert seen.open_problems == {AnomalyType.NAN_INF}
    assert seen.open_types == {AnomalyType.NAN_INF, AnomalyType.LOSS_SPIKE, AnomalyType.STALLED}


def test_hung_means_stalled_alive_idle_and_not_saving():
    stalled = view(unresolved=(anomaly(AnomalyType.STALLED),), cpu_idle_since_progress=True)
    assert fix_view(stalled, ALIVE).hung
    assert not fix_view(replace(stalled, cpu_idle_since_progress=False), ALIVE).hung
    assert not fix_view(stalled, replace(ALIVE, log=LogSnapshot(phase="save"))).hung
    assert not fix_view(view(cpu_idle_since_progress=True), ALIVE).hung


def test_a_failed_ending_tells_the_fixer_how_it_died():
    ending = Ending(TerminalState.FAILED, EndingSource.LOG, "RuntimeError: boom", step=10,
                    attempt=1, traceback="RuntimeError: boom")
    seen = fix_view(view(ending=ending, running=False, state=TerminalState.FAILED), Snapshot())
    assert seen.failed and seen.traceback == "RuntimeError: boom"


# --- cancel proposals (no fixer) ----------------------------------------------------------


def test_a_cloud_run_with_a_blocker_gets_a_cancel_proposal_once():
    blocked = view(cancel_command="gcloud ai custom-jobs cancel 7",
                   unresolved=(anomaly(AnomalyType.JOB_FAILURE, Severity.BLOCKER),))
    effects = supervisor().propose_cancel(blocked, awaiting=())
    assert effects.awaiting == ("cancel the run (gcloud ai custom-jobs cancel 7) — because "
                                "job-failure: job-failure seen",)
    assert [(a.kind, a.status) for a in effects.actions] == [("cancel-run",
                                                              ActionStatus.NEEDS_APPROVAL)]
    assert supervisor().propose_cancel(blocked, awaiting=effects.awaiting) == Effects()
    assert supervisor().propose_cancel(replace(blocked, unresolved=()), awaiting=()) == Effects()
    assert supervisor().propose_cancel(replace(blocked, cancel_command=None), ()) == Effects()


# --- the reviewer -------------------------------------------------------------------------


def test_the_reviewer_is_asked_only_about_ambiguous_anomalies():
    asked = FakeReviewer(Answer.CONTINUE)
    assert supervisor(asked).review([anomaly(AnomalyType.NAN_INF)], view()) == Effects()
    assert asked.packets == []


def test_continue_is_noted_on_the_anomaly():
    asked = FakeReviewer(Answer.CONTINUE)
    effects = supervisor(asked).review([SPIKE], view(step=34))
    assert effects.notices == ("reviewer says CONTINUE about loss-spike",)
    assert effects.notes == ((AnomalyType.LOSS_SPIKE, "reviewer said CONTINUE"),)
    assert effects.actions[0].reason == "about loss-spike: CONTINUE"
    assert not effects.look_sooner and not effects.awaiting
    packet = asked.packets[0]
    assert packet["step"] == 34 and packet["last_losses"] == [2.1, 2.0]


def test_wait_brings_the_next_poll_forward():
    assert supervisor(FakeReviewer(Answer.WAIT)).review([SPIKE], view()).look_sooner


def test_a_reviewer_that_fails_is_reported_and_ignored():
    effects = supervisor(FakeReviewer(None, "timed out after 3s")).review([SPIKE], view())
    assert effects.notices == ("reviewer ignored: timed out after 3s",)
    assert effects.actions[0].status is ActionStatus.FAILED
    assert not effects.touch_run


def test_stop_without_a_fixer_waits_for_approval():
    effects = supervisor(FakeReviewer(Answer.STOP)).review([SPIKE], view())
    assert [a.kind for a in effects.actions] == ["ask-reviewer", "cancel-run"]
    assert effects.awaiting[0].startswith("stop the run — because the reviewer said STOP about "
                                          "loss-spike at step 30")
    assert effects.stop_proposal is None


def test_stop_with_a_fixer_is_put_to_the_user_by_the_fixer():
    log: list[str] = []
    watch = supervisor(FakeReviewer(Answer.STOP), fixer(log, answer=None))
    effects = watch.review([SPIKE], view())
    assert effects.stop_proposal is not None and not effects.awaiting
    stop = watch.propose_stop(effects.stop_proposal, view(), ALIVE)
    assert stop.awaiting and stop.commands == ("kill -TERM 42",)
    assert stop.actions[0].status is ActionStatus.NEEDS_APPROVAL


def test_stop_about_an_ended_run_keeps_the_concern_open():
    ended = view(running=False, state=TerminalState.SUCCEEDED)
    effects = supervisor(FakeReviewer(Answer.STOP)).review([SPIKE], ended)
    assert effects.reviewer_stopped == (AnomalyType.LOSS_SPIKE,
                                        "reviewer said STOP after the run had ended")
    assert not effects.awaiting and effects.touch_run


# --- the fixer's turn and the user's approval ---------------------------------------------


def test_the_poll_is_shown_before_the_user_is_asked():
    log: list[str] = []
    controls = FakeControls()
    watch = supervisor(fixer=fixer(log, answer=True, controls=controls))
    nan = view(unresolved=(anomaly(AnomalyType.NAN_INF, Severity.BLOCKER),))
    effects = watch.consider(nan, ALIVE, awaiting=(), before_asking=lambda: log.append("shown"))
    assert log.index("shown") < log.index("asked")
    assert controls.cancelled and effects.cancelled == "run cancelled with the user's approval"
    assert (AnomalyType.NAN_INF, effects.cancelled) in effects.notes
    assert ("cancel-run", ActionStatus.APPLIED) in [(a.kind, a.status) for a in effects.actions]


def test_nobody_to_ask_leaves_the_proposals_waiting():
    log: list[str] = []
    watch = supervisor(fixer=fixer(log, answer=None))
    nan = view(unresolved=(anomaly(AnomalyType.NAN_INF, Severity.BLOCKER),))
    effects = watch.consider(nan, ALIVE, awaiting=(), before_asking=lambda: None)
    assert effects.cancelled is None and not effects.touch_run
    # No checkpoint to roll back to: a lower rate, and cancelling
    assert [text.split(" ")[0] for text in effects.awaiting] == ["relaunch", "cancel"]
    assert effects.commands == ("kill -TERM 42",)


def test_one_list_of_decisions_whoever_decided():
    decisions = Decisions()
    log: list[str] = []
    watch = supervisor(FakeReviewer(Answer.STOP), fixer(log, answer=None))
    review = watch.review([SPIKE], view())
    decisions.add(review)
    decisions.add(watch.propose_stop(review.stop_proposal or "", view(), ALIVE))
    assert [a.kind for a in decisions.actions] == ["ask-reviewer", "cancel-run"]
    assert len(decisions.awaiting) == 1 and decisions.commands == ["kill -TERM 42"]
