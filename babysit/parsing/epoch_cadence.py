"""Whether a log's stepped records come one an epoch.

A log whose steps have no planned total may still plan its epochs (`--epochs=40`); its
records are measured against that plan only when each names a new epoch (`{"epoch": 39,
"step": 235, …}` once an epoch), not when many name the same one (Marian's `Ep. 1 : Up.
29500` under `after-epochs: 1`: the epoch is not over when a record names it).
"""

from __future__ import annotations

from dataclasses import dataclass

# Epoch changes per repeat, at least, and changes seen at least, for one record an epoch.
_ONE_AN_EPOCH = 4


@dataclass
class EpochCadence:
    first: float | None = None  # the epoch the first stepped record named
    _last: float | None = None
    _repeats: int = 0  # records that named the epoch the record before named
    _changes: int = 0  # records that named another

    def seen(self, epoch: float) -> None:
        """A stepped record with metrics named this epoch."""
        if self.first is None:
            self.first = epoch
        if epoch == self._last:
            self._repeats += 1
        else:
            self._changes += 1
        self._last = epoch

    @property
    def one_an_epoch(self) -> bool:
        return self._changes >= _ONE_AN_EPOCH and self._repeats * _ONE_AN_EPOCH <= self._changes
