"""The user's own alerts, `[[alerts]]` in babysit.toml: what one says, and its
validation. Each names a metric, one condition on it, an optional step range and the
severity to report it with; `rules.user_rules` checks them like the built-in rules."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class AlertError(ValueError):
    """An alert is malformed; the message names it (by position and name) and says how."""


ALERT_CONDITIONS = ("above", "below", "not_improving_for", "rises_by_percent")
_ALERT_KEYS = frozenset({"name", "metric", *ALERT_CONDITIONS, "after_step", "before_step",
                         "window", "mode", "severity"})
_SEVERITIES = ("low", "medium", "high", "blocker")
_MAX_ALERTS = 100


@dataclass(frozen=True)
class UserAlert:
    """One alert a user wrote in `[[alerts]]`: a metric, one condition on it, an optional
    step range, and the severity to report it with."""

    name: str
    metric: str
    condition: str  # one of ALERT_CONDITIONS
    # The bound (above, below), the evaluations without a new best (not_improving_for),
    # or the rise in percent over the lowest of the last `window` values (rises_by_percent).
    threshold: float
    after_step: int | None = None
    before_step: int | None = None
    window: int = 10
    mode: str | None = None  # "min" or "max" for not_improving_for (None: from the name)
    severity: str = "medium"

    def describe(self) -> str:
        what = {"above": f"above {self.threshold:g}", "below": f"below {self.threshold:g}",
                "not_improving_for": f"not improving for {self.threshold:g} evaluations",
                "rises_by_percent": f"rises by {self.threshold:g}% over the lowest of its "
                                    f"last {self.window} values"}[self.condition]
        when = ""
        if self.after_step is not None:
            when += f" after step {self.after_step}"
        if self.before_step is not None:
            when += f" before step {self.before_step}"
        return f"{self.metric} {what}{when}"


def parse_alerts(raw: Any) -> tuple[UserAlert, ...]:
    """The `[[alerts]]` tables, validated. Raises AlertError naming the alert (by its
    position and name) and what is wrong with it."""
    if not isinstance(raw, list) or not all(isinstance(t, Mapping) for t in raw):
        raise AlertError("alerts in the babysit config must be [[alerts]] tables "
                          "(an array of tables), each with a metric and one condition")
    if len(raw) > _MAX_ALERTS:
        raise AlertError(f"{len(raw)} [[alerts]]: at most {_MAX_ALERTS}")
    alerts = tuple(_alert(table, index) for index, table in enumerate(raw, start=1))
    names = [a.name for a in alerts]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise AlertError(f"[[alerts]]: two alerts named {twice[0]!r}; give each its own name")
    return alerts


def _alert(table: Mapping[str, Any], index: int) -> UserAlert:
    label = f"[[alerts]] #{index}"
    if isinstance(table.get("name"), str):
        label += f" ({table['name'][:60]!r})"
    unknown = set(table) - _ALERT_KEYS
    if unknown:
        raise AlertError(f"{label}: unknown key(s) {', '.join(sorted(unknown))}; known: "
                          f"{', '.join(sorted(_ALERT_KEYS))}")
    metric = table.get("metric")
    if not isinstance(metric, str) or not metric.strip() or len(metric) > 200:
        raise AlertError(f"{label}: 'metric' must name the metric as the run logs it "
                          f"(e.g. metric = \"val_acc\")")
    given = [c for c in ALERT_CONDITIONS if c in table]
    if len(given) != 1:
        raise AlertError(f"{label}: give exactly one condition of "
                          f"{', '.join(ALERT_CONDITIONS)} (got {', '.join(given) or 'none'})")
    condition = given[0]
    threshold = _alert_number(table[condition], f"{label} {condition}")
    if condition == "not_improving_for" and (threshold < 1 or not threshold.is_integer()):
        raise AlertError(f"{label} not_improving_for: a whole number of evaluations, "
                          f"at least 1, got {table[condition]!r}")
    if condition == "rises_by_percent" and threshold <= 0:
        raise AlertError(f"{label} rises_by_percent: must be above 0, got {table[condition]!r}")
    after = _alert_step(table.get("after_step"), f"{label} after_step")
    before = _alert_step(table.get("before_step"), f"{label} before_step")
    if after is not None and before is not None and before <= after:
        raise AlertError(f"{label}: before_step ({before}) must be after after_step ({after})")
    window = table.get("window", 10)
    if isinstance(window, bool) or not isinstance(window, int) or not 2 <= window <= 10000:
        raise AlertError(f"{label} window: a whole number of values from 2 to 10000, "
                          f"got {window!r}")
    mode = table.get("mode")
    if mode is not None and mode not in ("min", "max"):
        raise AlertError(f"{label} mode: \"min\" (lower is better) or \"max\", got {mode!r}")
    severity = table.get("severity", "medium")
    if severity not in _SEVERITIES:
        raise AlertError(f"{label} severity: one of {', '.join(_SEVERITIES)}, got {severity!r}")
    name = table.get("name")
    if name is not None and (not isinstance(name, str) or len(name) > 200):
        raise AlertError(f"{label} name: a string of at most 200 characters")
    alert = UserAlert(name="", metric=metric.strip(), condition=condition,
                      threshold=threshold, after_step=after, before_step=before,
                      window=window, mode=mode, severity=severity)
    return dataclasses.replace(alert, name=name or alert.describe())


def _alert_number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value):
        raise AlertError(f"{where}: expected a number, got {value!r}")
    return float(value)


def _alert_step(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise AlertError(f"{where}: expected a step number (a whole number, 0 or more), "
                          f"got {value!r}")
    return value
