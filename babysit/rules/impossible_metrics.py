"""A metric outside the range its name allows (issue 24, item 5: a figure that cannot be
is a reading or computing error, not a result to report).

An accuracy, a precision, a recall, an F1, an AUC, an IoU, a Dice or a mAP is a share:
between 0 and 1, or 0 and 100 printed as a percentage. The PyTorch quickstart's test loop
adapted in a notebook (`Accuracy: 113.7%, Avg loss: 0.33`, sealed-8) divides by the
number of batches instead of the number of samples; a BLEU of 140 sums its sentences.
Whatever such a figure says — that the run improves, which checkpoint is best — cannot
be trusted until it is computed again. Raised once per metric, never withdrawn by a later
value in range (the computation that gave the impossible one is still the one used).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.model import AnomalyType
from babysit.rules.metric_floor import quality_keys
from babysit.rules.signals import Observation, Raise, Signal

# A percentage's top, with room for the rounding of its last printed digit.
_TOP = 100.05
# The share's word as a word of the name (`test_acc`, `Accuracy`, `val/f1`), not inside
# another (`real_accelerator.py:222`, a source line a logger printed).
_SHARE_WORD = lazy_re.compile(r"(?:^|[/_.\s-])(?:acc|accuracy|dice|iou|miou|m?ap\d*|f1|auc|"
                              r"auroc|auprc|precision|recall)(?:$|[/_.\s@-]|\d)",
                              re.IGNORECASE)
# Names of a count or a size that share a word with a score (`map_size`, `acc_steps`).
_NOT_SHARE = lazy_re.compile(r"size|count|num|len|dim|total|sum|steps|_n$", re.IGNORECASE)


class ImpossibleMetricRule:
    """A share metric above 100 % or below 0 (see the module)."""

    windowed: ClassVar[bool] = False

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._raised: set[str] = set()

    def observe(self, point: Observation) -> Sequence[Signal]:
        out: list[Signal] = []
        for key in quality_keys(point.metrics):
            value = point.metrics[key]
            if key in self._raised or not math.isfinite(value) or 0 <= value <= _TOP \
                    or _SHARE_WORD.search(key) is None or ".py" in key \
                    or _NOT_SHARE.search(key) is not None \
                    or value == int(value):
                # (a whole number above 100 is a count read beside its share — nanoGPT's
                # `HellaSwag accuracy: 2486/10042=0.2476` —, not a share)
                continue
            self._raised.add(key)
            why = "above 100 %" if value > _TOP else "below 0"
            out.append(Raise(AnomalyType.IMPOSSIBLE_METRIC,
                             f"{key} = {value:.4g}, {why}: a share cannot be; the metric is "
                             f"computed wrong, and what it says of the run cannot be trusted",
                             key=key))
        return out
