"""Scores that say a model never learned, whatever its loss shows (issue 24, item 2).

The loss rules (learning_rules, never_learned) judge the training loss; many runs print
no loss they can read (`Train=3.36 Val=3.31 MAE=2.18`, a count of right answers per
epoch) or one that falls while the model learns nothing that generalises. What the model
scores says it too, in three shapes:

- An AUC (AUROC, ROC-AUC) at 0.5, what a random ranking scores, on every evaluation:
  within 0.1 of it over eight, or within 0.01 over five (a model whose scores are one
  constant ranks nothing), while no other AUC of the run has left it. Chance is 0.5
  whatever the task, so no placing is needed.
- An accuracy identical on every evaluation from the run's first, at most half of the
  scale, or at any level short of perfect when printed to the millionth: the model's
  predictions never change (Nielsen's MNIST loop at `969 / 10000` on each of 30 epochs,
  one digit's share). A perfect or high score printed coarsely that holds may be a
  converged fine-tune, not this.
- An error (MAE, RMSE, a validation loss) that never moved beyond 1 % of its first
  value over eight evaluations from the run's start (a VAE's `MAE=2.18788` …
  `MAE=2.19778` over ten epochs, early-stopped and "complete"), or within 0.1 % over
  four (a GCN regressor's `Val Loss: 0.9489` on each epoch), printed finely enough for
  the band to show a move: nothing the model fits carries over to what it is scored on.

A score held to every printed digit needs fewer evaluations beside a loss that moved: an
accuracy or an error printed to three digits or more, identical on each of four or more
from the first, while the training loss fell by 30 % or more over them, a score of the
training's own (an evaluation's is restated until the next one) (Wapiti's CRF
under L-BFGS: `obj=53109.96 … err= 3.71%/25.41%`, then `obj=10402.72 … err=
3.71%/25.41%` four iterations on, its tagger finding no entity): the optimiser moved the
weights and no prediction changed.

An accuracy frozen long enough needs no start: twenty evaluations in a row at the very
same value, from any point of the run, at a level where a frozen accuracy is one class
for everything: at most half of the scale, printed to the millionth, or beside a loss
that sat flat at ln K as long (a constant guess's cross-entropy). A binary GNN's
`Eval_acc:0.5298` on each of 40 epochs, 153 to 259, its training loss 0.681 throughout
(ln 2 = 0.693): the larger class's share. A run there is burning its compute on
predictions that do not change: a blocker at once. So ten in a row at one value printed
to three digits or more, while the same evaluation's own loss fell by 15 % or more over
them (a Keras 1 classifier's `val_acc: 0.7188` on each of epochs 5 to 15 as its
`val_loss` went 0.76 → 0.61: the larger class's share of 2084 samples): the model grows
surer of the very same predictions, the shape of one class for everything, not of a
model that learns.

So four in a row, while the evaluation's own loss or perplexity moved by 2 % or more at
each, where the printed digits need a set of 500 items or more (`smallest_set`): on a set
that large, a model whose confidence moved that much changed some prediction, unless it
gives one output for everything (OpenNMT's `Validation accuracy: 93.2447` on four
evaluations, its perplexity 1.27, 1.18, 1.30, 1.19: every target `<unk>`).

Each is raised once per metric (the catalogue's medium while the run goes on) and
resolved when the score moves away. Still open when the run ends, one judged from the
run's first evaluation is a blocker (NO-GO): the score measures what the run delivers,
and it was at chance or unmoved on every evaluation. A loss that never fell stays high
at the end (the loss rules): a short or warming-up run, a loss that fell inside the
first epoch unseen, leave room for doubt a held-out score does not.
"""

from __future__ import annotations

import functools
import math
import re
import statistics
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.metric_names import is_eval_metric
from babysit.model import AnomalyType, Severity
from babysit.rules.chance_streak import loss_at_chance
from babysit.rules.eval_names import evaluation_direction
from babysit.rules.last_digit import significant_digits
from babysit.rules.signals import Observation, Raise, Resolve, Signal, at_run_start

_WORDS = re.compile(r"[/_\-. ']+")
# Not a score of the model's own predictions now: the training's (a fit's AUC may be
# chance too, but an error on the data it trains on is the loss's story), a best-so-far,
# a spread, a count, a rate.
_NOT_SCORE = frozenset({"train", "training", "best", "min", "max", "std", "var", "time",
                        "lr", "count", "num", "samples", "weight", "coef"})
