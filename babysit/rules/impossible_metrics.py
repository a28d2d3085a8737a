"""A metric outside the range its name allows (issue 24, item 5: a figure that cannot be
is a reading or computing error, not a result to report).

An accuracy, a precision, a recall, an F1, an AUC, an IoU, a Dice or a mAP is a share:
between 0 and 1, or 0 and 100 printed as a percentage. The PyTorch quickstart's test loop
adapted in a notebook (`Accuracy: 113.7%, Avg loss: 0.33`, sealed-8) divides by the
number of batches instead of the number of samples; a BLEU of 140 sums its sentences.
Whatever such a figure says — that the run improves, which checkpoint is best — cannot
be trusted until it is computed again. So is a distance below 0 (a FID, a KID, an LPIPS),
a perplexity below 1, a KL term of a loss below 0 (a β-TCVAE's `tc_loss` of -32.9 every
epoch: its estimator is wrong), and any figure past what a float32 can hold (StyleGAN2-ADA's FID of
8.2e+51 on broken reference statistics). Raised once per metric, never withdrawn by a
later value in range (the computation that gave the impossible one is still the one used).

A held-out score that is perfect at the run's first evaluation, at step 0 or 1, before
training could teach anything, and exactly perfect at every evaluation after it, cannot
be the model's either: the evaluation measures something else — labels of one class
(an AUC is then undefined, and libraries print 1.0), or the answer leaking into the
inputs. A LightGBM callback's `Iteration: 0, validation AUC: 1.0` on each of 51
iterations, its CSV read into one column (the author's next commit: "cause of AUC=1:
CSV separator"). A blocker: nothing the run reports of its model can be trusted, and a
model chosen by that score was chosen by nothing.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.metric_names import is_eval_metric
from babysit.model import AnomalyType, Severity
from babysit.rules.last_digit import significant_digits
from babysit.rules.metric_floor import quality_keys
from babysit.rules.ordered_measures import out_of_order
from babysit.rules.signals import Observation, Raise, Signal

# A percentage's top, with room for the rounding of its last printed digit.
_TOP = 100.05
# The share's word as a word of the name (`test_acc`, `Accuracy`, `val/f1`), not inside
# another (`real_accelerator.py:222`, a source line a logger printed).
_SHARE_WORD = lazy_re.compile(r"(?:^|[/_.\s-])(?:acc|accuracy|dice|iou|miou|m?ap\d*|f1|auc|"
                              r"auroc|auprc|precision|recall)(?:$|[/_.\s@-]|\d)",
                              re.IGNORECASE)
# An evaluation's loss (`val_loss`, `eval/loss`, `validation_loss`), its split's prefix
# taken off to find the training's twin.
_EVAL_LOSS = lazy_re.compile(r"^(?:val|valid|validation|eval|dev)[_/](?=.*loss)")
_TWIN_RECORDS = 5  # records in a row, equal to every digit, before it speaks
# Names of a count or a size that share a word with a score (`map_size`, `acc_steps`);
# a reward's or a penalty's term, signed by design (Isaac Lab's `Episode_Reward/dof_acc_l2:
# -0.1826`, the joints' acceleration penalised); a norm (`_l1`, `_l2`: `acc` there is an
# acceleration).
_NOT_SHARE = lazy_re.compile(r"size|count|num|len|dim|total|sum|steps|_n$|reward|(?:^|[/_])rew_|"
                             r"penalt|_l[12]$", re.IGNORECASE)


# A distance between distributions or images, never below 0 (`fid50k_full`, `kid`, `fvd`,
# `lpips`); and a figure past what a float32 can hold, an overflow whatever its name
# (StyleGAN2-ADA's `fid50k_full` of 8.2e+51, then -3.1e+68, on a broken statistics file).
_DISTANCE_WORD = lazy_re.compile(r"(?:^|[/_.\s-])(?:fid|kid|fvd|lpips)(?:$|[/_.\s@-]|\d)",
                                 re.IGNORECASE)
_FLOAT32_MAX = 3.4e38
# A loss that is a divergence between distributions: a KL term (`kl_loss`, `loss_kld`) or a
# total correlation (a β-TCVAE's `tc_loss`, itself a KL), never below 0 — a loss's name and
# the divergence's word both, so a reinforcement learner's signed `approx_kl` estimate or a
# `neg_kl` is none. A few hundredths below 0 is an estimator's rounding.
_DIVERGENCE_LOSS = lazy_re.compile(
    r"^(?!.*neg)(?=.*(?:^|[/_.\s-])loss(?:$|[/_.\s-]))"
    r".*(?:^|[/_.\s-])(?:kl|kld|kl_div|kl_divergence|tc|total_correlation)(?:$|[/_.\s-])",
    re.IGNORECASE)
_DIVERGENCE_SLACK = -0.01
# A perplexity is e to a cross-entropy, which is never below 0: never below 1 (a
# Chemformer test run's `test_perplexity 4.13e-08` beside a test loss of 1.16: a
# perplexity taken of something else). Room for a last digit rounded away.
# (the name's last word: not `ppl_gain`, `delta_ppl` is another matter)
# (not a log or a negated one: Trax's `train_neg_log_perplexity = -5.07`)
_PERPLEXITY_WORD = lazy_re.compile(r"(?:^|[/_.\s-])(?<!delta_)(?<!log_)(?<!log)(?:ppl|perplexity)$",
                                   re.IGNORECASE)
_PERPLEXITY_FLOOR = 0.99
# Evaluations, the first at step 0 or 1, exactly perfect, before a perfect score says
# the evaluation is broken (see the module).
_PERFECT_EVALS = 10
_FIRST_STEP = 1


class _Streaks:
    """Per metric, the records in a row that kept a condition since its first, or broken
    for good once one did not."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}  # -1: broken

    def broken(self, key: str) -> bool:
        return self._counts.get(key, 0) < 0

    def started(self, key: str) -> bool:
        return key in self._counts

    def break_off(self, key: str) -> None:
        self._counts[key] = -1

    def extend(self, key: str) -> int:
        """One more record kept it: the streak's length now."""
        count = self._counts[key] = self._counts.get(key, 0) + 1
        return count


