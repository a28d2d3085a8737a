"""A loss that sits exactly at a uniform output's cross-entropy, unmoved, for whole epochs
from the run's start: a blocker while the run still goes (issue 24, item 2).

`chance_streak` reads a classifier's accuracy and loss together. Some runs print no
accuracy that means anything for it: an autoencoder trained with binary cross-entropy on
MNIST's pixels reports Keras's `accuracy` (pixel agreement, 0.39), while its loss,
0.6959 then 0.6956, 0.6954 … 0.6948 over six epochs of 60,000 images, is ln 2 = 0.6931:
it outputs 0.5 for every pixel. A network that outputs the same distribution for every
input has gradients that tell no input apart; it does not leave that point on its own,
and a working one leaves it within the first epoch.

So: the training loss within `_NEAR` (a share) of ln K for one K from 2 to 10, on every
record from the run's first, over `_EPOCHS` epochs or more (`_RECORDS` records where
none is named), and moved less than `_STILL` (a share) from its first value in all that
time, while no accuracy printed beside it moved `_ACC_MOVED` from its first value (an
accuracy that climbs says the outputs differ between inputs, whatever the loss shows).
An accuracy that stays put off 1/K is how a uniform output's ties fall (the majority
class's share); one at 1/K leaves the pair to `chance_streak`.
GANs are left out (a player at ln 2 is their equilibrium). Resolved when the loss leaves
that point.
"""

from __future__ import annotations

import math
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.chance_streak import GAN_PLAYER
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_LN = {k: math.log(k) for k in range(2, 11)}
_NEAR = 0.005  # of ln K: 0.6931 ± 0.0035
_STILL = 0.01  # of its first value, the whole streak long
_EPOCHS = 5
_RECORDS = 30
_ACC_MOVED = 0.05  # an accuracy (0-1) that moved this far from its first value
_AT_CHANCE = 0.015  # an accuracy this near 1/K: chance_streak judges the two together


class UniformOutputRule:
    """A training loss at ln K, unmoved, from the run's start (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._k: int | None = None  # the K the loss sits at, while it does
        self._broken = False  # the loss left ln K, or the run is a GAN's
        self._first: float | None = None
        self._first_epoch: float | None = None
        self._records = 0
        self._raised = False
        self._accuracy_start: dict[str, float] = {}
        self._at_chance = False  # an accuracy printed beside it is 1/K too

    def observe(self, point: Observation) -> list[Signal]:
        loss = point.loss
        if self._broken or loss is None or not point.advanced or not math.isfinite(loss):
            return []
        if any(GAN_PLAYER.search(k) for k in point.metrics):
            self._broken = True
            return []
        k = self._k if self._k is not None else next(
            (k for k, ln in _LN.items() if abs(loss - ln) <= _NEAR * ln), None)
        first = self._first if self._first is not None else loss
        if k is None or abs(loss - _LN[k]) > _NEAR * _LN[k] \
                or abs(loss - first) > _STILL * first:
            self._broken = True
            if self._raised:
                self._raised = False
                return [Resolve(AnomalyType.NOT_LEARNING, f"the loss left ln {k} ({loss:.4g})",
                                key="uniform output")]
            return []
        for key, value in point.metrics.items():
            if "acc" in key.lower() and math.isfinite(value):
                scale = 100.0 if value > 1 else 1.0
                start = self._accuracy_start.setdefault(key, value / scale)
                if k is not None and abs(value / scale - 1 / k) <= _AT_CHANCE:
                    self._at_chance = True  # (chance_streak's to judge: it reads both)
                if abs(value / scale - start) > _ACC_MOVED:
                    # (an accuracy that moves says the outputs are not one distribution
                    # for every input, whatever the loss shows)
                    self._broken = True
                    return []
        self._k, self._first = k, first
        self._records += 1
        if point.epoch is not None and self._first_epoch is None:
            self._first_epoch = point.epoch
        spanned = point.epoch - self._first_epoch \
            if point.epoch is not None and self._first_epoch is not None else None
        if self._raised or self._at_chance or (spanned < _EPOCHS - 1 if spanned is not None
                            else self._records < _RECORDS):
            return []
        self._raised = True
        span = f"{spanned + 1:g} epochs" if spanned is not None else f"{self._records} records"
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: the training loss has been within {_NEAR:.1%} of ln {k} "
                      f"= {_LN[k]:.4f} for {span} from the run's start, and moved less "
                      f"than {_STILL:.0%} in all that time ({first:.4g} → {loss:.4g}): the "
                      f"model outputs the same {k}-way uniform distribution for every input, "
                      f"and its gradients cannot tell inputs apart (check the labels, the "
                      f"output activation and the learning rate)",
                      key="uniform output", severity=Severity.BLOCKER)]
