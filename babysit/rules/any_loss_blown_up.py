"""A loss of any role whose numbers blew up by many orders of magnitude (issue 24, item 1).

The loss rules judge the training's objective. Many losses of a run are left out of
them for good reason: a GAN's two players, a domain-adversarial net's discriminator
(each rises as the other wins), an RL learner's policy or value loss, a held-out loss
named in its own way. Their ups and downs say little; numbers that leave their scale
altogether say everything: a DANN on DomainBed whose `disc_loss` went 0.69 → 50 →
4,377 → 27,383 → 1e6 → 5e8 → 7e9 while its held-out `tr_outloss` followed it to 7.5e9
and every accuracy sat at the larger class's share. No adversarial game or schedule does
that; the weights have blown up, and the run's result is no model.

The signal: a figure named a loss (not its scale, weight or coefficient, not a best-so-
far; not the training's own loss, which the loss rules judge; not one run away below 0, a
likelihood's, the loss rules' too) whose size reached `_FLOOR`
and `_TIMES` times the median size of its first `_EARLY` values (themselves under
`_EARLY_MAX`: a loss summed over a dataset starts big), on two of its records in a row; an
infinite one counts (distrax's RealNVP: `validation loss: 750117.875`, then `inf`, `inf`,
`8.277e+27` beside a training loss of 2.6, sealed-134). NaN is the non-finite rule's. A
divergence blocker, resolved when the figure is back within `_BACK` times that early size
on `_EARLY` records in a row; never by the figures of a training after it in the same log
(its step back at the start): that one's result is its own, and the one that blew up
delivered none.
"""

from __future__ import annotations

import math
import re
import statistics
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_LOSS = lazy_re.compile(r"loss", re.IGNORECASE)
_NOT_A_LOSS = lazy_re.compile(r"scale|weight|coef|best|min|max|lambda|ratio|std|var",
                              re.IGNORECASE)
_EARLY = 5  # the first values of a loss: its own scale
_EARLY_MAX = 1e3  # ... under this, or it starts big (a sum) and is left alone
_FLOOR = 1e6  # a size no loss of that scale reaches by learning or by a game
_TIMES = 1e5  # ... and this many times its early size
_BACK = 100.0  # back within this many times its early size: resolved
_KEYS = 64  # loss names followed at most


class AnyLossBlownUpRule:
    """Divergence: any loss-named figure `_TIMES` its early size and past `_FLOOR`."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._early: dict[str, list[float]] = {}
        self._high: dict[str, int] = {}  # records in a row blown up
        self._low: dict[str, int] = {}  # records in a row back, once raised
        self._raised: set[str] = set()
        self._step: int | None = None

    def observe(self, point: Observation) -> list[Signal]:
        out: list[Signal] = []
        if point.step is not None:
            if self._step is not None and point.step < self._step:
                # The step went back: the log's next training (DomainBed's next held-out
                # domain, a relaunch). What blew up stays blown up; the new one's losses
                # are followed from their own first values.
                self._early.clear()
                self._high.clear()
                self._low.clear()
                self._raised.clear()
            self._step = point.step
        for key, value in point.metrics.items():
            if math.isnan(value) or _LOSS.search(key) is None \
                    or _NOT_A_LOSS.search(key) is not None or value == point.loss \
                    or value < 0:
                continue  # (the training's own loss is the loss rules', their severities)
            early = self._early.get(key)
            if early is None:
                if len(self._early) >= _KEYS:
                    continue
                early = self._early[key] = []
            if len(early) < _EARLY:
                if math.isfinite(value):
                    early.append(abs(value))
                continue
            scale = statistics.median(early)
            if scale <= 0 or scale >= _EARLY_MAX:
                continue
            size = abs(value)  # (+inf: overflowed, as far off its scale as a number goes)
            if size >= _FLOOR and size >= _TIMES * scale:
                self._high[key] = self._high.get(key, 0) + 1
                self._low[key] = 0
                if self._high[key] >= 2 and key not in self._raised:
                    self._raised.add(key)
                    out.append(Raise(
                        AnomalyType.DIVERGENCE,
                        f"divergence: {key} is {value:.4g}, "
                        + ("overflowed from" if math.isinf(size) else f"{size / scale:.2g}×")
                        + f" the size of its first values (about {scale:.3g}): whatever this "
                        f"loss measures, "
                        f"numbers that leave their scale by so many orders of magnitude are "
                        f"weights that blew up", key=f"blown {key}",
                        severity=Severity.BLOCKER))
                continue
            self._high[key] = 0
            if key in self._raised and size <= _BACK * scale:
                self._low[key] = self._low.get(key, 0) + 1
                if self._low[key] >= _EARLY:
                    self._raised.discard(key)
                    out.append(Resolve(AnomalyType.DIVERGENCE,
                                       f"{key} back to {value:.4g}", key=f"blown {key}"))
            else:
                self._low[key] = 0
        return out
