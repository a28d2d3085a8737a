"""A quality metric stuck at its floor: a dice, an IoU, an accuracy or a mAP that never
leaves zero over many evaluations (issue 24).

A segmentation net whose loss falls by four orders of magnitude while its dice stays at
7e-05 for 25 epochs has learned to predict empty masks: the loss says it learns, the
metric says it learns nothing the task asks for. A detector's mAP of 0 for its first
epochs is ordinary, so the metric must stay at the floor for many evaluations, and the
finding is withdrawn the moment it leaves.

A notice while the run goes on (a margin-based face-recognition loss keeps its training
accuracy near 0 for a long while: MobileFaceNet's `training accuracy is 0.000000` at step
22k), unless a second accuracy of the run agrees: one that sits at a guess's share, 1/K
for a few classes, on every one of `COIN_POINTS` evaluations or more. ArcFace's training
`acc=0.001429` beside its pair verification's `[lfw][31500]Accuracy-Flip: 0.49917`,
`[cfp_fp]…: 0.49957`, `[agedb_30]…: 0.49633` (a coin toss on same-or-different pairs):
the embedding tells no one apart, and the training has learned nothing either, so the
finding is a blocker. A GAN's players are left out (a discriminator at 50 % is their
balance). So is a segmentation's evaluated overlap (a dice or an IoU, not a detector's
mAP, which sits at 0 for a slow start's first epochs) a thousandth or less of perfect on
every one of `FLOOR_POINTS` evaluations: a lung-nodule U-Net's `dice score:
1.0968982678605244e-05` after each of eleven epochs while its loss fell a thousandfold
has learned the empty mask, which training further does not leave.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.metric_names import is_eval_metric
from babysit.model import AnomalyType, Severity
from babysit.rules.chance_streak import GAN_PLAYER, chance_class_count
from babysit.rules.signals import Observation, Raise, Reassess, Resolve, Signal

# Higher-is-better scores of what a model predicts, on a 0-1 (or 0-100) scale. Not a
# bare `score` (a reinforcement-learning return, judged elsewhere), never a best-so-far,
# a top-k that includes the easy classes, or a spread.
# An agent's share of games won or tasks solved is such a score too (`Win Rate: 0.00%`).
_AGENT_RATE_PATTERN = r"(?:^|[/_.])(?:win|success|solve)_?rate"
_QUALITY = lazy_re.compile(r"acc|dice|iou|(?:^|[/_.])m?ap(?:\d*)?(?:$|[/_.])|f1|auc|auroc|auprc|"
                           r"bleu|rouge|precision|recall|exact_match|kappa|cohen|mcc|matthews|"
                           + _AGENT_RATE_PATTERN, re.IGNORECASE)
# (the agent's own share of games won or tasks solved, one of the scores above)
_AGENT_RATE = lazy_re.compile(_AGENT_RATE_PATTERN, re.IGNORECASE)
_NOT_QUALITY = lazy_re.compile(r"best|max|min|std|top[_-]?[2-9]|loss|lr|time|epoch|step|"
                               r"samples|memory|per_sec|eta", re.IGNORECASE)
# Its mirror: a classification error rate (DETR's `class_error`, `top1_err`) of 100 % is
# an accuracy of 0. Not a regression's squared or absolute error (unbounded), nor DETR's
# `_unscaled` twin of the same figure, nor a word, character or token error rate (an ASR
# model's WER sits at 100 % for its first epochs while CTC learns to emit anything:
# ordinary, and judged by the loss).
_ERROR_RATE = lazy_re.compile(r"(?:^|[/_.\- ])(?:class_?|cls_?|top-?1_?|classification_?)?"
                              r"err(?:or)?(?:_rate)?$", re.IGNORECASE)
_NOT_ERROR_RATE = lazy_re.compile(r"mse|mae|squared|abs|recon|l1|l2|best|min|max|std",
                                  re.IGNORECASE)
FLOOR = 0.01  # at most this on a 0-1 scale: 1 % of masks, boxes or labels right
FLOOR_POINTS = 8  # evaluations at the floor before it speaks
_END_POINTS = 2  # ... or, once the run finished, evaluations that were all it made
# ... or fewer evaluations that span a long run: a sparse excerpt's three or four, the
# last at 20× the step of the first or later (DETR's `Test:` class_error of 100.00 after
# epoch 0 and again after epoch 75), exactly at the floor (nothing right at all).
_SPAN_POINTS = 3
_SPAN_FACTOR = 20
# Evaluations at the floor that no slow start explains: a blocker while the run goes on.
_LONG_FLOOR = 4 * FLOOR_POINTS
COIN_POINTS = 3  # evaluations of a second accuracy at a guess's share, every one of them
_OVERLAP = lazy_re.compile(r"dice|iou|jaccard", re.IGNORECASE)
# A chance-corrected agreement (Cohen's kappa, Matthews' correlation): exactly 0 is a
# model whose predictions say nothing of the labels (one class for everything: sklearn
# scores constant predictions 0), however many classes and however skewed; one such
# evaluation at the end of a finished run is enough.
_CHANCE_CORRECTED = lazy_re.compile(r"kappa|cohen|mcc|matthews", re.IGNORECASE)
_TEST = lazy_re.compile(r"test[_/]", re.IGNORECASE)
# A coefficient of determination (`r2`, `R^2`, `r_squared`): 0 is a regression that does
# no better than predicting the mean, below 0 worse. Its last held-out value at this or
# below in a finished run is a model that explains nothing.
_R2 = lazy_re.compile(r"(?:^|[/_.])(?:r2|r\^2|r_?squared?)(?:$|[/_.])", re.IGNORECASE)
_NO_SKILL = 0.02
_TRAIN_SPLIT = lazy_re.compile(r"train", re.IGNORECASE)
_EMPTY_MASK = 1e-3  # an overlap this small on every evaluation: the empty mask
# A share right this small, yet not 0, is no count of labelled items (a millionth of the
# largest test sets): an accuracy over real numbers, each matched exactly or not.
_REAL_NUMBERS_MATCHED = 1e-6
_ACCURACY = lazy_re.compile(r"acc", re.IGNORECASE)
# A score's own word, its split and qualifiers before it (`batch_acc`: `_acc`).
_LAST_WORD = lazy_re.compile(r"[/_.]?[a-z0-9]+$", re.IGNORECASE)


def quality_keys(metrics: Iterable[str]) -> tuple[str, ...]:
    return _quality_keys(tuple(metrics))


# A log prints the same few sets of names on every line: each set is searched once.
@functools.lru_cache(maxsize=256)
def _quality_keys(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(k for k in names if _QUALITY.search(k) and not _NOT_QUALITY.search(k))


def error_rate_keys(metrics: Iterable[str]) -> tuple[str, ...]:
    return _error_rate_keys(tuple(metrics))


@functools.lru_cache(maxsize=256)
def _error_rate_keys(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(k for k in names if _ERROR_RATE.search(k) and not _NOT_ERROR_RATE.search(k))


def share_right(error: float) -> float | None:
    """The share an error rate leaves right, on a 0-1 scale (a value above 1 is a
    percentage); None for a value no error rate takes."""
    if not 0 <= error <= 100:
        return None
    return 1 - error / (100.0 if error > 1 else 1.0)


# The ledger key of a metric's floor finding (this rule's and `psnr_floor`'s).
_FLOOR = " floor"


def floor_key(metric: str) -> str:
    return f"{metric}{_FLOOR}"


@functools.lru_cache(maxsize=256)
def _r2_keys(names: tuple[str, ...]) -> tuple[str, ...]:
    """A result's held-out coefficients of determination (`eval/r2`, `test_r2`, or a bare
    `r2` in a record with no training loss: Uni-Mol's closing `{'mse': …, 'r2': 0.0135}`),
    never the training data's (`train_r2`)."""
    return tuple(k for k in names if _R2.search(k) and not _TRAIN_SPLIT.match(k))


