"""What each kind of completion evidence proves, given to the lifecycle directly (issue 23,
point 4): the framework's word that it reached its plan, the last planned epoch read from
the order of lines, a helper thread failing after the end, a 0-based counter at a small
plan."""

from __future__ import annotations

from babysit.core.lifecycle import RunLifecycle, premature
from babysit.model import EventKind, LogEvent, TerminalState
from babysit.parsing.endings import PLAN_REACHED, SAID
from babysit.parsing.final_epoch import FINAL_EPOCH, LAST_EPOCH
from babysit.parsing.thread_failures import IN_THREAD


def _at(step: int, target: int, event: LogEvent) -> RunLifecycle:
    life = RunLifecycle()
    life.on_step(step, target)
    life.on_event(event, step)
    return life


def _settle(life: RunLifecycle, step: int, target: int, settled: bool = True) -> TerminalState:
    ending = life.settle_from_log(step=step, reached=False, confirm_pending=True,
                                  settled=settled, target=target)
    return ending.state if ending is not None else TerminalState.RUNNING


def test_a_zero_based_counter_one_short_of_a_small_plan_is_no_early_end():
    # detectron2's `iter: 39` of `MAX_ITER: 40`: the last iteration of a 0-based loop
    assert not premature(39, 40) and not premature(980, 1000)
    assert premature(30, 40) and premature(16000, 111000)


def test_the_frameworks_word_that_it_reached_its_plan_ends_the_run_wherever_it_stands():
    done = LogEvent(EventKind.COMPLETED, "`Trainer.fit` stopped: `max_epochs=6000` reached.",
                    PLAN_REACHED)
    assert _settle(_at(7440, 12000, done), 7440, 12000) is TerminalState.SUCCEEDED


def test_the_last_epoch_ends_the_run_once_the_log_stops_whatever_the_inner_counter():
    last = LogEvent(EventKind.COMPLETED, "epoch 20 of 20, the last planned, was trained",
                    LAST_EPOCH)
    assert _settle(_at(10, 14, last), 10, 14, settled=False) is TerminalState.RUNNING
    assert _settle(_at(10, 14, last), 10, 14) is TerminalState.SUCCEEDED


def test_a_sentence_well_short_of_the_plan_proves_no_success():
    # YOLOX prints it from `after_train`, however its loop left: once the log has stopped
    # on it, the run is over without its plan done (ENDED); while the log moves it may be
    # a stage's, and proves nothing yet.
    said = LogEvent(EventKind.COMPLETED, "Training of experiment is done", SAID)
    assert _settle(_at(160, 14786, said), 160, 14786) is TerminalState.ENDED
    assert _settle(_at(160, 14786, said), 160, 14786, settled=False) is TerminalState.RUNNING
    assert _settle(_at(14700, 14786, said), 14700, 14786) is TerminalState.SUCCEEDED


def test_a_helper_thread_failing_after_the_end_leaves_the_end_standing():
    said = LogEvent(EventKind.COMPLETED, "End training....", SAID)
    life = _at(20000, 20000, said)
    life.on_event(LogEvent(EventKind.EXCEPTION, "OSError: handle is closed",
                           "OSError: handle is closed" + IN_THREAD), 20000)
    assert _settle(life, 20000, 20000) is TerminalState.SUCCEEDED
    main = _at(20000, 20000, said)
    main.on_event(LogEvent(EventKind.EXCEPTION, "OSError: disk full", "OSError: disk full"),
                  20000)
    assert _settle(main, 20000, 20000) is TerminalState.FAILED


def test_a_sentence_after_the_outer_counter_at_its_total_is_no_early_end():
    # YOLOv3's last table row at `499/499`, then `274 epochs completed in 35.859 hours.`,
    # with an inner bar's total (522) taken for the plan: the counter already proved it
    for held in (FINAL_EPOCH, LAST_EPOCH, PLAN_REACHED):
        life = _at(0, 522, LogEvent(EventKind.COMPLETED, "499/499 0G 0.95 33/33", held))
        life.on_event(LogEvent(EventKind.COMPLETED, "274 epochs completed in 35.859 hours."), 0)
        assert _settle(life, 0, 522) is TerminalState.SUCCEEDED, held
    # without the counter, the sentence that early is an early end
    alone = _at(0, 522, LogEvent(EventKind.COMPLETED, "274 epochs completed in 35.859 hours."))
    assert _settle(alone, 0, 522) is TerminalState.ENDED
