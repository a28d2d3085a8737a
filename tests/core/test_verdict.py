"""The verdict is a pure function of the watch's outcome: its truth table, row by row."""

from __future__ import annotations

from dataclasses import replace

import pytest

from babysit.core.checkpoints import CheckpointChoice
from babysit.core.lifecycle import Ending, EndingSource
from babysit.core.outcome import WatchOutcome
from babysit.core.session import exit_code_for
from babysit.core.verdict import decide
from babysit.exit_codes import ExitCode
from babysit.model import (
    Action,
    ActionStatus,
    Anomaly,
    AnomalyType,
    Decision,
    Severity,
    TerminalState,
)

S = TerminalState
BLOCKER = Anomaly(AnomalyType.NAN_INF, Severity.BLOCKER, 12, "non-finite metric: loss=nan")
HIGH = Anomaly(AnomalyType.LOSS_SPIKE, Severity.HIGH, 30, "loss spike")
MEDIUM = Anomaly(AnomalyType.SLOW_THROUGHPUT, Severity.MEDIUM, 40, "slow")
RESOLVED_BLOCKER = Anomaly(AnomalyType.OOM, Severity.BLOCKER, 5, "oom", resolved=True)
CANCEL = Action("cancel-run", ActionStatus.NEEDS_APPROVAL, "cancel the run now — because x",
                "2026-11-30T10:00:00Z")


def ending(state: TerminalState, confirmed: bool = True,
           source: EndingSource = EndingSource.EXIT_STATUS) -> Ending:
    return Ending(state, source, "evidence", 50, 1, confirmed=confirmed)


def outcome(state: TerminalState, anomalies: tuple[Anomaly, ...] = (),
            end: Ending | None = None, awaiting: bool = False,
            interrupted: bool = False) -> WatchOutcome:
    if end is None and state is not S.RUNNING:
        end = ending(state)
    return WatchOutcome(target="train.log", target_type="local-log", state=state, ending=end,
                        step=50, target_steps=100, saw_training=True, anomalies=anomalies,
                        metrics={"loss": 0.42},
                        actions=(CANCEL,) if awaiting else (),
                        awaiting=("cancel the run now",) if awaiting else (), polls=3,
                        interrupted=interrupted)


# (state, anomalies, completion confirmed, proposal waiting) -> (decision, exit code)
TABLE = [
    (S.SUCCEEDED, (), True, False, Decision.GO, ExitCode.GO),
    (S.SUCCEEDED, (MEDIUM,), True, False, Decision.GO, ExitCode.GO),
    (S.SUCCEEDED, (RESOLVED_BLOCKER,), True, False, Decision.GO, ExitCode.GO),
    (S.SUCCEEDED, (HIGH,), True, False, Decision.CONDITIONAL, ExitCode.CONDITIONAL),
    (S.SUCCEEDED, (BLOCKER,), True, False, Decision.NO_GO, ExitCode.NO_GO),
    (S.SUCCEEDED, (), False, False, Decision.CONDITIONAL, ExitCode.CONDITIONAL),
    (S.SUCCEEDED, (BLOCKER,), False, False, Decision.NO_GO, ExitCode.NO_GO),
    (S.FAILED, (), True, False, Decision.NO_GO, ExitCode.NO_GO),
    (S.CANCELLED, (), True, False, Decision.NO_GO, ExitCode.NO_GO),
    (S.TIMEOUT, (MEDIUM,), True, False, Decision.NO_GO, ExitCode.NO_GO),
    (S.RUNNING, (), True, False, Decision.CONDITIONAL, ExitCode.CONDITIONAL),
    (S.RUNNING, (HIGH,), True, False, Decision.CONDITIONAL, ExitCode.CONDITIONAL),
    (S.RUNNING, (BLOCKER,), True, False, Decision.NO_GO, ExitCode.NO_GO),
    # The code agrees with the decision: a NO-GO with a proposal waiting is still 1.
    (S.RUNNING, (BLOCKER,), True, True, Decision.NO_GO, ExitCode.NO_GO),
    (S.RUNNING, (), True, True, Decision.CONDITIONAL, ExitCode.CONDITIONAL),
    # A proposal left over when the run has ended is no reason to wait for approval.
    (S.FAILED, (BLOCKER,), True, True, Decision.NO_GO, ExitCode.NO_GO),
    (S.SUCCEEDED, (), True, True, Decision.GO, ExitCode.GO),
]


