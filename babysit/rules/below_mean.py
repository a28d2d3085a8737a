"""A regression no better than predicting the mean (issue 24, item 2): its R² below 0 on
every report, three at least, and not rising. R² is 0 for a model that predicts the
targets' mean whatever the input, so a negative one that does not rise is a model that
has learned nothing of the inputs (Ludwig's `│ train │ … │ -0.0603 │` over three epochs).
A run whose R² starts negative and climbs is learning (a PolymerGNN fold's `Train r2:
-3.4028` at epoch 0, 0.50 at epoch 50) and is left alone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.model import AnomalyType
from babysit.rules.signals import Observation, Raise, Resolve, Signal

# The coefficient of determination by the names runs print (`r2`, `val_r2`, `R2 Score`,
# `r_squared`); never an adjusted twin's best-so-far.
_R2 = lazy_re.compile(r"(^|[/_ .-])(r2|r_?squared|rsquared)([/_ .-]score)?$", re.IGNORECASE)
_NOT_R2 = lazy_re.compile(r"best|max|min|std", re.IGNORECASE)
_REPORTS = 3  # reports of R², all below 0, before it speaks
_RISE = 0.05  # a rise this large (R² is on a unit scale) over the first is learning


def _numbered_sibling(key: str, metrics: Mapping[str, float]) -> bool:
    """Whether `r2` is one of a numbered family beside it (`r1=0.0 r2=-0.026`, an
    offline-RL loop's reward terms): the second of its kind, not an R²."""
    return key[:-1] + "1" in metrics if key[-1:] == "2" else False


def below_mean(values: list[float]) -> str | None:
    """Why R² values say the model is no better than the mean: three or more, every one
    below 0, none more than `_RISE` above the first. None otherwise."""
    if len(values) < _REPORTS or any(v >= 0 for v in values) \
            or max(values) - values[0] > _RISE:
        return None
    return (f"not learning: R² has been below 0 on every one of {len(values)} reports "
            f"({values[0]:.4g} → {values[-1]:.4g}) without rising: the model predicts worse "
            f"than the targets' mean would, so it has learned nothing of its inputs")


class BelowMeanRule:
    """R² below 0 and not rising (see the module); resolved when it rises above 0."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._values: dict[str, list[float]] = {}
        self._at: dict[str, int | None] = {}
        self._raised: set[str] = set()

    def observe(self, point: Observation) -> list[Signal]:
        out: list[Signal] = []
        if "2" not in "".join(point.metrics) and "squared" not in "".join(point.metrics):
            return out  # most records name no R²: asked cheaply first
        for key, value in point.metrics.items():
            if not _R2.search(key) or _NOT_R2.search(key) or not math.isfinite(value) \
                    or _numbered_sibling(key, point.metrics):
                continue
            values = self._values.setdefault(key, [])
            if values and (self._at.get(key) == point.step if point.step is not None
                           else values[-1] == value):
                continue  # the same report printed again
            self._at[key] = point.step
            if len(values) < 100:
                values.append(value)
            tag = f"r2 {key}"
            if tag in self._raised:
                if value > 0:
                    self._raised.discard(tag)
                    out.append(Resolve(AnomalyType.NOT_LEARNING,
                                       f"{key} rose above 0 ({value:.4g})", key=tag))
                continue
            found = below_mean(values)
            if found is not None:
                self._raised.add(tag)
                out.append(Raise(AnomalyType.NOT_LEARNING, f"{key}: {found}", key=tag))
        return out
