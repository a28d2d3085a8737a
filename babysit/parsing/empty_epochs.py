"""Epochs that ran no iteration: a data loader that yields nothing.

A loop whose dataset is empty (every sample filtered out, a bucket sampler whose
buckets are all too small for a batch, a path that matched no file) still goes through
its epochs: each one opens its progress bar, closes it at once and starts the next, and
no loss is ever printed. tqdm shows it plainly: the bar a finished epoch left behind
stands at `0it` (`Epoch 0: 0it [00:00, ?it/s]`, then `Epoch 1: 0it …`: Open-Sora under
ColossalAI, sealed-29). Nothing trains, however long the run goes on: not learning.

An epoch counts as run empty once a later epoch's bar begins while the epoch's own bar
never showed an iteration (a bar only redraws as it moves, and tqdm draws its final state
as it closes: an epoch that ran had a bar past 0). Only a bar with no total: one that
knows its batches (`0/1522`) has data, and a log of stdout may keep only its first draw.
A run that trained an epoch is left alone: an empty epoch after that is another story (a
resumed run skipping done epochs).
"""

from __future__ import annotations

from babysit.model import EventKind, LogEvent
from babysit.parsing.bar_steps import EPOCH_IN_DESC
from babysit.parsing.bars import Bar


class EmptyEpochs:
    """Follows the epoch bars; says once that an epoch ended without an iteration."""

    def __init__(self) -> None:
        self._epoch: int | None = None  # the epoch the last epoch bar named
        self._moved = False  # that epoch's bar showed an iteration
        self._trained = False  # some epoch's did
        self._said = False

    def bar(self, bar: Bar, line: str) -> LogEvent | None:
        if self._said or self._trained or "poch" not in bar.desc or bar.data_pass:
            return None
        if bar.total:
            # a bar that knows its batches has data, wherever it stood when the log caught
            # it (a log of stdout keeps a bar's first draw, `0/1522`, and none after)
            self._trained = True
            return None
        named = EPOCH_IN_DESC.search(bar.desc)
        if named is None:
            return None
        epoch = int(named.group(1))
        event = None
        if self._epoch is not None and epoch > self._epoch and not self._moved:
            self._said = True
            event = LogEvent(EventKind.EMPTY_EPOCH, line.strip()[:500],
                             f"epoch {self._epoch} ended without a single iteration (its "
                             f"bar stood at 0 when epoch {epoch} began)")
        if epoch != self._epoch:
            self._epoch, self._moved = epoch, False
        if bar.n > 0:
            self._moved = self._trained = True
        return event
