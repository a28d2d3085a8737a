"""Trends judged against the run's own noise: pure helpers over short series.

A fixed threshold ("five rises in a row", "half the baseline") fires on a noisy healthy
run and stays silent on a quiet broken one. These helpers give each rule the two things
it needs to judge a change instead: a robust *level* (a median of the last few points,
which one noisy batch cannot move) and the run's robust *scale* (the spread of its
point-to-point changes, which a slow trend does not inflate). A change counts when it
exceeds both a multiple of that scale and a minimum relative size.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from itertools import pairwise

# Makes a median absolute deviation estimate the standard deviation of Gaussian noise.
MAD_TO_SIGMA = 1.4826


def level(values: Sequence[float], width: int) -> float:
    """The median of the last `width` values (all of them when there are fewer)."""
    return statistics.median(values[-width:])


def noise_scale(values: Sequence[float]) -> float:
    """The standard deviation of the point-to-point noise of a series, robustly: the
    MAD of its first differences (a slow trend shifts them all alike, so it is not
    counted as noise), over √2 (a difference carries the noise of two points). 0 with
    fewer than four values: too few to tell noise from signal."""
    if len(values) < 4:
        return 0.0
    diffs = [b - a for a, b in pairwise(values)]
    centre = statistics.median(diffs)
    mad = statistics.median(abs(d - centre) for d in diffs)
    return MAD_TO_SIGMA * mad / math.sqrt(2)


def spread(values: Sequence[float]) -> float:
    """The robust standard deviation of the values themselves (1.4826·MAD of their
    distances from their median); 0 for fewer than two."""
    if len(values) < 2:
        return 0.0
    centre = statistics.median(values)
    return MAD_TO_SIGMA * statistics.median(abs(v - centre) for v in values)


def persistence(values: Sequence[float], sigma: float) -> float:
    """How much slower than independent noise a series wanders: √((1+φ)/(1-φ)) for
    AR(1) noise, with φ estimated from the spread of its changes against that of its
    values (σ_changes = σ_values·√(1-φ)). 1 for independent points; large for a
    smoothed loss that drifts slowly up and down (and for a steady trend, where caution
    is the point). 1 with fewer than 30 values: too few to tell a wander from a trend."""
    if len(values) < 30:
        return 1.0
    values_spread = spread(values)
    if values_spread <= 0 or sigma <= 0:
        return 1.0
    ratio = min(1.0, sigma / values_spread)
    phi = min(0.98, 1 - ratio * ratio)
    return math.sqrt((1 + phi) / (1 - phi))


def beyond_noise(change: float, reference: float, sigma: float, k: float,
                 min_relative: float) -> bool:
    """Whether a change is larger than k robust sigmas *and* than `min_relative` of
    the reference: the first keeps noise out, the second keeps a nearly noise-free
    series from calling every wiggle a change."""
    return change > k * sigma and change > abs(reference) * min_relative


def threshold(reference: float, sigma: float, k: float, min_relative: float) -> float:
    """The least change `beyond_noise` accepts."""
    return max(k * sigma, abs(reference) * min_relative)


def short_window(count: int, wanted: int) -> int:
    """How many points a level or a baseline may use when a run has logged only
    `count`: `wanted`, or a third of what there is (at least one) for a short run, so
    that ten sparse points can still be compared start against end."""
    return max(1, min(wanted, count // 3))
