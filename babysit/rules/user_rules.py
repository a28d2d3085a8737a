"""The user's own alerts (`[[alerts]]` in babysit.toml), checked like the built-in rules
and reported the same way: one anomaly of type `user-alert` per alert (keyed by its
name), raised at the severity the user chose, resolved when the condition stops
holding. W&B Alerts and TensorBoard users expect to write these themselves."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from typing import ClassVar

from babysit.metric_names import lower_is_better
from babysit.model import AnomalyType, Severity
from babysit.rules.eval_names import evaluation_direction
from babysit.rules.signals import Observation, Raise, Resolve, Signal
from babysit.user_alerts import UserAlert


class _AlertState:
    """One alert and what it needs to remember."""

    def __init__(self, alert: UserAlert) -> None:
        self.alert = alert
        self.firing = False
        self.recent: deque[float] = deque(maxlen=alert.window)
        self.best: float | None = None
        self.since_best = 0
        self.last: tuple[int | None, float] | None = None
        # (the mode the user named; else the direction an evaluation of that name is
        # judged by; else its name's: `train_loss` falls, anything unnamed rises)
        direction = {"min": -1, "max": 1}.get(alert.mode or "") or \
            evaluation_direction(alert.metric)
        self.direction = direction or (-1 if lower_is_better(alert.metric) else 1)

    def in_range(self, step: int | None) -> bool:
        alert = self.alert
        if alert.after_step is None and alert.before_step is None:
            return True
        if step is None:
            return False  # a range cannot be judged without a step
        return (alert.after_step is None or step >= alert.after_step) and \
            (alert.before_step is None or step < alert.before_step)

    def broken(self, value: float) -> bool | None:
        """Whether this value breaks the alert (None: not enough to tell yet)."""
        alert = self.alert
        if alert.condition == "above":
            return value > alert.threshold
        if alert.condition == "below":
            return value < alert.threshold
        if alert.condition == "not_improving_for":
            if self.best is None or (value - self.best) * self.direction > 0:
                self.best, self.since_best = value, 0
            else:
                self.since_best += 1
            return self.since_best >= alert.threshold
        lowest = min(self.recent) if self.recent else None
        self.recent.append(value)
        if lowest is None:
            return None
        return value - lowest > abs(lowest) * alert.threshold / 100


class UserAlertRule:
    windowed: ClassVar[bool] = True

    def __init__(self, alerts: Sequence[UserAlert]) -> None:
        self._alerts = [_AlertState(alert) for alert in alerts]

    def observe(self, point: Observation) -> Sequence[Signal]:
        out: list[Signal] = []
        for state in self._alerts:
            alert = state.alert
            value = point.metrics.get(alert.metric)
            if value is None or not math.isfinite(value) or not state.in_range(point.step):
                continue
            if state.last == (point.step, value):
                continue  # the same evaluation printed twice (a bar and a summary line)
            state.last = (point.step, value)
            broken = state.broken(value)
            at = f" at step {point.step}" if point.step is not None else ""
            if broken and not state.firing:
                state.firing = True
                out.append(Raise(AnomalyType.USER_ALERT,
                                 f"your alert {alert.name!r}: {alert.metric} = {value:.6g}{at} "
                                 f"({alert.describe()})", key=alert.name,
                                 severity=Severity(alert.severity)))
            elif broken is False and state.firing:
                state.firing = False
                out.append(Resolve(AnomalyType.USER_ALERT,
                                   f"{alert.metric} = {value:.6g}{at}", key=alert.name))
        return out
