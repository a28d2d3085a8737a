"""An evaluation whose precision, recall and F1 are all exactly 0: the model predicts no
positive at all (not-learning; a blocker if the run ends on it).

A tagger or a detector that outputs only the background class (every token `O`, no box)
finds nothing, so it gets nothing right: precision, recall and F1 are 0 together, while its
accuracy can look fair, since the background is most of the data. conlleval's summary
after a BERT NER run: `processed 2330 tokens with 0 phrases; found: 0 phrases; correct: 0.`
then `accuracy:  69.18%; precision:   0.00%; recall:   0.00%; FB1:   0.00`.

An early evaluation may read so before the model has learned to say anything but the
background, so it is a notice while the run goes on, resolved by a later evaluation that
finds something; the run's last evaluation reading so is an unusable model (a blocker at
the end). One zero alone is not this: a recall of 0 on one rare class, a precision of 0
beside a recall that is not. A confusion matrix says it by its counts: no true and no false
positive, with positives there to find (a quantum CNN's `CM: [TP:0, TN:13, FP:0, FN:13]`
at a test accuracy of 50 %, sealed-135). An F1 printed alone is: the run's own F1 of
exactly 0 (not a class's) means no true positive at all, so precision and recall are 0
with it (a text segmenter's `Validating Epoch: 4, accuracy: 0.9477, Pk: 0.3286, Windiff:
0.3286, B: 0.0, S: 0.9453 ,F1: 0.0 .`, its accuracy the share of sentences that end no segment).

The same evaluation printed to every digit at `FROZEN_EVALS` epochs in a row, finding
nothing each time, is a blocker while the run goes on: the model's predictions on the
held-out data have not changed in whole epochs of training, and they are all background.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Reassess, Resolve, Signal

# The three scores by the names evaluation scripts print them (`precision`, `eval_recall`,
# conlleval's `FB1`, `f1_score`, `f-measure`); a training split's are not an evaluation.
_KINDS = (("precision", lazy_re.compile(r"(?:^|[/_ .-])prec(?:ision)?$", re.IGNORECASE)),
          ("recall", lazy_re.compile(r"(?:^|[/_ .-])rec(?:all)?$", re.IGNORECASE)),
          ("f1", lazy_re.compile(r"(?:^|[/_ .-])(?:f1|fb1|f_?1_?score|f_?score|f_?measure)$",
                                 re.IGNORECASE)))
_TRAINING = lazy_re.compile(r"(?:^|[/_ .-])train", re.IGNORECASE)
# The run's F1 printed without its precision and recall: the name is an F1 and at most a
# held-out set's mark (`F1`, `val_f1`, `eval/f1`), never a class's (`f1_person`).
_BARE_F1 = lazy_re.compile(r"(?:(?:eval|val|valid|validation|dev|test)[/_ .-])?"
                           r"(?:f1|fb1|f1_?score)", re.IGNORECASE)
FROZEN_EVALS = 3  # the same evaluation, to every digit, finding nothing
# A record's counters (its epoch, its step) differ between two evaluations that are alike.
_COUNTER = lazy_re.compile(r"epoch|step|iter", re.IGNORECASE)
_SHAPES = 64  # the sets of names kept apart (a log prints a few)


@functools.lru_cache(maxsize=256)
def _score_keys(names: tuple[str, ...]) -> tuple[tuple[str, ...], ...] | None:
    """The names of each of the three scores among a record's names, or None unless all
    three are there."""
    found = tuple(tuple(k for k in names if pattern.search(k) and not _TRAINING.search(k))
                  for _, pattern in _KINDS)
    return found if all(found) else None


def found_nothing(metrics: Mapping[str, float]) -> bool | None:
    """Whether a record's precision, recall and F1 are all exactly 0, or its own F1
    printed alone is, or its confusion counts say no positive was predicted (None when it
    carries none of these)."""
    names = "|".join(metrics).lower()
    if "fp" in names and "fn" in names:
        counted = _confusion(metrics)
        if counted is not None:
            return counted
    if "rec" not in names and "f1" not in names and "fb1" not in names:
        return None  # the cheap test first: most records carry no recall and no F1
    keys = _score_keys(tuple(metrics))
    if keys is not None:
        return all(metrics[k] == 0 for group in keys for k in group)
    if "rec" in names:
        return None  # part of the three: one zero among them says nothing
    alone = _bare_f1(tuple(metrics))
    return None if alone is None else metrics[alone] == 0


def _confusion(metrics: Mapping[str, float]) -> bool | None:
    """Whether a record's binary confusion counts (`tp`, `fp`, `fn`, a split's prefix
    allowed: a quantum CNN's `CM: [TP:0, TN:13, FP:0, FN:13]`) have no positive predicted,
    right or wrong, while positives were there to find: the model says the negative class
    for everything. None without all three counts."""
    counts: dict[str, float] = {}
    for key, value in metrics.items():
        word = key.lower().rsplit("_", 1)[-1].rsplit("/", 1)[-1]
        if word in ("tp", "fp", "fn") and math.isfinite(value):
            counts.setdefault(word, value)
    if len(counts) < 3:
        return None
    return counts["tp"] == 0 and counts["fp"] == 0 and counts["fn"] > 0


@functools.lru_cache(maxsize=256)
def _bare_f1(names: tuple[str, ...]) -> str | None:
    return next((k for k in names if _BARE_F1.fullmatch(k)), None)


# An AUC this far above chance (0.5) is a model that ranks.
_RANKS = 0.75
_AUC = lazy_re.compile(r"(?:^|[/_ .-])(?:auc|auroc|roc_auc)$", re.IGNORECASE)


def _ranking(metrics: Mapping[str, float]) -> float | None:
    """A held-out AUC of the record at `_RANKS` or more (on a 0–1 or percent scale)."""
    if not any("auc" in k or "AUC" in k or "Auc" in k for k in metrics):
        return None
    for key, value in metrics.items():
        if _AUC.search(key) and not _TRAINING.search(key) and math.isfinite(value):
            share = value / 100 if value > 1 else value
            if _RANKS <= share <= 1:
                return share
    return None


def _signature(metrics: Mapping[str, float]) -> tuple[tuple[str, float], ...]:
    """A record's figures without its counters: two evaluations alike to every digit."""
    return tuple(sorted((k, v) for k, v in metrics.items() if not _COUNTER.search(k)))


