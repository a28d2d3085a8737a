"""A loss shown as the epoch's running mean: judge its trend an epoch at a time.

Keras's bar and many hand-written tqdm loops (`set_postfix(loss=total / (i + 1))`)
print, at every batch, the mean of the epoch's losses so far, and start again at the
next epoch. Such a series jumps at each epoch's start (its first batches are single
losses, not a mean) and is nearly still at each epoch's end (a mean over a hundred
batches moves by a hundredth of a batch's noise). Judged point by point, every new
epoch looks like a spike and every stretch of a mean settling a little above the
lowest one reached looks like divergence; the run's own noise, measured on the
smoothed points, is far too small to excuse either.

The mean shows itself within an epoch: its steps shrink as 1/n, so those of an epoch's
last third are a fraction of those of its first third (a raw or exponentially smoothed
loss moves as much at the end as at the start). Two finished epochs in a row that show
it decide it; from then on the trend rules see one point an epoch, the mean near its end.
"""

from __future__ import annotations

import math
from itertools import pairwise

# Points an epoch needs before its shape says anything (a third of them each end).
_MIN_POINTS = 12
# An epoch's last-third steps at most this share of its first-third steps: a mean.
_SHRINK = 0.4
_EPOCHS_TO_DECIDE = 2
# How far into its epoch a running mean is judged: near its end, where it is the epoch's.
_NEAR_END = 0.9


def _shrinks(values: list[float]) -> bool:
    steps = [abs(b - a) for a, b in pairwise(values)]
    third = len(steps) // 3
    early, late = sum(steps[:third]), sum(steps[-third:])
    return early > 0 and late <= _SHRINK * early


class EpochMeans:
    """Passes each loss on to the trend rules, until the series shows itself to be an
    epoch's running mean: then only each epoch's last value."""

    def __init__(self) -> None:
        self.running_mean = False
        self._epoch: int | None = None
        self._last_epoch_value: float | None = None  # the epoch value of the last point
        self._values: list[float] = []
        self._votes = 0
        self._fed = False  # this epoch's mean was passed on

    def _epoch_of(self, epoch: float) -> int:
        """The epoch a point belongs to: an epoch's bar runs from `e + 0` to `e + 1`
        (its last frame, n = total, lands on the next whole number and still belongs to
        it)."""
        if epoch != math.floor(epoch):
            return math.ceil(epoch)
        last = self._last_epoch_value
        if last is not None and last != math.floor(last) and math.ceil(last) == epoch:
            return int(epoch)  # the epoch's last frame, after its partial ones
        return int(epoch) + 1

    def feed(self, epoch: float | None, value: float) -> list[float]:
        """The losses the trend rules should judge now: this one, or, for an epoch's
        running mean, the first one near the epoch's end — or, where the records say
        only the whole epoch, the epoch's last one once the next begins. None of an
        epoch the log left early: a cut or a resume shows only its first, inflated
        means."""
        if epoch is None or not math.isfinite(epoch):
            return [value]
        which = self._epoch_of(epoch)
        self._last_epoch_value = epoch
        out: list[float] = []
        if self._epoch is not None and which != self._epoch:
            if not self.running_mean and len(self._values) >= _MIN_POINTS:
                self._votes = self._votes + 1 if _shrinks(self._values) else 0
                self.running_mean = self._votes >= _EPOCHS_TO_DECIDE
            elif self.running_mean and not self._fed and len(self._values) >= _MIN_POINTS:
                out.append(self._values[-1])
            self._values = []
            self._fed = False
        self._epoch = which
        self._values.append(value)
        if not self.running_mean:
            return [value]
        if not self._fed and epoch - (which - 1) >= _NEAR_END:
            self._fed = True
            out.append(value)
        return out
