"""Epochs that shrank to almost nothing after the run had trained full ones: the loop goes
on counting its epochs while its data loader hands it a batch or none each time (issue
24, item 2: not learning).

A loader built once and exhausted by the first epoch, an epoch-iteration counter never
reset, a sampler or a filter that empties the dataset after the first pass: the epochs
the plan counts on pass, each in a second, and the schedule tied to them (a learning
rate decayed over epochs) runs through on no data. ACGPN's virtual try-on run trained
5,000 steps in its first epoch, then one step in each of epochs 2 to 132 of 200 (`[step-
5001]`, `End of epoch 2 / 200  Time Taken: 1 sec`, sealed-151): what it will save is the
first epoch's model.

An epoch's length is measured twice, between the records at which the epoch's number
moves on: in steps (the run's own counter) and in training records (lines whose step moved on).
Both must have fallen to a hundredth of the run's longest epoch, for ten epochs in a
row, for the run to be judged: a log that prints its step only now and then (a step
carried over from an older line) shows short epochs in steps, not in records, and a log
that prints fewer lines per epoch than it did shows fewer records, not fewer steps.
"""

from __future__ import annotations

import math
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_SHARE = 0.01  # an epoch this share of the longest, or less, has shrunk
_IN_A_ROW = 10  # shrunken epochs in a row before the run is judged
_FULL_STEPS = 100  # the longest epoch ran this many steps at least ...
_FULL_RECORDS = 20  # ... and printed this many training records


class ShrunkenEpochRule:
    """Epochs shrunk to a hundredth of the run's full ones, ten in a row (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._epoch: int | None = None  # the epoch the latest records named
        self._mark: tuple[int, int] | None = None  # (step, records) where it began
        self._first_step: int | None = None
        self._records = 0  # training records so far
        self._full_steps = 0.0  # the longest epoch so far, in steps ...
        self._full_records = 0.0  # ... and in training records
        self._shrunk = 0  # epochs in a row shrunk
        self._raised = False

    def observe(self, point: Observation) -> list[Signal]:
        step = point.step
        if step is None:
            return []
        if self._first_step is None:
            self._first_step = step
        if point.advanced and point.metrics:
            self._records += 1  # (a record whose step moved: a GAN's names no one loss)
        if point.epoch is None or not math.isfinite(point.epoch):
            return []
        epoch = math.floor(point.epoch)
        if self._epoch is not None and self._mark is not None and epoch == self._epoch - 1 \
                and step >= self._mark[0]:
            # The epoch just ended, named by its own number at the step that ended it
            # (Lightning's checkpoint callback, `Epoch 0, global step 255: 'val_loss'
            # reached …`, after the bar's `Epoch 0: 255/255` stood at epoch 1.0; or at a
            # global step of its own, gradients accumulated): the epoch's end said again,
            # no count gone back (read so, each epoch seemed to begin again and run 0
            # steps). A step gone back with it is a resume, measured from there.
            return []
        if self._epoch is None or epoch < self._epoch:
            # The first epoch named (the records before it were its, and perhaps more
            # epochs': a log that names epochs as they end, counting from 0 or 1), or a
            # count that went back (a new run or a resumed one): measured from here.
            if self._epoch is None and epoch > 0:
                self._measured(step - self._first_step, self._records, epoch + 1)
            self._epoch, self._mark = epoch, (step, self._records)
            return []
        if epoch == self._epoch:
            return []
        assert self._mark is not None
        steps, records = step - self._mark[0], self._records - self._mark[1]
        spanned = epoch - self._epoch
        self._epoch, self._mark = epoch, (step, self._records)
        if spanned > 1:
            self._shrunk = 0  # (epochs not seen one by one: no epoch measured)
            return []
        return self._judged(steps, records, epoch)

    def _measured(self, steps: int, records: int, epochs: int) -> None:
        self._full_steps = max(self._full_steps, steps / epochs)
        self._full_records = max(self._full_records, records / epochs)

    def _judged(self, steps: int, records: int, epoch: int) -> list[Signal]:
        full_steps, full_records = self._full_steps, self._full_records
        shrunk = full_steps >= _FULL_STEPS and full_records >= _FULL_RECORDS \
            and steps <= _SHARE * full_steps and records <= max(1.0, _SHARE * full_records)
        self._measured(steps, records, 1)
        if not shrunk:
            self._shrunk = 0
            if self._raised and steps >= 0.1 * full_steps:
                self._raised = False
                return [Resolve(AnomalyType.NOT_LEARNING,
                                f"epoch {epoch} trained {steps} steps again",
                                key="shrunken-epochs")]
            return []
        self._shrunk += 1
        if self._raised or self._shrunk < _IN_A_ROW:
            return []
        self._raised = True
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: each of the last {self._shrunk} epochs ran {steps} "
                      f"step(s) or so, where its full epochs ran about {full_steps:.0f}: "
                      "the data loader hands the loop (almost) nothing, so the epochs "
                      "the plan counts on pass without training (a loader exhausted by "
                      "the first epoch, an iteration counter never reset)",
                      key="shrunken-epochs", severity=Severity.BLOCKER)]
