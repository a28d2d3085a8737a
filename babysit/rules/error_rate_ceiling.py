"""A held-out word or character error rate above 100 % on many evaluations in a row: a
model whose transcripts hold more errors than the references hold words (issue 24, item
2: not learning).

An error rate of edits (WER, CER, TER) is 100 % for a model that emits nothing (every word
deleted), which is where a CTC model sits for its first epochs, and ordinary there. Above
100 % the model inserts words the reference does not have: a seq2seq model's first few
evaluations may do so (a transformer ASR's 116, 110, 121, 104 before it falls to 83), but
one that stays above 100 evaluation after evaluation has learned to emit garbage longer
than the truth. A sign-language recogniser early-stopped with its best dev WER at 170.85
after 128 epochs, another at 151-183 % over 96 (sealed-145): neither model is of any use,
however its training loss fell.

Only a figure above 100 is sure to be a percentage above 100 % (a `1.5` is 1.5 % or 150 %:
left alone). Raised, as a blocker, on the `_EVALUATIONS`-th evaluation in a row above
100; resolved when one comes back to 100 or below.
"""

from __future__ import annotations

import functools
import math
import re
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Reprints, Resolve, Signal

_WORDS = re.compile(r"[/_\-. ]+")
_RATES = frozenset({"wer", "cer", "ter"})
_UNITS = frozenset({"word", "char", "character", "token", "sign", "gloss", "phone"})
# A training split's rate, or a best-so-far (which trails the latest by design).
_NOT_HELD_OUT = frozenset({"train", "training", "trn", "best", "min", "max", "avg", "mean"})
_EVALUATIONS = 8
_CEILING = 100.0  # every reference word wrong or missing: a model that emits nothing


@functools.lru_cache(maxsize=256)
def _rates(names: tuple[str, ...]) -> tuple[str, ...]:
    """The held-out edit error rates among a record's names (`dev_wer`, `test/cer`,
    `valid_word_error_rate`). Worked out once per shape of record."""
    found = []
    for key in names:
        words = [w for w in _WORDS.split(key.lower()) if w]
        if not words or _NOT_HELD_OUT.intersection(words):
            continue
        if words[-1] in _RATES or (words[-2:] == ["error", "rate"] and len(words) > 2
                                   and words[-3] in _UNITS):
            found.append(key)
    return tuple(found)


class ErrorRateCeilingRule:
    """Held-out error rates above 100 % on evaluations in a row (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._above: dict[str, int] = {}  # evaluations in a row above 100, by key
        self._reprints = Reprints()  # (an evaluation printed again counts once)
        self._raised: str | None = None  # the rate raised on (one finding for all)

    def observe(self, point: Observation) -> list[Signal]:
        metrics = point.metrics
        out: list[Signal] = []
        for key in _rates(tuple(metrics)):
            value = metrics[key]
            if not math.isfinite(value) or not self._reprints.fresh(key, value, point):
                continue
            if value <= _CEILING:
                self._above[key] = 0
                if key == self._raised:
                    self._raised = None
                    out.append(Resolve(AnomalyType.NOT_LEARNING,
                                       f"{key} back to {value:.4g}, at or below 100 %",
                                       key="error-rate"))
                continue
            count = self._above[key] = self._above.get(key, 0) + 1
            if self._raised is not None or count < _EVALUATIONS:
                continue
            self._raised = key
            out.append(Raise(AnomalyType.NOT_LEARNING,
                             f"not learning: {key} has stayed above 100 % on each of its "
                             f"last {count} evaluations ({value:.4g} now): the model's "
                             "output holds more errors than the references hold words, "
                             "worse than emitting nothing", key="error-rate",
                             severity=Severity.BLOCKER))
        return out
