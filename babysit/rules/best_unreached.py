"""A best the run states beside its current figure, never reached by anything it trained:
the model it started from was better than every one it made (issue 24, item 1).

A fine-tune that keeps its best prints both figures at every evaluation (a face
detector's distillation: `Current score: 0.3429, best_score: 0.8215`, then 0.370, 0.324,
0.476, the best never moving). A best that no current figure of the log ever equalled
was set before the log began: the pretrained or resumed weights' own score. When every
evaluation since falls far short of it, training has made the model worse than the one
it started from, and the run's result is worth less than its input.

Judged once at least three evaluations say both figures, each current one short of the
best by `_FAR` of the best's size or more; a blocker when the latest is short by
`_VERY_FAR` or more (less than two thirds of the start's score is not noise), high
otherwise. It resolves when a current figure comes within `_FAR` of the best (the run
found its way back), or the best moves (a figure of this log set it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.metric_names import lower_is_better
from babysit.model import AnomalyType, Severity
from babysit.rules.eval_names import evaluation_direction, name_words, score_direction
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_BEST = frozenset({"best"})
_CURRENT = frozenset({"current", "cur", "curr", "now", "this"})
_EVALUATIONS = 3  # evaluations that say both figures before the rule speaks
_FAR = 0.2  # each current figure short of the best by this share of it, at least
_VERY_FAR = 0.35  # the latest this far short: a blocker
_KEY = "best never reached"
# A score with no other word for what it measures (`Current score: 0.34`).
_SCORE_WORDS = frozenset({"score", "metric"})


def _evaluation(key: str) -> bool:
    """Whether a figure is an evaluation's score, whose best is a model's: not a
    training loss or an episode's reward, whose best is one lucky batch or episode."""
    words = name_words(key)
    return bool(words) and (evaluation_direction(key) != 0 or score_direction(key) != 0
                            or words[-1] in _SCORE_WORDS)


def best_pair(metrics: Mapping[str, float]) -> tuple[str, str] | None:
    """(the current figure's name, the best's name) when a record says both: the same
    words but for `best` (and `current`, `cur`...): `current_score` and `best_score`,
    `val_acc` and `best_val_acc`."""
    plain: dict[tuple[str, ...], str] = {}
    bests: dict[tuple[str, ...], str] = {}
    for key in metrics:
        words = tuple(name_words(key))
        if _BEST.intersection(words):
            bests[tuple(w for w in words if w not in _BEST)] = key
        else:
            plain[tuple(w for w in words if w not in _CURRENT)] = key
    return next(((plain[stem], best) for stem, best in bests.items()
                 if stem and stem in plain and _evaluation(plain[stem])), None)


class BestUnreachedRule:
    """A stated best no figure of the run reached, every figure far short of it."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._best: float | None = None
        self._short = 0  # evaluations in a row far short of the best
        self._raised = False
        self._reached = False  # a current figure equalled the best: the log's own best

    def observe(self, point: Observation) -> Sequence[Signal]:
        pair = best_pair(point.metrics)
        if pair is None:
            return []
        current_key, best_key = pair
        current, best = point.metrics[current_key], point.metrics[best_key]
        if not (math.isfinite(best) and math.isfinite(current)) or best == 0:
            return []  # (not a figure to compare)
        if self._best is not None and best != self._best:
            self._reached = True  # the best moved: this log's figures set it
        self._best = best
        lower = lower_is_better(current_key)
        if current == best:
            self._reached = True
        shortfall = (current - best) / abs(best) if lower else (best - current) / abs(best)
        if self._reached or shortfall < _FAR:
            self._short = 0
            if self._raised:
                self._raised = False
                return [Resolve(AnomalyType.EVAL_DEGRADATION,
                                f"{current_key} {current:.4g} back near its best {best:.4g}",
                                key=_KEY)]
            return []
        self._short += 1
        if self._raised or self._short < _EVALUATIONS:
            return []
        self._raised = True
        severity = Severity.BLOCKER if shortfall >= _VERY_FAR else Severity.HIGH
        return [Raise(AnomalyType.EVAL_DEGRADATION, (
            f"worse than where it started: {current_key} {current:.4g}, its stated best "
            f"{best_key} {best:.4g} set before this log and never reached since "
            f"({self._short} evaluations, each {'above' if lower else 'below'} it by "
            f"{_FAR:.0%} or more): training made the model worse than the one it began "
            f"from"), key=_KEY, severity=severity, severity_at_end=severity)]
