"""A run that is not learning: a loss that has not moved beyond its noise over a
meaningful share of the run, the same loss to many digits on every step, or a learning
rate or gradient norm of exactly 0 throughout after warm-up. A finished run that never
learned is not GO (the catalogue makes it high at the end)."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules import trends
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_LEVEL_WIDTH = 5  # points in a level (the start's and the latest)


class NotLearningRule:
    """A run that is not learning: a loss that has not moved beyond its noise over a
    meaningful share of the run, a loss identical to many digits on every step, or a
    learning rate or gradient norm of exactly 0 on every logged point after warm-up."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._first: list[float] = []  # the first few losses: where the run started
        self._recent: deque[float] = deque(maxlen=max(rules.not_learning_points, 5))
        self._best: float | None = None
        self._count = 0
        self._start_known: bool | None = None
        self._same = 0  # consecutive steps with the very same loss
        self._last: float | None = None
        self._lr_points = 0
        self._lr_zero = 0  # points at exactly 0 since the warm-up allowance
        self._grad_points = 0
        self._grad_zero = 0
        self._raised: set[str] = set()
        self._learned = False

    def observe(self, point: Observation) -> Sequence[Signal]:
        out: list[Signal] = []
        if not point.advanced:
            return out  # a step printed twice (bar and summary) is one step
        out.extend(self._zeros(point))
        value = point.loss
        if value is None or not math.isfinite(value):
            return out
        if self._start_known is None:
            self._start_known = point.step is not None \
                and point.step <= self.rules.divergence_start_steps
        out.extend(self._identical(value))
        target = point.target_steps
        # "Over a meaningful share of the run": 49 steps of a planned 1000 are too few.
        early = target is not None and point.step is not None and \
            point.step < self.rules.not_learning_share * target
        out.extend(self._flat(value, judge=not early))
        return out

    def _identical(self, value: float) -> list[Signal]:
        # 0 is what Hugging Face prints for a NaN loss it filtered (the NaN rule's story),
        # and a loss printed with few digits (0.0008) repeats once it has converged.
        self._same = self._same + 1 if value == self._last and _digits(value) >= 4 else 0
        self._last = value
        need = self.rules.not_learning_identical
        if self._same + 1 >= need and "identical" not in self._raised:
            self._raised.add("identical")
            return [Raise(AnomalyType.NOT_LEARNING,
                          f"not learning: the loss is exactly {value!r} on {self._same + 1} "
                          f"logged steps in a row (no batch changes it: the weights or the "
                          f"data are not changing)", key="identical", severity=Severity.HIGH)]
        if self._same == 0 and "identical" in self._raised:
            self._raised.discard("identical")
            return [Resolve(AnomalyType.NOT_LEARNING, f"the loss changed to {value:.6g}",
                            key="identical")]
        return []

    def _flat(self, value: float, judge: bool = True) -> list[Signal]:
        rules = self.rules
        if self._learned:
            return []  # a run that has learned has learned; later trouble is another rule's
        self._count += 1
        self._recent.append(value)
        if len(self._first) < _LEVEL_WIDTH:
            self._first.append(value)
            return []
        now = trends.level(list(self._recent), _LEVEL_WIDTH)
        self._best = now if self._best is None else min(self._best, now)
        if not self._start_known or self._count < rules.not_learning_points or not judge:
            return []
        start = trends.level(self._first, _LEVEL_WIDTH)
        sigma = trends.noise_scale(list(self._recent))
        if trends.beyond_noise(start - self._best, start, sigma, 3.0,
                               rules.not_learning_min_fall):
            self._learned = True
            if "flat" in self._raised:
                return [Resolve(AnomalyType.NOT_LEARNING, f"the loss fell to {now:.4g}",
                                key="flat")]
            return []
        rose = trends.beyond_noise(now - start, start, sigma, 3.0, rules.not_learning_min_fall)
        if not rose and "flat" not in self._raised:
            self._raised.add("flat")
            return [Raise(AnomalyType.NOT_LEARNING,
                          f"not learning: over {self._count} logged points the loss has not "
                          f"moved beyond its noise from where it started ({start:.4g} → "
                          f"{now:.4g}, σ≈{sigma:.2g})", key="flat")]
        return []

    def _zeros(self, point: Observation) -> list[Signal]:
        out: list[Signal] = []
        warmup = self.rules.not_learning_warmup_points
        if point.lr is not None and math.isfinite(point.lr):
            self._lr_points += 1
            if self._lr_points > warmup and self._lr_zero >= 0:  # -1: it moved, for good
                self._lr_zero = self._lr_zero + 1 if point.lr == 0 else -1
        if point.grad_norm is not None and math.isfinite(point.grad_norm):
            self._grad_points += 1
            if self._grad_points > warmup and self._grad_zero >= 0:
                self._grad_zero = self._grad_zero + 1 if point.grad_norm == 0 else -1
        need = self.rules.not_learning_zero_points
        for name, run in (("learning rate", self._lr_zero), ("grad_norm", self._grad_zero)):
            if run >= need and name not in self._raised:
                self._raised.add(name)
                out.append(Raise(AnomalyType.NOT_LEARNING,
                                 f"not learning: the {name} has been exactly 0 on every one "
                                 f"of {run} logged points after warm-up: no weight changes",
                                 key=name, severity=Severity.HIGH))
        return out


def _digits(value: float) -> int:
    """Significant digits in the shortest form of a value (10.8259: 6, 0.0008: 1)."""
    mantissa = repr(abs(value)).lower().split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa)
