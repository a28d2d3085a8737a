"""Not learning, said by the run itself: its best-so-far of a metric dates from an epoch
far behind the one it has reached (issue 24, item 1).

Trainers that keep a best checkpoint print where their best was: PyTorch-Ignite's
`Key metric: val_mean_dice best value: 0.1098 at epoch: 3`, and the like with a
`best_epoch`. When that epoch lies in the first quarter of the epochs the run has
trained, and at least `_GAP` epochs back, the run has improved on nothing for most of
its length, whatever its latest figures look like (a MONAI Label lung segmentation at
epoch 39 of 50, its validation Dice 0.0000 on every evaluation shown). Evaluations a
log does not show are covered by the run's own statement: the window babysit sees may
hold none of the epochs in between.

A notice while the run goes on (the catalogue's medium for not-learning); high on a run
that finished so. It resolves when the run names a newer best.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_GAP = 20  # epochs since the best, at least
_SHARE = 0.25  # the best within this share of the epochs trained
_WORDS = re.compile(r"[/_\-. ]+")
# The epoch a best was reached at, when the record says it as a metric.
_BEST_EPOCH_KEYS = ("best_epoch", "at_epoch", "best_at_epoch")


def best_epoch(metrics: Mapping[str, float]) -> tuple[str, float] | None:
    """(the best-so-far metric's name, the epoch of that best) when a record states a
    best with its epoch; None otherwise."""
    best_key = next((k for k in metrics
                     if "best" in _WORDS.split(k.lower()) and "epoch" not in k.lower()), None)
    if best_key is None:
        return None
    # Only an epoch said beside the best: a record's own epoch is the one it was printed
    # at (Theano's `epoch 17, … test error of best model 69.35 %`), not the best's.
    said = next((metrics[k] for k in _BEST_EPOCH_KEYS if k in metrics), None)
    if said is None or said < 0:
        return None
    return best_key, said


def stale(best_at: float, reached: float) -> bool:
    """Whether a best at epoch `best_at` is stale for a run that reached `reached`."""
    return reached - best_at >= _GAP and best_at <= _SHARE * reached


class StaleBestRule:
    """A best-so-far the run dates far back (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._reached: float | None = None  # the epoch the latest other record named
        self._raised: float | None = None  # the best's epoch when raised

    def observe(self, point: Observation) -> Sequence[Signal]:
        found = best_epoch(point.metrics)
        if found is None:
            if point.epoch is not None:
                # The latest, not the highest: a second phase counts its epochs anew.
                self._reached = point.epoch
            return []
        key, at = found
        if self._raised is not None:
            if at > self._raised:
                self._raised = None
                return [Resolve(AnomalyType.NOT_LEARNING,
                                f"a newer best: {key} at epoch {at:g}", key="stale best")]
            return []
        reached = self._reached
        if reached is None or not stale(at, reached):
            return []
        self._raised = at
        return [Raise(AnomalyType.NOT_LEARNING, (
            f"not learning: the run's own best {key} {point.metrics[key]:.4g} dates from "
            f"epoch {at:g}, {reached - at:g} epochs before the epoch it has reached "
            f"({reached:g}): nothing it trained since has improved on it"),
            key="stale best")]
