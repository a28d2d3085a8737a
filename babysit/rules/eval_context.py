"""Evaluation metrics that only the record around them names (issue 24).

`eval_names` reads a metric's name alone. Some runs print an evaluation's figure under a
name that says nothing by itself, and only the record it sits in tells what it is:

- a split's bare name beside the training's (`step 200 | train 4.5847 | val 4.2255 | lr
  1.20e-06`, an earthquake MDN's loop): when the bare `train` is the run's training loss,
  the bare `val` is the same loss on the held-out split;
- scores printed with none of the training's own quantities (no loss, no learning rate,
  no gradient norm): a checkpoint sweep's `Dice = 0.7401 ± 0.0338 | Neg-Jac = 0.000%`,
  IRN's validation logger `<epoch:1199, iter: 60,000> psnr: 3.2005e+01`, a segmentation
  run's `mIoU : 0.4939`. A training step prints its loss; a line of scores alone is an
  evaluation's report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from functools import lru_cache

from babysit import lazy_re
from babysit.rules.eval_names import evaluation_direction, score_direction

# A split's name standing alone as a metric's.
_SPLITS = frozenset({"val", "valid", "validation", "dev", "test", "eval", "heldout"})
# What only training prints: a loss (any objective), a learning rate, a gradient norm. A
# record with any of these is the training's, and its bare scores may be the batch's.
_TRAINING_QUANTITY = lazy_re.compile(
    r"loss|nll|ppl|perplexity|xent|(?:^|[/_ ])lr(?:$|[/_ ])|learning_rate|grad|norm|"
    r"(?:^|[/_ ])train", re.IGNORECASE)
# How far from its first figure a bare `train` must have moved before its direction is
# taken as the way the run improves: a tenth of it (a learning run's loss moves more).
_TWIN_MOVED = 0.1


class ContextualEvaluations:
    """Finds the evaluations a record names only by its context; remembers the first
    figure of a bare `train`, whose way of moving tells which way its split twin
    improves."""

    def __init__(self) -> None:
        self._first_train: float | None = None
        # Each split twin's first figure, and its lowest and highest since.
        self._twin_range: dict[str, tuple[float, float, float]] = {}

    def judged(self, metrics: Mapping[str, float]) -> tuple[tuple[str, int], ...]:
        """(name, direction) of the record's metrics that are an evaluation's by their
        context, among those `eval_names` does not take: +1 when higher is better, -1
        when lower."""
        found: list[tuple[str, int]] = []
        train = metrics.get("train")
        if train is not None and math.isfinite(train):
            if self._first_train is None:
                self._first_train = train
            # A bare `train` improves as the run learns: the way it moved from its first
            # figure is the way its split twin improves (4.58 → -1.50: a loss, and the
            # bare `val` beside it is that loss on held-out data).
            moved = train - self._first_train
            for key in metrics:
                if key in _SPLITS and math.isfinite(value := metrics[key]):
                    first, low, high = self._twin_range.get(key, (value, value, value))
                    self._twin_range[key] = (first, min(low, value), max(high, value))
            if abs(moved) > _TWIN_MOVED * max(abs(self._first_train), 1e-12):
                direction = 1 if moved > 0 else -1
                found.extend((key, direction) for key in metrics
                             if key in _SPLITS and not self._moved_apart(key, metrics[key],
                                                                         direction))
        return tuple(found)

    def _moved_apart(self, key: str, value: float, direction: int) -> bool:
        """Whether the split's figure has only ever moved the other way than the bare
        `train` did, and far: never better than its first figure in the sense the training
        figure improves, and worse than it now by twice what a learning run moves its
        loss. The two are then no twins of one objective in one sense (a VAE's `Train -72
        → -105, Test -241 → -111`, an ELBO whose annealed KL term moves the training
        figure), and the split's way of improving is not known from them. (A held-out
        loss that first fell with the training loss and then climbed is a twin gone
        wrong: judged.)"""
        seen = self._twin_range.get(key)
        if seen is None or not math.isfinite(value):
            return False
        first, low, high = seen
        scale = _TWIN_MOVED * max(abs(first), 1e-12)
        improved = first - low if direction < 0 else high - first
        worsened = (value - first) * -direction
        return improved < 0.1 * scale and worsened > 2 * scale

    @staticmethod
    def scores(metrics: Mapping[str, float]) -> tuple[tuple[str, int], ...]:
        """(name, +1) of the scores of a record that holds none of the training's own
        quantities. Such a record may still be a training batch's (darknet's `Region
        Avg IOU: 0.16 … count: 0` between its loss lines), so these are judged only on
        levels, against the best level (eval_memory), never on single evaluations."""
        if _has_training_quantity(tuple(metrics)):
            return ()
        return tuple((key, direction) for key in metrics
                     if not evaluation_direction(key) and (direction := score_direction(key)))


def twin_train_loss(key: str, direction: int, metrics: Mapping[str, float]) -> float | None:
    """The bare `train` loss beside a split's bare figure (the loss to set it against),
    or None."""
    if direction < 0 and key in _SPLITS:
        return metrics.get("train")
    return None


@lru_cache(maxsize=512)
def _has_training_quantity(names: tuple[str, ...]) -> bool:
    return any(_TRAINING_QUANTITY.search(name) for name in names)
