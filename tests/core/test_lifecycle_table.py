"""The lifecycle's transition table, one test per edge (issue 28): a RunLifecycle brought
into each phase by real evidence, then given each kind of evidence through its real
handler, stands where `transitions.TRANSITIONS` says — and where the table has no edge,
it does not move."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from babysit.core.lifecycle import RunLifecycle
from babysit.core.transitions import TRANSITIONS, Evidence, Phase, next_phase
from babysit.model import EventKind, ExitInfo, LogEvent, TerminalState

TARGET = 100
_CRASH = LogEvent(EventKind.EXCEPTION, "RuntimeError: CUDA error: an illegal memory access",
                  "RuntimeError: CUDA error: an illegal memory access")
_DONE = LogEvent(EventKind.COMPLETED, "Training completed.")


def _running() -> RunLifecycle:
    life = RunLifecycle()
    life.on_step(10, TARGET)
    return life


def _failing() -> RunLifecycle:
    life = _running()
    life.on_event(_CRASH, 10)
    return life


def _finishing() -> RunLifecycle:
    life = _running()
    life.on_step(TARGET, TARGET)
    life.on_event(_DONE, TARGET)
    return life


def _failing_finished() -> RunLifecycle:
    life = _finishing()
    life.on_event(_CRASH, TARGET)
    return life


def _ended() -> RunLifecycle:
    life = _failing()
    life.settle_from_log(step=10, reached=False, confirm_pending=True, settled=True,
                         target=TARGET)
    return life


def _closed() -> RunLifecycle:
    life = _running()
    life.on_process_gone(ExitInfo(1, None, "own child"), None, 10, TARGET)
    return life


INTO: dict[Phase, Callable[[], RunLifecycle]] = {
    Phase.RUNNING: _running, Phase.FAILING: _failing, Phase.FINISHING: _finishing,
    Phase.FAILING_FINISHED: _failing_finished, Phase.ENDED: _ended, Phase.CLOSED: _closed,
}


def _scheduler_line(life: RunLifecycle, step: int = 10) -> None:
    life.on_event(LogEvent(EventKind.JOB_STATE, "slurmstepd: error: *** JOB 42 ON n1 "
                                                "CANCELLED AT 2024-01-01T00:00:00 ***",
                           "CANCELLED"), step)


def _late_line(life: RunLifecycle) -> None:
    """A step after a scheduler's end, ahead of it: the dying job's buffered output."""
    if life.phase is not Phase.CLOSED:
        _scheduler_line(life)
    life.on_step(11, TARGET)


def _step(step: int) -> Callable[[RunLifecycle], object]:
    """Training moving to `step`. Right after a failure, the first step forward is the
    dying process's last output (see the test below): training goes on at the second."""
    def apply(life: RunLifecycle) -> object:
        if life.phase is Phase.FAILING:
            life.on_step(step - 1, TARGET)
        return life.on_step(step, TARGET)
    return apply


APPLY: dict[Evidence, Callable[[RunLifecycle], object]] = {
    Evidence.TRAINED: _step(20),
    Evidence.TRAINED_TO_PLAN: _step(TARGET),
    Evidence.EPOCH_MOVED: lambda life: life.on_epoch(),
    Evidence.LATE_LINE: _late_line,
    Evidence.FAILURE: lambda life: life.on_event(_CRASH, 20),
    Evidence.COMPLETION: lambda life: life.on_event(_DONE, 20),
    Evidence.LOG_ENDING: lambda life: life.settle_from_log(
        step=TARGET, reached=True, confirm_pending=True, settled=True, target=TARGET),
    Evidence.SCHEDULER_END: _scheduler_line,
    Evidence.FINAL_ENDING: lambda life: life.on_process_gone(
        ExitInfo(0, None, "own child"), None, TARGET, TARGET),
    Evidence.USER_CANCEL: lambda life: life.cancelled_by_user(20),
    Evidence.LAUNCHER_RESTART: lambda life: life.on_event(LogEvent(
        EventKind.RESTARTED, "[INFO] Restarting workers (restart_count=1)", "restart_count=1"),
        20),
    Evidence.RESTART: lambda life: life.restarted(),
    Evidence.RELAUNCHED: lambda life: life.on_event(LogEvent(
        EventKind.LAUNCHED, "args: Namespace(lr=0.01, batch_size=8)"), 20),
}


def test_each_phase_is_reached_by_its_evidence():
    assert {phase: make().phase for phase, make in INTO.items()} == {p: p for p in Phase}


@pytest.mark.parametrize(("phase", "evidence"), sorted(TRANSITIONS, key=str),
                         ids=lambda v: str(v).replace(" ", "-"))
def test_edge(phase: Phase, evidence: Evidence):
    life = INTO[phase]()
    APPLY[evidence](life)
    assert life.phase is TRANSITIONS[(phase, evidence)]


_ABSENT = sorted({(p, e) for p in Phase for e in Evidence} - set(TRANSITIONS)
                 - {(Phase.ENDED, Evidence.LATE_LINE)}, key=str)


@pytest.mark.parametrize(("phase", "evidence"), _ABSENT,
                         ids=lambda v: str(v).replace(" ", "-"))
def test_evidence_without_an_edge_leaves_the_phase(phase: Phase, evidence: Evidence):
    life = INTO[phase]()
    if evidence is Evidence.LATE_LINE:
        return  # read as a late line only after a scheduler's end (the test below)
    APPLY[evidence](life)
    assert life.phase is phase


def test_a_late_line_after_a_schedulers_end_leaves_it_ended():
    life = _running()
    _late_line(life)
    assert life.phase is Phase.ENDED
    assert life.state is TerminalState.CANCELLED


def test_a_requeued_job_behind_the_schedulers_end_is_a_new_attempt():
    life = _running()
    life.on_step(50, TARGET)
    _scheduler_line(life, 50)
    life.on_step(30, TARGET)  # resumed from a checkpoint before the end
    assert (life.phase, life.attempt) == (Phase.RUNNING, 2)


def test_only_the_table_decides_whether_an_end_is_final():
    assert next_phase(Phase.RUNNING, Evidence.LOG_ENDING) is Phase.ENDED
    ended = _ended()
    assert ended.ending is not None and not ended.ending.final
    closed = _closed()
    assert closed.ending is not None and closed.ending.final


def test_one_step_forward_after_a_failure_is_the_dying_processs_last_output():
    life = _failing()
    assert life.on_step(11, TARGET) is False
    assert life.phase is Phase.FAILING
    assert life.on_step(12, TARGET) is True
    assert life.phase is Phase.RUNNING


def test_a_step_back_after_a_failure_is_a_resume_at_once():
    life = _failing()
    assert life.on_step(5, TARGET) is True
    assert life.phase is Phase.RUNNING
