"""A binary detector whose balanced error rate is a coin's, whole epochs into its run: not
learning, a blocker while the run still goes (issue 24, item 2).

Detectors of one class against another (live face against spoof, genuine speaker against
impostor, seizure against not) report their error as the mean of the two classes' error
rates, so that a skewed test set cannot flatter them: face anti-spoofing's ACER (the mean
of APCER and BPCER), biometrics' HTER (half the sum of the false accept and false reject
rates), the balanced error rate (BER). Whatever the classes' shares, a model whose output
does not depend on its input (one class for everything, a coin toss) scores 0.5 on these:
one of the two rates is 1 and the other 0, or both are a half. The equal error rate (EER,
where the two rates cross) is 0.5 for a score that does not tell the classes apart.

So a held-out balanced error near 0.5 says the model has learned nothing that tells the
classes apart, and a run whole epochs in has had its chance to learn it: CDCN's
`epoch:1261, Val:  val_threshold= 0.0005, val_ACC= 0.5659, val_ACER= 0.4435` and
`Test:  ACC= 0.4302, APCER= 0.5797, BPCER= 0.5294, ACER= 0.5546`, its depth losses tiny
and flat beside it (it fits its training maps, and nothing of that transfers). More
epochs of the same do not change that, so it is a blocker, as a classifier stuck at a
uniform guess is (chance_streak).

Judged on an evaluation whose every balanced error is within `_NEAR_COIN` of 0.5 (or
above it), at epoch `_LEAST_EPOCH` or later, or on `_LEAST_EVALUATIONS` evaluations in a
row where the run names no epoch: a healthy detector starts there, and leaves within a
few epochs. An evaluation below it resolves the finding.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.eval_names import name_words
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_COIN = 0.5
_NEAR_COIN = 0.1  # an error rate within this of 0.5 (0-1 scale) is a coin's
_LEAST_EPOCH = 10  # epochs into the run before a coin's error rate is no start's
_LEAST_EVALUATIONS = 5  # evaluations in a row at a coin's, where no epoch is named
# The balanced error rates, as the last word of a metric's name (`val_ACER`, `test/hter`).
_BALANCED = frozenset({"acer", "hter", "ber", "eer"})


def balanced_errors(metrics: Mapping[str, float]) -> list[tuple[str, float]]:
    """The record's balanced error rates (name, value on a 0-1 scale)."""
    found: list[tuple[str, float]] = []
    for key, value in metrics.items():
        if not any(word in key.lower() for word in _BALANCED) or not math.isfinite(value):
            continue  # (a cheap test first: nearly every metric is none of these)
        words = name_words(key)
        if words and words[-1] in _BALANCED and 0.0 <= value <= 100.0:
            found.append((key, value / 100.0 if value > 1.0 else value))
    return found


class DetectorChanceRule:
    """Not learning, a blocker: a binary detector's balanced error rate at a coin's 0.5
    whole epochs into the run."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._streak = 0  # evaluations in a row at a coin's
        self._raised = False

    def observe(self, point: Observation) -> Sequence[Signal]:
        errors = balanced_errors(point.metrics)
        if not errors:
            return []
        if any(value < _COIN - _NEAR_COIN for _, value in errors):
            self._streak = 0
            if not self._raised:
                return []
            self._raised = False
            shown = ", ".join(f"{key} {value:.4g}" for key, value in errors)
            return [Resolve(AnomalyType.NOT_LEARNING, f"the error rate left a coin's ({shown})",
                            key="detector at chance")]
        self._streak += 1
        late = point.epoch is not None and point.epoch >= _LEAST_EPOCH
        if self._raised or not (late or self._streak >= _LEAST_EVALUATIONS):
            return []
        self._raised = True
        return [Raise(AnomalyType.NOT_LEARNING, self._why(errors, point.epoch),
                      key="detector at chance", severity=Severity.BLOCKER)]

    def _why(self, errors: list[tuple[str, float]], epoch: float | None) -> str:
        shown = ", ".join(f"{key} {value:.4g}" for key, value in errors)
        when = f"at epoch {epoch:g}" if epoch is not None \
            else f"on {self._streak} evaluations in a row"
        return (f"not learning, at chance: the balanced error rate ({shown}) {when} is a "
                f"coin's 0.5 within {_NEAR_COIN:g}, what a detector scores whose output "
                f"does not depend on its input: nothing it learned tells the two classes "
                f"apart")