# An AUC on the training data counts, unlike a training error: a model whose training
# AUC stays at chance ranks not even the examples it is fitted on (thgnn's final fit,
# `[Ep 020/20] loss=0.0976 train_auc=0.5093`, 0.47–0.58 on all 20 epochs while its loss
# fell fourfold), so nothing it learned separates the classes.
_NOT_AUC = _NOT_SCORE - {"train", "training"}
_AUC = frozenset({"auc", "auroc", "rocauc", "aucroc"})
# (an F-measure or an overlap too: a model that answers one class for everything scores
# one F1 at every evaluation, a relation classifier's `F1=0.0914` on each of twenty epochs,
# as it scores one accuracy)
_ACCURACY = frozenset({"acc", "accuracy", "accu", "ac", "top1", "f1", "fscore", "f1score",
                       "miou", "iou", "dice"})
_HELD_OUT_SCORES = frozenset({"f1", "fscore", "f1score", "miou", "dice"})
_ERRORS = frozenset({"mae", "rmse", "mse", "mape", "error", "err"})

_AUC_POINTS, _AUC_BAND = 8, 0.1  # eight evaluations within 0.1 of 0.5
_AUC_TIGHT_POINTS, _AUC_TIGHT_BAND = 5, 0.01  # or five within 0.01
_AUC_LEFT = 0.15  # a value this far from 0.5: it ranks
_FROZEN_POINTS = 6  # evaluations at the very same accuracy, from the first
_FROZEN_LONG_POINTS = 20  # evaluations in a row at the very same accuracy, from anywhere
# Or as many as these, while the evaluation's own loss fell by this share over them.
_FROZEN_SURER_POINTS = 10
_SURER = 0.85
_SURER_TAIL = 5  # the loss's latest values kept: its level
_SURER_DOWNS = 0.6  # the share of its moves that went down, at least
_CHANCE_CLASSES = range(2, 11)  # class counts whose ln K a constant guess's loss may sit at
_GUESS_FLAT = 0.02  # a loss sitting at ln K: every point within this share of the first
_HELD_POINTS = 4  # evaluations at one value from the first, beside a loss that moved
_LOSS_MOVED = 0.7  # the loss at most this share of its first meanwhile
_HELD_DIGITS = 1e-2  # a held value printed to a hundredth of itself or finer (3.71, 0.853)
# An evaluation's error identical on this many evaluations from the first, while the
# training loss took a new value at each of them: whatever the printed precision.
_EVAL_HELD_POINTS = 6
_EARLY_EPOCHS = 2


class _GuessLoss:
    """How many loss points in a row have sat at one ln K, flat (within `_GUESS_FLAT` of
    the first of them): a loss that passes through ln K on its way down is not a constant
    guess's, one that stays there is (0.6822, 0.6820, 0.6815 … over forty epochs)."""

    __slots__ = ("count", "first", "points")

    def __init__(self) -> None:
        self.count: int | None = None  # K of the present run
        self.first = 0.0
        self.points = 0

    def note(self, loss: float) -> None:
        if self.count is not None and loss_at_chance(loss, self.count) \
                and abs(loss - self.first) <= _GUESS_FLAT * self.first:
            self.points += 1
            return
        self.count = next((k for k in _CHANCE_CLASSES if loss_at_chance(loss, k)), None)
        self.first, self.points = loss, (1 if self.count is not None else 0)
# Evaluations of an error within a share of its first: eight within 1 %, or four within
# 0.1 % (a regressor collapsed to a constant: `Val Loss: 0.9489`, 0.9489, 0.9491, 0.9489).
_FLAT_BANDS = ((8, 0.01), (4, 0.001))
# An accuracy within this share of its first on this many evaluations from the first, at
# most half of the scale, beside a training loss within `_LOSS_STILL` of its first: the
# model never learned (a BiLSTM's `val_acc` at 14.90-14.94 % for fifty epochs, the largest
# class's share, its loss at 1.47 from the first batch to the last, sealed-155).
_ACC_BAND = (8, 0.01)
_LOSS_STILL = 0.02
_MOVED_SHARE = 0.02  # an error this share below its first: it learned after all
_KEPT = 64  # values kept per metric: the judgements need the first few dozen


@functools.lru_cache(maxsize=1024)
def score_kind(key: str) -> str | None:
    """`auc`, `accuracy` or `error` for a metric this module judges, None otherwise. An
    AUC and an error named without a split (`auroc`, `MAE`) count: a bare AUC is measured
    against labels, and a bare error beside a loss is what the run reports of its fit."""
    words = [w for w in _WORDS.split(key.lower()) if w]
    if not words:
        return None
    if (_AUC.intersection(words) or "roc_auc" in key.lower()) \
            and not _NOT_AUC.intersection(words):
        return "auc"
    if _NOT_SCORE.intersection(words):
        return None
    direction = evaluation_direction(key)
    if direction > 0 and _ACCURACY.intersection(words):
        return "accuracy"
    if len(words) == 1 and words[0] in _HELD_OUT_SCORES:
        # (named bare, as an epoch's line gives it beside the loss, `Epoch 3: Loss=1.6437,
        # F1=0.0914`: an F-measure or an overlap is an evaluation's, unlike a bare
        # accuracy, which a loop counts on its training batches as often)
        return "accuracy"
    if direction < 0 or (words[-1] in _ERRORS and len(words) == 1):
        return "error"
    return None


