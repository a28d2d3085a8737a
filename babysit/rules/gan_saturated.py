"""A GAN whose players' losses have saturated: one at exactly 0, the other far beyond
what a player's loss is while the game is played (issue 24).

The two players of a GAN pull against each other, so neither loss sits at 0 for long:
a generator loss of 0 says the discriminator is certain every fake is real, and a
discriminator loss in the tens says it is certain of the wrong answer (a binary
cross-entropy of 60 is a probability of e^-60 on the true label). Together, printed so
point after point, they are a discriminator whose sigmoid has saturated: the loss of 0
is exact because no gradient flows through it any more, so the generator gets nothing
to learn from and the game is over, however long the run goes on. carpedm20's
DCGAN-tensorflow on 20 images: `Epoch: [ 3/200] [   1/   4] time: 155.1860,
d_loss: 82.39799500, g_loss: 0.00000000` on every step of epochs 2 to 5.

A blocker even while the run goes on: nothing it does from there changes the weights
that matter. A player at 0 beside an opponent at an ordinary level (a term switched
off, a hinge loss that is satisfied for a batch) is left alone, as are fewer points in
a row than `_POINTS`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.gan_frozen import PLAYERS
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_POINTS = 8  # points in a row with one player at 0 and the other far off
# A player's loss this high is a certainty of the wrong answer: a cross-entropy of 10 is
# a probability of 5e-5 on the true label (ln 2 ≈ 0.69 is the game's balance).
_FAR_OFF = 10.0


def saturated_pair(metrics: Mapping[str, float]) -> tuple[str, str] | None:
    """(the player at exactly 0, the player far off) when a record's two GAN losses
    read so; None otherwise."""
    players = [key for key in metrics if key.lower() in PLAYERS]
    if len(players) < 2:
        return None
    zero = next((key for key in players if metrics[key] == 0), None)
    far = next((key for key in players if math.isfinite(metrics[key])
                and abs(metrics[key]) >= _FAR_OFF), None)
    return (zero, far) if zero is not None and far is not None else None


class SaturatedGameRule:
    """Not learning: a GAN whose players' losses have saturated (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._run = 0  # points in a row that read so
        self._raised = False

    def observe(self, point: Observation) -> list[Signal]:
        if not any(key.lower() in PLAYERS for key in point.metrics):
            return []
        pair = saturated_pair(point.metrics)
        if pair is None:
            self._run = 0
            if self._raised:
                self._raised = False
                return [Resolve(AnomalyType.NOT_LEARNING, "the GAN's losses left saturation",
                                key="saturated game")]
            return []
        self._run += 1
        if self._run < _POINTS or self._raised:
            return []
        self._raised = True
        zero, far = pair
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: the GAN's {zero} has been exactly 0 while its {far} "
                      f"stayed at {point.metrics[far]:.4g} on {self._run} logged points in a "
                      f"row: the discriminator's output has saturated, no gradient reaches "
                      f"the generator, and the game is over",
                      key="saturated game", severity=Severity.BLOCKER)]
