"""A run that stopped itself early and kept its last weights, far from its best evaluation.

Early stopping ends a run some evaluations after its best: the last weights are then
worse than the best ones by construction, and a run that keeps them (no best checkpoint,
no reload of the best) delivers the worse model. Keras's `EarlyStopping` does that
unless told to `restore_best_weights` (a tf.keras run whose `val_loss` reached 0.1037 at
epoch 17, then stopped at epoch 27 of 1000 at 0.139, 0.142, 0.147 and saved the model).

Judged only at the end, on the run's main evaluation: each of the last evaluations worse
than the best one by more than `eval_far_from_best` (a plateau a little above its best
is not this). The caller checks that the run ended well short of its plan and kept no
best checkpoint (a run that saves its best at each improvement delivers the best).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from itertools import pairwise

from babysit.config import RuleSettings
from babysit.rules import trends

_LAST = 3  # the evaluations at the end, each far from the best
_AT_LEAST = 8  # evaluations before the test speaks: a short run's best is no baseline


def last_far_from_best(values: Sequence[float], direction: int, rules: RuleSettings,
                       share: float | None = None) -> tuple[int, str] | None:
    """(index of the best, how far the last evaluations are from it) or None; `direction`
    +1 when higher is better, -1 when lower is. Far: by `share` of the best (default the
    rule's `eval_far_from_best`) and, with a `share` given, by `_BEYOND_NOISE` times the
    evaluations' own point-to-point noise too."""
    if direction == 0 or len(values) < _AT_LEAST:
        return None
    worse = [-direction * v for v in values]  # higher is worse
    best_at = min(range(len(worse)), key=worse.__getitem__)
    if best_at > len(worse) - 1 - _LAST:
        return None
    best = worse[best_at]
    margin = abs(best) * (rules.eval_far_from_best if share is None else share)
    if share is not None:
        noise = statistics.median(abs(b - a) for a, b in pairwise(values))
        margin = max(margin, _BEYOND_NOISE * noise)
    if margin == 0 or any(w - best <= margin for w in worse[-_LAST:]):
        return None
    last = values[-1]
    share = abs(last - values[best_at]) / abs(values[best_at])
    return best_at, (f"ended at {last:.4g}, {share:.0%} worse than its best "
                     f"{values[best_at]:.4g}, {len(values) - 1 - best_at} evaluations before")


_END_LEVEL = 5  # the last evaluations whose median is where a finished run ended
_END_NOISE = 2.0  # point-to-point noises that level must lie beyond (a median of five)


def last_beyond(values: Sequence[float], direction: int, best: float, share: float) -> bool:
    """Whether the level of the last `_END_LEVEL` evaluations (their median) is worse than
    `best` (the run's best, which may lie outside `values`, a recent window) by `share`
    of it and by `_END_NOISE` times the evaluations' point-to-point noise."""
    if direction == 0 or len(values) < 2 * _END_LEVEL:
        return False
    noise = statistics.median(abs(b - a) for a, b in pairwise(values))
    margin = max(abs(best) * share, _END_NOISE * noise)
    level = statistics.median(values[-_END_LEVEL:])
    return margin > 0 and direction * (best - level) > margin


def patience_spent(values: Sequence[float], direction: int) -> bool:
    """Whether a run's evaluations end the way early stopping ends them: the best some
    evaluations back and none since better. A trainer's end-of-training summary printed
    well short of the plan is then the run's own early stop (PaddleNLP's and the Hugging
    Face Trainer's `EarlyStoppingCallback` stop the loop and print the same summary as at
    the plan's end), not a run cut short."""
    if direction == 0 or len(values) < 3:
        return False
    worse = [-direction * v for v in values]  # higher is worse
    best_at = min(range(len(worse)), key=worse.__getitem__)
    return best_at < len(worse) - 1 and worse[-1] > worse[best_at]



_EARLY_SHARE = 0.25  # a best written within this share of the run's steps: its start
# How far from that early best the last evaluations must be: a tenth of it, and beyond
# three times the evaluations' own step-to-step noise (a level that drifted up by chance
# is not this). nanoGPT's `val loss` 0.7441 at step 1000, saved, then 0.9282 to 0.9406 at
# the last three of its twenty evaluations, is 25 % behind and twelve times its noise.
_BEHIND_SHARE = 0.1
_BEYOND_NOISE = 3.0


def best_long_behind(values: Sequence[float], direction: int, rules: RuleSettings,
                     best_step: int, last_step: int, unit: str = "step") -> str | None:
    """Why a kept best checkpoint does not make up for the evaluations after it: written
    within the first quarter of the run's steps (`best_step` of `last_step`), and every
    one of the last evaluations far from the best (`last_far_from_best`). The run
    delivers its best, but spent three quarters or more of its compute getting worse
    (nanoGPT on a small character corpus, `always_save_checkpoint = False`: `val loss
    1.3429` at step 500 and saved, then higher at each of the eighteen evaluations after
    it, 3.6645 at step 5000): its plan (length, regularisation) was wrong and the kept
    model is an early one. None otherwise. A log that prints no step counts its
    evaluations instead (`unit`)."""
    if last_step <= 0 or best_step > _EARLY_SHARE * last_step:
        return None
    found = last_far_from_best(values, direction, rules, _BEHIND_SHARE)
    if found is None:
        return None
    return (f"it was written at {unit} {best_step} of {last_step}, and the evaluation "
            f"{found[1]}: most of the run was spent getting worse")


_LEVEL_BEFORE = 5  # evaluations before the last: the level it is set against
_NOISE_WINDOW = 20  # the recent evaluations the noise is read over
_FINAL_K = 6.0  # robust sigmas of that noise the last one must fall by (one point: strict)
_FINAL_DROP = 0.05  # and this share of the level


def final_evaluation_fell(values: Sequence[float], direction: int) -> str | None:
    """Why the last evaluation of a run that is over says its last weights broke: worse
    than the median of the five before it by `_FINAL_K` sigmas of the evaluations'
    point-to-point noise and by `_FINAL_DROP` of that level (an anomaly detector's
    detection AUC steady at 0.82 ± 0.005 for 60 evaluations, then 0.727 after the last
    epoch). While the run goes on one bad evaluation is noise until the level follows;
    at its end nothing follows, and the last weights are what it delivers. None
    otherwise; `direction` +1 when higher is better, -1 when lower is."""
    if direction == 0 or len(values) < _AT_LEAST:
        return None
    worse = [-direction * v for v in values]  # higher is worse
    level = statistics.median(worse[-1 - _LEVEL_BEFORE:-1])
    sigma = trends.noise_scale(worse[:-1][-_NOISE_WINDOW:])
    if sigma == 0 or not trends.beyond_noise(worse[-1] - level, level, sigma, _FINAL_K,
                                             _FINAL_DROP):
        return None
    before = -direction * level
    return (f"fell at the last evaluation to {values[-1]:.4g} from a level of {before:.4g} "
            f"(the median of the {_LEVEL_BEFORE} before it; their noise σ≈{sigma:.2g}): the "
            f"last weights, what the run delivers, are not those it evaluated before")
