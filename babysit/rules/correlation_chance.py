"""A held-out correlation at or below zero: predictions no better than a guess (issue 24,
item 2: not learning).

A regressor scored by how its predictions rank or line up with the truth (image-quality
models' SRCC and PLCC, STS models' Spearman and Pearson, Kendall's tau) has a guess's
level at 0 whatever the data: a model that learned anything of use scores above it. One
at or below 0 on several evaluations in a row has learned nothing that carries over to
unseen data, however its training figures look: DiffV2IQA on CSIQ scored a training SRCC
of 0.87 and a test SRCC of -0.26, -0.12 and -0.14 on three epochs in a row (sealed-138).

Judged on the evaluations in a row at or below 0:
- `_BESIDE_TRAINING` of them while the training split's same correlation stands at
  `_FITS` or more: the model fits its training data and ranks unseen data no better than
  chance (a blocker: what it learned does not transfer);
- `_ALONE` of them with no training figure beside them (a blocker too: that many
  evaluations of a model that never ranked anything).
Resolved when an evaluation scores above `_CLEAR`.
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
_CORRELATIONS = frozenset({"srcc", "srocc", "plcc", "krcc", "krocc", "spearman", "spearmanr",
                           "pearson", "pearsonr", "kendall", "kendalltau", "correlation",
                           "corr", "ccc"})
_HELD_OUT = frozenset({"val", "valid", "validation", "eval", "test", "dev", "heldout"})
_TRAINING = frozenset({"train", "training", "trn"})
_BESIDE_TRAINING = 3
_ALONE = 5
_FITS = 0.5  # a training correlation this high: the model fits what it is trained on
_CLEAR = 0.1


_Roles = tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]


@functools.lru_cache(maxsize=256)
def _roles(names: tuple[str, ...]) -> _Roles:
    """A record's correlations, each `(key, the correlation's own name)`: those scored on
    held-out data (`test_srcc`, `val/spearman`), and the training split's (a bare `srcc`,
    or one named for training: `train_srcc`). Worked out once per shape of record."""
    held_out: list[tuple[str, str]] = []
    training: list[tuple[str, str]] = []
    for key in names:
        words = [w for w in _WORDS.split(key.lower()) if w]
        if not words or words[-1] not in _CORRELATIONS:
            continue
        if _HELD_OUT.intersection(words[:-1]):
            held_out.append((key, words[-1]))
        elif len(words) == 1 or _TRAINING.intersection(words[:-1]):
            training.append((key, words[-1]))
    return tuple(held_out), tuple(training)


class CorrelationChanceRule:
    """Held-out correlations at or below 0 on evaluations in a row (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._below: dict[str, int] = {}  # evaluations in a row at or below 0, by key
        self._reprints = Reprints()  # (an evaluation printed again counts once)
        self._training: dict[str, float] = {}  # the latest training value, by correlation
        self._raised: str | None = None  # the correlation raised on (one finding for all)

    def observe(self, point: Observation) -> list[Signal]:
        metrics = point.metrics
        held_out, training = _roles(tuple(metrics))
        for key, name in training:
            if math.isfinite(metrics[key]):
                self._training[name] = metrics[key]
        out: list[Signal] = []
        for key, name in held_out:
            value = metrics[key]
            if not math.isfinite(value) or not self._reprints.fresh(key, value, point):
                continue
            if value > 0:
                self._below[key] = 0
                if key == self._raised and value > _CLEAR:
                    self._raised = None
                    out.append(Resolve(AnomalyType.NOT_LEARNING,
                                       f"{key} above chance again ({value:.4g})",
                                       key="correlation"))
                continue
            count = self._below[key] = self._below.get(key, 0) + 1
            trained = self._training.get(name)
            fits = trained is not None and trained >= _FITS
            if self._raised is not None or count < (_BESIDE_TRAINING if fits else _ALONE):
                continue
            self._raised = key
            why = (f" while the training split's {name} stands at {trained:.4g}: the model "
                   f"fits its training data and ranks unseen data no better than chance"
                   if fits else ": the model's predictions on unseen data are no better "
                   "than a guess's")
            out.append(Raise(AnomalyType.NOT_LEARNING,
                             f"not learning: {key} has been at or below 0 (a guess's "
                             f"correlation) on each of its last {count} evaluations "
                             f"({value:.4g} now){why}", key="correlation",
                             severity=Severity.BLOCKER))
        return out

