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

A smaller jump of both is a setback, not a blow-up: the training loss up by half again
or more (`SETBACK`) from one summary to the next after falling at each of the three
before it, and the evaluation loss up by a third or more (`_EVAL_SETBACK`) at the same
summary (a TrOCR fine-tune's `train 1.0760 | val 0.9667` at epoch 3, then `train 1.7439
| val 1.4283`, its last three epochs never back), to a level still short of the log's
first loss (one back there is the next launch's, or the next of several models trained in
turn, starting from scratch). A per-step loss's noise does not fall
three times in a row and then jump with the held-out loss beside it; an epoch's average
and the whole model measured again do. A high (the run's later epochs train from
weights knocked off their path; the best kept before it may be what it delivers),
withdrawn once the training loss is back within a tenth of its level before the jump.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from itertools import pairwise
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.parsing.formats import SPLIT_NAMES
from babysit.rules.eval_names import evaluation_direction
from babysit.rules.signals import Observation, Raise, Reassess, Resolve, Signal

BLOWUP = 10.0  # the rise, as a multiple of the previous summary's value
SETBACK = 1.5  # the training loss's rise of a setback, as a multiple
_EVAL_SETBACK = 1.33  # ... and the evaluation loss's beside it
_FALLS_BEFORE = 3  # summaries in a row the training loss fell at before a setback
_SETBACK_BACK = 1.1  # back within this of its level before the setback: resolved
_SETBACK_BELOW_FIRST = 0.85  # a setback's new level stays below the log's first loss so
_NEAR = 3  # records at most between the two jumps (a summary's lines)
_FROM_FIRST = 2.0  # the new level above the log's first loss by this factor at least
_NO_JUMP = (None, -_NEAR - 1)
# A blow-up whose training loss is back below this share of its peak (and below the
# geometric mean of its peak and its level before) is eased from a blocker to a high.
_RECOVERED_SHARE = 0.05  # (step, record) of a jump that has not happened


def _jumped(before: float | None, now: float) -> bool:
    return before is not None and before > 0 and now >= BLOWUP * before


def _eval_loss(key: str, metrics: Mapping[str, float]) -> bool:
    """A held-out loss: by its name, or a split's figure named by the split alone beside
    the training's named so (`train 1.0760 | val 0.9667`: the two losses)."""
    return ("loss" in key.lower() and evaluation_direction(key) == -1) \
        or (key in SPLIT_NAMES and key != "train" and "train" in metrics)


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
        # The training loss's last summaries (distinct values), for a setback.
        self._recent: deque[float] = deque(maxlen=_FALLS_BEFORE + 2)
        self._eval_rise_at: tuple[int | None, int] = _NO_JUMP  # the eval's setback-size rise
        self._eval_rise = ""  # ... as said
        self._setback: float | None = None  # the training loss before an open setback
        self._peak = 0.0  # the open blow-up's highest training loss
        self._eased = False  # the open blow-up's blocker eased to a high (`_RECOVERED_SHARE`)

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
            self._recent.append(value)
            out.extend(self._recovered(value))
        for key, figure in point.metrics.items():
            if not math.isfinite(figure) or not _eval_loss(key, point.metrics):
                continue
            before = self._evals.get(key)
            self._evals[key] = figure
            if figure != before:
                self._eval_jump_at = here if _jumped(before, figure) else _NO_JUMP
                rose = before is not None and before > 0 and figure >= _EVAL_SETBACK * before
                self._eval_rise_at = here if rose else _NO_JUMP
                if rose:
                    self._eval_rise = f"{key} {before:.4g} → {figure:.4g}"
        return out + self._judge() + self._judge_setback(here)

    def _judge(self) -> list[Signal]:
        (train_step, train_at), (eval_step, eval_at) = self._train_jump_at, self._eval_jump_at
        if self._raised or train_at < 0 or eval_at < 0 or train_step != eval_step \
                or abs(train_at - eval_at) > _NEAR:
            return []
        before, now = self._train
        assert before is not None and now is not None
        if self._first is not None and now <= _FROM_FIRST * self._first:
            return []  # back near where the log began: a new launch's start
        self._raised, self._eased = True, False
        self._before, self._peak = before, now
        jump = (f"the training loss rose from {before:.4g} to {now:.4g} "
                f"({now / before:.3g}×) from one summary to the next, and the evaluation loss "
                f"rose with it")
        return [Raise(AnomalyType.LOSS_SPIKE, f"loss spike: {jump}", key="blow-up"),
                Raise(AnomalyType.DIVERGENCE,
                      f"divergence: {jump}: an average over a whole epoch and the held-out "
                      f"loss cannot both jump so from one bad batch; the weights have blown "
                      f"up, and every later step starts from them", key="blow-up",
                      severity=Severity.BLOCKER)]

    def _judge_setback(self, here: tuple[int | None, int]) -> list[Signal]:
        """A setback (see the module): raised once, while none is open."""
        eval_step, eval_at = self._eval_rise_at
        recent = list(self._recent)
        if self._raised or self._setback is not None or eval_at < 0 \
                or len(recent) < _FALLS_BEFORE + 1 or abs(here[1] - eval_at) > _NEAR \
                or eval_step != here[0]:
            return []
        before, now = recent[-2], recent[-1]
        falls = recent[-_FALLS_BEFORE - 1:-1]
        if not (before > 0 and now >= SETBACK * before
                and all(b < a for a, b in pairwise(falls))):
            return []
        if self._first is None or now > _SETBACK_BELOW_FIRST * self._first:
            # (back near where the log began, or above: a new launch or the next model of
            # several trained in turn starting from scratch; the blow-up's and the
            # divergence rules' story above it)
            return []
        self._setback = before
        return [Raise(AnomalyType.LOSS_SPIKE,
                      f"training set back: the training loss rose from {before:.4g} to "
                      f"{now:.4g} (+{100 * (now / before - 1):.0f} %) from one summary to the "
                      f"next after falling summary by summary ({falls[0]:.4g} → {before:.4g}), "
                      f"and the "
                      f"evaluation loss rose with it ({self._eval_rise}): later epochs train "
                      f"from weights knocked off their path", key="setback",
                      severity=Severity.HIGH)]

    def _recovered(self, value: float) -> list[Signal]:
        if self._setback is not None and value <= _SETBACK_BACK * self._setback:
            before, self._setback = self._setback, None
            return [Resolve(AnomalyType.LOSS_SPIKE,
                            f"the training loss is back to {value:.4g} (it stood at "
                            f"{before:.4g} before the setback)", key="setback")]
        if not self._raised or self._before is None:
            return []
        self._peak = max(self._peak, value)
        if value > 2 * self._before:
            if self._eased or value > _RECOVERED_SHARE * self._peak \
                    or value > math.sqrt(self._before * self._peak):
                return []  # (back more than half the jump's orders of magnitude too)
            # Trained back down most of the way (LeNet on condensed MNIST: 0.0015 before,
            # 3.47 at its peak, 0.035 at its last epoch, 99.7 % of its training set right
            # again): weights that blew up and were trained back, not broken ones; still
            # short of where they were, so the run's last weights are not its best.
            self._eased = True
            return [Reassess(AnomalyType.DIVERGENCE, Severity.HIGH,
                             f"the training loss came back to {value:.4g} from its peak "
                             f"{self._peak:.4g}, short of {self._before:.4g} before the jump: "
                             f"the run trained back from the blow-up, its last weights worse "
                             f"than those it had", key="blow-up")]
        self._raised = False
        how = f"the training loss is back to {value:.4g}"
        return [Resolve(AnomalyType.LOSS_SPIKE, how, key="blow-up"),
                Resolve(AnomalyType.DIVERGENCE, how, key="blow-up")]
