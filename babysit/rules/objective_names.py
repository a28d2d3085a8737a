"""Which metric is the run's training objective when none of the usual loss names is
there (issue 24): the rules that judge a loss (spikes, divergence, not learning, an
evaluation getting worse while training improves) need to know it, whatever the run
calls it.

Tried in order, on the names of one record:

1. a loss under a name of its own, the total first (`tot_loss` beside `loc_loss` and
   `cls_loss`; Chainer's `main/loss`; `avr_loss`), never an evaluation's, a best-so-far,
   a weight, or a reinforcement-learning or GAN player's loss (those need not fall);
2. a cross-entropy by its short names (OpenNMT's `xent`, `nll`, `bce`);
3. a perplexity (`ppl`): the exponential of a cross-entropy, rising and falling with it;
   then a cost (`cost`, `train_cost`) or an objective (`obj`); then a regression's error
   on the training set (`rmse_trn`, `train_mse`); then a loss named by its function alone
   (`L1`, `charbonnier`);
4. a training figure named for training and nothing else (TEACH's `Train_rf`, a bare
   `train`): not a score, a rate, a time or a count.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from babysit import lazy_re

_LOSS_NAME = lazy_re.compile(r"loss", re.IGNORECASE)
# Names of a loss that is not the training's own (an evaluation's, a best or a bound, a
# scale or a weight): shared with `no_progress`.
NOT_TRAIN_LOSS = lazy_re.compile(
    r"(^|[/_ .-])(val|valid|validation|eval|test|dev)|best|min_|max_|scale|weight|coef",
    re.IGNORECASE)
# Reinforcement learning's losses (policy, value, entropy, KL terms) need not fall as
# the policy learns: its reward says.
# (PPO's clipped `surrogate` loss is its policy's: rsl_rl's `Surrogate loss`)
RL_LOSS = lazy_re.compile(r"pg_|policy|actor|critic|value|entropy|kl|surrogate", re.IGNORECASE)
# Nor a GAN's two players' (each rises as the other wins).
GAN_LOSS = lazy_re.compile(r"(^|[/_])(d|g|disc|gen|discriminator|generator|adv)_?loss|"
                           r"loss_?(d|g|disc|gen|adv)\b", re.IGNORECASE)
_TOTAL = lazy_re.compile(r"(^|[/_ .-])(tot|total|sum|overall|all|full)([/_ .-]|$)",
                         re.IGNORECASE)
_TRAINING_LOSS = lazy_re.compile(r"(^|[/_ .-])train(ing)?[/_ .-](avg_|mean_|average_)?loss$|"
                                 r"^(avg|mean|average|averaged)_train(ing)?_loss$",
                                 re.IGNORECASE)
# A loss named by how it was reduced or when, no part's name in it (a federated
# simulation's `Avg Loss: 17.2` per round, `epoch_loss`, `loss_avg`; not a `running_loss`,
# which may be a sum that grows through the epoch), or
# the global model's (federated averaging's `Global model loss`): the whole objective, as
# a bare `loss` is.
_WHOLE_LOSS = lazy_re.compile(r"^(?:(?:avg|mean|average|averaged|epoch|batch|smoothed|"
                              r"smooth|ema|cur|current)[/_ .-])+loss$|"
                              r"^loss[/_ .-](?:avg|mean|average|ema|smoothed|epoch|batch)$|"
                              # (a federated run's `Global model loss`: the aggregate's)
                              r"^global(?:[/_ .-]model)?[/_ .-]loss$",
                              re.IGNORECASE)
# (per frame or per token, as Kaldi's objective is read: `nll_per_frame`)
# (a log loss is a binary cross-entropy by its other name: ctrNet's `logloss 0.365`)
# (a likelihood model's negative log-likelihood in bits per dimension, character or byte:
# a normalizing flow's `Bits/dim: 8.664`, a PixelCNN's `bpd`, a char-LM's `bpc`)
_CROSS_ENTROPY = lazy_re.compile(r"(^|[/_ .-])(xent|nll|bce|log_?loss|cross_?entropy|bpd|bpc|"
                                 r"bits/dim|bits_per_dim|bits_per_char)"
                                 r"(_per_(frame|token))?$", re.IGNORECASE)
_PERPLEXITY = lazy_re.compile(r"(^|[/_ .-])(ppl|perplexity)$", re.IGNORECASE)
# A cost (cs231n's solvers `Finished epoch 43 / 60: cost 0.228707, train: 0.917000, val
# 0.714000`, Andrew Ng's `Cost after iteration 100`): the objective, whatever the bare
# `train` beside it measures (there, the training accuracy). Or the objective by its own
# name (Wapiti's and CRFsuite's L-BFGS trainers: `[   2] obj=16052.89   act=201733`) —
# but a bare `obj` beside a detector's measures is its objectness, a score (Darknet's
# `Region 94 Avg IOU: 0.027643, Class: 0.539611, Obj: 0.725820, No Obj: 0.458542`).
_COST = lazy_re.compile(r"(^|[/_ .-])(train(ing)?_)?(cost|obj|objective)$", re.IGNORECASE)
# A cost in time or compute is no objective (GluonCV's `[Epoch 0] speed: 1485 samples/sec
# time cost: 886.52`, the epoch's seconds; PaddlePaddle's `batch_cost: 0.79930 sec
# reader_cost: 0.04453 sec`, a batch's and its data loading's).
_COST_OF_TIME = lazy_re.compile(r"(^|[/_ .-])(time|wall|clock|secs?|seconds|duration|elapsed|"
                                r"compute|comm|communication|memory|batch|reader|data|io)"
                                r"[/_ .-]", re.IGNORECASE)
# A regression's error on the training set, named by its measure and that split alone
# (DeePMD's `lcurve.out`: `rmse_trn` beside its parts `rmse_e_trn` and `rmse_f_trn`;
# `train_mse`): the quantity the optimiser drives down, the loss by another name.
_TRAIN_ERROR = lazy_re.compile(r"^(?:(?:train|training|trn)[/_ .-](?:rmse|mse|mae)|"
                               r"(?:rmse|mse|mae)[/_ .-](?:train|training|trn))$",
                               re.IGNORECASE)
# A loss named by its function alone (EDSR-PyTorch's `[800/7800]\t[L1: 17.2393]`, an
# image restorer's `charbonnier`): the objective, when it is the record's only figure,
# beside a counter of its own with a total. Not otherwise: ProtoPNet's `\tl1: \t4475.59`,
# a line of an epoch's block under `cross ent:`, is its last layer's weight norm, and
# EDSR's `[L1: …][VGG54: …][Total: …]` sums its terms.
# (Not `mse` or `mae`: as often a score the run reports beside its loss, `MAE=2.18`.)
_LOSS_FUNCTION = lazy_re.compile(r"^(?:l1|l2|smooth_?l1|huber|charbonnier)$", re.IGNORECASE)
_OBJECTNESS = lazy_re.compile(r"^obj$", re.IGNORECASE)
_DETECTOR = lazy_re.compile(r"iou|recall|class|no_?obj", re.IGNORECASE)
# (`train` alone too: build-nanogpt's `log.txt` names its loss by the split only,
# `4767 train 11.57`, beside `val` and `hella`.)
_TRAIN_ONLY = lazy_re.compile(r"^train(ing)?([/_ .-]|$)", re.IGNORECASE)
_SPLIT_ONLY = lazy_re.compile(r"^train(ing)?$", re.IGNORECASE)
_NOT_OBJECTIVE = lazy_re.compile(
    r"acc|f1|auc|score|iou|dice|map|precision|recall|bleu|rouge|err|reward|return|"
    r"lr|learning|rate|time|epoch|step|iter|sample|batch|memory|mem|token|tok|throughput|"
    r"speed|norm|grad|size|count|num|len", re.IGNORECASE)


def loss_key(metrics: Iterable[str]) -> str | None:
    """A training loss among metric names (tier 1 above), or None."""
    return _loss_key(tuple(metrics))


@functools.lru_cache(maxsize=256)
def _loss_key(names: tuple[str, ...]) -> str | None:
    losses = [k for k in names if _LOSS_NAME.search(k) and not NOT_TRAIN_LOSS.search(k)
              and not RL_LOSS.search(k) and not GAN_LOSS.search(k)]
    return next((k for k in losses if _TOTAL.search(k)), losses[0] if losses else None)


def objective_key(metrics: Iterable[str], whole_only: bool = False,
                  totals: bool = True, by_function: bool = False) -> str | None:
    """The training objective among metric names when no known loss key is there: a
    loss by another name, a cross-entropy, a perplexity or a figure named for training
    (in that order); None when none is. With `whole_only`, only a name that stands for
    the whole objective: a total loss, a cross-entropy or a perplexity (a part of a
    sum, `box_loss` of a detector's three, swings far more than the sum: its jumps are
    no spike of the run's, though it shows well enough whether anything is learned).
    Without `totals`, not a total loss by another name either. With `by_function`, a loss
    named by its function alone (`L1`) counts, where the record is that figure alone
    against its counter and the counter's total (see `_LOSS_FUNCTION`)."""
    return _objective_key(tuple(metrics), whole_only, totals, by_function)


@functools.lru_cache(maxsize=256)
def _objective_key(names: tuple[str, ...], whole_only: bool, totals: bool,
                   by_function: bool = False) -> str | None:
    found = _loss_key(names)
    if found is not None and (not whole_only or (totals and _TOTAL.search(found))
                              or _TRAINING_LOSS.search(found) or _WHOLE_LOSS.match(found)):
        # (a loss named for the training, `Averaged Train Loss`, is its whole objective:
        # a part of a sum is named for what it scores, `box_loss`)
        return found
    for pattern in (_CROSS_ENTROPY, _PERPLEXITY, _COST, _TRAIN_ERROR):
        found = next((k for k in names if pattern.search(k)
                      and not NOT_TRAIN_LOSS.search(k) and not _COST_OF_TIME.search(k)), None)
        if found is not None and _OBJECTNESS.match(found) \
                and any(_DETECTOR.search(k) for k in names):
            continue  # a detector's objectness, not an objective
        if found is not None:
            return found
    if by_function and len(names) == 1 and _LOSS_FUNCTION.match(names[0]):
        return names[0]
    if whole_only:
        # A figure named by its split alone (`train`) is that split's whole measure, no
        # part of a sum.
        return next((k for k in names if _SPLIT_ONLY.match(k)), None)
    return next((k for k in names if _TRAIN_ONLY.search(k)
                 and not _NOT_OBJECTIVE.search(k[6:])), None)
