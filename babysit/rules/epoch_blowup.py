"""A training loss and an evaluation loss that both rise tenfold or more from one
summary to the next: the weights have blown up (issue 24).

A loop that prints one summary per epoch (braindecode's `train_loss 0.10569`,
`valid_loss 0.15377` after epoch 0, then `train_loss 19.90990`, `valid_loss 19.79807`
after epoch 1) gives too few points for the windowed spike and divergence tests, which
need the run's noise. None is needed here: an epoch's training loss is an average over
thousands of batches, so a bad batch cannot move it tenfold, and the held-out loss is
the whole model measured again: both up together means the model itself is broken, and
every later step starts from broken weights. Raised as the jump (a loss spike) and as
the divergence it is (a blocker even while the run goes on); withdrawn once the
training loss is back within twice its level before the jump.

Both must rise at the same step (the same summary's lines): a noisy per-step loss that
jumps while an evaluation printed long before or after also differs is not this. And the
new level must be far above where the log's first loss stood (`_FROM_FIRST`): a loss
back near its first value is a new launch appended to the log (its first epoch after the
last run's last), not weights that blew up.
"""

from __future__ import annotations

import math
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.eval_names import evaluation_direction
from babysit.rules.signals import Observation, Raise, Resolve, Signal

BLOWUP = 10.0  # the rise, as a multiple of the previous summary's value
_NEAR = 3  # records at most between the two jumps (a summary's lines)
_FROM_FIRST = 2.0  # the new level above the log's first loss by this factor at least
_NO_JUMP = (None, -_NEAR - 1)  # (step, record) of a jump that has not happened


def _jumped(before: float | None, now: float) -> bool:
    return before is not None and before > 0 and now >= BLOWUP * before


class EpochBlowUpRule:
    """Divergence: the training and an evaluation loss both up `BLOWUP`× at one step."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._train: tuple[float | None, float | None] = (None, None)  # previous, latest
        self._first: float | None = None  # the log's first training loss
        self._records = 0
        # Where the latest value of each jumped, as (step, record): the same step, a few
        # records apart, is one summary.
        self._train_jump_at: tuple[int | None, int] = _NO_JUMP
        self._evals: dict[str, float] = {}
        self._eval_jump_at: tuple[int | None, int] = _NO_JUMP
        self._before: float | None = None  # the training loss before the open blow-up
        self._raised = False

    def observe(self, point: Observation) -> list[Signal]:
        out: list[Signal] = []
        self._records += 1
        here = (point.step, self._records)
        value = point.loss
        if value is not None and math.isfinite(value) and value != self._train[1]:
            if self._first is None:
                self._first = value
            self._train = (self._train[1], value)
            self._train_jump_at = here if _jumped(self._train[0], value) else _NO_JUMP
            out.extend(self._recovered(value))
        for key, figure in point.metrics.items():
            if "loss" not in key.lower() or not math.isfinite(figure) \
                    or evaluation_direction(key) != -1:
                continue
            before = self._evals.get(key)
            self._evals[key] = figure
            if figure != before:
                self._eval_jump_at = here if _jumped(before, figure) else _NO_JUMP
        return out + self._judge()

    def _judge(self) -> list[Signal]:
        (train_step, train_at), (eval_step, eval_at) = self._train_jump_at, self._eval_jump_at
        if self._raised or train_at < 0 or eval_at < 0 or train_step != eval_step \
                or abs(train_at - eval_at) > _NEAR:
            return []
        before, now = self._train
        assert before is not None and now is not None
        if self._first is not None and now <= _FROM_FIRST * self._first:
            return []  # back near where the log began: a new launch's start
        self._raised = True
        self._before = before
        jump = (f"the training loss rose from {before:.4g} to {now:.4g} "
                f"({now / before:.3g}×) from one summary to the next, and the evaluation loss "
                f"rose with it")
        return [Raise(AnomalyType.LOSS_SPIKE, f"loss spike: {jump}", key="blow-up"),
                Raise(AnomalyType.DIVERGENCE,
                      f"divergence: {jump}: an average over a whole epoch and the held-out "
                      f"loss cannot both jump so from one bad batch; the weights have blown "
                      f"up, and every later step starts from them", key="blow-up",
                      severity=Severity.BLOCKER)]

    def _recovered(self, value: float) -> list[Signal]:
        if not self._raised or self._before is None or value > 2 * self._before:
            return []
        self._raised = False
        how = f"the training loss is back to {value:.4g}"
        return [Resolve(AnomalyType.LOSS_SPIKE, how, key="blow-up"),
                Resolve(AnomalyType.DIVERGENCE, how, key="blow-up")]
