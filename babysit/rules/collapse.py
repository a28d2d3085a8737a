"""A classifier that collapsed between two summaries and stayed there: its training loss
up by a third, its training accuracy and its held-out accuracy both down by a third
from their best (issue 24, item 1: a loss above its starting value and not coming back).

A loop that prints one summary per epoch gives the divergence and spike tests too few
points, and a short run gives them none at all: a streaming wake-word model's four
Keras epochs (`loss: 0.7700 - sparse_categorical_accuracy: 0.8439 - …
val_sparse_categorical_accuracy: 0.8102`, then 1.0880 / 0.6345 / 0.4791, then 1.1005 /
0.3765 / 0.4974 and 1.0992 / 0.3783 / 0.5033, sealed-160) ended as a finished run with
nothing flagged, its loss settled at ln 3, a uniform guess over its three classes.

No noise estimate is needed, because three figures say it together: an epoch's
training loss and accuracy are averages over the whole epoch, and the held-out
accuracy is the whole model measured again, so all three moving the wrong way by a third
at once, on two summaries in a row, is the model broken, not a bad batch. Only records
that carry both a training and a held-out accuracy are judged (an epoch's summary; a
per-batch line carries no held-out figure). The training loss must also stand above the
log's first loss: a loss back near where the log began is the next launch appended to
it, not a collapse. A high while the run goes on, a blocker if it ends so (it delivers
the collapsed model); withdrawn once the training accuracy is back near its best.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.metric_names import is_eval_metric
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_FELL = 2 / 3  # an accuracy at or below this share of its best has collapsed
_ROSE = 1.3  # the training loss at or above this multiple of its level at the best
_ABOVE_FIRST = 1.15  # ... and above the log's first loss by this much (not a relaunch)
_IN_A_ROW = 2  # summaries in a row collapsed before the run is judged
_BACK = 0.9  # a training accuracy back to this share of its best: recovered
COLLAPSE = "collapse"  # the key its anomaly is raised under
_ACCURACY = re.compile(r"(?:^|[_/.])(?:\w+_)?acc(?:uracy)?$", re.IGNORECASE)


def _accuracies(metrics: Mapping[str, float]) -> tuple[float | None, float | None]:
    """The record's training accuracy and its held-out one, when it gives both."""
    train = held_out = None
    for key, value in metrics.items():
        if not math.isfinite(value) or value < 0 or _ACCURACY.search(key) is None:
            continue
        if is_eval_metric(key):
            held_out = value if held_out is None else held_out
        elif train is None:
            train = value
    return train, held_out


class CollapseRule:
    """Follows the summaries' best training accuracy and the loss beside it (see the
    module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._first_loss: float | None = None
        self._best: tuple[float, float] | None = None  # (train accuracy, loss) at its best
        self._best_held_out = 0.0
        self._collapsed = 0  # summaries in a row collapsed
        self._raised = False

    def observe(self, point: Observation) -> list[Signal]:
        loss = point.loss
        if loss is None or not math.isfinite(loss) or loss <= 0:
            return []
        if self._first_loss is None:
            self._first_loss = loss
        train, held_out = _accuracies(point.metrics)
        if train is None or held_out is None:
            return []
        best = self._best
        if best is None or train > best[0]:
            self._best, self._collapsed = (train, loss), 0
            self._best_held_out = max(self._best_held_out, held_out)
            return self._recovered()
        self._best_held_out = max(self._best_held_out, held_out)
        if train >= _BACK * best[0]:
            self._collapsed = 0
            return self._recovered()
        collapsed = train <= _FELL * best[0] and held_out <= _FELL * self._best_held_out \
            and loss >= _ROSE * best[1] and loss >= _ABOVE_FIRST * self._first_loss
        self._collapsed = self._collapsed + 1 if collapsed else 0
        if self._collapsed < _IN_A_ROW or self._raised:
            return []
        self._raised = True
        return [Raise(AnomalyType.DIVERGENCE,
                      f"collapsed: the training accuracy fell from its best {best[0]:.4g} to "
                      f"{train:.4g}, the held-out accuracy from {self._best_held_out:.4g} to "
                      f"{held_out:.4g}, and the training loss rose from {best[1]:.4g} to "
                      f"{loss:.4g} ({self._collapsed} summaries in a row): the model "
                      f"broke and has not come back",
                      key=COLLAPSE, severity=Severity.HIGH,
                      severity_at_end=Severity.BLOCKER)]

    def _recovered(self) -> list[Signal]:
        if not self._raised:
            return []
        self._raised = False
        return [Resolve(AnomalyType.DIVERGENCE, "the training accuracy is back near its best",
                        key=COLLAPSE)]
