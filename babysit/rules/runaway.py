"""A series running away from its best (issue 24, item 1): several times the best level
it held, on each of the last points a trend needs, and rising at every one of them.

Noise and schedules move a loss by a share of its level; a loss (training or held-out)
at over three times its best, rising at every point, is not wandering back. What the
model learned is being undone, wherever the log began: a Caffe softmax loss pinned at
9.48 then 35.8 → 38.8 → 43.7 → 47.7, a pose model's validation loss 0.31 → 1.05 →
1.78 → 4.35 while its training loss holds. The rules that raise the divergence or the
evaluation's degradation ask this to judge how serious an open one is.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

RUNAWAY_TIMES = 3.0  # the latest points over this many times the best level


def running_away(values: Sequence[float], best: float, points: int) -> str | None:
    """Why the latest values run away from `best` (a level the series held, > 0): the
    last `points` each over `RUNAWAY_TIMES` × best, and each of them above the value
    before it. None otherwise (too few values, a best at or below 0, a fall)."""
    tail = list(values)[-points - 1:]
    if best <= 0 or points < 1 or len(tail) < points + 1:
        return None
    if not all(v > RUNAWAY_TIMES * best for v in tail[1:]) \
            or not all(b > a for a, b in pairwise(tail)):
        return None
    return (f"over {RUNAWAY_TIMES:g}× its best level ({best:.4g}) on each of its last "
            f"{points} logged points, rising at each "
            f"({' → '.join(f'{v:.4g}' for v in tail)})")
