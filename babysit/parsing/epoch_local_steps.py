"""A step counter that starts again after each epoch's summary: the epoch's own.

A hand-written loop often prints its iteration within the epoch, then the epoch's
summary, then the next epoch's iterations from 0 again (Graph WaveNet: `Iter: 350, Train
Loss: 421.1`, then `Epoch: 001, Train Loss: 388.1, … Valid Loss: 409.2`, then `Iter: 000,
Train Loss: 383.1`). Read as the run's steps, the counter goes back: a relaunch, whose
new stretch is judged afresh, and a loss that blew up 33-fold in epoch 1 was set aside
with it. A counter that goes back to its first value right after a summary that closed an
epoch, with no start-up between, counts that epoch's iterations: its steps are placed
after the epoch before (the last step plus the counter's interval).

A counter that never moves while the epoch does is the record's place in its epoch, not a
step (a captcha CNN's `('epoch:', 7, 'step:', 0, 'loss:', 0.17)`, printed at each epoch's
first batch): once it has stood still over two epochs and never moved, it is dropped, and
the run's progress is its epochs.
"""

from __future__ import annotations


class EpochLocalSteps:
    """Places an epoch-local counter's steps in the run."""

    def __init__(self) -> None:
        self._offset = 0
        self._first: int | None = None  # the counter's first value (0 or 1)
        self._last: int | None = None  # its last value as printed
        self._gap = 1  # its interval as printed
        self._closed = False  # an epoch's summary came since its last value
        # The counter's value and the epoch of the last record that had both, and how many
        # epochs it stood still over (-1: it moved once, so it counts).
        self._still_at: tuple[int, float] | None = None
        self._still = 0

    def epoch_closed(self) -> None:
        """A record that closes an epoch (its summary, with no step of its own)."""
        if self._last is not None:
            self._closed = True

    def stands_still(self, step: int, epoch: float | None) -> bool:
        """Whether the counter has stood still while the epoch moved, every time so far
        (two epochs or more): a place in the epoch, not the run's step."""
        if epoch is None or self._still < 0:
            return False
        before, self._still_at = self._still_at, (step, epoch)
        if before is not None and epoch != before[1]:
            self._still = self._still + 1 if step == before[0] else -1
        elif before is not None and step != before[0]:
            self._still = -1
        return self._still >= 2

    def launched(self) -> None:
        """The run started again: a counter that goes back now is a new launch's."""
        self._closed = False
        self._offset = 0
        self._first = self._last = None

    def place(self, step: int) -> int:
        """The run's step for a value of the counter."""
        last = self._last
        if last is not None and step < last and self._closed and step == self._first:
            self._offset += last + self._gap - step
        elif last is not None and step > last:
            self._gap = step - last
        elif last is not None and step < last:
            self._offset, self._first = 0, step  # back with no epoch closed: not ours
        if self._first is None:
            self._first = step
        self._closed = False
        self._last = step
        return step + self._offset
