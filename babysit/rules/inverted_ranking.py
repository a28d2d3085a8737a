"""An AUC far below a coin's 0.5, held: the model ranks the classes backwards (issue 24).

The area under the ROC curve is the chance that a positive is scored above a negative: 0.5
for a score that knows nothing, 1 for a perfect one. Well below 0.5 is not "bad", it is
backwards: the score orders the classes the wrong way round, which a model only learns when
its labels, its score or the metric's target are inverted (a class index off by one, the
probability of the wrong column, `1 - p`). Training more makes it worse, as in sealed-15's
LightGBM folds: `valid-1-9's auc: 0.117` at round 5, 0.091 at round 20, every fold's best
iteration the first. No healthy run logs an AUC under `_BACKWARDS` on `_POINTS` records in
a row (a fresh model starts near 0.5); a finished run that did is a blocker, whatever its
exit status. An AUC climbing from near 0 is no ranking turned backwards but an area that
grows as the model learns (mmpose's keypoint AUC, the area under its PCK curve).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.flat_scores import score_kind
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_BACKWARDS = 0.3  # an AUC below this (0-1 scale) ranks the classes the wrong way round
_POINTS = 5  # records in a row with every AUC below it
_RISING = 1.5  # an AUC up by this factor over the streak is climbing, not backwards


def _aucs(metrics: dict[str, float]) -> list[float]:
    """The record's AUCs on a 0-1 scale, by the names `flat_scores` reads as one."""
    return [value for key, value in metrics.items()
            if "auc" in key.lower() and score_kind(key) == "auc" and math.isfinite(value)
            and 0.0 <= value <= 1.0]


class InvertedRankingRule:
    """Not learning, a blocker: every AUC the run logs far below 0.5, record after record."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._streak = 0
        self._streak_start = 0.0  # the AUC the streak began at
        self._raised = False

    def observe(self, point: Observation) -> Sequence[Signal]:
        aucs = _aucs(dict(point.metrics))
        if not aucs:
            return []
        if max(aucs) >= _BACKWARDS:
            self._streak = 0
            if not self._raised:
                return []
            self._raised = False
            return [Resolve(AnomalyType.NOT_LEARNING, f"the AUC is back to {max(aucs):.3g}",
                            key="ranks backwards")]
        self._streak += 1
        if self._streak == 1:
            self._streak_start = max(aucs)
        if self._raised or self._streak < _POINTS:
            return []
        if max(aucs) > _RISING * self._streak_start:
            # Climbing from near 0 as training goes on: an area that starts at 0 and grows
            # as the model learns (mmpose's keypoint AUC, the PCK curve's area: 0.011 at
            # epoch 20, 0.12 by 300, beside a PCK of 0.97), not a ranking turned backwards,
            # which training only drives further down.
            return []
        self._raised = True
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: the AUC has stayed below {_BACKWARDS:g} on "
                      f"{self._streak} records in a row (now {max(aucs):.3g}): the model ranks "
                      f"the classes backwards, which only inverted labels, scores or metric "
                      f"targets teach it — check which class the score is for",
                      key="ranks backwards", severity=Severity.BLOCKER)]
