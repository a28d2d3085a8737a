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
beside a recall that is not.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Resolve, Signal

# The three scores by the names evaluation scripts print them (`precision`, `eval_recall`,
# conlleval's `FB1`, `f1_score`, `f-measure`); a training split's are not an evaluation.
_KINDS = (("precision", lazy_re.compile(r"(?:^|[/_ .-])prec(?:ision)?$", re.IGNORECASE)),
          ("recall", lazy_re.compile(r"(?:^|[/_ .-])rec(?:all)?$", re.IGNORECASE)),
          ("f1", lazy_re.compile(r"(?:^|[/_ .-])(?:f1|fb1|f_?1_?score|f_?score|f_?measure)$",
                                 re.IGNORECASE)))
_TRAINING = lazy_re.compile(r"(?:^|[/_ .-])train", re.IGNORECASE)


@functools.lru_cache(maxsize=256)
def _score_keys(names: tuple[str, ...]) -> tuple[tuple[str, ...], ...] | None:
    """The names of each of the three scores among a record's names, or None unless all
    three are there."""
    found = tuple(tuple(k for k in names if pattern.search(k) and not _TRAINING.search(k))
                  for _, pattern in _KINDS)
    return found if all(found) else None


def found_nothing(metrics: Mapping[str, float]) -> bool | None:
    """Whether a record's precision, recall and F1 are all exactly 0 (None when it does
    not carry all three)."""
    if not any("rec" in k.lower() for k in metrics):
        return None  # the cheap test first: most records carry no recall
    keys = _score_keys(tuple(metrics))
    if keys is None:
        return None
    return all(metrics[k] == 0 for group in keys for k in group)


class NoPositiveRule:
    """Not learning: an evaluation that found nothing (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._raised = False

    def observe(self, point: Observation) -> Sequence[Signal]:
        nothing = found_nothing(point.metrics)
        if nothing is None or nothing is self._raised:
            return []
        self._raised = nothing
        if not nothing:
            return [Resolve(AnomalyType.NOT_LEARNING, "an evaluation found something again",
                            key="found nothing")]
        return [Raise(AnomalyType.NOT_LEARNING,
                      "not learning: precision, recall and F1 are all exactly 0 on the "
                      "evaluation: the model predicts no positive at all (only the "
                      "background class), whatever its accuracy shows",
                      key="found nothing", severity_at_end=Severity.BLOCKER)]
