"""A gradient norm that grows by orders of magnitude while the loss stays where it was
(issue 24, item 2): the optimizer takes ever larger steps that buy nothing, so the model
is not learning, whether or not the norm ever turns non-finite.

A healthy run's gradient norm is largest in its first steps and settles; when it grows
a hundredfold, the loss has either fallen (a loss scale, a sharpening minimum) or shot
up (the divergence rule's). Grown a hundredfold with the loss within 5 % of its start
is neither: weights pushed around a plateau (a learning rate too high for a saturated
model, a loss term that does not reach the output). Judged on the medians of the first
five points and the latest five, ten points at least, so one spike is not growth. A
norm that rose at every one of its last eight points or more, tenfold in all (a
geometric climb, `grad_trends`), has grown as surely with less: the same judgement,
with the loss's level at the climb's start and now.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Sequence
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType
from babysit.rules import grad_trends
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_LEVEL = 5  # points in a level (the start's, the latest)
_LEAST_POINTS = 10
_GROWTH = 100.0  # the latest grad norm level over the start's
_PUT = 0.05  # the loss level within this share of its start
_FELL = 0.1  # a loss level this share below its start: it learns after all
_KEPT = 256  # points of an unbroken climb kept


def grew_without_learning(grads: Sequence[float], losses: Sequence[float],
                          first_grads: Sequence[float], first_losses: Sequence[float],
                          points: int) -> str | None:
    """Why the grad norm's growth says the steps change nothing: its latest level at
    least a hundred times its first, and the loss's latest level within 5 % of its
    first. None otherwise."""
    if points < _LEAST_POINTS or len(first_grads) < _LEVEL or len(grads) < _LEVEL:
        return None
    g_start, g_now = statistics.median(first_grads), statistics.median(grads)
    l_start, l_now = statistics.median(first_losses), statistics.median(losses)
    if g_start <= 0 or l_start <= 0 or g_now < _GROWTH * g_start \
            or abs(l_now - l_start) > _PUT * l_start:
        return None
    return (f"not learning: the grad norm grew {g_now / g_start:.3g}× ({g_start:.3g} → "
            f"{g_now:.3g}) over {points} logged points while the loss stayed where it was "
            f"({l_start:.4g} → {l_now:.4g}): ever larger updates that change nothing the "
            f"loss measures (a learning rate too high for a saturated model, a loss that "
            f"does not reach the output)")


class GrowingGradRule:
    """Not learning: the grad norm a hundredfold up, the loss put (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._first_grads: list[float] = []
        self._first_losses: list[float] = []
        self._grads: deque[float] = deque(maxlen=_LEVEL)
        self._losses: deque[float] = deque(maxlen=_LEVEL)
        self._points = 0
        self._raised = False
        # The latest unbroken rise of the grad norm, with the loss at each of its points.
        self._climb: list[tuple[float, float]] = []

    def observe(self, point: Observation) -> Sequence[Signal]:
        grad, loss = point.grad_norm, point.loss
        if not point.advanced or grad is None or loss is None \
                or not (math.isfinite(grad) and math.isfinite(loss)):
            return []
        self._points += 1
        if len(self._first_grads) < _LEVEL:
            self._first_grads.append(grad)
            self._first_losses.append(loss)
        self._grads.append(grad)
        self._losses.append(loss)
        self._climb = [*self._climb[-_KEPT:], (grad, loss)] \
            if self._climb and grad > self._climb[-1][0] else [(grad, loss)]
        if self._raised:
            start = statistics.median(self._first_losses)
            if statistics.median(self._losses) < start * (1 - _FELL):
                self._raised = False
                return [Resolve(AnomalyType.NOT_LEARNING, f"the loss fell to {loss:.4g}",
                                key="grad grows")]
            return []
        found = grew_without_learning(self._grads, self._losses, self._first_grads,
                                      self._first_losses, self._points) \
            or self._climbed_without_learning()
        if found is None:
            return []
        self._raised = True
        return [Raise(AnomalyType.NOT_LEARNING, found, key="grad grows")]

    def _climbed_without_learning(self) -> str | None:
        """Why a geometric climb of the grad norm with the loss put says nothing is
        learned: the climb (`grad_trends.steady_climb`) and the loss's level over its
        last five points within 5 % of its level over the climb's first five."""
        climb = grad_trends.steady_climb([g for g, _ in self._climb])
        if climb is None:
            return None
        losses = [v for _, v in self._climb]
        start, now = statistics.median(losses[:_LEVEL]), statistics.median(losses[-_LEVEL:])
        if start <= 0 or abs(now - start) > _PUT * start:
            return None
        return (f"not learning: {climb} while the loss stayed where it was ({start:.4g} → "
                f"{now:.4g}): ever larger updates that change nothing the loss measures (a "
                f"learning rate too high for a saturated model, a gradient filter feeding on "
                f"itself)")
