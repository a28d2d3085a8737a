"""Not learning, judged on what the run prints whatever its length (issue 24, item 2):

- A training loss that sits at a uniform guess's value, ln(K) for K classes (or for the
  model's vocabulary when the run says it), flat to within a thousandth over ten points
  in a row: the model outputs the same distribution for everything (fastText with a
  custom loss: `loss: 1.385664` … `loss: 1.385707` over fifteen updates, ln 4 = 1.3863).
  Ten points are enough where the flat-loss test needs twenty, because the level itself
  is the evidence: no healthy model stays at chance while it trains.
- A training loss that began at a uniform guess's value (its first point within 3 % of
  ln K, as a K-class model's loss does at initialisation) and, twenty points or more
  later, has its level (a median of five) within 7 % below it or above it: the model
  still guesses, or guesses again (a NumPy MNIST CNN's `train loss: 2.3548` in epoch 1,
  2.77 by epoch 6, 1.77 at epoch 12, 2.2268 at epoch 30 of 30; ln 10 = 2.3026). A
  healthy classifier leaves its initial ln K within its first epochs for good. Resolved
  once the level falls below that band again. A loss whose level once fell far below ln
  K (30 %) learned, and then lost it: that is divergence's story (a Keras CIFAR-10 run
  from 1.62 to 0.98 and back to 1.94), and its first point, an epoch's mean, may sit
  at some ln K by chance.
- Evaluations from the run's start that never beat the first one, while the training
  loss never falls below where it stood at that first evaluation: nothing has been
  learned since (a Keras run whose `val_loss` reads 0.0069 at epoch 1 and 0.0070 at each
  of the eight after it, its training loss 0.0078 → 0.0079). Over-fitting has a falling
  training loss, so it is not taken for this; a run whose only evaluations are a few is
  left alone (six at least).

- A policy's step size, the KL divergence between the policy before and after an update
  (TRPO's and PPO's `kl`, `approx_kl`), below 1e-7 on every one of five updates or more:
  the update changes nothing (a step rejected by the line search every time, a learning
  rate or a trust region of ~0). Exactly 0 is left out: an on-policy trainer with one
  update per batch logs `ppo_kl: 0.0` by construction (verl).

All are notices while the run goes on (the catalogue's medium) and, like every
not-learning finding, high on a run that finished so.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import deque
from collections.abc import Sequence
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules import loss_parts, objective_names
from babysit.rules.eval_names import evaluation_direction
from babysit.rules.last_digit import significant_digits
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_CHANCE_POINTS = 10  # points in a row at chance
# Class counts whose ln is told apart from its neighbours' by the tolerance below (up to
# 20 classes), and the two datasets' counts a model is most often trained on (CIFAR-100,
# ImageNet). Larger counts lie so close together that any loss is near one of them.
_CLASSES = (*range(2, 21), 100, 1000)
_LOG_CLASSES = tuple((k, math.log(k)) for k in _CLASSES)  # judged at every record
_NEAR_CHANCE = 0.002  # the level within this share of ln(K)
_FLAT_CHANCE = 0.001  # and every point within this share of the level
_LEFT_CHANCE = 0.01  # a loss this share below chance has left it

# A loss read as a perplexity: at chance it is K itself, not ln K.
_PERPLEXITY = lazy_re.compile(r"ppl|perplexity", re.IGNORECASE)
# An error of a regression (`train_MAE`, `val_rmse`, `mse_loss`): no cross-entropy, so ln K
# is nothing to it (STD-MAE's traffic forecaster began at a train MAE of 1.6058, by chance
# within 3 % of ln 5).
_REGRESSION_ERROR = lazy_re.compile(r"(?:^|[_/])(?:mae|mse|rmse|mape|smape|l1|l2|huber|mad)"
                                    r"(?:$|[_/])", re.IGNORECASE)
# A policy update's KL divergence (old to new): not its coefficient, target or penalty
# weight, not a KL loss term (a VAE's, a KL to a reference model's penalty).
_KL = lazy_re.compile(r"(^|[/_ .-])((mean|avg|average|approx)_?)?kl"
                      r"([/_ .-](approx|div|divergence|mean|old_new))?$", re.IGNORECASE)
_NOT_KL = lazy_re.compile(r"coef|beta|target|penalt|loss|weight|cov|ratio|ctl|max|min|ref",
                          re.IGNORECASE)
_NO_STEP = 1e-7  # a KL per update at most this: the policy did not move
_NO_STEP_POINTS = 5

_FIRST_EVALS = 6  # evaluations (the first included) before "never beat the first" speaks
_PLACED_SHARE = 0.1  # the first evaluation within this share of the planned steps
_STARTED_AT_CHANCE = 0.03  # the first loss within this share of ln K
# Binary, three to five classes, MNIST's and CIFAR-10's ten, CIFAR-100, ImageNet.
_COMMON_CLASSES = (2, 3, 4, 5, 10, 100, 1000)
_LOG_COMMON = tuple((k, math.log(k)) for k in _COMMON_CLASSES)
_NEVER_LEFT = 0.07  # and its level never this share below ln K ...
_NEVER_LEFT_POINTS = 20  # ... over this many points
_NEVER_BELOW = 0.005  # a loss never this share below ln K (a less common K: all of the run)
_LEVEL_POINTS = 5  # the level: the median of this many points
_LEARNED_ONCE = 0.3  # a level this share below ln K at any time: it learned once
_FIRST_STEPS = 10  # the first point at or before this step: the run's initial loss
_FIRST_SHARE = 0.05  # ... or within this share of the planned steps
_STILL_FALLING = 0.005  # a level this share below the five points' before it: falling


def loss_at_chance(values: Sequence[float], vocab_size: int | None = None) -> str | None:
    """Why a training loss's recent values say the model guesses uniformly: every one of
    them within `_FLAT_CHANCE` of their median, which is within `_NEAR_CHANCE` of ln(K)
    for a class count K (or the vocabulary). None otherwise, or with fewer than ten."""
    if len(values) < _CHANCE_POINTS:
        return None
    top, bottom = max(values), min(values)
    if top <= 0 or top - bottom > _FLAT_CHANCE * top:
        return None  # (the median is at most the top: asked first, it costs less)
    level = statistics.median(values)
    if level <= 0 or top - bottom > _FLAT_CHANCE * level:
        return None
    counts = (*_LOG_CLASSES, (vocab_size, math.log(vocab_size))) \
        if vocab_size and vocab_size > 1 else _LOG_CLASSES
    near = [k for k, log_k in counts if abs(level - log_k) <= _NEAR_CHANCE * log_k]
    if not near:
        return None
    if max(significant_digits(v) for v in values) < 4:
        # Printed too coarsely (`loss: 2.30`) to tell ln 10 from a loss that converged
        # near it. (Asked last: the digits of ten values cost the most.)
        return None
    count = near[0]
    what = "the vocabulary" if count == vocab_size else f"{count} classes"
    return (f"not learning: the loss has sat at {level:.6g} on {len(values)} logged points "
            f"in a row, ln({count}) = {math.log(count):.4g}, what a uniform guess over "
            f"{what} scores: the model outputs the same distribution for every input")


def started_at_chance(first: float) -> int | None:
    """The class count K whose ln the first loss of a run sits at (within 3 %), if any,
    among the counts tasks most often have (`_COMMON_CLASSES`): between 6 and 20 classes
    the ln values lie so close that any loss from 1.7 to 3 is near one of them, and a
    slow regression or fine-tune starting there would be taken for a guess."""
    return next((k for k, log_k in _LOG_COMMON
                 if abs(first - log_k) <= _STARTED_AT_CHANCE * log_k), None)


def settled_on_chance(first: float, level: float, lowest: float) -> int | None:
    """The class count K, any of 2 to 20 (or 100, 1000), whose ln a loss began near (within
    3 %), never went below (by half a percent) and has settled on (its level within
    `_NEAR_CHANCE`): a classifier that learned the uniform guess and nothing more (PYSKL's
    PoseC3D on six gestures, `loss: 1.8159` at epoch 1, up to 1.87 and down to 1.7919 at
    epoch 24 of 24, ln 6 = 1.79176, its accuracy at a sixth). Any loss begins near some
    ln K; one that never beats it, and ends on it to a fifth of a percent, is no chance."""
    for count, chance in _LOG_CLASSES:
        if abs(first - chance) <= _STARTED_AT_CHANCE * chance \
                and lowest >= chance * (1 - _NEVER_BELOW) \
                and abs(level - chance) <= _NEAR_CHANCE * chance:
            return int(count)
    return None


def never_left_chance(first: float, level: float, points: int,
                      lowest: float | None = None) -> str | None:
    """Why a loss that began at ln K is at it still: its level (a median of five points)
    within `_NEVER_LEFT` below ln K, or above it by less than three times that (not a loss
    summed over a batch, far above), `_NEVER_LEFT_POINTS` points or more after its
    start; for a less common K, settled on it (`settled_on_chance`, given the `lowest`
    point so far). None otherwise."""
    if points < _NEVER_LEFT_POINTS:
        return None
    count = started_at_chance(first)
    if count is None and lowest is not None:
        count = settled_on_chance(first, level, lowest)
    if count is None:
        return None
    chance = math.log(count)
    if not chance * (1 - _NEVER_LEFT) <= level <= chance * (1 + 3 * _NEVER_LEFT):
        return None
    return (f"not learning: the loss began at {first:.4g}, ln({count}) = {chance:.4g} (what "
            f"a uniform guess over {count} classes scores, as a classifier does at its "
            f"start), and {points} logged points later its level is {level:.4g}, within "
            f"{100 * _NEVER_LEFT:.0f} % of it: the model still guesses")


def never_beat_first(evals: Sequence[tuple[float, float | None]], direction: int) -> str | None:
    """Why evaluations (value, training loss at the time) say nothing was learned after
    the first: six at least, none better than the first, and a training loss known at
    each, never below its value at the first. None otherwise."""
    if direction == 0 or len(evals) < _FIRST_EVALS:
        return None
    first, first_train = evals[0]
    trains = [t for _, t in evals]
    if first_train is None or any(t is None for t in trains):
        return None
    if any((v - first) * direction > 0 for v, _ in evals[1:]):
        return None
    if any(t is not None and t < first_train for t in trains[1:]):
        return None
    return (f"not learning: none of the {len(evals) - 1} evaluations since the first beat it "
            f"({first:.4g}), and the training loss has not fallen below where it stood then "
            f"({first_train:.4g} → {trains[-1]:.4g}): nothing has been learned since")



class NeverLearnedRule:
    """A loss at chance level; evaluations that never beat the first (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._losses: deque[float] = deque(maxlen=_CHANCE_POINTS)
        self._level_window: deque[float] = deque(maxlen=_LEVEL_POINTS)
        self._levels_before: deque[float] = deque(maxlen=_LEVEL_POINTS)  # the five before
        self._evals: dict[str, list[tuple[float, float | None]]] = {}
        self._eval_at: dict[str, int | None] = {}
        self._first_step: int | None = None
        self._placed: bool | None = None  # the first evaluation is at the run's start
        self._raised: set[str] = set()

    def observe(self, point: Observation) -> Sequence[Signal]:
        if self._first_step is None and point.step is not None and point.loss is not None \
                and not any(evaluation_direction(k) for k in point.metrics):
            # The first training step: a loss with no evaluation beside it (a config
            # dump's `lr` is no step trained).
            self._first_step = point.step
        out = self._chance(point)
        out.extend(self._evaluations(point))
        if point.advanced:
            out.extend(self._no_step(point))
        return out

    def _no_step(self, point: Observation) -> list[Signal]:
        """A policy's KL per update below `_NO_STEP` (not 0) on every logged update."""
        if self._kl_points < 0:
            return []  # it moved once: judged for good
        key = self._kl_key or next((k for k in point.metrics
                                    if _KL.search(k) and not _NOT_KL.search(k)), None)
        value = point.metrics.get(key) if key is not None else None
        if value is None or not math.isfinite(value):
            return []
        self._kl_key = key
        if value == 0 or abs(value) > _NO_STEP:
            self._kl_points = -1
            if "no step" in self._raised:
                self._raised.discard("no step")
                return [Resolve(AnomalyType.NOT_LEARNING,
                                f"the policy moves: {key} {value:.3g}", key="no step")]
            return []
        self._kl_points += 1
        if self._kl_points < _NO_STEP_POINTS or "no step" in self._raised:
            return []
        self._raised.add("no step")
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: {key} (the policy's change per update) has been below "
                      f"{_NO_STEP:g} on every one of the {self._kl_points} logged updates "
                      f"({value:.3g} at the latest): the updates do not move the policy (a "
                      f"step the line search rejects every time, a trust region or learning "
                      f"rate of ~0)", key="no step")]

    _kl_key: str | None = None
    _kl_points = 0  # updates with a tiny KL, all of them so far (-1: it moved)

    def _early(self, point: Observation) -> bool:
        """Within the first share of a run whose length is known: too soon to say."""
        target = point.target_steps
        return target is not None and point.step is not None and \
            point.step < self.rules.not_learning_share * target

    def _objective(self, point: Observation) -> float | None:
        """The training loss, or the objective under a name of its own; a perplexity
        (read as the loss or found as the objective) taken back to its cross-entropy,
        so that chance is ln K for either."""
        value = point.loss
        key = None
        if value is None:
            key = objective_names.objective_key(tuple(point.metrics))
            value = point.metrics.get(key) if key is not None else None
        if value is None or not math.isfinite(value):
            return None
        if key is None:  # the loss's own key is not said: a perplexity's value tells it
            key = next((k for k, v in point.metrics.items() if v == value), None)
        if key is not None and _REGRESSION_ERROR.search(key):
            return None  # (a regression's error: no guess over classes)
        if key is not None and _PERPLEXITY.search(key):
            return math.log(value) if value > 0 else None
        return value

    def _chance(self, point: Observation) -> list[Signal]:
        value = self._objective(point)
        if value is None or not math.isfinite(value) or not point.advanced:
            return []
        if loss_parts.sums_its_terms(point.metrics, value):
            return []  # a total of several objectives: ln K says nothing of it
        self._losses.append(value)
        out = self._never_left(value, point)
        if "chance" in self._raised:
            chance = self._chance_value
            if value < chance * (1 - _LEFT_CHANCE):
                self._raised.discard("chance")
                return [*out, Resolve(AnomalyType.NOT_LEARNING,
                                      f"the loss left chance level ({value:.4g})",
                                      key="chance")]
            return out
        if self._early(point):
            return out
        found = loss_at_chance(list(self._losses), point.vocab_size)
        if found is None:
            return out
        self._raised.add("chance")
        self._chance_value = statistics.median(self._losses)
        return [*out, Raise(AnomalyType.NOT_LEARNING, found, key="chance")]

    _chance_value = 0.0

    def _never_left(self, value: float, point: Observation) -> list[Signal]:
        """A loss that began at ln K and is there still (see `never_left_chance`)."""
        if self._first_loss is None:
            # (from the run's very start, its first logged steps or its first epoch: an
            # excerpt from mid-run, or a first point a hundred steps in, has no initial loss)
            # (or within the first twentieth of a planned run: PYSKL's first print, at
            # iteration 20 of 720, the mean of the first epoch's twenty)
            at_start = point.step is not None and (point.step <= _FIRST_STEPS or (
                point.target_steps is not None and point.step <= _FIRST_SHARE * point.target_steps))
            near = [chance for _, chance in _LOG_CLASSES
                    if abs(value - chance) <= _STARTED_AT_CHANCE * chance]
            self._first_loss = value if at_start and near else math.nan
            # (the highest ln K it began near: a loss below it has left every one)
            self._near_floor = max(near, default=math.inf) * (1 - _NEVER_BELOW)
        if math.isnan(self._first_loss):
            return []
        self._lowest = min(self._lowest, value)
        if len(self._level_window) == _LEVEL_POINTS:
            self._levels_before.append(self._level_window[0])
        self._level_window.append(value)
        self._points += 1
        if len(self._level_window) < _LEVEL_POINTS:
            return []
        level = statistics.median(self._level_window)
        # still falling (its level half a percent below the five points before it): a slow
        # learner on its way down, not a guess that stays
        before = statistics.median(self._levels_before) \
            if len(self._levels_before) == _LEVEL_POINTS else None
        falling = before is not None and level < before * (1 - _STILL_FALLING)
        count = started_at_chance(self._first_loss)
        tag = "began at chance"
        if count is None and self._lowest < self._near_floor:
            self._first_loss = math.nan  # below every uncommon ln K it began near: judged
            return []
        if count is not None and level < math.log(count) * (1 - _LEARNED_ONCE):
            self._first_loss = math.nan  # it learned: judged for good
            if tag in self._raised:
                self._raised.discard(tag)
                return [Resolve(AnomalyType.NOT_LEARNING, f"the loss fell to {level:.4g}",
                                key=tag)]
            return []
        if falling and count is None \
                and settled_on_chance(self._first_loss, level, self._lowest) is not None:
            falling = False  # (falling onto ln K from above, never past it: settling there)
        found = None if self._early(point) or falling else \
            never_left_chance(self._first_loss, level, self._points, self._lowest)
        if found is None and tag in self._raised:
            self._raised.discard(tag)
            return [Resolve(AnomalyType.NOT_LEARNING, f"the loss left chance level ({level:.4g})",
                            key=tag)]
        if found is None or tag in self._raised:
            return []
        self._raised.add(tag)
        # At the end, a model that scores what a guess does is no model: nothing of the
        # run can be used.
        return [Raise(AnomalyType.NOT_LEARNING, found, key=tag,
                      severity_at_end=Severity.BLOCKER)]

    _first_loss: float | None = None  # NaN: the first loss was not at a chance level
    _lowest = math.inf  # the lowest loss since the first
    _near_floor = math.inf  # below this, the loss left every ln K it began near
    _points = 0

    def _evaluations(self, point: Observation) -> list[Signal]:
        out: list[Signal] = []
        train = point.loss if point.loss is not None else point.train_loss
        for key, value in point.metrics.items():
            direction = evaluation_direction(key)
            if not direction or not math.isfinite(value):
                continue
            series = self._evals.setdefault(key, [])
            if series and point.step == self._eval_at.get(key):
                continue  # the same evaluation printed again
            if series and point.step is not None and \
                    point.step < (self._eval_at.get(key) or 0):
                continue  # an earlier step again: another run's or another worker's
            if not series and self._placed is None:
                self._placed = self._at_start(point)
            if not self._placed or len(series) >= 4 * _FIRST_EVALS:
                continue
            self._eval_at[key] = point.step
            series.append((value, train if train is not None and math.isfinite(train)
                           else None))
            out.extend(self._judge(key, series, direction))
        return out

    def _at_start(self, point: Observation) -> bool:
        """The first evaluation came at the run's start, after training steps of its
        own: the log begins at a step the run's start allows, or the evaluation is
        within the first tenth of a planned length (Keras's first epoch of fifteen).
        Evaluations with no training loss logged before them are not a run's course
        (eight workers' final `Test Accuracy: 89.86  Loss: 0.3443`, one a line, after
        the arguments' dump)."""
        first = self._first_step
        if first is None or point.step is None or point.step <= first:
            return False
        if first <= self.rules.divergence_start_steps:
            return True
        target = point.target_steps
        return target is not None and point.step <= _PLACED_SHARE * target

    def _judge(self, key: str, series: list[tuple[float, float | None]],
               direction: int) -> list[Signal]:
        tag = "never better"
        if tag in self._raised:
            value, _ = series[-1]
            if (value - series[0][0]) * direction > 0 and self._raised_for == key:
                self._raised.discard(tag)
                return [Resolve(AnomalyType.NOT_LEARNING,
                                f"{key} beat its first evaluation ({value:.4g})", key=tag)]
            return []
        found = never_beat_first(series, direction)
        if found is None:
            return []
        self._raised.add(tag)
        self._raised_for = key
        return [Raise(AnomalyType.NOT_LEARNING, f"{key}: {found}", key=tag)]

    _raised_for = ""