@pytest.mark.parametrize("state, anomalies, confirmed, awaiting, decision, code", TABLE)
def test_truth_table(state, anomalies, confirmed, awaiting, decision, code):
    end = ending(state, confirmed) if state is not S.RUNNING else None
    watched = outcome(state, anomalies, end, awaiting)
    verdict = decide(watched, "r")
    assert verdict.decision is decision
    assert exit_code_for(verdict, watched) is code
    assert verdict.summary.startswith(decision.value)


def test_interrupted_and_unreachable_have_their_own_exit_codes():
    verdict = decide(outcome(S.RUNNING, interrupted=True), "r")
    assert exit_code_for(verdict, outcome(S.RUNNING, interrupted=True)) is ExitCode.INTERRUPTED
    gone = WatchOutcome(target="x.log", target_type="local-log", state=S.RUNNING,
                        unreachable="log file not found: x.log")
    verdict = decide(gone, "r")
    assert (verdict.decision, verdict.confidence.value) == (Decision.CONDITIONAL, "low")
    assert exit_code_for(verdict, gone) is ExitCode.UNREACHABLE


def test_unconfirmed_completion_is_a_finding_that_says_so():
    verdict = decide(outcome(S.SUCCEEDED, end=ending(S.SUCCEEDED, confirmed=False)), "r")
    assert [f.title for f in verdict.findings] == ["completion not confirmed"]
    assert "evidence" in verdict.summary


def test_confidence_follows_the_evidence():
    by_line = decide(outcome(S.SUCCEEDED, end=ending(S.SUCCEEDED)), "r")
    by_steps = decide(outcome(S.SUCCEEDED, end=ending(S.SUCCEEDED,
                                                      source=EndingSource.STEPS)), "r")
    assert (by_line.confidence.value, by_steps.confidence.value) == ("high", "medium")


def test_a_go_on_a_log_with_no_measure_of_learning_is_low_and_says_why():
    shown = outcome(S.SUCCEEDED, end=ending(S.SUCCEEDED))
    bare = replace(shown, metrics={"it/s": 5.8, "gpu_mem": 3.2, "lr": 1e-4})
    verdict = decide(bare, "r")
    assert (verdict.decision, verdict.confidence.value) == (Decision.GO, "low")
    assert [(f.title, f.severity.value) for f in verdict.findings] == [
        ("no measure of learning in the log", "medium")]
    assert decide(shown, "r").confidence.value == "high" and not decide(shown, "r").findings


def test_rollback_advice_names_the_checkpoint_and_why():
    watched = WatchOutcome(target="t", target_type="local-log", state=S.RUNNING,
                           anomalies=(BLOCKER,), saw_training=True,
                           checkpoint=CheckpointChoice("out/ckpt-10", "newest saved before any "
                                                                      "blocker"))
    [finding] = decide(watched, "r").findings
    assert "out/ckpt-10" in finding.fix and "newest saved before any blocker" in finding.fix


def test_decide_is_pure():
    watched = outcome(S.RUNNING, (HIGH, MEDIUM), awaiting=True)
    assert decide(watched, "r") == decide(watched, "r")


@pytest.mark.parametrize("from_zero, completed", [(False, 99), (True, 100)])
def test_steps_completed_count_a_zero_based_index_once(from_zero: bool, completed: int):
    # A tracker's run counted from step 0: its last index 99 is 100 steps completed. The
    # anomalies keep the tracker's own step, as its charts show it.
    spike = Anomaly(AnomalyType.LOSS_SPIKE, Severity.MEDIUM, 40, "loss spike")
    watched = WatchOutcome(target="t", target_type="wandb", state=S.SUCCEEDED,
                           ending=ending(S.SUCCEEDED), step=99, steps_from_zero=from_zero,
                           target_steps=100, saw_training=True, anomalies=(spike,), polls=3)
    verdict = decide(watched, "r")
    assert verdict.total_steps == completed
    assert f"training finished after {completed}/100 steps" in verdict.summary
    assert verdict.anomalies[0].step == 40


def test_a_crash_at_a_step_counted_from_zero_says_so_beside_the_steps_completed():
    crash = Anomaly(AnomalyType.CRASH, Severity.BLOCKER, 62, "the process died")
    watched = WatchOutcome(target="t", target_type="wandb", state=S.FAILED,
                           ending=ending(S.FAILED), step=62, steps_from_zero=True,
                           target_steps=300, saw_training=True, anomalies=(crash,), polls=3)
    verdict = decide(watched, "r")
    assert verdict.total_steps == 63
    assert verdict.findings[0].title == "crash at step 62 (counted from 0)"


def test_no_step_is_no_steps_completed_even_from_zero():
    watched = WatchOutcome(target="t", target_type="wandb", state=S.RUNNING,
                           steps_from_zero=True, polls=1)
    assert decide(watched, "r").total_steps is None
