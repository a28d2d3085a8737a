"""A classifier that has sat at a uniform guess for whole epochs: a blocker while the run
still goes (issue 24, item 2).

Every other not-learning finding is a notice while the run goes on: a run can still leave
a plateau. This one is not, because of what the numbers say together. A model whose
accuracies (training and evaluation alike) are 1/K for K classes and whose loss is ln K,
the cross-entropy of the uniform distribution, outputs the same probabilities for every
input: its gradients carry no signal that tells inputs apart, so it does not leave that
point on its own (the r2c runs below: a learning-rate reduction at epoch 2 changed
nothing). Kept up for whole epochs, that is a run whose result is unusable and whose
compute is being burnt: it should be stopped and its set-up checked, not watched.

What counts as "whole epochs": the run's records since the last accuracy off chance
span `_EPOCHS` epochs or more once the run has collapsed there from elsewhere (r2c's
VCR model, at 0.312 in epoch 0, then `Val epoch 1 has acc 0.249 and loss 1.386` at
epochs 1, 2 and 3, the training loss 1.386393 … 1.386330, ln 4 = 1.3863), or
`_EPOCHS_FROM_START` from a run's first epoch (a hard task may sit at chance a few
epochs before it takes off), or
the run's own best-so-far accuracy is at chance `_EPOCHS` epochs or more into it (a
steganalysis net's `Best accuracy: 0.503` at epoch 52: every evaluation it ever made was a
coin toss). A few records at chance at a run's start are not this: a healthy run starts
there, and leaves within an epoch.

Left alone: GANs (a discriminator at 50 % with its loss at ln 2 is their equilibrium),
a run that never prints a loss (nothing says the output is uniform rather than one class
for everything, which chance_level judges), and class counts above ten (their chance
accuracies lie too close together).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_CLASSES = range(2, 11)
_ACC_NEAR = 0.015  # an accuracy within this of 1/K (on a 0-1 scale) is at chance
_LOSS_NEAR = 0.05  # a loss within this share of ln K is a uniform guess's
_EPOCHS = 3  # epochs at chance before a run that collapsed there is judged stuck
# A streak from the run's very start (no figure off chance before it, its first epoch
# among the first few): a healthy run starts at chance, and a hard task may stay there
# a few epochs before it takes off, so it needs longer.
_EPOCHS_FROM_START = 5
_LEAST_POINTS = 6  # accuracy figures at chance in the streak
# A log whose records name no epoch (a federated loop's `Round 12: Average Loss = 2.3308,
# Average Accuracy = 0.1010`): its records stand for them, as many as a run prints over
# a few epochs.
_RECORDS = 10
_RECORDS_FROM_START = 20

_WORDS = re.compile(r"[/_\-. ]+")
_ACCURACY = frozenset({"acc", "accuracy"})
# A GAN's players: their accuracy and loss at chance is what they aim for.
GAN_PLAYER = lazy_re.compile(r"(^|[/_ .-])(d|g|disc|gen|discriminator|generator|adv|critic)"
                       r"([/_ .-]|$)|errd|errg|lossd|lossg", re.IGNORECASE)


def _near(values: dict[int, float], k: int, most: float) -> float:
    """How near to K's value a figure must be: `most`, or less where a neighbouring
    class count's value is close (a quarter of the gap), so that K is never in doubt."""
    gaps = [abs(values[k] - values[n]) for n in (k - 1, k + 1) if n in values]
    return min(most, *(gap / 4 for gap in gaps))


_ACC = {k: 1.0 / k for k in range(_CLASSES.start - 1, _CLASSES.stop + 1)}
_LN = {k: math.log(k) for k in range(_CLASSES.start - 1, _CLASSES.stop + 1)}
# Each K's tolerance, worked out once: every metric record asks these.
_ACC_TOLERANCE = {k: _near(_ACC, k, _ACC_NEAR) for k in _CLASSES}
_LN_TOLERANCE = {k: _near(_LN, k, _LOSS_NEAR * _LN[k]) for k in _LN}


def chance_class_count(accuracy: float) -> int | None:
    """K when an accuracy (0-1 or 0-100) is 1/K, near enough to tell K from K ± 1
    (within `_ACC_NEAR` at most); None otherwise."""
    value = accuracy / 100.0 if accuracy > 1.0 else accuracy
    return next((k for k in _CLASSES if abs(value - _ACC[k]) <= _ACC_TOLERANCE[k]), None)


def loss_at_chance(loss: float, count: int) -> bool:
    """Whether a loss is ln K, near enough to tell K from K ± 1 (within `_LOSS_NEAR` of
    it at most: a regulariser adds a little, 0.721 for ln 2 = 0.693)."""
    return abs(loss - _LN[count]) <= _LN_TOLERANCE[count]


