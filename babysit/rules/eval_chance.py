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

A uniform output scores the share of the class its ties fall to, not 1/K exactly: a
Lasagne MNIST CNN's `validation accuracy: 10.64 %` on each of six epochs, beside
`validation loss: 2.301806` (ln 10 = 2.302585), printed on lines of their own. So the
same holds, sooner, when the evaluation's accuracy is the very same figure on
`_FROZEN` evaluations in a row and its loss within `_LOSS_EXACT` of one ln K on as many.

A binary classifier on a small validation set never sits on 0.5 exactly: its accuracy
wanders with the set's own sampling noise (±0.025 on 400 examples). What says it never
learned is its loss: a held-out cross-entropy that never once went below ln 2 means the
model never gave the right class more probability than a coin does, on average, at any
evaluation. A Keras LSTM predicting gold's direction: 22 evaluations, `val_loss` from
0.6914 to 0.7198 (ln 2 = 0.6931), `val_accuracy` 0.4975 to 0.5520, then `Final Test
Accuracy: 52.10%`. So: every evaluation from the run's first, `_COIN_POINTS` or more,
with its loss no lower than `_COIN_FLOOR` of ln 2 and no higher than `_COIN_CEILING` of
it (a model of many classes at half right has a loss far above ln 2) and its accuracy
within `_COIN_SPREAD` of one half. One evaluation below that floor resolves it.
"""

from __future__ import annotations

import functools
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
_FROZEN = 6  # evaluations in a row at one accuracy, the loss at ln K beside them
_END_EXACT = 5e-5  # an accuracy this close to 1/K (0.5000 printed to four digits)
_END_ABOVE = 1.25  # and a loss from ln K to this many times it
_COIN_POINTS = 10  # evaluations, from the first, at a coin's loss (see the module)
_COIN_FLOOR = 0.99  # of ln 2: no evaluation's loss below it
_COIN_CEILING = 1.1  # of ln 2: nor above it (a loss of many classes)
_COIN_SPREAD = 0.06  # an accuracy within this of one half


def _figures(point: Observation) -> tuple[float | None, float | None]:
    """The record's evaluated accuracy (0-1) and loss, each when it has it."""
    accuracy = loss = None
    for key, value in point.metrics.items():
        if not math.isfinite(value) or not is_eval_metric(key):
            continue
        name = key.lower()
        if "loss" in name and loss is None:
            loss = value
        elif name.endswith(("acc", "accuracy")) and "best" not in name and accuracy is None:
            accuracy = value / 100.0 if value > 1.0 else value
    return accuracy, loss


@functools.lru_cache(maxsize=256)
def _players(names: tuple[str, ...]) -> bool:
    """Whether a record's names are a GAN's players' (a log prints the same few sets)."""
    return any(GAN_PLAYER.search(k) for k in names)


def guess_loss(loss: float) -> int | None:
    """K when a loss is ln K to the last digit printed."""
    return next((k for k in _CLASSES
                 if abs(loss - math.log(k)) <= _LOSS_EXACT * math.log(k)), None)


