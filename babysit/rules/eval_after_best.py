"""An evaluation that stayed worse than its best for several evaluations after it, judged
on few points (issue 24): the sparse case, where a run evaluates once an epoch and a
level of ten evaluations never comes.

Two shapes, each against the evaluations' own noise measured after the best:
- *declining*: the evaluations after the best keep getting worse, their latest level (the
  median of the last three) below both the best and their own first level by more than
  three sigmas of their point-to-point noise (a trend does not inflate that noise) and by
  a minimum relative size (E2DTC's clustering NMI 0.8267, 0.8216, 0.8171, 0.8096, 0.8138,
  0.8072 while its loss fell);
- *settled*: they settled at a level far from the best (by `eval_far_from_best` of it)
  and by more than three sigmas of their own spread around that level (a Keras
  `val_loss` 0.1037 at its best, then ten epochs between 0.114 and 0.2002 ending at
  0.1466).

A single bad evaluation is neither: the level is a median of three, and at least
`_AFTER` evaluations must follow the best. Whether the training loss improved meanwhile
is the caller's to check (`eval_trends`).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from babysit.config import RuleSettings
from babysit.rules import trends

_AFTER = 4  # evaluations after the best before either shape speaks
_NOW = 3  # evaluations in the latest level
_K = 3.0  # sigmas of noise a change must exceed


def worse_since_best(worse: Sequence[float], rules: RuleSettings) -> tuple[int, str] | None:
    """(index of the best evaluation, how it got worse) or None. `worse` is the metric
    oriented so that higher is worse."""
    if len(worse) < _AFTER + 1:
        return None
    best_at = min(range(len(worse)), key=worse.__getitem__)
    after = worse[best_at + 1:]
    if len(after) < _AFTER:
        return None
    best = worse[best_at]
    now = statistics.median(after[-_NOW:])
    gap = now - best
    if worse[-1] - best <= abs(best) * rules.eval_min_worsening:
        return None  # the latest is as good as the best: nothing to keep from the past
    sigma = trends.noise_scale(after)
    first = statistics.median(after[:_NOW])
    if trends.beyond_noise(gap, best, sigma, _K, 2 * rules.eval_min_worsening) and \
            trends.beyond_noise(now - first, best, sigma, _K, rules.eval_min_worsening):
        return best_at, (f"kept getting worse for {len(after)} evaluations after its best, "
                         f"beyond its noise σ≈{sigma:.2g}")
    spread = trends.spread(after)
    if trends.beyond_noise(gap, best, spread, _K, rules.eval_far_from_best):
        return best_at, (f"stayed {100 * gap / abs(best):.0f} % worse than its best for "
                         f"{len(after)} evaluations, beyond their spread σ≈{spread:.2g}")
    return None
