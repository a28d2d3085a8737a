"""Evaluation metrics that get worse while the training loss improves, judged against
the metric's own noise (issue 24).

Evaluations are few and far between, so the tests work on few points: a steady rise
over the last few evaluations (over-fitting, the classic shape), a robust level well
above the best one once there are enough evaluations to have a level, and a jump far
beyond anything noise explains when there are only two or three. Each needs the change
to exceed both the metric's own robust scale and a minimum relative size, and the
training loss to have improved over the same stretch: a rise it shares is the run's
trouble, not the evaluation's.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from itertools import pairwise

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.rules import eval_after_best, eval_decline, trends

_NOISE_K = 3.0
_LONG_CLIMB = 5  # evaluations in a row each worse than the last: a climb, not noise
_LEVEL = 5  # evaluations in a level
_LEVEL_EVALS = 10  # evaluations before the level test speaks
# A level's noise against a point's (the median of five: 0.54), times √2 for the gap
# between two levels; and the sigmas that gap must exceed, the best level being the
# least of many (so itself low by about a sigma of its own).
_LEVEL_NOISE = 0.76
_LEVEL_K = 4.0


def degradation(evals: Sequence[tuple[float, float | None]], direction: int,
                rules: RuleSettings) -> str | None:
    """Why an eval metric is degrading, or None. `evals` holds (eval value, train loss
    at that time) in order; `direction` is +1 when higher is better, -1 when lower."""
    if direction == 0 or len(evals) < 2:
        return None
    # Oriented so that higher is worse, whatever the metric.
    worse = [-direction * v for v, _ in evals]
    if all(train is None for _, train in evals) and \
            worse[-1] - min(worse) <= abs(min(worse)) * rules.eval_jump:
        # No training loss to tell a generalisation problem from a run that is simply
        # not going well: only a change as large as a jump speaks (a validation loss
        # up 8× while the log prints no training loss at all).
        return None
    if within_counting_noise([v for v, _ in evals], worse):
        return None
    return (_steady_rise(evals, worse, direction, rules) or _above_best_level(evals, worse, rules)
            or _jump(evals, worse, rules) or _past_peak(evals, worse, rules)
            or _slid(evals, worse))


# A rate counted over a small evaluation set shows the set's size in its values: every
# one a multiple of 1/n (TorchRec's BERT4Rec example on ten random users: recall@1 0.4,
# 0.3, 0.2). Up to this n, its noise is the count's.
_MOST_COUNTED = 12
_COUNT_K = 2.0 * math.sqrt(2.0)  # sigmas of the gap between two counts of one rate


def within_counting_noise(values: Sequence[float], worse: Sequence[float]) -> bool:
    """Whether a rate's fall from its best is within what counting a few items gives:
    its values all multiples of 1/n for a small n (percentages alike), the fall under
    √2·2 binomial sigmas at its mean (a recall@1 of 0.4 then 0.2 on ten users is two
    users, not a trend)."""
    if len(values) < 3:
        return False
    scale = 100.0 if max(values) > 1.0 else 1.0
    rates = [v / scale for v in values]
    if min(rates) < 0.0 or max(rates) > 1.0:
        return False
    size = next((n for n in range(2, _MOST_COUNTED + 1)
                 if all(abs(r * n - round(r * n)) < 1e-4 * n for r in rates)), None)
    if size is None:
        return False
    mean = max(statistics.fmean(rates), 1.0 / size)
    sigma = math.sqrt(mean * (1.0 - min(mean, 1.0 - 1.0 / size)) / size)
    return (worse[-1] - min(worse)) / scale < _COUNT_K * sigma


def _slid(evals: Sequence[tuple[float, float | None]], worse: list[float]) -> str | None:
    """A slide over the whole window from a best at its start (see eval_decline),
    while the training loss did not share it."""
    found = eval_decline.slid_from_start(worse)
    if found is None:
        return None
    train = _train_fell(evals, 0)
    if train is None:
        return None
    return f"{found}: {evals[0][0]:.4g} → {evals[-1][0]:.4g} {train}"


def after_best(evals: Sequence[tuple[float, float | None]], direction: int,
               rules: RuleSettings) -> tuple[str, bool] | None:
    """Few evaluations, worse since their best (see eval_after_best), while the
    training loss fell over the same stretch: (why, whether the latest level is clearly
    worse than the best level, by `eval_far_from_best` of it), or None."""
    if direction == 0 or all(train is None for _, train in evals):
        return None  # with no training loss, only a jump speaks (see `degradation`)
    worse = [-direction * v for v, _ in evals]
    if within_counting_noise([v for v, _ in evals], worse):
        return None
    found = eval_after_best.worse_since_best(worse, rules)
    if found is None:
        return None
    best_at, how = found
    train = _train_fell(evals, best_at)
    if train is None:
        return None
    # Clearly worse: the latest level (median of three) above the best level (the best
    # median of three: not one lucky evaluation) by `eval_far_from_best` of it.
    best = _best_level(worse)
    clearly = statistics.median(worse[-3:]) - best > abs(best) * rules.eval_far_from_best
    return f"{how} ({evals[best_at][0]:.4g} → {evals[-1][0]:.4g}) {train}", clearly


# Metrics only ever measured on held-out data: a `bleu` or an `miou` needs no `dev_`
# before it to be an evaluation's (a translation is scored on a dev set, a segmentation's
# mIoU on a validation split).
# (a generative model's Fréchet and kernel inception distances, `fid_score`, StyleGAN's
# `fid50k_full`, `kid`, and its inception score: measured on samples against held-out
# statistics, never on what it trains on)
_HELD_OUT = lazy_re.compile(
    r"(?:^|[/_ ])(?:bleu|sacrebleu|rouge\w*|meteor|chrf|miou|map(?:50|_50|75)?|"
    r"wer|cer|(?:fid|kid)(?:\d+k)?(?:_full)?(?:_score)?|inception_score)$", re.IGNORECASE)
_LOWER_HELD_OUT = lazy_re.compile(r"(?:wer|cer|(?:fid|kid)(?:\d+k)?(?:_full)?(?:_score)?)$",
                                  re.IGNORECASE)


def held_out_direction(key: str) -> int:
    """+1 (higher is better) or -1 for a metric only held-out data is scored on, even
    without an eval prefix; 0 for any other name."""
    if _HELD_OUT.search(key) is None:
        return 0
    return -1 if _LOWER_HELD_OUT.search(key) else 1


_PATIENCE = 5  # evaluations after the best, none reaching it, before the gap speaks
_PEAK_K = 4.0  # robust sigmas of those evaluations the gap must exceed


def _past_peak(evals: Sequence[tuple[float, float | None]], worse: list[float],
               rules: RuleSettings) -> str | None:
    """A peak then a decline on few evaluations: `_PATIENCE` or more after the best and
    its neighbour, their median below the peak's level (the median of the best and its
    two neighbours) by more than `_PEAK_K` of their own robust spread and by
    `3 · eval_min_worsening` of it, while the training loss fell: a dev BLEU of 8.54,
    8.63, 8.18, then five between 7.45 and 7.89."""
    best_at = min(range(len(worse)), key=worse.__getitem__)
    since = worse[best_at + 2:]
    if len(since) < _PATIENCE or best_at < 2:
        return None  # a best at the very start is a run that never improved: not this
    # The peak's level: it and its neighbours (one lucky evaluation on a plateau has
    # ordinary ones on both sides; a real peak has the rise and the top around it).
    peak = statistics.median(worse[best_at - 1:best_at + 2])
    gap = statistics.median(since) - peak
    sigma = trends.spread(since)
    if not trends.beyond_noise(gap, peak, sigma, _PEAK_K, 3 * rules.eval_min_worsening):
        return None
    train = _train_fell(evals, best_at, moving=True)
    if train is None:
        return None
    now = statistics.median(v for v, _ in evals[best_at + 2:])
    return (f"peaked at {evals[best_at][0]:.4g} and stayed below its peak for {len(since)} "
            f"evaluations (median {now:.4g}, beyond their spread σ≈{sigma:.2g}) {train}")


def _noise(worse: Sequence[float]) -> float:
    """The metric's own point-to-point noise, from the evaluations before the latest few
    (0 when there are too few to tell)."""
    return trends.noise_scale(worse)


_MEMORISED = 0.01  # a training loss held below this is memorised, not unmeasured


# A fall of the training loss smaller than this share of it is no training going on.
_BARELY = 0.01


def _train_fell(evals: Sequence[tuple[float, float | None]], since: int,
                moving: bool = False) -> str | None:
    """How the training loss went over the same stretch, when it did not share the
    rise: it fell, or held (a training loss memorised at 0.00000), or the log prints
    none to compare with (an evaluation's loss up 8× is a finding on its own). None when
    it rose too: then the trouble is the run's, not the evaluation's."""
    first, last = evals[since][1], evals[-1][1]
    if first is None or last is None:
        if any(train is not None for _, train in evals):
            return None  # known at times only: too little to tell
        return "with no training loss in the log to compare with"
    if last > first:
        return None
    if moving and last != first and abs(last) >= _MEMORISED \
            and (first - last) < _BARELY * abs(first):
        # (`moving`: asked of a steady climb or a slide from a peak, over-fitting's
        # shapes) A training loss that barely moved (0.1431 → 0.1419 over six epochs of
        # a Keras run whose learning rate had decayed to 1e-10): the weights hardly
        # change, so a small climb of the evaluation is no over-fitting of them.
        return None
    if last == first:
        if abs(last) >= _MEMORISED:
            # The very same figure at each evaluation, far from 0: no training record came
            # between them (a log that prints its evaluations after all its training, as
            # TorchRec's example does), so nothing says how training went meanwhile.
            return None
        return f"while train loss held at {last:.4g}"
    return f"while train loss fell ({first:.4g} → {last:.4g})"


def _steady_rise(evals: Sequence[tuple[float, float | None]], worse: list[float],
                 direction: int, rules: RuleSettings) -> str | None:
    need = rules.eval_degradation_evals
    if len(evals) < need or need < 2:
        return None
    tail = worse[-need:]
    if not all(b > a for a, b in pairwise(tail)):
        return None
    # The noise of the evaluations before this stretch: a steady climb is not noise. A
    # climb within it still counts when it ends far above the best evaluation (the
    # final weights then are not the best ones).
    sigma = _noise(worse[:-need + 1]) if len(worse) > need + 3 else 0.0
    start = tail[0]
    if sigma > 0 and len(worse) > need \
            and min(worse[-need - 1], tail[1]) - start > _NOISE_K * sigma:
        # The stretch starts at one lucky evaluation, better than those on both sides of
        # it beyond the noise (a dev BLEU of 26.8, 30.0, 26.4, 25.7 on a plateau near
        # 27): the fall is measured from the level it stood out of, not from the luck.
        start = statistics.median(worse[-need - 1:-need + 2])
    change, reference = tail[-1] - start, evals[-need][0]
    best = _best_level(worse)
    # Far above the best, and beyond the noise too: on a metric that wanders by half its
    # level from one evaluation to the next, one high last point is not a trend.
    far = trends.beyond_noise(worse[-1] - best, best, sigma, _NOISE_K, rules.eval_far_from_best)
    noisy = trends.beyond_noise(change, reference, sigma, _NOISE_K, rules.eval_min_worsening)
    # A longer climb, every evaluation worse than the one before, is no noise however
    # small each step (a tiny model's validation loss 6.204 → 6.212 → 6.221 → 6.264 →
    # 6.291 → 6.334 while its train loss falls 3.3 → 0.99: noise climbs so five times
    # running once in 720).
    rises, climbing = _rises_at_end(worse), False
    if not noisy and rises >= _LONG_CLIMB:
        need = rises + 1
        change, reference = worse[-1] - worse[-need], evals[-need][0]
        climbing = change > abs(reference) * rules.eval_min_worsening
    if not (noisy or climbing or (far and change > abs(reference) * rules.eval_min_worsening)):
        return None
    train = _train_fell(evals, -need, moving=True)
    if train is None:
        return None
    values = [v for v, _ in evals[-need:]]
    if start != tail[0] and not climbing:
        # (from the level the lucky evaluation stood out of, as judged)
        values[0] = -direction * start
    how = (f", beyond its noise σ≈{sigma:.2g}" if noisy and sigma else
           ", each worse than the one before" if noisy or climbing else
           f", {100 * (worse[-1] - best) / abs(best):.0f} % worse than its best level "
           f"{-direction * best:.4g}")
    return (f"got worse over {need} evaluations in a row ({values[0]:.4g} → {values[-1]:.4g}"
            f"{how}) {train}")


def _rises_at_end(worse: Sequence[float]) -> int:
    """How many evaluations in a row, up to the last, were each worse than the one
    before."""
    rises = 0
    for before, after in zip(reversed(worse[:-1]), reversed(worse[1:]), strict=True):
        if not after > before:
            break
        rises += 1
    return rises


def _best_level(worse: Sequence[float]) -> float:
    """The best median of three evaluations in a row (the best single one is as low as
    the noise once went; all of them when there are fewer than three)."""
    if len(worse) < 3:
        return min(worse)
    return min(statistics.median(worse[i:i + 3]) for i in range(len(worse) - 2))


def _above_best_level(evals: Sequence[tuple[float, float | None]], worse: list[float],
                      rules: RuleSettings) -> str | None:
    """A level of the last few evaluations well above the best level seen: a rise with
    ups and downs on the way (an over-fitting run's validation loss wanders as it climbs)."""
    if len(worse) < _LEVEL_EVALS:
        return None
    levels = [statistics.median(worse[i:i + _LEVEL]) for i in range(len(worse) - _LEVEL + 1)]
    best_at = min(range(len(levels)), key=levels.__getitem__)
    now = levels[-1]
    if best_at >= len(levels) - _LEVEL:
        return None  # the best is recent: nothing has had time to get worse
    sigma = _noise(worse)
    if not trends.beyond_noise(now - levels[best_at], levels[best_at], sigma * _LEVEL_NOISE,
                               _LEVEL_K, 3 * rules.eval_min_worsening):
        return None
    train = _train_fell(evals, best_at + _LEVEL - 1)
    if train is None:
        return None
    best_value = statistics.median(v for v, _ in evals[best_at:best_at + _LEVEL])
    now_value = statistics.median(v for v, _ in evals[-_LEVEL:])
    return (f"got worse than its best level ({best_value:.4g} → {now_value:.4g}, medians of "
            f"{_LEVEL} evaluations, beyond its noise σ≈{sigma:.2g}) {train}")


def _jump(evals: Sequence[tuple[float, float | None]], worse: list[float],
          rules: RuleSettings) -> str | None:
    """Few evaluations: the latest far worse than the best so far (by half of it, and
    beyond the noise when there is enough to tell), while the training loss improved:
    a word error rate from 39 % to 154 % after one epoch. Longer series are the level
    test's: one bad evaluation among many is noise until the level follows."""
    if len(worse) >= _LEVEL_EVALS:
        return None
    best_at = min(range(len(worse) - 1), key=worse.__getitem__)
    change, reference = worse[-1] - worse[best_at], evals[best_at][0]
    if reference == 0:
        return None  # a jump from exactly 0 has no relative size (a sweep's val_loss 0.0000)
    sigma = _noise(worse[:-1]) if len(worse) > 5 else 0.0
    if not trends.beyond_noise(change, reference, sigma, 2 * _NOISE_K, rules.eval_jump):
        return None
    train = _train_fell(evals, best_at)
    if train is None:
        return None
    return (f"jumped from {evals[best_at][0]:.4g} (its best) to {evals[-1][0]:.4g} "
            f"({100 * change / abs(reference):.0f} % worse) {train}")


# An evaluation loss this many times the training loss: the model fits its training data
# far better than data it has not seen. Healthy public runs stay under 6× (a crystal
# graph network's 5.5× at the end); memorised or leaking ones reach 10-60×.
GAP_RATIO = 10.0
# What a training loss can be set beside: a perplexity is the exponential of a loss
# (`valid ppl 199` beside `loss 5.13` is no gap at all).
_LOSS_NAME = lazy_re.compile(r"loss|nll", re.IGNORECASE)


def generalisation_gap(key: str, value: float, train_loss: float | None) -> str | None:
    """Why an evaluation loss is far above the training loss at the same time, or None.
    Only for a positive training loss (a ratio to a signed or rounded-to-0 one says
    nothing)."""
    if train_loss is None or train_loss <= 0 or not _LOSS_NAME.search(key):
        return None  # a training loss printed as 0 is rounded: no ratio to take
    if value < GAP_RATIO * train_loss:
        return None
    return (f"{key} {value:.4g} is {value / train_loss:.0f}× the training loss "
            f"{train_loss:.4g}: the model fits "
            f"its training data far better than unseen data (memorisation, or the targets "
            f"leaking into the inputs)")
