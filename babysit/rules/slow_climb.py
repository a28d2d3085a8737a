"""A training loss that creeps up over a long run to several times its best level
(divergence, the catalogue's severity: high while the run goes, a blocker if it ends so).

The loss rule measures a rise against the run's noise, and measures that noise as the
point-to-point spread times how slowly the series wanders. A loss that climbs slowly over
a hundred thousand steps is the slowest wander there is: its own climb inflates the noise
it is judged by, and no rise ever leaves it. A peptide RNN-VAE's log: `ITER 27000
TRAINING (phase 1). loss_vae: 0.0817; loss_recon: 0.0201; …; Grad_norm: 2.9e-01` at its
best, then `loss_vae` creeping to 0.45-0.64 by ITER 200000 while the grad norm grows to 6-13.

Judged on medians of blocks of `_BLOCK` logged points: a block's median hardly moves on a
noisy but level loss (a fiftieth of its spread), so a current block median at (1 +
`divergence_level`) × the lowest block median so far, on `_HELD` blocks in a row, is a
level that has moved, however slowly. The loss is the run's training loss, or a loss
under a name of its own (`loss_vae`). Left alone, as the loss rule leaves them: a total
whose logged terms held or fell (an annealed KL weight, see loss_parts), a rise that
validation does not share (a curriculum), a level that doubled from one block to the
next (a new stage's objective, layer-wise pre-training's `cost` from 0.004 to 0.24: a
jump, not a creep), a loss at or below 0, and a policy-gradient surrogate.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType
from babysit.rules import no_progress
from babysit.rules.loss_parts import is_term
from babysit.rules.loss_rules import EvalWitness
from babysit.rules.objective_names import loss_key
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_BLOCK = 50  # logged points in a block
_HELD = 2  # blocks in a row at the raised level
# Or blocks in a row, each above the one before, half that far above the lowest: a climb
# that goes on and on (a TransE run's margin loss, 277 at epoch 40, then up every
# fifty epochs to 524 at epoch 300).
_RISING = 4
_TERM_RISE = 0.5  # a term that rose by half its lowest block median shares the climb


class _Blocks:
    """One series' block medians: the lowest so far and the latest few."""

    def __init__(self) -> None:
        self._open: list[float] = []
        self.lowest: float | None = None
        self.latest: list[float] = []
        # The largest ratio of a block median to the one before it since the lowest: a
        # climb that doubled from one block to the next jumped (a new stage's objective,
        # a spike), which is not a creep.
        self.steepest = 1.0

    def rise(self) -> float | None:
        """The latest block median over the lowest, less 1 (None for a series at or
        below 0, or one without a block yet)."""
        if self.lowest is None or self.lowest <= 0 or not self.latest:
            return None
        return self.latest[-1] / self.lowest - 1

    def add(self, value: float) -> bool:
        """Adds a value; True when it completed a block."""
        self._open.append(value)
        if len(self._open) < _BLOCK:
            return False
        median = statistics.median(self._open)
        self._open.clear()
        if self.lowest is None or median < self.lowest:
            self.lowest, self.steepest = median, 1.0
        elif self.latest and self.latest[-1] > 0:
            self.steepest = max(self.steepest, median / self.latest[-1])
        self.latest = [*self.latest, median][-_RISING:]
        return True


class SlowClimbRule:
    """Divergence: the loss's block medians at a multiple of their lowest, held."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._loss = _Blocks()
        self._terms: dict[str, _Blocks] = {}
        self._surrogate = False
        self._raised = False
        self._eval = EvalWitness()

    def observe(self, point: Observation) -> Sequence[Signal]:
        if point.metrics:
            self._eval.observe(point)
        value = self._loss_of(point)
        if value is None or not point.advanced or not math.isfinite(value):
            return []
        if not self._surrogate and no_progress.policy_gradient(point.metrics):
            self._surrogate = True
        self._watch_terms(point.metrics, value)
        lowest = self._loss.lowest
        if self._surrogate or not self._loss.add(value):
            return []
        if self._loss.lowest != lowest:
            self._eval.train_best()
        return self._judge()

    @staticmethod
    def _loss_of(point: Observation) -> float | None:
        """The training loss, or else a loss under a name of its own (`loss_vae` beside
        `loss_recon` and `loss_kl`): the loss rule leaves such a name alone for spikes (a
        part of a sum jumps more than the sum), but a level of blocks creeping to twice
        its lowest is the run's, part or whole."""
        if point.loss is not None:
            return point.loss
        if not point.metrics or not any("oss" in k for k in point.metrics):
            return None
        key = loss_key(point.metrics)
        return point.metrics.get(key) if key is not None else None

    def _watch_terms(self, metrics: Mapping[str, float], loss: float) -> None:
        for key, value in metrics.items():
            if value == loss or not math.isfinite(value) or not is_term(key):
                continue
            blocks = self._terms.get(key)
            if blocks is None:
                if len(self._terms) >= 16:
                    continue
                blocks = self._terms[key] = _Blocks()
            blocks.add(value)

    def _judge(self) -> list[Signal]:
        lowest, latest = self._loss.lowest, self._loss.latest
        if lowest is None or lowest <= 0:
            return []
        bar = lowest * (1 + self.rules.divergence_level)
        held = latest[-_HELD:]
        rising = len(latest) == _RISING and all(a < b for a, b in pairwise(latest)) \
            and latest[-1] >= lowest * (1 + self.rules.divergence_level / 2)
        climbed = ((len(held) == _HELD and all(level >= bar for level in held)) or rising) \
            and self._loss.steepest < 1 + self.rules.divergence_level
        if climbed and not self._raised and self._shared() and self._eval_shares():
            self._raised = True
            return [Raise(AnomalyType.DIVERGENCE,
                          f"divergence: the loss's median over its last {_BLOCK} logged "
                          f"points is {latest[-1]:.4g}, {latest[-1] / lowest:.1f}× its "
                          f"lowest such median {lowest:.4g}, "
                          + (f"higher on each of {_RISING} such stretches in a row"
                             if rising and not all(level >= bar for level in held)
                             else f"on {_HELD} such stretches in a row")
                          + ": it has crept up over the run, too slowly to leave its "
                          "point-to-point noise, and the model now is worse than earlier "
                          "in the run", key="slow climb")]
        if self._raised and latest[-1] < lowest * (1 + self.rules.divergence_level / 2):
            self._raised = False
            return [Resolve(AnomalyType.DIVERGENCE, f"the loss's level fell back to "
                            f"{latest[-1]:.4g}", key="slow climb")]
        return []

    def _eval_shares(self) -> bool:
        """Whether validation, when the run evaluates, got worse too since the loss's
        lowest level: a training loss that rises by design (a curriculum, a data mix)
        while validation holds or improves is no divergence, and a run that evaluates
        has its evaluation judged by the evaluation rules."""
        if self._eval.key is None:
            return True
        return self._eval.shares(self.rules.eval_recovery_tolerance)

    def _shared(self) -> bool:
        """Whether a logged term of the loss rose with it (or none is logged): a total
        whose every term held or fell climbed by its weights, not the model's fit."""
        rises = [b.rise() for b in self._terms.values()]
        judged = [r for r in rises if r is not None]
        return not judged or any(r >= _TERM_RISE for r in judged)