def _on_training_data(key: str) -> bool:
    """Whether a metric is measured on the training data (`train_auc`, `training/auroc`).
    Its AUC at chance is judged even where another AUC of the log ranks: the multi-label
    excuse (one rare class at 0.5 beside others that climb) is a held-out report's, and a
    model that ranks not even what it is fitted on has learned nothing, whatever an
    earlier fit in the same log scored (thgnn's cross-validation folds, then its final
    fit at chance)."""
    return any(w in ("train", "training") for w in _WORDS.split(key.lower()))


def auc_at_chance(values: Sequence[float]) -> str | None:
    """Why AUC values say the ranking is random: eight within 0.1 of 0.5, or five within
    0.01 (on a 0–1 or a percent scale). None otherwise."""
    if len(values) < _AUC_TIGHT_POINTS:
        return None
    scale = 100.0 if max(values) > 1.0 else 1.0
    off = max(abs(v / scale - 0.5) for v in values)
    if not (off <= _AUC_TIGHT_BAND or (len(values) >= _AUC_POINTS and off <= _AUC_BAND)):
        return None
    return (f"has stayed within {off * scale:.2g} of {0.5 * scale:g} (what a random ranking "
            f"scores) on every one of {len(values)} evaluations ({min(values):.4g} to "
            f"{max(values):.4g}): the model ranks no better than chance")


def accuracy_frozen(values: Sequence[float]) -> str | None:
    """Why accuracies say the predictions never change: six or more from the first, all
    the same value, above 0 and at most half of the scale. None otherwise."""
    if len(values) < _FROZEN_POINTS or len(set(values)) != 1:
        return None
    value = values[0]
    if not _one_class_level(value):
        return None
    return (f"has been exactly {value:.4g} on every one of {len(values)} evaluations from "
            f"the first: the model's predictions never change (one class for everything, "
            f"scoring that class's share of the set)")


def accuracy_frozen_long(value: float, times: int, guess_loss: bool) -> str | None:
    """Why an accuracy at `value` on `times` evaluations in a row, from any point of the
    run, says the predictions no longer change: twenty or more, at a one-class level, or
    at any level short of perfect with the loss at a constant guess's ln K
    (`guess_loss`). None otherwise."""
    scale = 100.0 if value > 1.0 else 1.0
    if times < _FROZEN_LONG_POINTS:
        return None
    if not (_one_class_level(value) or (guess_loss and 0 < value < scale)):
        return None
    beside = " with the loss at a constant guess's ln K" if guess_loss else ""
    return (f"has been exactly {value:.4g} on each of the last {times} evaluations{beside}: "
            f"the model's predictions do not change (one class for everything, scoring "
            f"that class's share of the set), and the run burns its compute there")


def accuracy_frozen_surer(value: float, times: int, began: float | None,
                          recent: Sequence[float], down_share: float) -> str | None:
    """Why an accuracy at `value` on `times` evaluations in a row, while the same
    evaluation's loss went from `began` to its `recent` values, moving down at
    `down_share` of its moves, says the predictions do not change: ten or more, printed
    to three digits or more, short of perfect, each of the loss's last three values 15 %
    or more below where it began, and most of its moves down (a trend, not a loss
    jittering about its level). None otherwise."""
    scale = 100.0 if value > 1.0 else 1.0
    if times < _FROZEN_SURER_POINTS or began is None or began <= 0 \
            or len(recent) < _SURER_TAIL or not 0 < value < scale \
            or _unit(value) > _HELD_DIGITS * abs(value) or down_share < _SURER_DOWNS \
            or max(recent[-3:]) > _SURER * began:
        return None
    level = statistics.median(recent[-3:])
    return (f"has been exactly {value:.4g} on each of the last {times} evaluations while "
            f"the same evaluation's loss fell from {began:.4g} to {level:.4g}: the model "
            f"grows surer of predictions that do not change (one class for everything, "
            f"scoring that class's share of the set)")


# An accuracy held while its evaluation's own loss (or perplexity) moved by this share or
# more at each evaluation, on this many in a row, where no set smaller than
# `_FINE_SET` gives its printed value: a set that large scores the same only if no
# prediction of it changed while the model's confidence in them did.
_FINE_POINTS = 4
_FINE_MOVE = 0.02
_FINE_SET = 500


