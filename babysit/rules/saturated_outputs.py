"""A classifier whose outputs have saturated: every prediction a hard 0 or 1, the wrong
ones paying the clipped cross-entropy's ceiling (divergence when the run had learned
before, not-learning when it never had; a blocker either way).

Keras, tf.keras and TensorFlow.js clip predicted probabilities to [ε, 1 − ε], ε = 1e-7,
before taking the log of a cross-entropy. A network whose logits have blown up outputs
hard 0s and 1s: each right prediction costs ~0 and each wrong one −ln ε = 16.118 nats,
so its loss is exactly 16.118 × (1 − accuracy), whatever the data:
TensorFlow.js's `3376ms 281360us/step - acc=0.00 loss=16.12` after `acc=0.917
loss=0.297` an epoch earlier; Keras's well-known `loss: 8.0590 - acc: 0.5000` (a binary
classifier, half wrong) and `loss: 14.5063 - acc: 0.1000` (ten classes). Through a
saturated sigmoid or softmax the gradient vanishes, so the run does not leave that point
on its own: its result is unusable and its compute burnt.

Other frameworks clip elsewhere, with the same effect: Caffe's SoftmaxWithLoss takes
the log of max(p, FLT_MIN), so hard wrong outputs cost −ln FLT_MIN = 87.3365 nats each
(its famous `Iteration 20, loss = 87.3365`), and PyTorch's BCELoss clamps each log at
−100.

Judged on the training loss beside a training accuracy in the same record, on
`_POINTS` records in a row, and only where at least a quarter of the predictions are
wrong (the loss 4 nats or more): a good classifier's small loss can sit near
16.118 × (1 − accuracy) by chance, a loss of 4 to 16 nats at exactly that value cannot.
Without an accuracy only the float32 ceiling itself counts, printed to four decimals or
more (87.3365): no loss lands there but one whose every output is saturated and wrong;
or a loss within 0.05 % of it on `_POINTS` records in a row (a displayed average, 87.3363).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_CLIP_CEILING = -math.log(1e-7)  # 16.118 nats: Keras's and TF.js's epsilon
_FLT_MIN_CEILING = 87.33654475  # −ln(FLT_MIN): Caffe's clamp, float32's smallest normal
# Each clipped log's ceiling: a saturated wrong output pays exactly this.
_CEILINGS = (_CLIP_CEILING, _FLT_MIN_CEILING, 100.0)  # 100: PyTorch BCELoss's clamp
_EXACT = 6e-5  # the float32 ceiling alone matches only as printed to four decimals
_NEAR = 5e-4  # of it: a loss this close on `_POINTS` records in a row is pinned there too
_TOLERANCE = 0.01  # of the saturated value: losses are printed to 2-4 digits
_MIN_WRONG = 0.25  # the share of wrong predictions below which a match may be chance
_POINTS = 3  # records in a row
# A training accuracy as Keras and TF.js name it (`acc`, `accuracy`,
# `categorical_accuracy`), never a validation one.
_TRAIN_ACCURACY = lazy_re.compile(
    r"^(train(ing)?_)?(binary_|categorical_|sparse_categorical_)?acc(uracy)?$",
    re.IGNORECASE)


def _accuracy(metrics: Mapping[str, float]) -> float | None:
    """The record's training accuracy as a fraction, or None."""
    for key, value in metrics.items():
        if "acc" in key and _TRAIN_ACCURACY.match(key) and math.isfinite(value) \
                and 0 <= value <= 1:
            return value
    return None


def ceiling(loss: float, accuracy: float) -> float | None:
    """The clipped log's ceiling whose cross-entropy of hard 0/1 outputs at that accuracy
    this loss is, or None."""
    wrong = 1 - accuracy
    if wrong < _MIN_WRONG:
        return None
    for top in _CEILINGS:
        if abs(loss - top * wrong) <= _TOLERANCE * top * wrong:
            return top
    return None


def saturated(loss: float, accuracy: float) -> bool:
    """Whether a loss is the clipped cross-entropy of hard 0/1 outputs at that accuracy."""
    return ceiling(loss, accuracy) is not None


def _pinned(metrics: Mapping[str, float]) -> float | None:
    """A loss under a name of its own (a Caffe loss layer's output) at −ln(FLT_MIN) as
    printed, or None."""
    for key, value in metrics.items():
        if abs(value - _FLT_MIN_CEILING) <= _EXACT and "loss" in key.lower():
            return value
    return None


class SaturatedOutputRule:
    """A training loss equal to 16.118 × (1 − accuracy) on several records in a row."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._run = 0  # records in a row with saturated outputs
        self._lowest: float | None = None  # the lowest loss before the saturation
        self._raised: AnomalyType | None = None

    def observe(self, point: Observation) -> Sequence[Signal]:
        if self._raised is None and point.loss is None:
            pinned = _pinned(point.metrics)
            if pinned is not None:  # Caffe's `Train net output #0: SoftmaxWithLoss1 = 87.3365`
                return [self._raise(pinned, 0.0, _FLT_MIN_CEILING, shown=False)]
        loss = point.loss
        if loss is None or not point.advanced or not math.isfinite(loss):
            return []
        accuracy = _accuracy(point.metrics)
        gap = abs(loss - _FLT_MIN_CEILING)
        if accuracy is None and gap <= _NEAR * _FLT_MIN_CEILING:
            # At the ceiling as printed, or within a hair of it on `_POINTS` records in a
            # row (Caffe's displayed loss averages the last iterations: `loss = 87.3363`
            # beside the net's own `SoftmaxWithLoss1 = 87.3365`).
            self._run += 1
            if self._raised is not None or (gap > _EXACT and self._run < _POINTS):
                return []
            return [self._raise(loss, 0.0, _FLT_MIN_CEILING, shown=False)]
        top = None if accuracy is None else ceiling(loss, accuracy)
        if accuracy is None or top is None:
            return self._left(loss)
        self._run += 1
        if self._raised is not None or self._run < _POINTS:
            return []
        return [self._raise(loss, accuracy, top)]

    def _left(self, loss: float) -> list[Signal]:
        self._run = 0
        self._lowest = loss if self._lowest is None else min(self._lowest, loss)
        if self._raised is None:
            return []
        kind, self._raised = self._raised, None
        return [Resolve(kind, f"the loss left the saturated level ({loss:.4g})",
                        key="saturated outputs")]

    def _raise(self, loss: float, accuracy: float, top: float,
               shown: bool = True) -> Signal:
        if shown:
            why = (f"the loss is {loss:.4g} at accuracy {accuracy:.4g} on {self._run} "
                   f"records in a row: {top:.4g} × (1 − accuracy), the clipped "
                   f"cross-entropy of outputs saturated at hard 0s and 1s (every wrong "
                   f"prediction made with full confidence)")
        else:
            why = (f"the loss is {loss:.6g}, −ln(FLT_MIN): the clamped cross-entropy of "
                   f"outputs saturated at hard 0s and 1s, every prediction wrong with "
                   f"full confidence")
        why += "; through a saturated output the gradient vanishes"
        # Learned before (a loss well under this one): the weights blew up.
        if self._lowest is not None and self._lowest < loss / 2:
            self._raised = AnomalyType.DIVERGENCE
            return Raise(AnomalyType.DIVERGENCE,
                         f"divergence: {why}; it was {self._lowest:.4g} before",
                         key="saturated outputs", severity=Severity.BLOCKER)
        self._raised = AnomalyType.NOT_LEARNING
        return Raise(AnomalyType.NOT_LEARNING, f"not learning: {why}",
                     key="saturated outputs", severity=Severity.BLOCKER)
