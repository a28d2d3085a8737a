"""Whether a counter printed beside an epoch number counts that epoch's batches.

`epoch 6 - iter 700/1750` (Flair), `Epoch 3 step 40/120`: the `i/N` beside a whole epoch
number may be the run's own counter or one that starts again at each epoch. A log cut to
one epoch never shows it start again, so the counter's own arithmetic decides: had it
counted the run, the epochs before this one took at most its first value here between
them, so this epoch cannot span more steps than their average. A counter that does (700
to 1750 inside epoch 6, when five whole epochs fit in 700) is an epoch's; so is one that
goes back as the epoch moves on. An epoch's total is never the run's plan. A counter that
goes back inside one epoch started again with a relaunch: it is watched afresh from there.
"""

from __future__ import annotations


class EpochCounter:
    """Watches (epoch, step) pairs of the records that carry both."""

    def __init__(self) -> None:
        self._epoch: int | None = None
        self._first: int | None = None  # the counter's first value in this epoch
        self._last: int | None = None
        self.per_epoch = False  # decided: the counter is an epoch's

    def observe(self, epoch: float | None, step: int | None) -> bool:
        """Note one record; True when it shows the counter counts one epoch's batches
        (said once: later calls return False)."""
        if self.per_epoch or epoch is None or step is None or epoch != int(epoch):
            return False
        whole = int(epoch)
        if whole != self._epoch:
            went_back = (self._epoch is not None and whole > self._epoch
                         and self._last is not None and step < self._last)
            self._epoch, self._first, self._last = whole, step, step
            return self._decide(went_back)
        if self._last is not None and step < self._last:
            # Back within one epoch: the counter started again with the run (a relaunch
            # into the same log, PaddleSeg's workerlog: `epoch: 1, iter: 10/80000` after
            # `iter: 390/80000`); what the earlier launch counted says nothing of this one.
            self._first, self._last = step, step
            return False
        self._last = max(self._last or step, step)
        first = self._first
        if whole >= 2 and first is not None and first > 0:
            # Had it counted the run, the epochs before took `first` steps in all.
            average = first / (whole - 1)
            return self._decide(self._last - first > average)
        return False

    def _decide(self, shown: bool) -> bool:
        if shown:
            self.per_epoch = True
        return shown