@functools.lru_cache(maxsize=256)
def _family(key: str) -> str:
    """A score's family: its name without its order or cut-off (`bleu_1` … `bleu_4`,
    `rouge1` and `rouge2`, `map50` and `map75`)."""
    return _ORDER.sub("", key)


_ORDER = lazy_re.compile(r"[-_@]?\d+(?:[-_.]\d+)?")


def floored_metric(key: str) -> str | None:
    """The metric a floor finding's key names, or None for any other key."""
    return key[: -len(_FLOOR)] if key.endswith(_FLOOR) else None


def at_floor(values: Sequence[float], span: tuple[int, int] | None = None) -> str | None:
    """Why a score's values say the model learned nothing the task asks for: at least
    `FLOOR_POINTS` of them, every one between 0 and `FLOOR`; or at least `_SPAN_POINTS`
    evaluations, every one exactly 0, whose steps (`span`: the first's and the last's)
    cover a long run. None otherwise."""
    if any(not 0 <= v <= FLOOR for v in values):
        return None
    long_run = span is not None and span[0] > 0 and span[1] >= _SPAN_FACTOR * span[0] \
        and len(values) >= _SPAN_POINTS and not any(values)
    if len(values) < FLOOR_POINTS and not long_run:
        return None
    over = f" from step {span[0]} to {span[1]}" if long_run and span is not None else ""
    return (f"has stayed at its floor on every one of its {len(values)} evaluations{over} "
            f"(at most {max(values):.2g}): the model predicts nothing the task asks for, "
            f"whatever its loss says (empty masks or boxes, one class for everything, "
            f"labels that do not match the outputs, a threshold never crossed)")


