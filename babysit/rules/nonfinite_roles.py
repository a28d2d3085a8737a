"""What a non-finite value means depends on what the metric is.

A NaN in the training objective (the loss or one of its parts, on training or on
evaluation), or in the learning rate the next update is made with, is a broken run:
every step after it is worthless. Many other figures a run
prints are undefined for reasons that say nothing about the weights, and an experienced
engineer reads them so:

- a mean over a set that can be empty: the reward or length of episodes before any
  episode finished, IoU or recall over the boxes of a scale that got none (`count: 0`),
  an evaluation score over an empty split, a spread over a single run;
- an error divided by the target (MAPE, MSPE), inf wherever one target is 0;
- a timing or a rate before its first interval (`speed nan` at step 0, an ETA);
- a bound or a best-so-far sentinel (`DELTA_CLIPS_MAX: inf`, `best_loss: inf`);
- the previous record's value restated (PyKEEN's `prev_loss=nan` at its first epoch,
  before there is one): a NaN there was the loss's own, reported when it was printed;
- a summary writer's `NaN or Inf found in input tensor`, which names no metric.

The gradient norm sits between the two: under fp16 dynamic loss scaling an overflowing
step has a non-finite norm and is skipped (the weights are untouched), so one such norm
with a finite loss beside it is routine; the same norm again on the next record, or one
with no finite loss to vouch for it, is the run going wrong (a Hugging Face Trainer
hides a NaN loss behind a finite or zero one, its `grad_norm` does not).

These are pure functions of names and values; `nonfinite_rule` applies them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from enum import Enum

from babysit import lazy_re
from babysit.metric_names import BEST_SO_FAR_WORDS, GRAD_NORM_KEYS, is_bookkeeping, is_eval_metric
from babysit.model import Severity


class Role(Enum):
    OBJECTIVE = "the training objective"
    OPTIMIZER = "the optimizer's learning rate or momentum"
    WEIGHTS = "the norm of the model's weights"
    GRADIENT = "a gradient norm"
    STATISTIC = "a statistic over a possibly empty set"
    RELATIVE = "an error relative to the target, undefined where a target is 0"
    BOUND = "a bound or a best-so-far sentinel"
    PREVIOUS = "the previous record's value, restated"
    TIMING = "a timing or a rate"
    SUMMARY = "a value written to a summary writer, which one unsaid"
    OTHER = "a metric babysit cannot place"


# The loss and its parts (`loss_cls`, `d0.loss_bbox`, `smoothed_loss`, `multi_logloss`,
# a hand loop's `Val_los`), perplexity, likelihoods, a cost or an objective; not the loss
# *scale* of fp16 training.
# (A cross-entropy by its short names: `train_CE`, `UCE` — a graph posterior network's
# uncertainty-aware cross-entropy —, `bce`, `xent`.)
_OBJECTIVE = lazy_re.compile(
    r"loss(?![ _]?scal)|(?:^|[_/.])(?:los|nll|ppl|perplexity|objective|cost|"
                        r"elbo|bpd|bpc|bpb|ce|bce|uce|xent|cross_?entropy|smooth_?l1|"
                        r"huber)(?:$|[_/.])",
    re.IGNORECASE)
# The next update is made with it: a NaN learning rate makes the weights NaN.
_OPTIMIZER = lazy_re.compile(
    r"(?:^|[_/.-])(?:lr|learning_rate|momentum|weight_decay)(?:$|[_/.\-\d])",
                        re.IGNORECASE)
# The norm of the weights themselves (TensorFlow 0.8 seq2seq's `param norm nan`, a
# `weight_norm`): NaN there is NaN weights, whatever the loss printed beside it says.
_WEIGHTS = lazy_re.compile(r"(?:^|[_/.])(?:param(?:eter)?s?|weights?)[_ ]?norm(?:$|[_/.])",
                           re.IGNORECASE)
_GRADIENT = lazy_re.compile(r"grad(?:ient)?s?[_ ]?(?:l2_)?norm|gnorm|total_norm", re.IGNORECASE)
# Names of a limit or of the best value so far: ±inf there is the starting point.
_BOUND = lazy_re.compile(r"(?:^|[_/.])(?:limit|bound|clip|clamp|thresh|threshold|tol|tolerance|"
                         rf"cap|ceil|floor|patience|{'|'.join(BEST_SO_FAR_WORDS)})"
                         r"(?:$|[_/.])", re.IGNORECASE)
# The value of the record before, printed beside the current one (`prev_loss`).
_PREVIOUS = lazy_re.compile(r"(?:^|[_/.])(?:prev|previous)(?:$|[_/.])", re.IGNORECASE)
_TIMING = lazy_re.compile(r"speed|fps|(?:^|[_/])(?:eta|time|sec|seconds)(?:$|[_/(])", re.IGNORECASE)
# Means over episodes, boxes, classes or runs; evaluation scores (a PSNR is +inf where the
# output equals its target: PaddleGAN's `Metric psnr: inf` from an evaluation comparing an
# image with itself); spreads; RL rollout statistics (PPO's clip fraction, approximate KL,
# explained variance).
_STATISTIC = lazy_re.compile(
    r"(?:^|[_/.])ep(?:_|len|rew|isode)|episode|rew(?:ard)?|return|success|"
    r"iou|recall|precision|acc|f1|bleu|rouge|auc|(?:^|[_/.])m?a[pr](?:\d*|[sml]|_\w+)?(?:$|[_/.])|"
    r"dice|score|top\d|exact_match|ndcg|mrr|hit|psnr|ssim|"
    r"(?:^|[_/.])(?:std|var|ci|stderr|sem|conf)(?:$|[_/.])|"
    r"explained_var|clip_?frac|approx_?kl|kl_approx|entropy", re.IGNORECASE)
# Errors divided by the target (MAPE, MSPE, sMAPE, WAPE, a relative error): one target of
# exactly 0 in the set makes them inf or NaN whatever the model predicts (a time-series
# forecaster's `denormed mse:4.0965, mae:1.5563, ... mape:inf, mspe:inf` beside finite
# squared and absolute errors), so the value says something of the data, not the weights.
_RELATIVE = lazy_re.compile(r"(?:^|[_/.])(?:s?mape|mspe|wape|mare|rel(?:ative)?_?err(?:or)?)"
                            r"(?:$|[_/.])", re.IGNORECASE)
# tensorboardX's and torch.utils.tensorboard's `NaN or Inf found in input tensor.`
# (`parsing.nonfinite_words` names it `input_tensor`): the input of the summary op, some
# scalar handed to `add_scalar` (often a mean reward over no episode yet, 0/0), not the
# model's input; a NaN loss shows in the loss's own record.
_SUMMARY = lazy_re.compile(r"^input_tensor$")
# A count in the same record: zero of them makes every mean over them 0/0.
_COUNT = lazy_re.compile(r"(?:^|[_/.])(?:count|n|num(?:_\w+)?|\w+_count|instances|targets|boxes|"
                         r"objects|gts?|episodes|samples_seen)$", re.IGNORECASE)


def role_of(name: str, value: float) -> Role:
    """What the metric `name` is, judged by its name (and, for a bound, by the value
    being ±inf: a NaN is never a limit)."""
    if math.isinf(value) and _BOUND.search(name):
        return Role.BOUND
    if _PREVIOUS.search(name):
        return Role.PREVIOUS
    if _SUMMARY.match(name):
        return Role.SUMMARY
    if _OBJECTIVE.search(name):
        return Role.OBJECTIVE
    if _WEIGHTS.search(name):
        return Role.WEIGHTS
    if name in GRAD_NORM_KEYS or _GRADIENT.search(name):
        return Role.GRADIENT
    if _OPTIMIZER.search(name):
        return Role.OPTIMIZER
    if is_bookkeeping(name) or _TIMING.search(name):
        return Role.TIMING
    if _RELATIVE.search(name):
        return Role.RELATIVE
    if _STATISTIC.search(name):
        return Role.STATISTIC
    return Role.OTHER


def finite_objective(metrics: Mapping[str, float]) -> bool:
    """Whether the record shows its objective, finite: something that vouches for the
    weights while another figure beside it is undefined. A loss of exactly 0 vouches for
    nothing: it is how a Hugging Face Trainer prints a NaN it filtered out."""
    return any(v != 0 and math.isfinite(v) and role_of(k, v) is Role.OBJECTIVE
               for k, v in metrics.items())


def empty_set(metrics: Mapping[str, float]) -> bool:
    """Whether the record says the set its means are taken over is empty (`count: 0`)."""
    return any(v == 0 and _COUNT.search(k) is not None for k, v in metrics.items())


def severity_of(name: str, value: float, metrics: Mapping[str, float]) -> tuple[Severity, Role]:
    """How serious a non-finite `value` of `name` is in a record of `metrics`. A
    gradient norm's first, with a finite objective beside it, is MEDIUM here: the rule
    makes it a blocker when the next record's norm is non-finite too."""
    role = role_of(name, value)
    if role is Role.OBJECTIVE and math.isinf(value) and is_eval_metric(name) \
            and any(v != 0 and math.isfinite(v) and role_of(k, v) is Role.OBJECTIVE
                    and not is_eval_metric(k) for k, v in metrics.items()):
        # An evaluation's loss overflowed, the training loss beside it finite (Ultralytics'
        # `results.csv` under AMP: `val/cls_loss` inf for three epochs, then 0.495, mAP
        # rising all along): the sum overflowed, the weights gave a finite training loss.
        # Undefined (NaN) is another matter: that is the model's output.
        return Severity.MEDIUM, role
    if role in (Role.OBJECTIVE, Role.OPTIMIZER, Role.WEIGHTS):
        return Severity.BLOCKER, role
    if role is Role.GRADIENT:
        return (Severity.MEDIUM if finite_objective(metrics) else Severity.BLOCKER), role
    if role in (Role.BOUND, Role.TIMING, Role.PREVIOUS):
        return Severity.LOW, role
    if role in (Role.STATISTIC, Role.RELATIVE, Role.SUMMARY) or empty_set(metrics) \
            or finite_objective(metrics):
        return Severity.MEDIUM, role
    if role is Role.OTHER and _UNNAMED.match(name) is not None and _scored(metrics):
        # A figure with no name, beside a finite score of the model's (nuScenes'
        # per-class rows: `0.29, 0.35, 0.16, nan, nan | 39.72, … | mean AP: 0.567`, the
        # velocity and attribute errors of a class that has none): the model's outputs
        # scored; the NaN is a column undefined for that row.
        return Severity.MEDIUM, role
    return Severity.BLOCKER, role  # nothing vouches for it: never miss a real one


# A column babysit named by its place, having no name of its own (a table's cell the row's
# shape left unnamed: `value4`, or the `nan` token itself).
_UNNAMED = lazy_re.compile(r"^(?:value\d+|nan)$")
_SCORE = lazy_re.compile(r"(?:^|[_/.])(?:m?ap|acc\w*|f1|auc|iou|miou|dice|precision|recall|"
                         r"score|nds|psnr|ssim|bleu|rouge\w*)(?:$|[_/.@\d])", re.IGNORECASE)


def _scored(metrics: Mapping[str, float]) -> bool:
    """Whether the record holds a finite score of the model's, above 0."""
    return any(v > 0 and math.isfinite(v) and _SCORE.search(k) is not None
               for k, v in metrics.items())