def exact_guess(accuracy: float, loss: float) -> int | None:
    """K when the accuracy is 1/K and the loss ln K, both to the last digit printed."""
    k = guess_loss(loss)
    return k if k is not None and abs(accuracy - 1.0 / k) <= _ACC_EXACT / k else None


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
        self._held: tuple[float, int] | None = None  # the accuracy held, and how often
        self._at_ln: tuple[int, int] | None = None  # the loss's K, and how often in a row
        self._frozen_raised = False
        self._coins = 0  # evaluations from the first at a coin's loss and accuracy
        self._coin_left = False  # an evaluation left a coin's figures
        self._coin_raised = False

    def observe(self, point: Observation) -> Sequence[Signal]:
        if self._gan or _players(tuple(point.metrics)):
            self._gan = True
            return []
        accuracy, loss = _figures(point)
        if accuracy is not None and loss is not None:
            self._latest = (accuracy, loss)
            coin = self._coin(accuracy, loss, point.epoch)
            if coin:
                return coin
        frozen = self._frozen(accuracy, loss)
        if frozen:
            return frozen
        if accuracy is None or loss is None:
            return []
        figures = (accuracy, loss)
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

    def _frozen(self, accuracy: float | None, loss: float | None) -> list[Signal]:
        """The accuracy held to the digit and the loss at one ln K, `_FROZEN` evaluations
        in a row each (see the module)."""
        if accuracy is not None:
            value, times = self._held or (accuracy, 0)
            self._held = (accuracy, times + 1 if accuracy == value else 1)
        if loss is not None:
            k = guess_loss(loss)
            before, times = self._at_ln or (k, 0)
            self._at_ln = None if k is None else (k, times + 1 if k == before else 1)
        held, at_ln = self._held, self._at_ln
        stuck = held is not None and at_ln is not None and held[1] >= _FROZEN \
            and at_ln[1] >= _FROZEN and 0 < held[0] < 1
        if stuck and not self._frozen_raised and not self._raised:
            assert held is not None and at_ln is not None
            self._frozen_raised = True
            k = at_ln[0]
            return [Raise(AnomalyType.NOT_LEARNING,
                          f"not learning, stuck at chance: the evaluation's accuracy has been "
                          f"exactly {held[0]:.4g} on {held[1]} evaluations in a row and its "
                          f"loss ln {k} = {math.log(k):.4g} on {at_ln[1]}: the model gives "
                          f"every input the same uniform output (its accuracy one class's "
                          f"share), and a model there does not leave it on its own",
                          key="evaluated chance", severity=Severity.BLOCKER)]
        if not stuck and self._frozen_raised:
            self._frozen_raised = False
            return [Resolve(AnomalyType.NOT_LEARNING, "the evaluation left chance",
                            key="evaluated chance")]
        return []

    def _coin(self, accuracy: float, loss: float, epoch: float | None) -> list[Signal]:
        """Every evaluation from the first at a coin's loss and accuracy (see the module)."""
        if self._coin_left:
            return []
        if not self._coins and epoch is not None and epoch > 1:
            # (an excerpt that opens at epoch 150 shows no start: it may have learned
            # before, and a model that got worse is another story)
            self._coin_left = True
            return []
        ln2 = math.log(2)
        if not (_COIN_FLOOR * ln2 <= loss <= _COIN_CEILING * ln2
                and abs(accuracy - 0.5) <= _COIN_SPREAD):
            self._coin_left = True
            if self._coin_raised:
                return [Resolve(AnomalyType.NOT_LEARNING,
                                f"the evaluation left a coin's figures (accuracy "
                                f"{accuracy:.4g}, loss {loss:.4g})", key="coin toss")]
            return []
        self._coins += 1
        if self._coins < _COIN_POINTS or self._coin_raised or self._raised \
                or self._frozen_raised:
            return []
        self._coin_raised = True
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: each of the {self._coins} evaluations so far scored no "
                      f"better than a coin — its loss never below ln 2 = {ln2:.4f} (now "
                      f"{loss:.4g}) and its accuracy near one half (now {accuracy:.4g}): "
                      f"the model has never given the right class more probability than a "
                      f"guess", key="coin toss", severity=Severity.BLOCKER)]

    _latest: tuple[float, float] | None = None  # the last evaluation's accuracy and loss

    def guess_at_end(self) -> str | None:
        """Why a finished run's last evaluation says its model is a guess, however few
        evaluations it made: an accuracy of exactly 1/K for a few classes (to the fourth
        digit) beside a loss at ln K or a little above, what a uniform guess scores (a one-epoch
        binary classifier's `Val loss=0.8240 acc=0.5000`, then `Training done`). A model
        that learned anything beats a guess on one measure at least. None otherwise."""
        if self._gan or self._raised or self._frozen_raised or self._latest is None:
            return None
        accuracy, loss = self._latest
        k = next((k for k in _CLASSES[:9] if abs(accuracy - 1.0 / k) <= _END_EXACT), None)
        if k is None or not math.log(k) * (1 - _LOSS_EXACT) <= loss <= math.log(k) * _END_ABOVE:
            # (a loss far above ln K beside the same accuracy is a model of more classes
            # than K: half right of ten classes at a loss of 1.2 learned)
            return None
        return (f"not learning: the run ended with its evaluation's accuracy at exactly 1/{k} "
                f"({accuracy:.4g}) and its loss {loss:.4g}, no better than a uniform guess "
                f"over {k} classes (ln {k} = {math.log(k):.4g}): the model it delivers "
                f"guesses")

    def _left(self, figures: tuple[float, float]) -> list[Signal]:
        self._count, self._points = None, 0
        if not self._raised:
            return []
        self._raised = False
        return [Resolve(AnomalyType.NOT_LEARNING,
                        f"the evaluation left chance (accuracy {figures[0]:.4g}, loss "
                        f"{figures[1]:.4g})", key="evaluated chance")]
