"""A GAN player whose loss is frozen at one value while the rest of the run moves (issue
24, item 2): its network outputs the same thing for every input and has stopped
learning, so the adversarial game is over whatever the other losses do.

A healthy player's loss is a batch statistic: it changes from one printed point to the
next in its last printed digit at least. HaftFusion's `Disc: 0.500` on every redraw of 34
epochs, beside `Gen: 0.492` and `L1: 0.075` that move, is a discriminator that answers 0.5
for everything (a least-squares GAN's loss at that output). Exactly 0 is left out (a
term switched off, not a player that stopped).
"""

from __future__ import annotations

import math
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType
from babysit.rules.signals import Observation, Raise, Resolve, Signal

# The two players' losses by the names GAN loops print (`d_loss`, `errD`, `Disc`, `G`).
PLAYERS = frozenset({
    "d", "g", "disc", "gen", "d_loss", "g_loss", "loss_d", "loss_g", "errd", "errg",
    "lossd", "lossg", "disc_loss", "gen_loss", "discriminator_loss", "generator_loss",
    "loss_dis", "dis_loss", "loss_gen", "discriminator", "generator", "d_total", "g_total"})
_FROZEN_POINTS = 50  # points in a row at the very same value
# Not what the run measures of the model: its speed, its schedule, its clock.
_NOT_MODEL = ("/s", "lr", "time", "eta", "mem")


class FrozenPlayerRule:
    """A GAN player's loss at one value on `_FROZEN_POINTS` points in a row while the
    run's other metrics move: raised once, resolved when it moves."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._value: dict[str, float] = {}
        self._run: dict[str, int] = {}  # points in a row at that value
        # The other metrics' values when the player's run began, and whether one moved.
        self._others: dict[str, dict[str, float]] = {}
        self._moved: dict[str, bool] = {}
        self._raised: set[str] = set()

    def observe(self, point: Observation) -> list[Signal]:
        if not point.advanced:
            return []
        out: list[Signal] = []
        for key in point.metrics:
            if key.lower() in PLAYERS:
                out.extend(self._player(key, point))
        return out

    def _player(self, key: str, point: Observation) -> list[Signal]:
        value = point.metrics[key]
        if not math.isfinite(value):
            return []
        if value != self._value.get(key) or value == 0:
            self._value[key] = value
            self._run[key] = 1
            self._others[key] = {}
            self._moved[key] = False
            if key in self._raised:
                self._raised.discard(key)
                return [Resolve(AnomalyType.NOT_LEARNING, f"{key} moves again ({value:.4g})",
                                key=f"frozen {key}")]
            return []
        self._run[key] += 1
        if not self._moved[key]:
            others = self._others[key]
            for other, seen in point.metrics.items():
                if other == key or any(part in other.lower() for part in _NOT_MODEL):
                    continue
                if others.setdefault(other, seen) != seen:
                    self._moved[key] = True
        if self._run[key] < _FROZEN_POINTS or not self._moved[key] or key in self._raised:
            return []
        self._raised.add(key)
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: the GAN's {key} loss has been exactly {value:g} on "
                      f"{self._run[key]} logged points in a row while its other losses "
                      f"moved: that network outputs the same thing for every input and has "
                      f"stopped learning (the adversarial game is over)", key=f"frozen {key}")]
