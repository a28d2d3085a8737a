"""An evaluation that slides down over the whole window babysit sees, judged against its
own noise (issue 24, item 1).

The other degradation tests measure from a best *after* which the metric got worse: a
steady rise, a level above the best level, a jump, a peak then a decline. A log that
begins mid-run (an excerpt pasted into an issue, a resumed run) has its best at its very
first evaluation, and a metric that keeps wandering down from there, with ups and downs
on the way, escapes all of them: a domain-adaptation run's `target_val_acc` 55.16, 51.77,
52.34, 45.78, 44.37, 45.69, 47.54, 46.31, 42.71 over epochs 39-47 while its training
loss fell from 0.27 to 0.06.

The test fits a robust straight line (Theil-Sen: the median of the pairwise slopes, so
that one wild evaluation does not tilt it) and asks that the change it makes over the
window be larger than `_K` sigmas of the metric's point-to-point noise (the MAD of its
first differences: a trend shifts them all alike, so it is not counted as noise) and
than a tenth of the level it started from; that the latest level (median of the last
three) be worse than the first level by more than two sigmas; that the best be in the
first half (a dip that recovered is not a slide); and, as for every degradation, that
the training loss did not share the slide (the caller checks).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from itertools import combinations

from babysit.rules import trends

_LEAST = 6  # evaluations before a slide can be told from noise
_K = 4.0  # sigmas of point-to-point noise the fitted change must exceed
_RELATIVE = 0.10  # and this share of the fitted starting level
_LEVEL = 3  # evaluations in the first and the latest level
_LEVEL_K = 2.0  # sigmas the latest level must be below the first


def theil_sen(values: Sequence[float]) -> tuple[float, float]:
    """(slope per evaluation, intercept) of the robust line through the values."""
    slope = statistics.median((values[j] - values[i]) / (j - i)
                              for i, j in combinations(range(len(values)), 2))
    intercept = statistics.median(v - slope * i for i, v in enumerate(values))
    return slope, intercept


def slid_from_start(worse: Sequence[float]) -> str | None:
    """Why a metric oriented so that higher is worse has slid up (got worse) over the
    whole window, or None. Needs `_LEAST` evaluations."""
    count = len(worse)
    if count < _LEAST:
        return None
    best_at = min(range(count), key=worse.__getitem__)
    if best_at >= count // 2:
        return None  # the best is recent: a dip that recovered, or still improving
    slope, intercept = theil_sen(worse)
    change = slope * (count - 1)
    sigma = trends.noise_scale(worse)
    if sigma <= 0 or not trends.beyond_noise(change, intercept, sigma, _K, _RELATIVE):
        return None
    first = statistics.median(worse[:_LEVEL])
    latest = statistics.median(worse[-_LEVEL:])
    if latest - first <= _LEVEL_K * sigma:
        return None
    return (f"slid over all {count} evaluations seen, its best the {_ordinal(best_at)} "
            f"(a fitted change of {100 * change / abs(intercept):.0f} % of its starting "
            f"level, beyond its noise σ≈{sigma:.2g})")


def _ordinal(index: int) -> str:
    return ("first", "second", "third")[index] if index < 3 else f"{index + 1}th"
