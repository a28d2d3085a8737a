"""Where a smoothly decaying learning rate's schedule ends, read from its last few steps.

A cosine schedule (and any decay that eases onto its floor) slows as it nears its end:
over its last stretch each logged drop of the rate is smaller than the one before by the
same amount, the drop being proportional to the steps left. Where that line of drops
reaches zero is the schedule's last step, whatever floor it decays to (a `min_lr` of 10 %
of the peak, or 0) and whatever plan the run never printed. A log whose rate is one or two
prints from that point stops where a finished loop stops (the slm pretraining metrics file
of sealed-12: `{"step": 7760, …, "lr": 6.000920772900043e-05, …}`, its cosine at its
`6e-5` floor to the eighth digit).

A live run's rate is far from it: in the middle of a cosine the drops grow or shrink
slowly, and the extrapolated end lies many prints ahead. A rate printed rounded
(`lr 6.0000e-05`) shows no drop at all near its floor and is no evidence here (the floor
held for a few prints is `loop_over`'s own test). Nor is a stepped schedule.

A linear decay to 0 drops by the same amount at each print, and where its line reaches
zero is its end: RAFT's OneCycle at `lr= 0.0000004` after drops of 4e-7 (sealed-132), one
print from 0. A live run's linear decay is many prints from zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

# Records the drops are read over: five drops, four changes between them.
_POINTS = 6
# The changes between drops may differ by this ratio at most (a cosine's tail is a line;
# noise or a restart is not).
_EVEN = 1.5
# Prints between the last record and the schedule's extrapolated end, at most.
_PRINTS_LEFT = 2.0


def prints_left(rates: Sequence[tuple[float, float]]) -> float | None:
    """How many logging intervals after the last of `rates` ((counter, rate) pairs, the
    latest last) the decay's drops reach zero; None when its last records are neither an
    easing decay (evenly logged, falling by less at each print, by an even change) nor a
    linear one (evenly logged, falling by an even amount)."""
    points = list(rates)[-_POINTS:]
    if len(points) < _POINTS:
        return None
    counters = [at for at, _ in points]
    moves = {b - a for a, b in pairwise(counters)}
    if len(moves) != 1 or min(moves) <= 0:
        return None
    drops = [a - b for (_, a), (_, b) in pairwise(points)]
    if min(drops) <= 0:
        return None
    slowing = [a - b for a, b in pairwise(drops)]
    if min(slowing) > 0 and max(slowing) <= _EVEN * min(slowing):
        return drops[-1] / (sum(slowing) / len(slowing))
    if max(drops) <= _EVEN * min(drops):
        # A linear decay (even drops, a rate printed to a few digits making them uneven by
        # a unit): it ends where its line reaches zero.
        return points[-1][1] / (sum(drops) / len(drops))
    return None


def at_its_end(rates: Sequence[tuple[float, float]]) -> bool:
    """Whether the schedule's decay ends within `_PRINTS_LEFT` prints of the last record."""
    left = prints_left(rates)
    return left is not None and left <= _PRINTS_LEFT