@functools.lru_cache(maxsize=1024)
def _accuracy_role(key: str) -> str | None:
    """`best` for a best-so-far accuracy, `plain` for any other accuracy, else None."""
    words = [w for w in _WORDS.split(key.lower()) if w]
    if not words or words[-1] not in _ACCURACY:
        return None
    return "best" if "best" in words else "plain"


def _accuracies(metrics: Mapping[str, float]) -> tuple[list[float], list[float]]:
    """(this record's accuracy figures, its best-so-far accuracies)."""
    plain: list[float] = []
    best: list[float] = []
    for key, value in metrics.items():
        role = _accuracy_role(key)
        if role is None or not math.isfinite(value):
            continue
        (best if role == "best" else plain).append(value)
    return plain, best


class ChanceStreakRule:
    """Not learning, a blocker: accuracy at 1/K and loss at ln K for whole epochs."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._count: int | None = None  # K of the present streak
        self._points = 0  # accuracy figures at chance in the streak
        self._epochs: set[int] = set()  # whole epochs the streak's records name
        self._losses = 0  # losses at ln K in the streak
        self._records = 0  # records at chance in the streak
        self._gan = False
        self._raised = False
        self._left = False  # a figure off chance came before the streak: it collapsed

    def observe(self, point: Observation) -> Sequence[Signal]:
        metrics = point.metrics
        if self._gan or any(GAN_PLAYER.search(k) for k in metrics):
            self._gan = True
            return []
        plain, best = _accuracies(metrics)
        if not plain and not best:
            return []
        for value in plain:
            if not self._at_chance(value):
                return self._broken(value)
        loss = point.loss
        if loss is not None and math.isfinite(loss) and self._count is not None:
            if not loss_at_chance(loss, self._count):
                return self._broken(None)
            self._losses += 1
        self._points += len(plain)
        self._records += bool(plain)
        if point.epoch is not None:
            # Whole epochs: a progress meter's fractional epochs (1.25, 1.5, …) are one.
            self._epochs.add(math.floor(point.epoch))
        if self._raised or self._count is None or self._losses == 0:
            return []
        found = self._whole_epochs(point, best)
        if found is None:
            return []
        self._raised = True
        return [Raise(AnomalyType.NOT_LEARNING, found, key="chance streak",
                      severity=Severity.BLOCKER)]

    def _at_chance(self, value: float) -> bool:
        count = chance_class_count(value)
        if count is None or (self._count is not None and count != self._count):
            return False
        self._count = count
        return True

    def _whole_epochs(self, point: Observation, best: list[float]) -> str | None:
        count = self._count
        assert count is not None
        what = (f"accuracy at 1/{count} and loss at ln {count} = {math.log(count):.4g}, "
                f"what a uniform guess over {count} classes scores")
        epochs = sorted(self._epochs)
        collapsed = self._left or (bool(epochs) and epochs[0] >= _EPOCHS)
        need = _EPOCHS if collapsed else _EPOCHS_FROM_START
        if len(epochs) >= need and self._points >= _LEAST_POINTS:
            return (f"not learning, stuck at chance: {what}, on every record of epochs "
                    f"{epochs[0]:g}-{epochs[-1]:g} ({self._points} accuracy figures): the "
                    f"model outputs the same probabilities for every input, and a model "
                    f"there does not leave it on its own")
        records = _RECORDS if self._left else _RECORDS_FROM_START
        if not epochs and self._records >= records and self._points >= _LEAST_POINTS:
            return (f"not learning, stuck at chance: {what}, on each of its last "
                    f"{self._records} records: the model outputs the same probabilities "
                    f"for every input, and a model there does not leave it on its own")
        at = point.epoch if point.epoch is not None else max(epochs, default=None)
        chance_best = [b for b in best if chance_class_count(b) == count]
        if chance_best and at is not None and at >= _EPOCHS:
            return (f"not learning, stuck at chance: the run's own best accuracy "
                    f"{chance_best[0]:.4g} is 1/{count} at epoch {at:g}, every evaluation "
                    f"it made was a guess's, and its {what} now: the model outputs the "
                    f"same probabilities for every input")
        return None

    def _broken(self, value: float | None) -> list[Signal]:
        """An accuracy off chance (or a loss off ln K): the streak starts again."""
        self._left = True
        self._count = None
        self._points = self._losses = self._records = 0
        self._epochs.clear()
        if value is not None and self._at_chance(value):
            self._points = 1  # at another class count's chance: a new streak
        if not self._raised:
            return []
        self._raised = False
        return [Resolve(AnomalyType.NOT_LEARNING, "an accuracy left chance"
                        + (f" ({value:.4g})" if value is not None else ""),
                        key="chance streak")]
