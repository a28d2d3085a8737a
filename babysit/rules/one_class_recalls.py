"""A classifier or segmenter that answers one class for everything, by its per-class
recalls (not-learning, a blocker).

Change detection, segmentation and imbalanced classification print a recall (or an
accuracy, the same figure for one class) per class: `recall_0: 0.99982 recall_1:
0.00238` (ChangeFormer on LEVIR-CD). A model that labels every pixel "no change" finds
all of class 0 and none of class 1, whatever its overall accuracy (0.958 here, the share
of unchanged pixels) and its mean F1 (0.49) say. ChangeFormer read so at epochs 7 and 8,
its best still the one of epoch 0: it learned nothing.

One class at `_ALL` or more and every other at `_NONE` or less on `_IN_A_ROW` records in
a row of the same set of names is a blocker (one record may be the first epoch of an
imbalanced task, before the rare class is ever predicted); a record of those names that
tells the classes apart resolves it. A sensitivity and a specificity are the positive
class's recall and the negative class's (a U-Net's `SE: 0.0000, SP: 0.9996`, no lesion
marked at any pixel).
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
from babysit.rules.signals import Observation, Raise, Resolve, Signal

# A recall or an accuracy of one class, by its index: `recall_1`, `val/recall_class_2`,
# `acc_cls0`, `Recall 3`.
_PER_CLASS = lazy_re.compile(r"(?:^|[/_ .-])(?:rec(?:all)?|acc(?:uracy)?)[/_ .-]?"
                             r"(?:class[/_ .-]?|cls[/_ .-]?|c)?(\d{1,3})$", re.IGNORECASE)
# Sensitivity and specificity: the positive class's recall and the negative class's, as
# medical imaging names them (`SE: 0.0000, SP: 0.9996`, a U-Net that marks no lesion).
_SENSITIVITY = lazy_re.compile(r"(?:^|[/_ .-])(?:se|sens|sensitivity|tpr)$", re.IGNORECASE)
_SPECIFICITY = lazy_re.compile(r"(?:^|[/_ .-])(?:sp|spec|specificity|tnr)$", re.IGNORECASE)
_ALL = 0.99  # a class found every time
_NONE = 0.01  # a class never found
_IN_A_ROW = 2


@functools.lru_cache(maxsize=256)
def _groups(names: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """The per-class recall names of a record, grouped by what they share but the class
    index (`recall_0`, `recall_1` together; `val_acc_0`, `val_acc_1` apart from them);
    only groups of two classes or more."""
    found: dict[str, list[str]] = {}
    for name in names:
        match = _PER_CLASS.search(name)
        if match is not None:
            found.setdefault(name[:match.start(1)], []).append(name)
    groups = [tuple(group) for group in found.values() if len(group) >= 2]
    heads = {name[:m.start()]: name for name in names
             if (m := _SPECIFICITY.search(name)) is not None}
    for name in names:
        match = _SENSITIVITY.search(name)
        partner = heads.get(name[:match.start()]) if match is not None else None
        if partner is not None:  # its specificity under the same head (`eval/se`, `eval/sp`)
            groups.append((name, partner))
    return tuple(groups)


def answered_class(metrics: Mapping[str, float], names: tuple[str, ...]) -> str | None:
    """The name of the one class a record's recalls say was answered for everything, or
    None when the classes are told apart (or a value is not a share)."""
    values = [metrics[name] for name in names]
    if not all(math.isfinite(v) and v >= 0 for v in values):
        return None
    scale = 100.0 if max(values) > 1 else 1.0  # printed as percentages
    if max(values) > 100:
        return None
    shares = sorted(((v / scale, n) for v, n in zip(values, names, strict=True)), reverse=True)
    if shares[0][0] >= _ALL and all(share <= _NONE for share, _ in shares[1:]):
        return shares[0][1]
    return None


class OneClassRecallRule:
    """Not learning: per-class recalls that find one class only (see the module)."""

    windowed: ClassVar[bool] = False

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._streak: dict[tuple[str, ...], int] = {}
        self._raised: tuple[str, ...] | None = None

    def observe(self, point: Observation) -> Sequence[Signal]:
        metrics = point.metrics
        if not any("ec" in k or "cc" in k for k in metrics):
            return []  # the cheap test first: most records carry no recall
        out: list[Signal] = []
        for names in _groups(tuple(metrics)):
            answered = answered_class(metrics, names)
            if answered is None:
                self._streak[names] = 0
                if self._raised == names:
                    self._raised = None
                    out.append(Resolve(AnomalyType.NOT_LEARNING,
                                       "a later record's per-class recalls tell the classes "
                                       "apart", key="one class"))
                continue
            count = self._streak[names] = self._streak.get(names, 0) + 1
            if count == _IN_A_ROW and self._raised is None:
                self._raised = names
                others = ", ".join(f"{n} {metrics[n]:.3g}" for n in names if n != answered)
                out.append(Raise(AnomalyType.NOT_LEARNING,
                                 f"not learning: on {count} records in a row the model found "
                                 f"every item of one class ({answered} {metrics[answered]:.4g}"
                                 f") and almost none of the others ({others}): it answers "
                                 f"one class for everything, whatever its overall accuracy "
                                 f"shows", key="one class", severity=Severity.BLOCKER))
        return out
