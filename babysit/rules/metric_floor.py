"""A quality metric stuck at its floor: a dice, an IoU, an accuracy or a mAP that never
leaves zero over many evaluations (issue 24).

A segmentation net whose loss falls by four orders of magnitude while its dice stays at
7e-05 for 25 epochs has learned to predict empty masks: the loss says it learns, the
metric says it learns nothing the task asks for. A detector's mAP of 0 for its first
epochs is ordinary, so the metric must stay at the floor for many evaluations, and the
finding is withdrawn the moment it leaves.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Sequence
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.metric_names import is_eval_metric
from babysit.model import AnomalyType
from babysit.rules.signals import Observation, Raise, Resolve, Signal

# Higher-is-better scores of what a model predicts, on a 0-1 (or 0-100) scale. Not a
# bare `score` (a reinforcement-learning return, judged elsewhere), never a best-so-far,
# a top-k that includes the easy classes, or a spread.
_QUALITY = lazy_re.compile(r"acc|dice|iou|(?:^|[/_.])m?ap(?:\d*)?(?:$|[/_.])|f1|auc|auroc|auprc|"
                           r"bleu|rouge|precision|recall|exact_match", re.IGNORECASE)
_NOT_QUALITY = lazy_re.compile(r"best|max|min|std|top[_-]?[2-9]|loss|lr|time|epoch|step|"
                               r"samples|memory|per_sec|eta", re.IGNORECASE)
# Its mirror: a classification error rate (DETR's `class_error`, `top1_err`) of 100 % is
# an accuracy of 0. Not a regression's squared or absolute error (unbounded), nor DETR's
# `_unscaled` twin of the same figure, nor a word, character or token error rate (an ASR
# model's WER sits at 100 % for its first epochs while CTC learns to emit anything:
# ordinary, and judged by the loss).
_ERROR_RATE = lazy_re.compile(r"(?:^|[/_.\- ])(?:class_?|cls_?|top-?1_?|classification_?)?"
                              r"err(?:or)?(?:_rate)?$", re.IGNORECASE)
_NOT_ERROR_RATE = lazy_re.compile(r"mse|mae|squared|abs|recon|l1|l2|best|min|max|std",
                                  re.IGNORECASE)
FLOOR = 0.01  # at most this on a 0-1 scale: 1 % of masks, boxes or labels right
FLOOR_POINTS = 8  # evaluations at the floor before it speaks
# ... or fewer evaluations that span a long run: a sparse excerpt's three or four, the
# last at 20× the step of the first or later (DETR's `Test:` class_error of 100.00 after
# epoch 0 and again after epoch 75), exactly at the floor (nothing right at all).
_SPAN_POINTS = 3
_SPAN_FACTOR = 20


def quality_keys(metrics: Iterable[str]) -> tuple[str, ...]:
    return _quality_keys(tuple(metrics))


# A log prints the same few sets of names on every line: each set is searched once.
@functools.lru_cache(maxsize=256)
def _quality_keys(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(k for k in names if _QUALITY.search(k) and not _NOT_QUALITY.search(k))


def error_rate_keys(metrics: Iterable[str]) -> tuple[str, ...]:
    return _error_rate_keys(tuple(metrics))


@functools.lru_cache(maxsize=256)
def _error_rate_keys(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(k for k in names if _ERROR_RATE.search(k) and not _NOT_ERROR_RATE.search(k))


def share_right(error: float) -> float | None:
    """The share an error rate leaves right, on a 0-1 scale (a value above 1 is a
    percentage); None for a value no error rate takes."""
    if not 0 <= error <= 100:
        return None
    return 1 - error / (100.0 if error > 1 else 1.0)


def at_floor(values: Sequence[float], span: tuple[int, int] | None = None) -> str | None:
    """Why a score's values say the model learned nothing the task asks for: at least
    `FLOOR_POINTS` of them, every one between 0 and `FLOOR`; or at least `_SPAN_POINTS`
    evaluations, every one exactly 0, whose steps (`span`: the first's and the last's)
    cover a long run. None otherwise."""
    if any(not 0 <= v <= FLOOR for v in values):
        return None
    long_run = span is not None and span[0] > 0 and span[1] >= _SPAN_FACTOR * span[0] \
        and len(values) >= _SPAN_POINTS and not any(values)
    if len(values) < FLOOR_POINTS and not long_run:
        return None
    over = f" from step {span[0]} to {span[1]}" if long_run and span is not None else ""
    return (f"has stayed at its floor on every one of its {len(values)} evaluations{over} "
            f"(at most {max(values):.2g}): the model predicts nothing the task asks for, "
            f"whatever its loss says (empty masks or boxes, one class for everything, "
            f"labels that do not match the outputs, a threshold never crossed)")


class MetricFloorRule:
    """Not learning: a quality metric at its floor over many evaluations."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._values: dict[str, list[float]] = {}
        self._last: dict[str, tuple[int | None, float]] = {}
        self._raised: set[str] = set()
        self._left: set[str] = set()  # left the floor once: judged no more
        self._first_step: dict[str, int] = {}  # an evaluation's first step at the floor

    def observe(self, point: Observation) -> Sequence[Signal]:
        out: list[Signal] = []
        errors = error_rate_keys(point.metrics)
        for key in (*quality_keys(point.metrics), *errors):
            if key in self._left:
                continue
            value = point.metrics[key]
            if not math.isfinite(value):
                continue
            if key in errors:
                # An error rate at its ceiling is a score at its floor: judged as the
                # share it leaves right (`class_error 100.00`: 0 % right).
                right = share_right(value)
                if right is None:
                    self._left.add(key)
                    continue
                value = right
            if self._last.get(key) == (point.step, value) and point.step is not None:
                continue  # the same evaluation printed twice (a bar and its summary)
            self._last[key] = (point.step, value)
            if not 0 <= value <= FLOOR:
                self._left.add(key)
                self._values.pop(key, None)
                if key in self._raised:
                    self._raised.discard(key)
                    out.append(Resolve(AnomalyType.NOT_LEARNING,
                                       f"{key} left its floor ({value:.4g})", key=f"{key} floor"))
                continue
            values = self._values.setdefault(key, [])
            if len(values) < 4 * FLOOR_POINTS:
                values.append(value)
            span = None
            if point.step is not None and is_eval_metric(key):
                span = (self._first_step.setdefault(key, point.step), point.step)
            found = at_floor(values, span) if key not in self._raised else None
            if found is not None:
                self._raised.add(key)
                if key in errors:
                    found = (f"(an error rate of {100 * (1 - max(values)):.4g} % or more, "
                             f"judged as the share it leaves right) {found}")
                out.append(Raise(AnomalyType.NOT_LEARNING, f"not learning: {key} {found}",
                                 key=f"{key} floor"))
        return out
