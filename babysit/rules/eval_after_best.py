"""An evaluation that kept getting worse after its best for several evaluations after it, judged
on few points (issue 24): the sparse case, where a run evaluates once an epoch and a
level of ten evaluations never comes.

The evaluations after the best keep getting worse: their latest level (the median of
the last three) is below both the best and their own first level by more than three
sigmas of the evaluations' point-to-point noise (a trend does not inflate it) and by a
minimum relative size (fairseq's `valid_loss` 0.261 at its best, then 0.264, 0.263,
0.269, 0.277, 0.282 while the training loss fell).

A single bad evaluation is not that: the level is a median of three, and at least
`_AFTER` evaluations must follow the best.

Not judged here: evaluations that merely *settled* above a best that was one lucky
evaluation (a Keras `val_loss` 0.1037 between 0.149 and 0.1553, then ten epochs around
0.14). Set against the spread of the few evaluations after it, a plateau's luckiest
evaluation stands out in most noisy runs sooner or later (simulated: 4 runs in 10 of 24
evaluations at 10 % noise), and such a finding would never resolve.

Whether the training loss improved meanwhile is the caller's to check (`eval_trends`).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from babysit.config import RuleSettings
from babysit.rules import trends

_AFTER = 4  # evaluations after the best before the test speaks
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
    # The noise of every evaluation in the window, not of the few after the best: the
    # spread of four differences is as often half the truth as not, and a plateau's
    # luckiest evaluation would then stand out at one run in three.
    sigma = trends.noise_scale(worse)
    first = statistics.median(after[:_NOW])
    if trends.beyond_noise(gap, best, sigma, _K, 2 * rules.eval_min_worsening) and \
            trends.beyond_noise(now - first, best, sigma, _K, rules.eval_min_worsening):
        return best_at, (f"kept getting worse for {len(after)} evaluations after its best, "
                         f"beyond its noise σ≈{sigma:.2g}")
    return None