class NoPositiveRule:
    """Not learning: an evaluation that found nothing (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._raised = False
        self._frozen = False  # judged frozen (a blocker)
        # The last evaluation that found nothing, by its names, and how often in a row
        # the same figures came back.
        self._last: dict[tuple[str, ...], tuple[tuple[str, float], ...]] = {}
        self._repeats: dict[tuple[str, ...], int] = {}
        self._at: dict[tuple[str, ...], int | None] = {}  # the step each was counted at

    def observe(self, point: Observation) -> Sequence[Signal]:
        nothing = found_nothing(point.metrics)
        if nothing is None:
            ranks = _ranking(point.metrics)
            if self._raised and ranks is not None:
                # An AUC well above chance after it: the model ranks the positives above
                # the negatives, so finding none is the threshold's doing (TranAD's
                # threshold search ending on `F1: 0`, then `AUC 0.9248` for that fold).
                self._raised = self._frozen = False
                return [Resolve(AnomalyType.NOT_LEARNING,
                                f"an AUC of {ranks:.3g} says the model ranks the positives: "
                                f"finding none was the threshold's doing",
                                key="found nothing")]
            return []
        if nothing is self._raised:
            return self._frozen_evaluation(point.metrics, point.step) if nothing else []
        self._raised = nothing
        if not nothing:
            self._frozen = False
            self._last.clear()
            self._repeats.clear()
            self._at.clear()
            return [Resolve(AnomalyType.NOT_LEARNING, "an evaluation found something again",
                            key="found nothing")]
        self._frozen_evaluation(point.metrics, point.step)
        return [Raise(AnomalyType.NOT_LEARNING,
                      "not learning: precision, recall and F1 are all exactly 0 on the "
                      "evaluation (or its F1, printed alone, is): the model predicts no "
                      "positive at all (only the background class), whatever its accuracy "
                      "shows (or its confusion counts: no positive predicted, right or "
                      "wrong)",
                      key="found nothing", severity_at_end=Severity.BLOCKER)]

    def _frozen_evaluation(self, metrics: Mapping[str, float],
                           step: int | None) -> list[Signal]:
        """The same figures back at `FROZEN_EVALS` evaluations in a row: the blocker."""
        names = tuple(sorted(metrics))
        if step is not None and names in self._at and self._at[names] == step:
            return []  # printed again at the same step (a bar and its summary): one
        if len(self._last) >= _SHAPES and names not in self._last:
            self._last.clear()
            self._repeats.clear()
            self._at.clear()
        self._at[names] = step
        signature = _signature(metrics)
        same = self._last.get(names) == signature
        self._last[names] = signature
        count = self._repeats[names] = self._repeats.get(names, 0) + 1 if same else 1
        if count < FROZEN_EVALS or self._frozen:
            return []
        self._frozen = True
        return [Reassess(AnomalyType.NOT_LEARNING, Severity.BLOCKER,
                         f"the same evaluation, to every digit, came back {count} times in a "
                         f"row finding nothing: the model's predictions have not changed in "
                         f"epochs of training", key="found nothing")]
