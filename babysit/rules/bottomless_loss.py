"""A loss with no floor running away downwards (issue 24).

A cross-entropy or a squared error cannot go below 0, so the divergence rule watches a
loss rise. Some losses have no floor: an adversarial player's (`-log D` written as
`-D`), a Wasserstein critic's, a likelihood of a continuous density, a negative dice.
Those that are healthy settle: a dice loss stops near -1, a flow's NLL falls by less
and less. One that falls below zero by about as much at every point, to many times any
size it had before, is not converging but running away: the game it is part of has
diverged (sealed-12's adversarial autoencoder: `Loss Encoder: -0.0056` at epoch 1,
`+5.34` at 23, then -2.2, -3.4, -7.3 … -99.5, -103.4 by epoch 54 while the
discriminator's loss climbs).

Judged on every metric whose name says loss or cost (the run's own loss and each player's
or part's), so a runaway in one part is seen whichever part the run's loss is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Signal

_LOSS_NAME = lazy_re.compile(r"loss|(?:^|[_/.])cost(?:$|[_/.])", re.IGNORECASE)
# Points in a row below zero and lower at each: fewer is a dip that may yet settle.
_FALLING_POINTS = 10
# Times the largest size the loss had before it went below zero (and at least this much
# in absolute terms): far beyond anything its start or its noise explains.
_TIMES = 10.0
_MIN_SIZE = 10.0
# The latter half of the fall falling by at least this share of what the former half
# fell: a loss settling towards a floor falls by less and less.
_NOT_SLOWING = 0.5


class _Track:
    __slots__ = ("before", "fall", "raised")

    def __init__(self) -> None:
        self.before = 0.0  # the largest |value| before the current run below zero
        self.fall: list[float] = []  # the values since it went below zero, each lower
        self.raised = False


def running_down(before: float, fall: Sequence[float]) -> str | None:
    """Why a loss that has been falling below zero at every point (`fall`) is running
    away without a floor: enough points, each lower than the one before, the fall not
    slowing, and the latest many times both the largest size the loss had before
    (`before`) and where this fall began. None otherwise."""
    if len(fall) < _FALLING_POINTS:
        return None
    latest = fall[-1]
    if -latest < max(_MIN_SIZE, _TIMES * before, _TIMES * -fall[0]):
        # Not yet ten times the size it had, nor ten times where this unbroken fall
        # began: a likelihood improving from -150 to -166 (a healthy NLL's steady
        # stretch, sealed-4's Mamba filter) is a loss getting better, not running away.
        return None
    half = len(fall) // 2
    early = fall[0] - fall[half]
    late = fall[half] - fall[-1]
    if late < _NOT_SLOWING * early:
        return None  # settling: each step smaller than the last
    return (f"the loss has no floor and runs away below zero: {fall[0]:.4g} → "
            f"{latest:.4g} over {len(fall)} logged points, lower at every one and not "
            f"slowing, {-latest / max(before, 1e-12):.3g}× the largest size it had "
            f"before ({before:.4g})" if before > 0 else
            f"the loss has no floor and runs away below zero: {fall[0]:.4g} → "
            f"{latest:.4g} over {len(fall)} logged points, lower at every one and not "
            f"slowing")


class BottomlessLossRule:
    """Divergence of a loss that falls without bound below zero (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._tracks: dict[str, _Track] = {}

    def observe(self, point: Observation) -> Sequence[Signal]:
        out: list[Signal] = []
        for key, value in point.metrics.items():
            if not math.isfinite(value) or not _LOSS_NAME.search(key):
                continue
            track = self._tracks.get(key)
            if track is None:
                track = self._tracks[key] = _Track()
            fall = track.fall
            if value < 0 and (not fall or value < fall[-1]):
                fall.append(value)
            else:
                # Back up (or never below zero): what it held so far is its size.
                track.before = max(track.before, abs(value), *(abs(v) for v in fall[-1:]))
                track.fall = [value] if value < 0 else []
                continue
            if track.raised:
                continue
            found = running_down(track.before, fall)
            if found is not None:
                track.raised = True
                # A blocker, as the loss rule's runaway above its best is: nothing in a
                # run that fell ten times past its size comes back by waiting.
                out.append(Raise(AnomalyType.DIVERGENCE, f"{key}: {found}",
                                 key=f"bottomless {key}", severity=Severity.BLOCKER))
        return out
