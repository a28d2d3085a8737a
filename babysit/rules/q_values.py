"""A value-based RL learner whose Q-values have blown up: divergence, a blocker (issue 24,
item 1).

A Q-value estimates a discounted sum of rewards, so it is bounded by the rewards the task
can pay: with per-step rewards within ±R and a discount γ, within ±R/(1-γ), a few hundred
R at the discounts trainers use. A learner whose bootstrapped targets feed on its own
overestimates (the "deadly triad": off-policy, function approximation, bootstrapping)
drives them up without bound instead, and its gradients with them. RLlib's DQN on shogi
self-play: `mean_q: -0.0151` at iteration 1, 1.43e6 by the tenth, 2.3e10 by the 320th,
while every episode's reward is 0 and `grad_gnorm` climbs to 1e7. No reward scale makes
such a value an estimate of a return; the Q-network is broken, and training on does not
bring it back.

Judged on a Q-value whose magnitude exceeds `_BEYOND_RETURNS` times the largest episode
return or reward the run has logged (1 when it logged none, or only zeros) on
`_POINTS` logged points in a row: a million times what the episodes pay allows any
per-step reward and discount a trainer uses. A value back within it resolves the finding.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.metric_names import is_q_value
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_BEYOND_RETURNS = 1e6  # a Q-value this many times the largest return or reward logged
_POINTS = 3  # logged points in a row beyond it


def _rewards(metrics: Mapping[str, float]) -> list[float]:
    """The record's episode returns and rewards (`episode_reward_max`, `return`)."""
    return [abs(value) for key, value in metrics.items()
            if ("reward" in key or "return" in key) and math.isfinite(value)]


class QValueRule:
    """Divergence, a blocker: Q-values far beyond any return the run's rewards allow."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._largest_return = 1.0  # the largest |return| or |reward| logged (at least 1)
        self._first: tuple[str, float] | None = None  # the first Q-value logged
        self._beyond: dict[str, int] = {}  # each Q-value's points in a row beyond the bound
        self._raised: str | None = None  # the Q-value the finding was raised on

    def observe(self, point: Observation) -> Sequence[Signal]:
        metrics = point.metrics
        for value in _rewards(metrics):
            self._largest_return = max(self._largest_return, value)
        q_values = [(key, value) for key, value in metrics.items()
                    if is_q_value(key) and math.isfinite(value)]
        if not q_values:
            return []
        if self._first is None:
            self._first = q_values[0]
        bound = _BEYOND_RETURNS * self._largest_return
        for key, value in q_values:
            # (each Q-value its own streak: a learner prints its mean, max and min at once)
            self._beyond[key] = self._beyond.get(key, 0) + 1 if abs(value) > bound else 0
        if self._raised is not None:
            return self._back_within(dict(q_values))
        key, value = max(q_values, key=lambda kv: self._beyond[kv[0]])
        if self._beyond[key] < _POINTS:
            return []
        self._raised = key
        return [Raise(AnomalyType.DIVERGENCE, self._why(key, value, bound),
                      key="q-values", severity=Severity.BLOCKER)]

    def _back_within(self, q_values: Mapping[str, float]) -> list[Signal]:
        """Resolved once the Q-value that was raised on is back within the bound."""
        key = self._raised
        if key is None or key not in q_values or self._beyond[key]:
            return []
        self._raised = None
        return [Resolve(AnomalyType.DIVERGENCE, f"{key} back to {q_values[key]:.4g}",
                        key="q-values")]

    def _why(self, key: str, value: float, bound: float) -> str:
        first = f" (its first logged value: {self._first[0]} {self._first[1]:.4g})" \
            if self._first is not None else ""
        return (f"divergence: the Q-values have blown up: {key} {value:.4g}{first}, beyond "
                f"{bound:.3g} ({_BEYOND_RETURNS:.0e} × the largest return or reward "
                f"logged, {self._largest_return:.4g}) on {self._beyond[key]} logged points "
                f"in a row; a Q-value estimates a discounted sum of rewards, and none of these "
                f"rewards add up to that: the bootstrapped targets feed on themselves")