def _empty_masks(key: str, values: Sequence[float]) -> bool:
    """Whether an evaluated overlap (dice, IoU) stayed at the empty mask's on at least
    `FLOOR_POINTS` evaluations."""
    return is_eval_metric(key) and _OVERLAP.search(key) is not None \
        and len(values) >= FLOOR_POINTS and max(values) <= _EMPTY_MASK


_SPLIT_PREFIX = lazy_re.compile(r"^(?:eval|val|valid|validation|test|dev)[/_]", re.IGNORECASE)
_LEARNED = 0.1  # a training score at least this (0-1 scale): the model fits the training set


def nothing_held_out(metrics: Mapping[str, float]) -> str | None:
    """Why a finished run's model is unusable: its last evaluated score (an IoU, a dice,
    an accuracy) is exactly 0 while the same score on its training data is not (a nested
    U-Net's last epoch: `iou 0.6299 - val_iou 0.0000`, then its early stop). None
    otherwise. A model that gets nothing right on held-out data delivers nothing,
    however well it fits what it was trained on."""
    for key in quality_keys(metrics):
        value = metrics[key]
        if not is_eval_metric(key) or not math.isfinite(value) or abs(value) > 1e-6:
            continue
        bare = _SPLIT_PREFIX.sub("", key)
        for train_key in (bare, f"train_{bare}", f"train/{bare}"):
            train = metrics.get(train_key)
            if train is None or not math.isfinite(train) or train_key == key:
                continue
            share = train / 100.0 if train > 1 else train
            if _LEARNED <= share <= 1:
                return (f"not learning: the run ended with {key} = {value:.4g} on its last "
                        f"evaluation while {train_key} = {train:.4g}: the model gets nothing "
                        f"right on held-out data, however well it fits its training set")
    return None


def _unevaluated(key: str, metrics: Mapping[str, float]) -> bool:
    """A score of exactly 0 beside its own split's loss of exactly 0: no evaluation
    scores nothing at a perfect loss, so that split was not evaluated and both figures
    are the script's placeholders (TS-TCC's self-supervised mode prints `Valid Loss :
    0.0000 | Valid Accuracy : 0.0000` after every epoch: it has no classifier to score)."""
    split = _SPLIT_PREFIX.match(key)
    loss = metrics.get(f"{split.group()}loss") if split is not None else None
    return loss == 0


