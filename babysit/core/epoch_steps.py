"""How many steps an epoch takes, told by where the epoch counter turns over.

A loop that prints its global step and its epoch against a plan of epochs (`Epoch:
20/20... Step: 2780...`, every 10 steps) announces no planned total of steps, and yet
gives it away: each record bounds the steps an epoch takes, K. Counting steps from 1,
the i-th epoch (from 0) holds steps i·K + 1 … (i + 1)·K, so a record at step s in it
says K ≥ s / (i + 1), and, past the first epoch, K ≤ (s − 1) / i. Prints that fall at
a different place in each epoch pin K to one value (139 steps an epoch, from `Epoch
1… Step 130` and `Epoch 2… Step 140` and `Epoch 20… Step 2780`), and the plan is the
planned epochs times K. Counting steps from 0 moves each bound by one; a run is read
under whichever count its records agree with, and under neither where both or none do.

Nothing here guesses: an epoch of uneven length, a counter that is an epoch's own, or a
step that went back leaves K unpinned, and the plan unknown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# Epochs seen before the length is trusted: two turnovers of the counter.
_EPOCHS_SEEN = 3


@dataclass
class _Bounds:
    """The steps an epoch may take, under one way of counting the steps."""

    from_zero: bool
    low: int = 1
    high: float = math.inf
    broken: bool = False

    def bound(self, index: int, step: int) -> None:
        if self.from_zero:
            low, high = step // (index + 1) + 1, step // index if index else math.inf
        else:
            low, high = -(-step // (index + 1)), (step - 1) // index if index else math.inf
        self.low, self.high = max(self.low, low), min(self.high, high)
        self.broken = self.broken or self.low > self.high

    @property
    def pinned(self) -> int | None:
        return self.low if not self.broken and self.low == self.high else None


@dataclass
class EpochSteps:
    """The steps an epoch takes, from records that carry a step and the epoch counted
    against the plan (see the module's note)."""

    _base: int | None = None  # the first epoch's number: 0 or 1
    _epochs: set[int] = field(default_factory=set)
    _last_step: int | None = None
    _counts: tuple[_Bounds, _Bounds] = field(
        default_factory=lambda: (_Bounds(from_zero=False), _Bounds(from_zero=True)))
    _given_up: bool = False

    def seen(self, step: int, epoch: float) -> None:
        """A training record at this global step, in this (whole) epoch."""
        if self._given_up:
            return
        if epoch != math.floor(epoch) or step < 0 \
                or (self._last_step is not None and step < self._last_step):
            # (an epoch's fraction, or the step going back: a relaunch, an epoch's own
            # counter — no longer one run's global count)
            self._given_up = True
            return
        if self._base is None:
            if epoch not in (0, 1):
                self._given_up = True  # a log opening mid-run: which epoch is the first?
                return
            self._base = int(epoch)
        index = int(epoch) - self._base
        if index < 0:
            self._given_up = True
            return
        self._last_step = step
        self._epochs.add(index)
        for count in self._counts:
            count.bound(index, step)

    def last_step(self, planned_epochs: int) -> int | None:
        """The last step of a plan of this many epochs, where one count of the steps pins
        the epoch's length and the other does not fit."""
        if self._given_up or len(self._epochs) < _EPOCHS_SEEN:
            return None
        fits = [count for count in self._counts if not count.broken]
        length = fits[0].pinned if len(fits) == 1 else None
        if length is None:
            return None
        return planned_epochs * length - (1 if fits[0].from_zero else 0)

    def final_epoch(self, epoch: float, planned_epochs: int) -> bool:
        """The epoch is the plan's last (as the run numbers its epochs)."""
        return self._base is not None and int(epoch) - self._base + 1 >= planned_epochs