def smallest_set(value: float) -> int:
    """The smallest number of items whose share of right answers prints as `value` (a
    percentage or a fraction, to its printed digits): 93.2447 % needs 903 (842 of them),
    71.88 % 32 (23). Up to `_FINE_SET`: beyond it, it is large enough."""
    scale = 100.0 if value > 1.0 else 1.0
    share = value / scale
    half = _unit(value) / scale / 2
    for size in range(1, _FINE_SET):
        if abs(round(share * size) / size - share) <= half:
            return size
    return _FINE_SET


def accuracy_frozen_fine(value: float, times: int, moves: int) -> str | None:
    """Why an accuracy at `value` on `times` evaluations in a row, its evaluation's own
    loss having moved by `_FINE_MOVE` or more at `moves` of them, says the predictions
    do not change: four or more, every one a move, short of perfect, on a set of
    `_FINE_SET` items or more by its printed digits (OpenNMT's `Validation accuracy:
    93.2447` on four evaluations as its perplexity went 1.27, 1.18, 1.30, 1.19: a
    vocabulary read wrong, every target `<unk>`). None otherwise."""
    scale = 100.0 if value > 1.0 else 1.0
    if times < _FINE_POINTS or moves < times - 1 or not 0 < value < scale \
            or smallest_set(value) < _FINE_SET:
        return None
    return (f"has been exactly {value:.6g} on each of the last {times} evaluations while the "
            f"same evaluation's loss moved at each: not one prediction of a set of "
            f"{_FINE_SET} or more changed while the model's confidence did (a constant "
            f"output, scoring that output's share of the set)")


class _LossTrend:
    """Where a loss began, its latest values and how many of its moves went down."""

    __slots__ = ("began", "downs", "moves", "recent", "wide")

    def __init__(self, began: float | None) -> None:
        self.began = began
        self.recent: list[float] = []
        self.downs = self.moves = 0
        self.wide = 0  # moves of `_FINE_MOVE` or more of the loss's value

    def add(self, loss: float | None) -> None:
        if loss is None:
            return
        before = self.recent[-1] if self.recent else self.began
        if before is not None:
            self.downs += loss < before
            self.moves += 1
            self.wide += abs(loss - before) >= _FINE_MOVE * abs(before)
        self.recent = [*self.recent[1 - _SURER_TAIL:], loss]

    @property
    def down_share(self) -> float:
        return self.downs / self.moves if self.moves else 0.0


def _own_loss(key: str, metrics: Mapping[str, float],
              earlier: Mapping[str, float] | None = None) -> float | None:
    """The loss of the evaluation an accuracy belongs to, printed beside it (`val_acc`:
    `val_loss`, `eval/accuracy`: `eval/loss`), if any; with `earlier` (the figures of
    the evaluation's lines read before), its perplexity too, and on a line of its own
    (OpenNMT's `Validation perplexity: 1.27` then `Validation accuracy: 93.24`)."""
    for word in ("accuracy", "acc"):
        if word in key:
            value = metrics.get(key.replace(word, "loss", 1))
            if earlier is not None:
                for name in (key.replace(word, other, 1) for other in _OWN_LOSSES):
                    value = value if value is not None else metrics.get(name, earlier.get(name))
            return value if value is not None and math.isfinite(value) else None
    return None


_OWN_LOSSES = ("loss", "perplexity", "ppl")


def _one_class_level(value: float) -> bool:
    """Whether an accuracy held exactly is one class for everything rather than a
    converged model: above 0 and at most half of the scale, or short of perfect and
    printed to the millionth (a segmentation net's `Eval Acc (total): 0.8812751913070679`
    on each of ten epochs: the background's share); printed coarsely, a high one may be a
    converged fine-tune's."""
    scale = 100.0 if value > 1.0 else 1.0
    fine = _unit(value) <= 1e-6 * scale
    return 0 < value <= 0.5 * scale or (fine and 0 < value < scale)


def _off_first(values: Sequence[float]) -> float:
    """How far the values strayed from the first, as a share of it (the first above 0)."""
    first = values[0]
    return max(abs(v - first) for v in values) / first


def error_flat(values: Sequence[float]) -> str | None:
    """Why an error's values say nothing was learned: from the run's start, eight or more
    every one within 1 % of the first, or four within 0.1 %. None otherwise."""
    first = values[0] if values else 0.0
    if first <= 0:
        return None
    off = _off_first(values)
    # A band narrower than two units of the last printed digit cannot show a move
    # (nanoGPT's `val loss 4.29` four times is a coarse print, not a pinned loss).
    unit = max(_unit(v) for v in values) / first
    share = next((s for n, s in _FLAT_BANDS
                  if len(values) >= n and off <= s and 2 * unit <= s), None)
    if share is None or _one_way(values):
        return None
    return (f"has stayed within {100 * share:g} % of its first value ({first:.4g}; "
            f"{min(values):.4g} to {max(values):.4g}) over {len(values)} evaluations from "
            f"the run's start: nothing the model fits carries over to what it is scored on")


