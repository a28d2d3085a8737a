"""An evaluation printed again in a summary is not a new evaluation.

Runs that keep their best model often end a run by printing the best evaluation again:
E2DTC's `=================` then `Best Epoch 6  Acc: 0.8913  nmi: 0.8267  ari: 0.7776`,
the very figures its epoch 6 printed. Read as a new evaluation, that line would make a
declining metric look back at its best at the very end. An evaluation is a restatement
when every one of its judged figures (two or more: one figure may repeat by chance, a
whole set of them does not) equals those of an earlier evaluation other than the latest
(a figure printed twice in a row is already one evaluation).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from babysit.rules import trends

_KEPT = 64  # evaluations remembered: more than the evaluation window of the rule


class Restatements:
    """The sets of figures earlier evaluations printed."""

    def __init__(self) -> None:
        self._seen: deque[tuple[tuple[str, float], ...]] = deque(maxlen=_KEPT)

    def restated(self, figures: tuple[tuple[str, float], ...]) -> bool:
        """Whether `figures` ((name, value) of one record's evaluation metrics) repeat an
        earlier evaluation's, not the latest one's; remembers them otherwise."""
        if len(figures) < 2:
            return False
        if self._seen and self._seen[-1] == figures:
            return False  # the same evaluation again (a bar, then its summary)
        if figures in self._seen:
            return True
        self._seen.append(figures)
        return False


_RECENT = 5  # the evaluations before a lone figure that must all have fallen short
_RESTATED_K = 6.0  # by this many sigmas of the evaluations' own noise


def restates_best(value: float, best: float, recent: Sequence[float], direction: int) -> bool:
    """Whether a lone figure equal to the metric's best is the run naming its best model
    again (a checkpoint sweep's closing `最佳模型：Epoch 0043  Dice = 0.7401` after a
    hundred evaluations near 0.60), not a new evaluation back at its best. Only when each
    of the last `_RECENT` evaluations (`recent`, in order) fell short of the best by
    `_RESTATED_K` sigmas of their noise: a figure printed to a few digits repeats its
    best by chance on a plateau that wanders near it (0.0138, then 0.0138 again)."""
    if value != best or len(recent) < _RECENT:
        return False
    sigma = trends.noise_scale(recent)
    if sigma <= 0:
        return False
    return all((best - v) * direction > _RESTATED_K * sigma for v in recent[-_RECENT:])
