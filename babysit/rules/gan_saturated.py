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

The mirror shape is the same failure: a discriminator at exactly 0 has won outright,
and the generator's loss in the tens is the price of a certainty it cannot move (BMSG-GAN
after ten hours: `Elapsed [9:53:02.944594] batch: 42828  d_loss: 0.000000  g_loss:
23.858597`). A discriminator that has won still takes a batch now and then (`d_loss:
0.261001` between two zeros), and a generator's loss so far off swings (7 to 42): a
blip is not the game resuming. So the game is also over when, over the last `_WINDOW`
points, one player was 0 on `_MOST_ZERO` of them or more (or as near it as a certainty
of the right answer makes it: `_NEAR_ZERO`) and the other's median on those points is
far off.

A blocker even while the run goes on: nothing it does from there changes the weights
that matter. A player at 0 beside an opponent at an ordinary level (a term switched
off, a hinge loss that is satisfied for a batch) is left alone, as are fewer points
than `_POINTS` in a row or `_MOST_ZERO` of the last `_WINDOW`.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Mapping, Sequence
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.gan_frozen import PLAYERS
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_POINTS = 8  # points in a row with one player at 0 and the other far off
# A player's loss this high is a certainty of the wrong answer: a cross-entropy of 10 is
# a probability of 5e-5 on the true label (ln 2 ≈ 0.69 is the game's balance).
_FAR_OFF = 10.0
_WINDOW = 12  # the recent points a game with blips is judged over
_MOST_ZERO = 9  # of them, with the same player at 0 (or within `_NEAR_ZERO` of it)
# ... and, once judged over, the game resumes only when that player is at 0 on fewer than
# this many: a discriminator that won takes a batch or two now and then, and with each
# the window dips below `_MOST_ZERO` (a DCGAN course run's `d_loss: 0.0000` on most points
# of forty epochs, `0.7633` among them, its generator at 20 to 70: raised and resolved 25
# times, and resolved at the end, so GO).
_STILL_ZERO = 6
# A player's loss this close to 0 is a certainty of the right answer on both sides (a
# probability of 0.999 or more): the game is won, whether the print rounds it to 0 or
# not (a 3D DCGAN's discriminator at 0.000047, 0.000069, then 0.000000 while its
# generator's loss stays at 9 to 50).
_NEAR_ZERO = 1e-3


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


def zero_player(metrics: Mapping[str, float]) -> tuple[str, float] | None:
    """(the player at 0, its opponent's loss) when a record's two GAN losses put one
    player at 0, or within `_NEAR_ZERO` of it, and the other at a finite value further
    off; None otherwise."""
    players = [key for key in metrics if key.lower() in PLAYERS]
    if len(players) != 2:
        return None
    first, second = (abs(metrics[key]) for key in players)
    zero, other = players if first <= second else players[::-1]
    if not math.isfinite(metrics[other]) or abs(metrics[zero]) >= _NEAR_ZERO \
            or abs(metrics[other]) <= _NEAR_ZERO:
        return None
    return zero, abs(metrics[other])


def won_with_blips(window: Sequence[tuple[str, float] | None],
                   most: int = _MOST_ZERO) -> tuple[str, int, float] | None:
    """(the player at 0, on how many points, the opponent's median there) when one player
    was 0 (or near it) on `_MOST_ZERO` of the window's points or more and its opponent's median
    loss on those points is far off (one point below the mark is a swing, not a game
    resumed); None otherwise."""
    readings = [reading for reading in window if reading is not None]
    if len(readings) < most:
        return None
    zero = statistics.mode(key for key, _ in readings)
    others = [other for key, other in readings if key == zero]
    if len(others) < most or statistics.median(others) < _FAR_OFF:
        return None
    return zero, len(others), statistics.median(others)


class SaturatedGameRule:
    """Not learning: a GAN whose players' losses have saturated (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._run = 0  # points in a row that read so
        # The recent points' (player at 0, opponent's loss), None where none was at 0.
        self._window: deque[tuple[str, float] | None] = deque(maxlen=_WINDOW)
        self._raised = False

    def observe(self, point: Observation) -> list[Signal]:
        if not any(key.lower() in PLAYERS for key in point.metrics):
            return []
        pair = saturated_pair(point.metrics)
        self._run = self._run + 1 if pair is not None else 0
        self._window.append(zero_player(point.metrics))
        if self._raised:
            if self._run >= _POINTS or won_with_blips(self._window, _STILL_ZERO) is not None:
                return []
            self._raised = False
            return [Resolve(AnomalyType.NOT_LEARNING, "the GAN's losses left saturation",
                            key="saturated game")]
        blips = won_with_blips(self._window) if self._run < _POINTS else None
        if self._run < _POINTS and blips is None:
            return []
        self._raised = True
        if pair is not None and self._run >= _POINTS:
            zero, far = pair
            said = (f"the GAN's {zero} has been exactly 0 while its {far} stayed at "
                    f"{point.metrics[far]:.4g} on {self._run} logged points in a row")
        else:
            assert blips is not None
            zero, count, level = blips
            said = (f"the GAN's {zero} has been 0 (below {_NEAR_ZERO:g}) on {count} of its last "
                    f"{len(self._window)} logged points while its opponent's loss stayed far "
                    f"off (median {level:.4g})")
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: {said}: the discriminator's output has saturated, no "
                      f"gradient reaches the generator, and the game is over",
                      key="saturated game", severity=Severity.BLOCKER)]