@functools.lru_cache(maxsize=1024)
def _training_accuracy(key: str) -> bool:
    """Whether a metric is the training's own accuracy (`accuracy` and `acc` alone, as
    Keras names it, `train_acc`, `train/accuracy`), not an evaluation's or a best-so-far."""
    words = [w for w in _WORDS.split(key.lower()) if w]
    return bool(words) and words[-1] in _ACCURACY and set(words[:-1]) <= {"train", "training"}


def _one_way(values: Sequence[float]) -> bool:
    """Whether the values drift one way, move after move (a validation loss rising a
    little at every epoch, 0.4631 → 0.4708 over 30, as its training loss falls): the
    model's predictions do change with training, if by little; its fit is overfitting or
    creeping (the trend rules' story), not one that carries nothing over."""
    moves = [b - a for a, b in pairwise(values) if b != a]
    if len(moves) < _ONE_WAY_MOVES:
        return False
    ups = sum(move > 0 for move in moves)
    return max(ups, len(moves) - ups) >= _ONE_WAY_SHARE * len(moves)


# A drift: this share of the moves one way, over at least this many moves.
_ONE_WAY_SHARE = 0.8
_ONE_WAY_MOVES = 6


def _unit(value: float) -> float:
    """One unit of a value's last printed digit, as the shortest repr gives it (0.9489:
    0.0001, 4.29: 0.01, 2.736e+31: 1e+28)."""
    text = repr(abs(value)).lower()
    mantissa, _, exponent = text.partition("e")
    decimals = len(mantissa.partition(".")[2].rstrip("0")) if "." in mantissa else 0
    if mantissa.endswith(".0"):
        decimals = 0
    return 10.0 ** (int(exponent or 0) - decimals)


def _off_chance(values: Sequence[float], value: float) -> float:
    """How far an AUC value is from 0.5, on a 0–1 scale (the run's values say which)."""
    scale = 100.0 if max(values) > 1.0 else 1.0
    return abs(value / scale - 0.5)


_EXACT_DIGITS = 6  # an accuracy printed to the millionth
_JUDGES = {"auc": auc_at_chance, "accuracy": accuracy_frozen, "error": error_flat}


