"""A cross-entropy per prediction far above any uniform guess's: the network is confidently
wrong, it has blown up (divergence, a blocker; issue 24, item 1).

A cross-entropy averaged per frame or per token is the mean of -log p(right answer). A
model that guesses uniformly over K classes scores ln K: 8.3 nats for Kaldi's few
thousand senones, 11-12 for a language model's vocabulary. A model scores far above that
only by putting nearly no probability on the right answer, with confidence: what a
network whose weights have blown up outputs (saturated logits). Kaldi nnet3's LSTM:
`Average objective function for 'output' for minibatches 40-49 is -35.0044 over 19538
frames.`, then -32.8, -42.2, -34.7, -37.8, -44.4 (read as the loss per frame, 35.0 …),
e^-35 for the right senone on average.

No task has classes enough for a uniform guess to score `_BEYOND_ANY_GUESS` nats (ln of
half a billion), and a freshly initialised network starts near ln K; a level above it on
`_POINTS` logged points in a row is a broken network, however the run goes on. Judged only
on a metric named as a cross-entropy per frame or per token (`nll_per_frame`): a loss
with no such name may be a sum over a sentence or a batch, which can be that large.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_BEYOND_ANY_GUESS = 20.0  # nats: ln(4.9e8), a uniform guess over half a billion classes
_POINTS = 5  # logged points in a row above it
# A cross-entropy averaged per frame or per token, by its name: `nll_per_frame`,
# `xent_per_token`, `output/nll_per_frame`.
_PER_PREDICTION = lazy_re.compile(
    r"(?:^|[/_ .-])(?:nll|xent|ce|cross_?entropy)_per_(?:frame|token)$", re.IGNORECASE)


class ConfidentlyWrongRule:
    """Divergence, a blocker: a cross-entropy per prediction beyond any uniform guess's."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._above: list[float] = []  # the values in a row above the bound
        self._raised = False

    def observe(self, point: Observation) -> Sequence[Signal]:
        found = next(((key, value) for key, value in point.metrics.items()
                      if "_per_" in key and _PER_PREDICTION.search(key)
                      and math.isfinite(value)), None)
        if found is None:
            return []
        key, value = found
        if value <= _BEYOND_ANY_GUESS:
            self._above.clear()
            if not self._raised:
                return []
            self._raised = False
            return [Resolve(AnomalyType.DIVERGENCE, f"{key} back to {value:.4g}",
                            key="beyond any guess")]
        self._above.append(value)
        if self._raised or len(self._above) < _POINTS:
            return []
        self._raised = True
        shown = ", ".join(f"{v:.4g}" for v in self._above[-_POINTS:])
        return [Raise(AnomalyType.DIVERGENCE,
                      f"divergence: {key} has been {shown} on {len(self._above)} logged "
                      f"points in a row, above {_BEYOND_ANY_GUESS:g} nats, what no uniform "
                      f"guess scores (ln K for K classes: 8.3 for 4000): the network puts "
                      f"almost no probability on the right answer, with confidence; its "
                      f"weights have blown up",
                      key="beyond any guess", severity=Severity.BLOCKER)]
