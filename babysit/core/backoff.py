"""Polling cadence: a pure function from the last interval and what happened."""

from __future__ import annotations

import math
from dataclasses import dataclass

from babysit.config import PollSettings


@dataclass(frozen=True)
class PollOutcome:
    """What the last poll saw that matters for the cadence."""

    anomaly: bool = False
    loss_change: float | None = None  # relative change since the previous poll
    new_epoch: bool = False
    state_changed: bool = False
    look_sooner: bool = False  # a reviewer answered WAIT


def reset_reason(outcome: PollOutcome, settings: PollSettings) -> str | None:
    """Why the interval goes back to its initial value, or None if it does not."""
    if outcome.anomaly:
        return "anomaly"
    if outcome.loss_change is not None and outcome.loss_change > settings.loss_change_reset:
        return f"loss changed {100 * outcome.loss_change:.0f}%"
    if outcome.new_epoch:
        return "new epoch"
    if outcome.state_changed:
        return "state change"
    if outcome.look_sooner:
        return "reviewer said WAIT"
    return None


def next_interval(current: float, outcome: PollOutcome, settings: PollSettings) -> float:
    """×`backoff_factor` after an uneventful poll, capped at `max_interval`; back to
    `interval` on an anomaly, a big loss change, a new epoch or a state change.
    With backoff off the interval never moves. With a `schedule` (10m, 20m, 30m, 60m)
    each uneventful poll moves one entry along it and any event goes back to its start."""
    if settings.schedule:
        if reset_reason(outcome, settings) is not None:
            return settings.schedule[0]
        later = [s for s in settings.schedule if s > current]
        return later[0] if later else settings.schedule[-1]
    if not settings.backoff:
        return settings.interval
    if reset_reason(outcome, settings) is not None:
        return settings.interval
    return min(current * settings.backoff_factor, settings.max_interval)


def relative_change(previous: float | None, value: float | None) -> float | None:
    """|value − previous| / |previous| (a loss between two polls); None when either is
    missing or not finite, or the previous one is 0."""
    if value is None or previous is None or not math.isfinite(value):
        return None
    if not math.isfinite(previous) or previous == 0:
        return None
    return abs(value - previous) / abs(previous)