@functools.lru_cache(maxsize=1024)
def _names_a_share(key: str) -> bool:
    """Whether a metric's name says it is a share (`test_acc`), not a count or size."""
    return _SHARE_WORD.search(key) is not None and _NOT_SHARE.search(key) is None


def impossible_share(key: str, value: float) -> bool:
    """Whether a value cannot be the share its name says it is: above 100 % or below 0
    (a whole number is a count read beside a share, not this)."""
    return math.isfinite(value) and not 0 <= value <= _TOP and value != int(value) \
        and ".py" not in key and _names_a_share(key)


class ImpossibleMetricRule:
    """A share metric above 100 % or below 0 (see the module); an evaluation's loss that
    is the training loss (see `_twinned`)."""

    windowed: ClassVar[bool] = False

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._raised: set[str] = set()
        self._twins = _Streaks()  # an evaluation loss: records equal to its twin's
        self._before: Mapping[str, float] = {}  # the figures of the record before
        # A held-out share: evaluations perfect since the first at the run's start (-1:
        # one was not, or the first came later).
        self._perfect = _Streaks()

    def observe(self, point: Observation) -> Sequence[Signal]:
        ordered = self._ordered(point)
        out = self._twinned(point)
        out.extend(ordered)
        out.extend(self._perfect_from_start(point))
        for key, value in point.metrics.items():
            if key in self._raised or not math.isfinite(value):
                continue
            below_one = value < _PERPLEXITY_FLOOR and _PERPLEXITY_WORD.search(key) is not None
            divergence = value < _DIVERGENCE_SLACK and _DIVERGENCE_LOSS.search(key) is not None
            if abs(value) > _FLOAT32_MAX or (value < 0 and _DISTANCE_WORD.search(key)) \
                    or below_one or divergence:
                self._raised.add(key)
                why = "beyond any float32" if abs(value) > _FLOAT32_MAX else \
                    "below 1, which a perplexity (e to a cross-entropy) cannot be" \
                    if below_one else \
                    "below 0, which a divergence between distributions (a KL) cannot be" \
                    if divergence else "below 0, which a distance cannot be"
                if divergence and not is_eval_metric(key):
                    # (a term of the objective the run minimises: the training itself
                    # optimises a wrong figure, not one report of it)
                    out.append(Raise(AnomalyType.IMPOSSIBLE_METRIC,
                                     f"{key} = {value:.4g}, {why}: a term of the training "
                                     f"objective is computed wrong (its estimator or its sign), "
                                     f"so the run optimises the wrong thing and its model "
                                     f"cannot be trusted", key=key, severity=Severity.BLOCKER))
                    continue
                out.append(Raise(AnomalyType.IMPOSSIBLE_METRIC,
                                 f"{key} = {value:.4g}, {why}: the metric is computed wrong "
                                 f"(an overflow, broken reference statistics), and what it "
                                 f"says of the run cannot be trusted", key=key))
        for key in quality_keys(point.metrics):
            value = point.metrics[key]
            if key in self._raised or not impossible_share(key, value):
                # (a whole number above 100 is a count read beside its share — nanoGPT's
                # `HellaSwag accuracy: 2486/10042=0.2476` —, not a share)
                continue
            self._raised.add(key)
            why = "above 100 %" if value > _TOP else "below 0"
            out.append(Raise(AnomalyType.IMPOSSIBLE_METRIC,
                             f"{key} = {value:.4g}, {why}: a share cannot be; the metric is "
                             f"computed wrong, and what it says of the run cannot be trusted",
                             key=key))
        return out

    def _ordered(self, point: Observation) -> list[Signal]:
        """Two measures printed against the order their definitions fix (see
        `ordered_measures`): raised once, for the first pair."""
        if "order" in self._raised:
            return []
        wrong = out_of_order(point.metrics, self._before)
        if wrong is None:
            return []
        self._raised.add("order")
        low, high, why = wrong
        value_of = {**self._before, **point.metrics}
        return [Raise(AnomalyType.IMPOSSIBLE_METRIC,
                      f"{high} = {value_of[high]:.4g} is below {low} = {value_of[low]:.4g}, "
                      f"which their definitions do not allow ({why}): one of them is "
                      f"computed wrong, and what they say of the model cannot be trusted",
                      key="order")]

    def _perfect_from_start(self, point: Observation) -> list[Signal]:
        """A held-out share perfect from the run's first evaluation (see the module)."""
        out: list[Signal] = []
        for key in quality_keys(point.metrics):
            if self._perfect.broken(key) or not _names_a_share(key) or not is_eval_metric(key):
                continue
            value = point.metrics[key]
            if (not self._perfect.started(key)
                    and (point.step is None or point.step > _FIRST_STEP)) \
                    or value not in (1.0, 100.0):
                self._perfect.break_off(key)
                continue
            if self._perfect.extend(key) == _PERFECT_EVALS:
                out.append(Raise(AnomalyType.IMPOSSIBLE_METRIC,
                                 f"{key} has been exactly perfect on each of its first "
                                 f"{_PERFECT_EVALS} evaluations, the first at the run's start "
                                 f"(step {_FIRST_STEP} or before), before training could teach "
                                 f"anything: the evaluation measures something "
                                 f"other than the model (labels of one class, the answer "
                                 f"leaking into the inputs), and nothing it says of the run "
                                 f"can be trusted", key=f"{key} perfect",
                                 severity=Severity.BLOCKER))
        return out

    def _twinned(self, point: Observation) -> list[Signal]:
        """An evaluation's loss equal to the training loss beside it, to every digit, on
        each of `_TWIN_RECORDS` records or more and never otherwise (TS-CVA's `train_loss
        =6.988401, val_loss=6.988401` on each of 200 epochs): the evaluation runs on the
        training data (a validation loader built from the training set, the same batches
        scored twice), so it says nothing of unseen data, and any best checkpoint chosen
        by it was chosen by the training loss."""
        out: list[Signal] = []
        metrics = point.metrics
        before, self._before = self._before, metrics
        for key in _eval_losses(tuple(metrics)):
            if self._twins.broken(key):
                continue
            bare = _EVAL_LOSS.sub("", key)
            names = (f"train_{bare}", f"train/{bare}", bare)
            train = next((metrics[k] for k in names if k in metrics and k != key), None)
            if train is None and not any(k in metrics for k in names):
                # (or on the line just before, the training's own: a k-fold loop's `Train
                # Loss: 0.00073 | Accuracy: 0.99984`, then `Val Loss: 0.00073 | …`)
                # (by its training name only: a bare `loss` there may be the evaluation's own,
                # restated under a best-model line)
                train = next((before[k] for k in names[:2] if k in before), None)
            value = metrics[key]
            if train is None or not math.isfinite(value):
                continue
            if train != value or significant_digits(value) < 4:
                # It differed: an evaluation of its own (once raised, a later stage's
                # differing figures do not mend the stage whose best was so chosen).
                self._twins.break_off(key)
                continue
            if self._twins.extend(key) == _TWIN_RECORDS:
                out.append(Raise(AnomalyType.IMPOSSIBLE_METRIC,
                                 f"{key} has equalled the training loss to the last digit on "
                                 f"each of {_TWIN_RECORDS} records ({value:.7g}): the "
                                 f"evaluation runs on the training data, so it says nothing "
                                 f"of unseen data, and a best checkpoint chosen by it was "
                                 f"chosen by the training loss", key=f"{key} twin"))
        return out


# A log prints the same few sets of names on every line: each set is searched once.
@functools.lru_cache(maxsize=256)
def _eval_losses(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(k for k in names if _EVAL_LOSS.match(k))