class MetricFloorRule:
    """Not learning: a quality metric at its floor over many evaluations."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._values: dict[str, list[float]] = {}
        self._last: dict[str, tuple[int | None, float]] = {}
        self._raised: set[str] = set()
        self._left: set[str] = set()  # left the floor once: judged no more
        self._first_step: dict[str, int] = {}  # an evaluation's first step at the floor
        self._guesses = GuessWatch()  # the run's other accuracies at a guess's share
        self._blocker = False  # the open floor findings were judged a blocker
        self._empty: set[str] = set()  # overlaps at the empty mask's: blockers on their own
        # Scores whose last evaluation came before the latest training record: the next
        # one at the same step is a new evaluation (a log whose step never moves: its
        # epochs are in rows of their own), not the same one printed twice.
        self._trained_since: set[str] = set()
        self._r2: dict[str, float] = {}  # each held-out R^2's last value
        self._long: set[str] = set()  # at their floor for `_LONG_FLOOR` evaluations
        # A split's score and loss both exactly 0 were seen: the script prints scores it
        # does not compute (`_unevaluated`).
        self._placeholders = False
        # Accuracies (by their name without a split) printed at a share no count of
        # labels makes (`_REAL_NUMBERS_MATCHED`): not judged.
        self._continuous: set[str] = set()

    def observe(self, point: Observation) -> Sequence[Signal]:
        out: list[Signal] = []
        if point.loss is None:
            for key in _r2_keys(tuple(point.metrics)):
                value = point.metrics[key]
                if math.isfinite(value):
                    self._r2[key] = value / 100.0 if value > 1 else value
        errors = error_rate_keys(point.metrics)
        self._guesses.observe(point)
        if point.loss is not None and point.epoch is not None:
            self._trained_since.update(key for key in self._last if is_eval_metric(key))
        for key in (*quality_keys(point.metrics), *errors):
            if key in self._left:
                continue
            value = point.metrics[key]
            if not math.isfinite(value):
                continue
            if value == 0 and _unevaluated(key, point.metrics):
                self._placeholders = True
            if value == 0 and self._placeholders \
                    and not any(self._values.get(key, ())):
                # A score the script prints and never computes: a split's, its loss 0 beside
                # it, and then any other score exactly 0 from the first (TS-TCC's training
                # accuracy, `0.0000` for 100 epochs as its contrastive loss falls).
                out.extend(self._no_measure(key, f"{key} is a placeholder the script prints: "
                                                 f"a split's loss of exactly 0 beside its "
                                                 f"score of 0, nothing evaluated"))
                continue
            if key not in errors and 0 < value < _REAL_NUMBERS_MATCHED \
                    and _ACCURACY.search(key):
                self._continuous.add(_SPLIT_PREFIX.sub("", key))
            if self._continuous and _SPLIT_PREFIX.sub("", key) in self._continuous:
                # An accuracy of 3e-09: real-valued outputs compared for equality with
                # their targets (Keras's `acc` on a depth map), no share of labels a
                # model gets right: its floor says nothing, on any split.
                out.extend(self._no_measure(key, f"{key} is an exact match of real numbers "
                                                 f"(its kin printed {value:.3g}), no measure "
                                                 f"of learning"))
                continue
            if key in errors:
                # An error rate at its ceiling is a score at its floor: judged as the
                # share it leaves right (`class_error 100.00`: 0 % right).
                right = share_right(value)
                if right is None:
                    self._left.add(key)
                    continue
                value = right
            if self._last.get(key) == (point.step, value) and point.step is not None \
                    and key not in self._trained_since:
                continue  # the same evaluation printed twice (a bar and its summary)
            self._last[key] = (point.step, value)
            self._trained_since.discard(key)
            if not 0 <= value <= FLOOR:
                out.extend(self._leave(key, f"{key} left its floor ({value:.4g})"))
                out.extend(self._kin_left(key, value))
                continue
            if any(_family(other) == _family(key) for other in self._left):
                continue  # a stricter member of a family that left its floor (`_kin_left`)
            values = self._values.setdefault(key, [])
            if len(values) < 4 * FLOOR_POINTS:
                values.append(value)
            span = None
            if point.step is not None and is_eval_metric(key):
                span = (self._first_step.setdefault(key, point.step), point.step)
            found = at_floor(values, span) if key not in self._raised else None
            if key in self._raised and len(values) == _LONG_FLOOR and key not in self._long \
                    and not self._left \
                    and (is_eval_metric(key) or key.startswith(("test_", "test/"))) \
                    and not _AGENT_RATE.search(key):
                # Still at its floor after four times the evaluations that raised it (an
                # RT-DETR whose COCO AP stays under 0.005 for 39 epochs while its loss
                # falls from 36 to 10): no slow start, a model that scores nothing — unless
                # another of its scores left the floor (a seq2seq's exact-match at 0 beside
                # a token accuracy that moves: a strict measure, not a dead model).
                self._long.add(key)
                out.append(Reassess(AnomalyType.NOT_LEARNING, Severity.BLOCKER,
                                    f"{key} is still at its floor after {len(values)} "
                                    f"evaluations: no slow start, a model that scores "
                                    f"nothing on held-out data", key=floor_key(key)))
            if found is not None:
                self._raised.add(key)
                if key in errors:
                    found = (f"(an error rate of {100 * (1 - max(values)):.4g} % or more, "
                             f"judged as the share it leaves right) {found}")
                guess = self._guesses.agreeing()
                self._blocker = self._blocker or guess is not None
                if guess is None and _empty_masks(key, values):
                    found += ("; an evaluated overlap this close to 0 on every evaluation "
                              "is a model that learned the empty mask")
                    self._empty.add(key)
                    out.append(Raise(AnomalyType.NOT_LEARNING, f"not learning: {key} {found}",
                                     key=floor_key(key), severity=Severity.BLOCKER))
                    continue
                # An agent's share of episodes won or tasks solved is its policy's own
                # quality (no held-out set to score it on): at its floor to the end of a
                # finished run, the policy it delivers cannot do the task (SB3's
                # `rollout/success_rate | 0` over a million steps of DDPG). While the run
                # goes on, a slow start may still leave it: the usual notice.
                out.append(Raise(AnomalyType.NOT_LEARNING, f"not learning: {key} {found}"
                                 + (f"; {guess}" if guess else ""), key=floor_key(key),
                                 severity=Severity.BLOCKER if guess else None,
                                 severity_at_end=Severity.BLOCKER
                                 if _AGENT_RATE.search(key) else None))
        return out + self._reassessed()

    def _no_measure(self, key: str, why: str) -> list[Signal]:
        """A score found to measure nothing of learning: judged no more, and a finding
        already raised on it withdrawn with why."""
        self._left.add(key)
        return self._leave(key, why) if key in self._raised else []

    def _kin_left(self, key: str, value: float) -> list[Signal]:
        """A score of the same family left its floor (`bleu_3` at 67.67): its stricter
        members still at theirs (`bleu_4` at 0) measure the task, not the model — Sign
        Language Transformers on isolated signs, one or two words a target, where no
        sentence holds a 4-gram to match. They are judged no more."""
        out: list[Signal] = []
        for other in sorted(k for k in self._values if k != key
                            and _family(k) == _family(key)):
            out.extend(self._leave(other, f"{other} stays at its floor while {key} left its "
                                          f"({value:.4g}): a measure the task's targets "
                                          f"cannot score, not a model that learned nothing"))
        return out

    def _leave(self, key: str, why: str) -> list[Signal]:
        """`key` is judged no more; its open floor finding, if any, resolved with `why`."""
        self._left.add(key)
        self._values.pop(key, None)
        if key not in self._raised:
            return []
        self._raised.discard(key)
        self._empty.discard(key)
        return [Resolve(AnomalyType.NOT_LEARNING, why, key=floor_key(key))]

    def floor_at_end(self) -> str | None:
        """Why a finished run never learned, judged once it is over: a held-out score at
        its floor on every one of its evaluations, however few (a two-epoch detector run
        whose mAP@.5 was 0.0025 and then 0.0029: too few evaluations to speak while the
        run went on, where a slow start could still leave the floor, but the run will
        not leave it now); a chance-corrected agreement exactly 0 on even one (a Lightning
        EEG classifier's `test_cohen 0.0`). None otherwise."""
        for key, values in sorted(self._values.items()):
            if key in self._raised or key in self._left:
                continue
            if len(values) < _END_POINTS or not is_eval_metric(key):
                # (a final test's counts as held out here: `test_cohen`)
                if any(values) or not _CHANCE_CORRECTED.search(key) \
                        or not (is_eval_metric(key) or _TEST.match(key)):
                    continue
                return (f"not learning: {key} was exactly 0 on the run's held-out "
                        f"evaluation{'s' if len(values) > 1 else ''} to its end: a "
                        f"chance-corrected agreement of 0 is a model whose predictions say "
                        f"nothing of the labels (one class for everything)")
            return (f"not learning: {key} stayed at its floor on every one of its "
                    f"{len(values)} evaluations to the run's end (at most {max(values):.2g}): "
                    f"the model it delivers gets nothing right on held-out data")
        for key, value in sorted(self._r2.items()):
            if value <= _NO_SKILL:
                return (f"not learning: the run ended with {key} = {value:.4g} on its last "
                        f"evaluation: a coefficient of determination at 0 or below is a model "
                        f"that predicts no better than the mean of the targets")
        return None

    def _held_out_agrees(self) -> str | None:
        """Why a held-out score says what a long floor of the training's says: a training
        score raised at its floor for `_LONG_FLOOR` prints or more, and the held-out score
        of the same word (`val_acc` beside `batch_acc`) at its floor on every evaluation
        it had, however few (a NeuroSAT whose batch accuracy was 0.0 on all 3,125 batches
        and whose one validation scored 0.0002): no slow start, nothing right anywhere.
        Not while another score of the run left its floor (a seq2seq's exact-match at 0
        on both splits beside a token accuracy that moves: a strict measure)."""
        if self._left:
            return None
        for key in sorted(self._raised):
            values = self._values.get(key, ())
            if is_eval_metric(key) or len(values) < _LONG_FLOOR:
                continue
            word = _LAST_WORD.search(key)
            for other, held in sorted(self._values.items()):
                if held and other not in self._left and is_eval_metric(other) \
                        and word is not None and other.lower().endswith(word.group()):
                    return (f"and {other} sat at its floor too on every one of its "
                            f"held-out evaluations (at most {max(held):.2g}): the model "
                            f"gets nothing right on data it was not trained on either")
        return None

    def _reassessed(self) -> list[Signal]:
        """The open floor findings made blockers once a second accuracy agrees, and
        notices again once it leaves a guess's share."""
        if not self._raised:
            return []
        guess = self._guesses.agreeing() or self._held_out_agrees()
        if (guess is not None) is self._blocker:
            return []
        self._blocker = guess is not None
        severity, why = (Severity.BLOCKER, guess) if guess is not None else \
            (Severity.MEDIUM, "the run's other accuracy left a guess's share")
        return [Reassess(AnomalyType.NOT_LEARNING, severity, why, key=floor_key(key))
                for key in sorted(self._raised - self._empty)]


class GuessWatch:
    """The run's accuracies whose every evaluation so far sits at a guess's share, 1/K
    for the same few classes (see the module); one off it is dropped for good, as is a
    GAN player's."""

    def __init__(self) -> None:
        self._guesses: dict[str, tuple[int, list[float]]] = {}  # K and the values
        self._dropped: set[str] = set()
        self._last: dict[str, tuple[int | None, float]] = {}

    def observe(self, point: Observation) -> None:
        if "acc" not in "".join(point.metrics).lower():
            return
        for key in quality_keys(point.metrics):
            value = point.metrics[key]
            if key in self._dropped or "acc" not in key.lower() or not math.isfinite(value) \
                    or self._last.get(key) == (point.step, value):
                continue  # (or the same evaluation printed twice)
            self._last[key] = (point.step, value)
            count = chance_class_count(value)
            guess = self._guesses.get(key)
            if count is None or GAN_PLAYER.search(key) or (guess and guess[0] != count):
                self._dropped.add(key)
                self._guesses.pop(key, None)
                continue
            values = guess[1] if guess else []
            if len(values) < COIN_POINTS:
                values.append(value)
            self._guesses[key] = (count, values)

    def agreeing(self) -> str | None:
        """Why a second accuracy says the model learned nothing either: at 1/K on every
        one of its evaluations, `COIN_POINTS` or more. None otherwise."""
        for key, (count, values) in sorted(self._guesses.items()):
            if len(values) >= COIN_POINTS:
                return (f"and {key} sat at a guess's share, 1/{count}, on every one of its "
                        f"evaluations ({min(values):.4g} to {max(values):.4g}): a second "
                        f"measure agrees the model has learned nothing")
        return None
