"""StepOrigin: whether a tracker's run numbers its steps from 0, and the fallback
comparing a tracker's steps with its log's."""

from __future__ import annotations

from babysit.model import Record
from babysit.snapshot import LogSnapshot, Snapshot
from babysit.targets.base import TargetUnavailable
from babysit.targets.common.tracker_rows import StepOrigin


def test_the_first_step_decides():
    origin = StepOrigin()
    assert origin.from_zero is False  # nothing seen yet
    assert origin.see([None, 0, 1, 2], 100) is True
    assert origin.see([3, 99], 100) is True  # index 99 of 100 steps
    later = StepOrigin()
    assert later.see([1, 2], 100) is False
    assert later.see([0], 100) is False  # only the first step decides


def test_a_run_that_logs_its_planned_count_as_a_step_counts_completed_steps():
    origin = StepOrigin()
    assert origin.see([0], 20) is True  # an evaluation before training, at step 0
    assert origin.see(range(1, 21), 20) is False  # ... then steps 1..20
    assert origin.see([21], 20) is False


def test_a_trainer_step_is_a_count():
    origin = StepOrigin()
    origin.see([0], None)
    origin.counts()
    assert origin.see([5], None) is False


class _Scripted:
    target_type = "wandb"
    label = "t"

    def __init__(self, *snapshots: Snapshot | None) -> None:
        self.snapshots = list(snapshots)

    def poll(self, final: bool = False) -> Snapshot:
        snapshot = self.snapshots.pop(0)
        if snapshot is None:
            raise TargetUnavailable("connection refused")
        return snapshot

    def close(self) -> None:
        pass


def _steps(*steps: int, from_zero: bool = False) -> Snapshot:
    return Snapshot(LogSnapshot(records=tuple(Record(step=s, metrics={"loss": 1.0})
                                              for s in steps), steps_from_zero=from_zero))


def test_fallback_compares_a_zero_based_tracker_with_its_log_as_steps_completed():
    from babysit.targets.common.fallback import FallbackTarget

    tracker = _Scripted(_steps(0, 1, 2, from_zero=True), None,
                        _steps(3, 4, 5, 6, from_zero=True))
    log = _Scripted(_steps(1, 2, 3, 4, 5))  # the log counts steps completed
    target = FallbackTarget(tracker, lambda: log, "train.log", "W&B")
    assert [r.step for r in target.poll().log.records] == [0, 1, 2]  # 3 steps completed
    assert [r.step for r in target.poll().log.records] == [4, 5]  # the log's newer steps
    # Back on the tracker: index 5 (the 6th step) is new, index 4 (the 5th) is not.
    back = target.poll()
    assert ([r.step for r in back.log.records], back.log.steps_from_zero) == ([5, 6], True)
