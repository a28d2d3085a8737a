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
