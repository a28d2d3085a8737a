"""A language model whose perplexity stays at or above its vocabulary's size (issue 24).

Perplexity is the exponential of the cross-entropy, and a uniform guess over a
vocabulary of V tokens has a perplexity of exactly V: a model at or above V on held-out
text predicts no better than picking a token at random, whatever its training figures
say. Sealed-12's predictive-coding transformer (`"vocab_size": 1024`) runs all 20
epochs and prints `Training completed`, its training perplexity falling 368 → 279, but
its `Val Perplexity` is 2140 at epoch 1 and still 1622 at epoch 20: worse than chance
on every evaluation.

Held-out perplexity is judged when the run prints one (it is what the model will
score), else the training one. Every evaluation must be above V, from the first seen,
and at least `_LEAST_EVALS` of them: a run's first steps sit near V (a fresh model is a
near-uniform guess), so a run that is still young is not judged. While it runs it is a
warning; if the run ends so, the model it delivers is unusable (a blocker at the end).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_PERPLEXITY = lazy_re.compile(r"(?:^|[/_ .-])(?:ppl|perplexity)(?:$|[/_ .-])", re.IGNORECASE)
_HELD_OUT = lazy_re.compile(r"(?:^|[/_ .-])(?:val|valid|validation|eval|test|dev)(?:$|[/_ .-])",
                            re.IGNORECASE)
_LEAST_EVALS = 5  # points above the vocabulary before the run can be said to be at chance


def above_uniform(values: Sequence[float], vocab_size: int) -> str | None:
    """Why a perplexity's values say the model is no better than a uniform guess over
    its vocabulary: `_LEAST_EVALS` or more, every one at or above `vocab_size`. None
    otherwise."""
    if len(values) < _LEAST_EVALS or min(values) < vocab_size:
        return None
    return (f"not learning: its perplexity has stayed at or above the vocabulary's size "
            f"({vocab_size}) on all {len(values)} points ({values[0]:.5g} → "
            f"{values[-1]:.5g}): the model predicts no better than a uniform guess over "
            f"its tokens")


class PerplexityChanceRule:
    """A perplexity at or above the vocabulary's size on every point (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._key: str | None = None
        self._values: list[float] = []  # every value of the key, while all are above
        self._above = True  # no value below the vocabulary yet
        self._raised = False

    def observe(self, point: Observation) -> Sequence[Signal]:
        vocab = point.vocab_size
        if vocab is None or vocab < 2:
            return []
        key = self._pick(point.metrics)
        if key is None:
            return []
        value = point.metrics.get(key)
        if value is None or not math.isfinite(value):
            return []
        if value < vocab:
            self._above = False
            if self._raised:
                self._raised = False
                return [Resolve(AnomalyType.NOT_LEARNING,
                                f"{key} fell to {value:.5g}, below the vocabulary's size "
                                f"({vocab})", key="perplexity")]
            return []
        if not self._above or self._raised:
            return []
        self._values.append(value)
        found = above_uniform(self._values, vocab)
        if found is None:
            return []
        self._raised = True
        return [Raise(AnomalyType.NOT_LEARNING, f"{key}: {found}", key="perplexity",
                      severity_at_end=Severity.BLOCKER)]

    def _pick(self, names: Iterable[str]) -> str | None:
        """The held-out perplexity once one is seen (it replaces a training one judged
        until then), else the training one."""
        names = tuple(names)
        held_out = next((k for k in names if _PERPLEXITY.search(k) and _HELD_OUT.search(k)), None)
        if held_out is not None and (self._key is None or not _HELD_OUT.search(self._key)):
            self._key, self._values, self._above = held_out, [], True
        elif self._key is None:
            self._key = next((k for k in names if _PERPLEXITY.search(k)), None)
        return self._key if self._key in names else None
