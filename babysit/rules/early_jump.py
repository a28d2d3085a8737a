"""A loss that jumps when too few points came before it for a spread to be known
(issue 24): the second line of a resumed run at 10× the first (Qwen's `loss 1.4684`, then
`loss 13.8450` at the next print), or a three-line Megatron excerpt whose last `lm loss`
is 2.5× the two before it.

The windowed spike test needs ten points and the short-log tests four of a held level;
before that, only a jump well beyond any noise a loss shows between two prints counts:
above every point before it by half their largest at least. The points before must hold
a level (within 2× of each other: a loss still falling from its start is no level to
jump off, and one already climbing is a divergence's). Its noise unknown, it is only a
notice (medium): a few points cannot tell a bad batch from a broken run, and a jump
that lasts is the divergence rule's to judge.

A run's own first prints jump about (1.7-3× in healthy logs' first steps), so the test
is for a log that begins mid-run, except for a jump no first steps make: a hundred
times every point before it (HiFi-GAN's `Gen Loss Total` 101, 135, 107, 94, 141, 196,
then 64922832.000 at its seventh print, NaN five steps later).
"""

from __future__ import annotations

from collections.abc import Sequence

from babysit.rules import trends

_MIN_JUMP = 0.5  # above the largest point before it by this share of it at least
_LEVEL_SPAN = 2.0  # the points before within this factor of each other
_NOISE_K = 6.0  # and, from four points on, by this many robust sigmas of their noise
_FROM_START_JUMP = 100.0  # times the largest point before it: a jump from a run's start too
_WIDE_LEVEL_SPAN = 5.0  # ... off points within this factor of each other


def jumps_from_start(before: Sequence[float], value: float) -> bool:
    """Whether `value` is a jump no run's first prints make: `_FROM_START_JUMP` times the
    largest of the (positive) points before it."""
    largest = max(before, default=0.0)
    return largest > 0 and value > _FROM_START_JUMP * largest


def few_point_jump(before: Sequence[float], value: float, fewer_than: int) -> str | None:
    """Why `value` is a jump off the (1 to `fewer_than` - 1) positive points logged
    before it, or None."""
    if not 0 < len(before) < fewer_than:
        return None
    largest, smallest = max(before), min(before)
    if smallest <= 0:
        return None
    if largest > _LEVEL_SPAN * smallest and (not jumps_from_start(before, value)
                                             or largest > _WIDE_LEVEL_SPAN * smallest):
        # (a jump of a hundred times needs a looser level: a first epoch's points may
        # wander twofold; a loss climbing by orders of magnitude is diverging already)
        return None
    rise = value - largest
    if rise <= _MIN_JUMP * largest or rise <= _NOISE_K * trends.noise_scale(before):
        return None
    return (f"loss {value:.4g} is {value / largest:.3g}× the largest of the {len(before)} "
            f"point{'s' if len(before) > 1 else ''} before it ({largest:.4g}); too few "
            f"points to know the run's noise, so a notice until the loss shows whether "
            f"it comes back")
