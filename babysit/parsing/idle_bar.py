"""A progress bar drawn only at its start, whose counter the epochs after it are.

A tqdm bar over the epochs in a notebook (`0%| 0/10`, drawn once and frozen), then one
record an epoch (`Epoch: 1 | train_loss: 0.77`, … `Epoch: 10 | …`): the epochs are that
bar's counter, and the last of them reaches its total.
"""

from __future__ import annotations

from collections.abc import Mapping

from babysit.parsing.evaluation import trains
from babysit.parsing.formats import Parsed


class IdleBar:
    """The total of a bar that never moved from its start while nothing else gave a
    step, and how the epochs after it count (0 or 1)."""

    def __init__(self) -> None:
        self._total: int | None = None
        self._base: int | None = None

    def step_of(self, bar: Parsed | None, step: int | None, target: int | None,
                epoch: float | None, metrics: Mapping[str, float],
                current: int | None) -> int | None:
        """The step of a record (`bar`: what its line's bar said; `step`, `target`: what
        its line said; `current`: the run's step before it): the epoch it names, when it
        counts the idle bar's epochs, else `step`."""
        if bar is not None:
            idle = bar.step == 0 and bar.target and (current or 0) == 0 and self._base is None
            self._total = bar.target if idle else None
            return step
        if step is not None or target is not None or epoch is None or not self._total \
                or epoch != int(epoch) or not metrics or not trains(metrics):
            return step
        if self._base is None:
            if (current or 0) != 0 or epoch > 1:
                self._total = None
                return step
            self._base = int(epoch == 0)
        counted = int(epoch) + self._base
        if counted <= (current or 0):
            self._total = None  # not the bar's counter
            return step
        # Past the bar's total, the epochs still say where the run is; the total was not
        # its plan (see the parser's overrun).
        return counted
