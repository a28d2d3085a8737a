"""An evaluation that scores exactly a uniform guess, evaluation after evaluation: a
blocker while the run still goes (issue 24, item 2).

`chance_streak` judges a run by all its accuracies together over whole epochs. A loop
that evaluates every few batches says it sooner, and its training accuracy (of one small
batch: 1.0, then 0.0) says nothing either way. What the evaluation says is exact: a
music-genre CNN's `valid_loss 2.30262204647 valid_acc 0.1` on every one of sixty
evaluations over 630 batches, ln 10 = 2.302585 to five digits and 1/10 to the last: the
model gives every input the same uniform output, and its gradients carry nothing that
tells inputs apart, so it does not leave that point on its own.

Judged on the evaluation's own figures only: its accuracy within `_ACC_EXACT` of 1/K
and its loss within `_LOSS_EXACT` of ln K, for the same K, on `_POINTS` evaluations in
a row with none off it. A healthy model leaves so exact a point within a few batches;
a hard task's slow start sits near chance, not on it to the fourth digit. GANs are left
out (their discriminator's balance is at chance).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.metric_names import is_eval_metric
from babysit.model import AnomalyType, Severity
from babysit.rules.chance_streak import GAN_PLAYER
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_CLASSES: tuple[int, ...] = (*range(2, 11), 100, 1000)
_ACC_EXACT = 1e-3  # of 1/K, on a 0-1 scale
_LOSS_EXACT = 1e-3  # a share of ln K
_POINTS = 20  # evaluations in a row


def _evaluation(point: Observation) -> tuple[float, float] | None:
    """The record's evaluated accuracy (0-1) and loss, when it has both."""
    accuracy = loss = None
    for key, value in point.metrics.items():
        if not math.isfinite(value) or not is_eval_metric(key):
            continue
        name = key.lower()
        if "loss" in name and loss is None:
            loss = value
        elif name.endswith(("acc", "accuracy")) and "best" not in name and accuracy is None:
            accuracy = value / 100.0 if value > 1.0 else value
    return None if accuracy is None or loss is None else (accuracy, loss)


def exact_guess(accuracy: float, loss: float) -> int | None:
    """K when the accuracy is 1/K and the loss ln K, both to the last digit printed."""
    for k in _CLASSES:
        if abs(accuracy - 1.0 / k) <= _ACC_EXACT / k \
                and abs(loss - math.log(k)) <= _LOSS_EXACT * math.log(k):
            return k
    return None


class EvalChanceRule:
    """Not learning, a blocker: evaluation after evaluation exactly at 1/K and ln K."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._count: int | None = None
        self._points = 0
        self._last: tuple[float, float] | None = None
        self._gan = False
        self._raised = False

    def observe(self, point: Observation) -> Sequence[Signal]:
        if self._gan or any(GAN_PLAYER.search(k) for k in point.metrics):
            self._gan = True
            return []
        figures = _evaluation(point)
        if figures is None:
            return []
        k = exact_guess(*figures)
        if k is None or (self._count is not None and k != self._count):
            return self._left(figures)
        self._count = k
        self._points += 1
        if self._raised or self._points < _POINTS:
            return []
        self._raised = True
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning, stuck at chance: {self._points} evaluations in a row "
                      f"scored accuracy 1/{k} and loss ln {k} = {math.log(k):.4g} to the "
                      f"last digit printed (now {figures[0]:.4g} and {figures[1]:.6g}): the "
                      f"model gives every input the same uniform output, and a model "
                      f"there does not leave it on its own", key="evaluated chance",
                      severity=Severity.BLOCKER)]

    def _left(self, figures: tuple[float, float]) -> list[Signal]:
        self._count, self._points = None, 0
        if not self._raised:
            return []
        self._raised = False
        return [Resolve(AnomalyType.NOT_LEARNING,
                        f"the evaluation left chance (accuracy {figures[0]:.4g}, loss "
                        f"{figures[1]:.4g})", key="evaluated chance")]