class FlatScoreRule:
    """Not learning, said by a score: an AUC at chance, an accuracy frozen from the first
    evaluation, an error that never moved (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._values: dict[str, list[float]] = {}
        # (whole epoch, value, training records read before it, step)
        self._last: dict[str, tuple[int | None, float, int, int | None]] = {}
        self._trained = 0  # training records read (a record with a training loss)
        self._placed: dict[str, bool] = {}  # the metric's first value came at the start
        # error: the training loss when each of its kept values was read
        self._loss_at: dict[str, list[float | None]] = {}
        # the metric's first value came within the run's first two epochs (a paste that
        # lost its first epoch's bar to the cut still shows the run's beginning)
        self._early: dict[str, bool] = {}
        self._raised: set[str] = set()
        self._banded: set[str] = set()  # raised by `_banded_beside_still_loss`
        self._streaks: dict[str, tuple[float, int]] = {}  # accuracy: (value, times in a row)
        # accuracy: how its evaluation's own loss (`val_acc`: `val_loss`) went over the
        # streak
        self._streak_loss: dict[str, _LossTrend] = {}
        self._last_own_loss: dict[str, float | None] = {}  # accuracy: that loss, last read
        # accuracy: how its evaluation's loss or perplexity, on its line or an earlier one,
        # went over the streak
        self._streak_any_loss: dict[str, _LossTrend] = {}
        # The evaluations' figures as last read (`validation_perplexity`): an accuracy's own
        # loss may come on a line of its own before it.
        self._evaluation_figures: dict[str, float] = {}
        self._guess = _GuessLoss()  # the loss's run at a constant guess's ln K
        self._first_loss: float | None = None  # the run's first finite training loss
        self._loss: float | None = None  # its latest
        # An AUC of the run left chance: the model ranks something. A multi-label
        # report's rare class may hover at 0.5 while the others climb (a chest X-ray
        # fine-tune's `auroc_nodule` 0.52–0.55 beside a cardiomegaly AUROC of 0.8).
        self._ranks = False
        # An AUC of the run outside chance's band: the model ranks better than a guess, so
        # it had learned by its first evaluation. An error flat from then on is a model
        # that converged in its first epoch (xLearn's FFM on click data: `Test log_loss`
        # 0.6142 → 0.6139 over five epochs beside a `Test AUC` of 0.633), not one that
        # never learned.
        self._beyond_chance = False
        # The epoch (or step) each training accuracy was last read at: one measurement
        # an epoch, however often a bar redraws it.
        self._train_seen: dict[str, float | int | None] = {}

    def observe(self, point: Observation) -> Sequence[Signal]:
        out: list[Signal] = []
        if point.loss is not None:
            self._trained += 1
            if math.isfinite(point.loss):
                self._guess.note(point.loss)
                self._loss = point.loss
                if self._first_loss is None:
                    self._first_loss = point.loss
        for key, value in point.metrics.items():
            kind = score_kind(key)
            if kind is None and math.isfinite(value) and _training_accuracy(key):
                # The training's own accuracy, held to every digit while its loss falls
                # (Keras' `loss: 1.1108 - accuracy: 0.5885` on 199 epochs in a row): the
                # predictions on the very data it fits never change (see `_frozen_streak`;
                # a new epoch's line is a new measurement).
                epoch = point.epoch if point.epoch is not None else point.step
                if self._train_seen.get(key) != epoch:
                    self._train_seen[key] = epoch
                    out.extend(self._frozen_streak(key, value, _own_loss(key, point.metrics),
                                                   surer_only=True))
                continue
            if kind is None or not math.isfinite(value):
                continue
            if kind == "error" and abs(value) > self.rules.loss_blowup:
                continue  # numbers that blew up (PaiNN's `val 2.7e+31`): divergence's story
            # The whole epoch: a bar's records carry its fraction (`epoch + n / N`).
            epoch = math.floor(point.epoch) if point.epoch is not None \
                and math.isfinite(point.epoch) else None
            last = self._last.get(key)
            own_loss = _own_loss(key, point.metrics) if kind == "accuracy" else None
            moved = own_loss is not None and own_loss != self._last_own_loss.get(key)
            self._last_own_loss[key] = own_loss
            if last is not None and last[1] == value and (epoch is None or epoch == last[0]) \
                    and not (point.loss is None and self._trained > last[2]) \
                    and (point.step is None or point.step == last[3] or is_eval_metric(key)) \
                    and not moved:
                # The same evaluation printed again: a bar then its summary, or the last
                # evaluation restated on every training line or bar redraw after it
                # (nanoGPT's `step=10 loss=3.2386 … val_loss=4.2905`). Only a new epoch's
                # record, an evaluation's own line (no training loss in it) after
                # training records, or a score of the training's own at a new step
                # (Wapiti's `[   3] obj=13922.99 … err= 3.71%`) says the same value was
                # measured again; so does the evaluation's own loss beside it, moved
                # (Keras' `val_loss: 0.7618 - val_acc: 0.7188`, then `val_loss: 0.6863 -
                # val_acc: 0.7188` on the next epoch's line).
                continue
            self._last[key] = (epoch, value, self._trained, point.step)
            if key not in self._placed:
                self._placed[key] = at_run_start(point, self.rules.divergence_start_steps)
                self._early[key] = self._placed[key] or (
                    point.epoch is not None and point.epoch <= _EARLY_EPOCHS)
            values = self._values.setdefault(key, [])
            if len(values) < _KEPT:
                values.append(value)
                if kind == "error":
                    self._loss_at.setdefault(key, []).append(self._loss)
            if kind == "auc" and self._left(kind, values, value) and not _on_training_data(key):
                # (a held-out AUC that left chance; the training data's AUC climbing while
                # the held-out one stays at 0.5 is the model fitting what does not carry
                # over — a chest X-ray DenseNet's `train_AUROC` 0.48 → 0.73 beside its
                # `val_AUROC` 0.49 to 0.54 over fifteen epochs — not a model that ranks)
                self._ranks = True
            if kind == "auc" and _off_chance(values, value) > _AUC_BAND \
                    and not self._beyond_chance:
                self._beyond_chance = True
                out.extend(self._converged(key, value))
            out.extend(self._judge(key, kind, values, value))
            if kind == "accuracy":
                out.extend(self._frozen_streak(key, value, own_loss, _own_loss(
                    key, point.metrics, self._evaluation_figures)))
        for key, value in point.metrics.items():
            if key in self._evaluation_figures or (
                    is_eval_metric(key) and len(self._evaluation_figures) < _KEPT):
                self._evaluation_figures[key] = value
        return out

    def _frozen_streak(self, key: str, value: float, loss: float | None,
                       any_loss: float | None = None,
                       surer_only: bool = False) -> list[Signal]:
        """An accuracy held to every printed digit over twenty evaluations in a row, from
        any point of the run, or ten while its own evaluation's `loss` fell (see the
        module): a blocker at once, resolved when it moves."""
        tag = f"frozen {key}"
        held, times = self._streaks.get(key, (value, 0))
        trend = self._streak_loss.get(key)
        if value != held or trend is None:
            self._streak_loss[key] = _LossTrend(loss)
            self._streak_any_loss[key] = _LossTrend(any_loss)
        if value != held:
            self._streaks[key] = (value, 1)
            if tag in self._raised:
                self._raised.discard(tag)
                return [Resolve(AnomalyType.NOT_LEARNING, f"{key} moved ({value:.4g})",
                                key=tag)]
            return []
        self._streaks[key] = (value, times + 1)
        trend = self._streak_loss[key]
        trend.add(loss)
        fine = self._streak_any_loss[key]
        fine.add(any_loss)
        if tag in self._raised:
            return []
        # (the training's own accuracy only beside its falling loss: held alone, it may be
        # an earlier launch's in a log of several, or a schedule's plateau)
        found = (None if surer_only else accuracy_frozen_long(
            value, times + 1, self._guess.points >= _FROZEN_LONG_POINTS)) \
            or accuracy_frozen_surer(value, times + 1, trend.began, trend.recent,
                                     trend.down_share) \
            or (None if surer_only else accuracy_frozen_fine(value, times + 1, fine.wide))
        if found is None:
            return []
        self._raised.add(tag)
        return [Raise(AnomalyType.NOT_LEARNING, f"not learning: {key} {found}", key=tag,
                      severity=Severity.BLOCKER)]

    def _converged(self, key: str, value: float) -> list[Signal]:
        """An AUC beyond chance came after an error was found flat (a boosting search's
        fold-averaged `Valid Loss, AUC: 0.533157 0.669853` after each fold's flat
        `valid's binary_logloss`): the model ranks, so it had learned by its first
        evaluation and the flat error is a converged one (see `_beyond_chance`)."""
        flat = sorted(t for t in self._raised if t.startswith("error "))
        self._raised.difference_update(flat)
        return [Resolve(AnomalyType.NOT_LEARNING, f"{key} {value:.4g} is beyond chance: "
                        f"the model ranks, it had converged by its first evaluation", key=tag)
                for tag in flat]

    def _judge(self, key: str, kind: str, values: list[float], value: float) -> list[Signal]:
        tag = f"{kind} {key}"
        if tag in self._raised:
            if tag in self._banded:
                left = abs(value - values[0]) > _ACC_BAND[1] * values[0]
            else:
                left = self._left(kind, values, value)
            if left:
                self._banded.discard(tag)
                self._raised.discard(tag)
                return [Resolve(AnomalyType.NOT_LEARNING, f"{key} moved ({value:.4g})",
                                key=tag)]
            return []
        held = kind == "error" and self._early[key] and self._eval_held(key, values)
        if kind != "auc" and not self._placed[key] and not held:
            return []  # an excerpt from mid-run: its first value is not the run's
        if kind == "auc" and self._ranks and not _on_training_data(key):
            return []
        if kind == "error" and self._beyond_chance:
            return []
        if kind == "error":
            crept = self._crept(key, values, value)
            if crept is not None:
                return crept
        # (past the values kept, the latest is judged with them: a first run of the same
        # value kept in full is no proof the value never changed after it)
        judged = values if values[-1] == value or len(values) < _KEPT else [*values, value]
        found = _JUDGES[kind](judged) or self._held_while_loss_fell(key, kind, judged)
        if found is None and kind == "accuracy":
            found = self._banded_beside_still_loss(judged)
            if found is not None:
                self._banded.add(tag)
        held = held and found is None
        if held:
            found = (f"has been exactly {value:.4g} on every one of {len(values)} "
                     f"evaluations from the first while the training loss took a new value "
                     f"at each: what is scored never changes (an output that does not "
                     f"depend on the input, such as embeddings collapsed to one point)")
        if found is None:
            return []
        self._raised.add(tag)
        # A score at chance or unmoved on every evaluation from the run's first, still so
        # when the run ends, measures the deliverable itself as useless: a blocker then
        # (NO-GO), where a flat training loss leaves room for doubt (high). An AUC first
        # seen mid-run did not cover the whole run.
        whole_run = self._placed[key]
        # An accuracy held to the millionth from the first evaluation (a BERT classifier's
        # `3.6057692021131516` on each of seven epochs, 15 of 416 right each time): no
        # model that learns lands on the very same count of right answers evaluation after
        # evaluation; it answers one class for everything, a blocker at once.
        exact = kind == "accuracy" and whole_run and len(set(values)) == 1 \
            and significant_digits(value) >= _EXACT_DIGITS
        return [Raise(AnomalyType.NOT_LEARNING, f"not learning: {key} {found}", key=tag,
                      severity=Severity.BLOCKER if exact or held else None,
                      severity_at_end=Severity.BLOCKER if whole_run else None)]

    def _crept(self, key: str, values: list[float], value: float) -> list[Signal] | None:
        """An error inside the flat band that drifted worse move after move from the run's
        first evaluation while the training loss fell (see `_one_way`): the model did not
        stop changing, it got worse on what it is scored on from the start, by little.
        Over-fitting from the first epoch (eval-degradation), not a model that carries
        nothing over; resolved once the error is back below its first value. None: not
        this shape (the flat test judges)."""
        tag = f"creep {key}"
        if tag in self._raised:
            if value >= values[0]:
                return []
            self._raised.discard(tag)
            return [Resolve(AnomalyType.EVAL_DEGRADATION,
                            f"{key} back below its first value ({value:.4g})", key=tag)]
        first = values[0]
        if first <= 0 or len(values) < _FLAT_BANDS[0][0] or values[-1] <= first \
                or not _one_way(values) or self._first_loss is None or self._loss is None \
                or not self._loss < self._first_loss:
            return None
        off = _off_first(values)
        if off > _FLAT_BANDS[0][1]:
            return None  # a rise beyond the band is the trend rules' to judge
        self._raised.add(tag)
        return [Raise(AnomalyType.EVAL_DEGRADATION, (
            f"{key} got worse at nearly every evaluation from the run's first ({first:.4g} → "
            f"{values[-1]:.4g}, by little) while train loss fell ({self._first_loss:.4g} → "
            f"{self._loss:.4g}): never better than after the first epoch"), key=tag)]

    def _eval_held(self, key: str, values: list[float]) -> bool:
        """Whether an evaluation's error has been the very same value on six evaluations
        or more from the run's first while the training loss read before each was a new
        one (a FaceNet triplet model's `val_loss: 0.2000`, the triplet margin, on every
        epoch as its loss went 0.1902 → 0.1775): the weights change and the evaluation's
        output does not, a model whose output ignores its input. However coarsely it is
        printed, a model that learns does not score the same at each of its first six
        evaluations; an error at 0 is a perfect fit's."""
        losses = self._loss_at.get(key, [])
        if not is_eval_metric(key) or len(values) < _EVAL_HELD_POINTS \
                or len(set(values)) != 1 or values[0] <= 0 or None in losses:
            return False
        return all(a != b for a, b in pairwise(losses))

    def _banded_beside_still_loss(self, values: list[float]) -> str | None:
        """Why accuracies that never left a narrow band about their first, at a level one
        class for everything scores, beside a training loss that never moved, say nothing
        was learned (see `_ACC_BAND`). None otherwise."""
        count, band = _ACC_BAND
        first, loss_first, loss_now = values[0], self._first_loss, self._loss
        scale = 100.0 if max(values) > 1.0 else 1.0
        if len(values) < count or not 0 < first <= 0.5 * scale or loss_first is None \
                or loss_now is None or loss_first <= 0 \
                or abs(loss_now - loss_first) > _LOSS_STILL * loss_first:
            return None
        off = _off_first(values)
        if off > band:
            return None
        return (f"has stayed within {100 * band:g} % of its first value ({first:.4g}; "
                f"{min(values):.4g} to {max(values):.4g}) over {len(values)} evaluations "
                f"from the first, beside a training loss that never moved ({loss_first:.4g} "
                f"→ {loss_now:.4g}): the model learned nothing (one class for everything, or "
                f"close to it)")

    def _held_while_loss_fell(self, key: str, kind: str, values: list[float]) -> str | None:
        """Why a score identical on every evaluation from the first, beside a training
        loss that fell by 30 % or more, says no prediction changed (see the module). Only
        a score of the training's own, measured at each record: an evaluation's is
        restated on the lines after it until the next one (Lightning's bar shows the
        last `val_loss` at every step of the epochs between validations)."""
        first, now = self._first_loss, self._loss
        if kind == "auc" or is_eval_metric(key) or len(values) < _HELD_POINTS \
                or len(set(values)) != 1 \
                or first is None or now is None or first <= 0 or now > _LOSS_MOVED * first:
            return None
        value = values[0]
        scale = 100.0 if value > 1.0 else 1.0
        if (kind == "accuracy" and not 0 < value < scale) or (kind == "error" and value <= 0):
            return None  # perfect: a converged model has nothing left to change
        if _unit(value) > _HELD_DIGITS * abs(value):
            return None  # printed coarsely (`acc 0.9`): a held value may be rounding
        return (f"has been exactly {value:.4g} on every one of {len(values)} evaluations "
                f"from the first while the training loss fell from {first:.4g} to "
                f"{now:.4g}: the weights moved and no prediction changed")

    @staticmethod
    def _left(kind: str, values: list[float], value: float) -> bool:
        if kind == "auc":
            scale = 100.0 if max(values) > 1.0 else 1.0
            return abs(value / scale - 0.5) > _AUC_LEFT
        if kind == "accuracy":
            return value != values[0]
        return value < values[0] * (1 - _MOVED_SHARE)
