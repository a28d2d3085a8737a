"""A gradient norm that multiplies steadily, point after point (issue 24, item 1).

Noise makes a norm rise at one logged point and fall at the next; rising at every one of
eight or more points in a row, by ten times or more in all, is no noise (by chance, one
run of eight rises in 2⁸): the norm grows geometrically, as it does when the update
feeds on itself (a Grokfast filter amplifying its own gradients: 3.8e12, 5.7e12, 8.5e12
… 1.4e14, ×1.5 per log). Such a norm ends in overflow; the rules judge it by what it
does to the loss (grad_without_learning) and to an explosion already raised (stream).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise

CLIMB_POINTS = 8  # rises in a row (nine points)
CLIMB_GROWTH = 10.0  # the last of them over the first


def steady_climb(norms: Sequence[float]) -> str | None:
    """Why an unbroken rise of norms (each above the one before) is a geometric climb:
    `CLIMB_POINTS` rises or more, the last value `CLIMB_GROWTH` times the first or more.
    None otherwise."""
    if len(norms) <= CLIMB_POINTS or norms[0] <= 0 or not math.isfinite(norms[-1]):
        return None
    growth = norms[-1] / norms[0]
    if growth < CLIMB_GROWTH or any(b <= a for a, b in pairwise(norms)):
        return None
    per_point = growth ** (1 / (len(norms) - 1))
    return (f"the grad norm rose at each of its last {len(norms) - 1} logged points, "
            f"×{per_point:.2g} a point ({norms[0]:.3g} → {norms[-1]:.3g})")
