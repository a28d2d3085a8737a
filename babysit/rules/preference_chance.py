"""A preference-optimisation run (DPO and its kin) that never told chosen from rejected.

The DPO loss is -log σ(β · margin): ln 2 (0.6931) while the policy's implicit reward
scores the chosen and the rejected answer alike, which is where every run starts (the
policy is its reference model). A run that learns moves the margin: its loss falls below
ln 2 and the share of pairs it ranks right (TRL's `rewards/accuracies`) leaves one half.
One whose loss never falls below ln 2 (by more than `_LOSS_NEAR`) on any logged point of
its run, from its first, with that share still near one half at the end, ranked nothing:
what it delivers is no better than its reference model (a LLaVA DPO run, sealed-38: 0.6934
→ 0.6887 over its one epoch, accuracies 0.46 → 0.54; a LLaMA-Factory QLoRA DPO run,
sealed-105, its loss between 0.73 and 1.70 for all its 100 steps, accuracies 0.40-0.65).
A notice while it runs (a plateau can still break); a blocker once it finished.

The other end says as little: a loss already near 0 at the run's first logged point, every
pair ranked right, and so on every point after (a LLaMA-Factory DPO run on Qwen2.5-7B,
sealed-171: `loss: 0.0017`, `rewards/accuracies: 1.0` at step 10 of 170, then 0.0004,
0.0001 … with the learning rate still warming up). No policy learns a preference in ten
steps from its reference; the chosen and the rejected answers differ in something it
already told apart (their length, their format, a rejected answer from a broken model), so
the run learned that and nothing the pairs were meant to teach. A notice while it runs,
high once it finished (not-learning's way): worth a look at the pairs, not a broken run.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_LN2 = math.log(2.0)
_LOSS_NEAR = 0.012  # a loss within this of ln 2 has not moved the margin
_ACCURACY_NEAR = 0.1  # the ranked-right share this near one half at the end
_LEAST_POINTS = 10  # logged points before it speaks
_LAST = 5  # the latest accuracies judged
_SATURATED = 0.02  # a loss below this with every pair ranked right: the margin is huge
_SATURATED_POINTS = 5  # logged points so, from the first, before it speaks


def _accuracy_key(names: Sequence[str]) -> str | None:
    """The share of preference pairs ranked right (`rewards/accuracies`)."""
    return next((k for k in names if k.endswith(("rewards/accuracies", "rewards/accuracy"))),
                None)


class PreferenceChanceRule:
    """A DPO-style loss held at ln 2 from the first point, its pairs ranked at a coin
    toss: the policy never left its reference."""

    windowed: ClassVar[bool] = False

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._points = 0
        self._held = True  # every loss so far within `_LOSS_NEAR` of ln 2
        self._accuracies: deque[float] = deque(maxlen=_LAST)
        self._raised = False
        self._saturated = True  # every point so far below `_SATURATED`, all pairs right

    def observe(self, point: Observation) -> Sequence[Signal]:
        key = _accuracy_key(tuple(point.metrics))
        loss = point.loss
        if key is None or loss is None or not math.isfinite(loss) or not point.advanced:
            return []
        accuracy = point.metrics[key]
        if not math.isfinite(accuracy):
            return []
        self._points += 1
        self._accuracies.append(accuracy)
        separated = self._separated(loss, accuracy)
        if separated:
            return separated
        if loss < _LN2 - _LOSS_NEAR:
            self._held = False
            if self._raised:
                self._raised = False
                return [Resolve(AnomalyType.NOT_LEARNING, f"the loss left ln 2 ({loss:.4g})",
                                key="preference")]
            return []
        if self._raised or not self._held or self._points < _LEAST_POINTS:
            return []
        recent = sum(self._accuracies) / len(self._accuracies)
        if abs(recent - 0.5) > _ACCURACY_NEAR:
            return []
        self._raised = True
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: the preference loss has never fallen below ln 2 = "
                      f"{_LN2:.4f} (by {_LOSS_NEAR}) on all {self._points} logged points, now "
                      f"{loss:.4g}, and the pairs ranked right are {recent:.2f} of them: the "
                      f"policy scores chosen and rejected answers alike, as its reference "
                      f"model does", key="preference", severity_at_end=Severity.BLOCKER)]

    def _separated(self, loss: float, accuracy: float) -> list[Signal]:
        """Every pair ranked right and the loss near 0 from the first logged point on, for
        `_SATURATED_POINTS` points (see the module)."""
        self._saturated = self._saturated and loss < _SATURATED and accuracy >= 0.99
        if not self._saturated or self._points != _SATURATED_POINTS:
            return []
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"the preference pairs were told apart from the first logged point: "
                      f"the loss is below {_SATURATED} and every pair is ranked right on each "
                      f"of the first {_SATURATED_POINTS} points (now {loss:.4g}), as no policy "
                      f"learns in a few steps from its reference: the chosen and rejected "
                      f"answers differ in something trivial (length, format), and the run "
                      f"learned that, not the preference", key="preference separated")]
