"""A classifier that never beats always answering one class, told by its own accuracy and
F1 (not-learning, issue 24 item 2).

A model that gives every input the same class scores, on a split whose largest class
has share p, an accuracy of p and an F1 fixed by p alone: that class's precision is p
and its recall 1, every other class's F1 is 0 (scikit-learn's `zero_division` default),
so the macro F1 over K classes is 2p / (K (1 + p)) and the weighted F1 2p² / (1 + p);
a binary task's F1 of its positive class is 0 when the model answers the negative one.
An evaluation whose accuracy and F1 meet that identity (to the digits printed) is such a
model, and its accuracy is the split's majority share (once two evaluations meet it at
the same share and the same count of classes: one alone can meet it by chance). A
multimodal sentiment model on three classes: `val_acc: 48.44%, val_f1: 21.76%` at its
first evaluations (2 · 0.4844 / (3 · 1.4844) = 0.2176), then 80 evaluations over 20
epochs whose best accuracy is 48.74 % and whose last are 32 to 38 %: its loss moved, its
F1 rose, and it never once told the classes apart better than answering the larger one
does.

So, per held-out split: once an evaluation has shown the identity, the split's majority
share is known; after `_LEAST` evaluations of it, if none ever stood more than `_ABOVE`
above that share and the median of the last `_RECENT` is not above it either, the model
has not learned (high while the run goes, a blocker if it ends so). Resolved once an
evaluation stands `_CLEAR` above the share.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Resolve, Signal

# (a held-out split's, or bare: scikit-learn models scored one after another, `svc:
# F1=0.0000, Acc=0.8986`)
_ACCURACY = lazy_re.compile(r"^(?P<split>(?:(?:.*[/_])?(?:val|valid|validation|eval|test|dev)"
                            r"[/_])?)(?:acc|accuracy)$")
_F1 = ("f1", "f1_score", "macro_f1", "f1_macro", "weighted_f1", "f1_weighted")
_CLASSES = range(2, 21)
_MOST = 0.95  # a majority share above this: the identity tells nothing apart
_EXACT = 6e-4  # the identity to the digits a percentage with two decimals keeps
_SAME = 2e-4  # two evaluations at the very same share: the same one-class answer
_LEAST = 10  # evaluations of the split before the rule speaks
_RECENT = 5
_ABOVE = 0.02  # no evaluation ever more than this above the majority's share
_CLEAR = 0.03  # one this far above it resolves
_BINARY_F1 = 0.1  # a positive class's F1 above this: the model finds some positives
_F1_GAIN = 0.15  # a macro F1 this far above the one-class answer's, and at least
_F1_FOUND = 0.5  # ... this: the model tells the classes apart


def _share(value: float) -> float:
    return value / 100 if value > 1 else value


def one_class_answer(accuracy: float, f1: float) -> int | None:
    """How the F1 averages (0: weighted, 1: the positive class's of a binary task, which
    the model never answers, else the number of classes of a macro average)
    when an accuracy and an F1 (fractions) are those of a model that answers one class
    for everything, else None."""
    p = accuracy
    if not 0 < p <= _MOST or f1 < 0:
        # (near 1 the identity is a good model's too: a 99.7 % classifier's weighted F1
        # of 0.9955 is 2p² / (1 + p) to four digits)
        return None
    if f1 <= _EXACT / 10 and p >= 0.5:
        return 1  # a binary F1 of the positive class, which it never answers
    if f1 == 0:
        return None
    if abs(f1 - 2 * p * p / (1 + p)) <= _EXACT:
        return 0
    return next((k for k in _CLASSES if abs(f1 - 2 * p / (k * (1 + p))) <= _EXACT), None)


class ConstantAnswerRule:
    """Evaluations that never beat answering the majority class (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._share: dict[str, float] = {}  # split -> the majority's share
        self._candidate: dict[str, tuple[float, int]] = {}  # the identity met once
        self._accuracies: dict[str, list[float]] = {}
        self._raised: set[str] = set()
        self._binary: dict[str, bool] = {}  # judged by a positive class's F1 of 0
        self._one_f1: dict[str, float] = {}  # the F1 the one-class answer scored
        self._broken: set[str] = set()  # that F1 rose: the positives are found

    def observe(self, point: Observation) -> list[Signal]:
        if "acc" not in "".join(point.metrics)[:4096]:
            return []  # (the cheap test first: most records carry no accuracy)
        out: list[Signal] = []
        for key, value in point.metrics.items():
            found = _ACCURACY.match(key) if "acc" in key else None
            if found is not None and value == value:
                out.extend(self._split(found.group("split"), _share(value), point.metrics))
        return out

    def _split(self, split: str, accuracy: float, metrics: Mapping[str, float]) -> list[Signal]:
        f1 = next((metrics[f"{split}{name}"] for name in _F1 if f"{split}{name}" in metrics),
                  None)
        if self._binary.get(split) and f1 is not None and _share(f1) > _BINARY_F1:
            # (a rare positive class found moves the accuracy little: its F1 says it)
            self._broken.add(split)
        elif split in self._share and f1 is not None \
                and _share(f1) >= max(self._one_f1[split] + _F1_GAIN, _F1_FOUND):
            # (a macro F1 well above the one-class answer's: the minority classes are
            # found, whatever the accuracy does — an XLM-R classifier's F1 from 0.462 to
            # 0.62 as its accuracy fell below the 85.9 % majority)
            self._broken.add(split)
        if split not in self._share:
            answer = one_class_answer(accuracy, _share(f1)) if f1 is not None else None
            if answer is None:
                return []
            # (an accuracy and an F1 can meet the identity for some class count by chance;
            # two evaluations meeting it at one share and one count are one answer given
            # every time)
            before = self._candidate.get(split)
            self._candidate[split] = (accuracy, answer)
            if before is None or before[1] != answer or abs(before[0] - accuracy) > _SAME:
                return []
            self._share[split] = accuracy
            self._one_f1[split] = _share(f1) if f1 is not None else 0.0
            self._accuracies[split] = [accuracy]
            self._binary[split] = answer == 1
        share = self._share[split]
        seen = self._accuracies.setdefault(split, [])
        seen.append(accuracy)
        if split in self._raised:
            if split in self._broken:
                self._raised.discard(split)
                return [Resolve(AnomalyType.NOT_LEARNING,
                                f"{split.rstrip('/_') or 'evaluation'} F1 rose well above "
                                f"the one-class answer's: the classes are told apart",
                                key=f"one class {split}")]
            if accuracy > share + _CLEAR:
                self._raised.discard(split)
                return [Resolve(AnomalyType.NOT_LEARNING,
                                f"{split.rstrip('/_') or 'evaluation'} accuracy "
                                f"{accuracy:.4f} now beats answering one "
                                f"class ({share:.4f})", key=f"one class {split}")]
            return []
        if len(seen) < _LEAST or max(seen) > share + _ABOVE or split in self._broken \
                or statistics.median(seen[-_RECENT:]) > share:
            return []
        self._raised.add(split)
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: the {split.rstrip('/_') or 'evaluation'} accuracy and "
                      f"F1 at an early evaluation were "
                      f"exactly those of a model that answers one class for everything (the "
                      f"largest class is {share:.2%} of the split), and over {len(seen)} "
                      f"evaluations the accuracy never stood more than {_ABOVE:.0%} above "
                      f"that (best {max(seen):.2%}, latest {accuracy:.2%}): the model tells "
                      f"the classes apart no better than always answering the larger one",
                      key=f"one class {split}", severity=Severity.HIGH,
                      severity_at_end=Severity.BLOCKER)]
