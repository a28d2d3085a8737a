"""A classifier no better than always answering the majority class, by its own confusion
matrix (not-learning).

An evaluation that prints its confusion counts (`Acc: 0.5970 | CM: TN=0, FP=54, FN=0,
TP=80`) says what a model that always answers the larger class would score on the same
data: the larger class's share (80 of 134 here, 0.597). A brain-MRI quality classifier
whose training loss fell from 0.082 to 0.039 over 50 epochs flipped between answering
"good" for every scan and "bad" for every scan, and its accuracy sat at 0.597 or a few
scans above it to the end: it learned nothing about the scans, though its loss and even
its accuracy (above a coin's 0.5) look like learning.

Judged on the counts, not the printed accuracy, and against the count's own noise (a
binomial sigma at the majority's share over the evaluated items): the median of the last
`_RECENT` evaluations within one sigma of the majority's share, and no evaluation of the
run ever more than `_BEST_K` sigmas above it. High from `_LEAST` evaluations, a blocker
from `_FIRM` (or if the run ends on it); resolved once the recent median stands two sigmas
clear.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping, Sequence
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Reassess, Resolve, Signal

_CELLS = {
    "tp": lazy_re.compile(r"(?:^|[/_ .-])(?:tp|true_?positives?)$", re.IGNORECASE),
    "tn": lazy_re.compile(r"(?:^|[/_ .-])(?:tn|true_?negatives?)$", re.IGNORECASE),
    "fp": lazy_re.compile(r"(?:^|[/_ .-])(?:fp|false_?positives?)$", re.IGNORECASE),
    "fn": lazy_re.compile(r"(?:^|[/_ .-])(?:fn|false_?negatives?)$", re.IGNORECASE),
}
_TRAINING = lazy_re.compile(r"(?:^|[/_ .-])train", re.IGNORECASE)
_RECENT = 10  # evaluations whose median is the model as it stands
_LEAST = 10  # evaluations before the rule speaks
_FIRM = 20  # evaluations at the majority's share: a blocker
_BEST_K = 3.0  # no evaluation ever this many sigmas above the majority's share


def confusion(metrics: Mapping[str, float]) -> tuple[float, float] | None:
    """(accuracy above the majority's share, the count's sigma) from a record's confusion
    counts, or None where it carries no whole matrix of an evaluation."""
    if not any(k[-2:] in ("tp", "TP") or "ositive" in k for k in metrics):
        return None  # the cheap test first: most records carry no counts
    cells: dict[str, float] = {}
    for name, pattern in _CELLS.items():
        key = next((k for k in metrics if pattern.search(k) and not _TRAINING.search(k)), None)
        if key is None:
            return None
        value = metrics[key]
        if not math.isfinite(value) or value < 0 or value != int(value):
            return None
        cells[name] = value
    total = sum(cells.values())
    if total < 10:
        return None
    positives = cells["tp"] + cells["fn"]
    majority = max(positives, total - positives) / total
    accuracy = (cells["tp"] + cells["tn"]) / total
    sigma = math.sqrt(majority * (1.0 - majority) / total) or 1.0 / total
    return accuracy - majority, sigma


class MajorityClassRule:
    """Not learning: evaluations no better than the majority class (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._margins: list[float] = []  # each evaluation's accuracy above the majority's
        self._sigma = 0.0  # the latest evaluation's count sigma
        self._best = -math.inf  # the best margin, in its own sigmas
        self._raised: Severity | None = None

    def observe(self, point: Observation) -> Sequence[Signal]:
        found = confusion(point.metrics)
        if found is None:
            return []
        margin, sigma = found
        self._margins.append(margin)
        self._sigma = sigma
        self._best = max(self._best, margin / sigma)
        count = len(self._margins)
        if count < _LEAST:
            return []
        recent = statistics.median(self._margins[-_RECENT:])
        if self._raised is not None and recent > 2 * sigma:
            self._raised = None
            return [Resolve(AnomalyType.NOT_LEARNING,
                            f"the classifier now does better than its majority class "
                            f"(+{recent:.3f} accuracy over the last {_RECENT} evaluations)",
                            key="majority class")]
        if recent > sigma or self._best > _BEST_K:
            return []
        why = (f"not learning: over the last {_RECENT} of {count} evaluations the accuracy is "
               f"no better than always answering the larger class (median {recent:+.3f} from "
               f"its share, within the count's noise σ≈{sigma:.3f}), and no evaluation ever "
               f"stood {_BEST_K:g} σ above it: the confusion matrix shows a model that "
               f"answers one class, whatever its loss does")
        if self._raised is None:
            self._raised = Severity.BLOCKER if count >= _FIRM else Severity.HIGH
            return [Raise(AnomalyType.NOT_LEARNING, why, key="majority class",
                          severity=self._raised, severity_at_end=Severity.BLOCKER)]
        if count >= _FIRM and self._raised is not Severity.BLOCKER:
            self._raised = Severity.BLOCKER
            return [Reassess(AnomalyType.NOT_LEARNING, Severity.BLOCKER, why,
                             key="majority class")]
        return []
