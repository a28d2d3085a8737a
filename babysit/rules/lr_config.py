"""The learning rate the run uses, against the one its configuration or command line
gives (issue 24): ten times or more below it once the warm-up is over, or ten times or
more above it at any point, is a configuration gone wrong (a rate scaled twice by the
batch size or the number of GPUs, a scheduler built for another length, a value typed
in the wrong unit) rather than a schedule doing its work.

A decaying schedule is allowed for by judging the peak the rate reached, not its
current value; the peak is the run's only when the log begins near the run's start.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType
from babysit.rules.signals import Observation, Raise, Signal

_WARM_POINTS = 3  # logged points in a row without a rise: the warm-up is over
_LEAST_POINTS = 5


class LrConfigRule:
    """A learning rate ×`lr_config_factor` off the configured one (a rate of 0 is the
    not-learning and schedule rules')."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._peak = 0.0
        self._last: float | None = None
        self._points = 0
        self._flat = 0  # points in a row that did not rise
        self._from_start: bool | None = None  # the log's first rate is near the run's start
        self._raised: set[str] = set()

    def observe(self, point: Observation) -> Sequence[Signal]:
        value, configured = point.lr, point.configured_lr
        if value is None or not math.isfinite(value):
            return []
        if self._from_start is None:
            self._from_start = point.step is None or point.step <= max(
                self.rules.divergence_start_steps,
                0.05 * point.target_steps if point.target_steps else 0)
        self._points += 1
        self._flat = self._flat + 1 if self._last is not None and value <= self._last else 0
        self._last = value
        self._peak = max(self._peak, value)
        if configured is None or configured <= 0:
            return []
        factor = self.rules.lr_config_factor
        if value >= configured * factor and "above" not in self._raised:
            self._raised.add("above")
            return [Raise(AnomalyType.LR_SCHEDULE, (
                f"the learning rate is {value:.3g}, ×{value / configured:.0f} the {configured:.3g} "
                f"the run's configuration gives: a rate scaled twice (by the batch size or the "
                f"number of GPUs), or given in the wrong unit"), key="configured")]
        if not self._warmed_up(point) or "below" in self._raised or not self._from_start:
            return []
        if self._peak > 0 and self._peak * factor <= configured:
            self._raised.add("below")
            return [Raise(AnomalyType.LR_SCHEDULE, (
                f"the learning rate peaked at {self._peak:.3g} after its warm-up, "
                f"×{configured / max(self._peak, 1e-300):.0f} below the {configured:.3g} the "
                f"run's configuration gives: a scheduler built for another length, a "
                f"warm-up that never ends, or a rate divided twice"), key="configured")]
        return []

    def _warmed_up(self, point: Observation) -> bool:
        if point.target_steps and point.step is not None \
                and point.step >= self.rules.lr_warmup_fraction * point.target_steps:
            return True
        return self._points >= _LEAST_POINTS and self._flat >= _WARM_POINTS
