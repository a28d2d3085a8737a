"""Which metric is the training loss, the learning rate, the eval score...

Frameworks spell the same quantity many ways (`loss`, `train_loss`, `lm loss`,
`train/loss`). These tables, tried in order, pick the one the rules should watch."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from babysit import lazy_re

LOSS_KEYS = ("loss", "train_loss", "train/loss", "lm_loss", "training_loss", "train_loss_step",
             "loss_step", "train/lm_loss", "total_loss", "loss_total", "train/total_loss",
             "train_lm_loss", "train/loss_step", "objective/loss", "train_loss_epoch",
             "train/crossentropyloss", "reduced_train_loss", "lm loss", "train/ce_loss")
# (`train_lr`: the epoch's rate in the JSON `log.txt` of MAE, DeiT and BEiT)
LR_KEYS = ("lr", "learning_rate", "train/lr", "train_lr", "train/learning_rate", "optimizer/lr",
           "lr_0", "lr_adam", "lr_adamw", "lr_sgd")
GRAD_NORM_KEYS = ("grad_norm", "train/grad_norm", "gradient_norm", "grad_norm_total",
                  "total_norm", "grad_l2_norm", "train/gradient_norm", "gnorm",
                  "optim/total_grad_norm", "grad_gnorm")
# A value-based RL learner's estimate of the return, its Q-value, as trainers print it:
# RLlib's `learner_stats` `mean_q` / `max_q` / `min_q`, `q_mean`, `avg_q`, `mean_q_value`,
# `q_values` (the name whole, after any prefix: not `max_queue`).
_Q_VALUE = lazy_re.compile(r"(?:^|[/_.])(?:(?:mean|max|min|avg|average)_q(?:_values?)?|"
                           r"q_?(?:values?|mean|max))$")


def is_q_value(key: str) -> bool:
    """Whether a metric is a Q-value estimate (a cheap test before the pattern)."""
    return "q" in key and _Q_VALUE.search(key.lower()) is not None


# (key, unit shown to people)
THROUGHPUT_KEYS = (
    ("samples_per_second", "samples/s"), ("samples/s", "samples/s"),
    ("train/samples_per_second", "samples/s"), ("samples_per_sec", "samples/s"),
    ("throughput", "samples/s"), ("tokens_per_second", "tokens/s"),
    ("tokens_per_sec", "tokens/s"), ("tok/s", "tokens/s"), ("tokens/s", "tokens/s"),
    ("tps", "tokens/s"), ("steps_per_second", "steps/s"), ("it/s", "it/s"),
)
# How long one step took, as runs print it, and the factor to seconds: the inverse is a
# throughput (steps/s). Megatron-LM `elapsed time per iteration (ms): 170.6`, `step_time`,
# `sec/iter`, `time/iter` (a log that prints a time per step and no rate).
STEP_TIME_KEYS = (
    ("elapsed_time_per_iteration_(ms)", 1e-3), ("step_time", 1.0), ("step_time_ms", 1e-3),
    ("train/step_time", 1.0), ("sec/iter", 1.0), ("s/it", 1.0), ("time/iter", 1.0),
    ("time_per_step", 1.0), ("time_per_iteration", 1.0), ("iter_time", 1.0),
)

# The figure a run's own goal names (FANN's `Desired error: 0.001`): its error or loss.
# Words that make a figure a best-so-far or a bound (`lowest train loss`, `best_loss`,
# `max_reward`): infinite until the first value by design, never the figure measured now.
BEST_SO_FAR_WORDS = ("lowest", "highest", "best", "min", "max", "minimum", "maximum")
GOAL_FIGURE = lazy_re.compile(r"error|mse|loss", re.IGNORECASE)
_EVAL_PREFIX = lazy_re.compile(r"^(?:eval|val|valid|validation|dev)[_/]")
# The words of a name that falls as things get better: errors and distances, in English and
# in the languages training scripts are written in (Portuguese `Erro Validação`, Spanish
# `pérdida`, Italian, German, Russian). One table for every rule that asks which way a
# metric improves; whole words, because some are parts of other words (`ter` of `iter`).
# (`ade`, `fde`: a trajectory forecaster's average and final displacement errors, in metres)
ERROR_WORDS = frozenset({"loss", "nll", "ppl", "perplexity", "error", "err", "wer", "cer", "ter",
                         "ade", "fde", "minade", "minfde",
                         "mse", "mae", "rmse", "mape", "smape", "wape", "mase", "rmsle", "msle",
                         "bpb", "bpc", "erro", "errore", "fehler", "perda",
                         "pérdida", "perdida", "perdita", "verlust", "ошибка", "потери"})
_NAME_WORDS = lazy_re.compile(r"[/_\-. ]+")
# ... and the stems that say it inside a longer name (`val_loss`, `eval_ppl`, `valid_rmse`).
# (a percentage error, `mape`, `smape`, `wape`, is an error, not a mean average precision)
_LOWER_IS_BETTER = lazy_re.compile(r"loss|perplexity|ppl|error|wer|cer|mse|mae|rmse|nll|bpb|bpc|"
                                   r"s?mape|wape|mase|msle")
# (`roc` and `ap` as whole words: the area under the ROC curve and the average
# precision, as tkipf/gae prints them, `val_roc= 0.91785 val_ap= 0.93544`.)
# (a rank correlation with human judgements is a sentence-embedding model's score:
# SimCSE's `eval_stsb_spearman`, `eval_avg_sts`; retrieval's `ndcg@10`, `mrr`)
_HIGHER_IS_BETTER = lazy_re.compile(r"acc|f1|bleu|rouge|auc|precision|recall|map|exact_match|"
                                    r"score|iou|dice|meteor|chrf|top\d|pass@|spearman|pearson|"
                                    r"kendall|ndcg|mrr|(?:^|[_/])sts(?:$|[_/])|"
                                    r"(?:^|[_/])(?:roc|ap)(?:$|[_/@])")
_NOT_QUALITY = lazy_re.compile(r"runtime|per_second|samples|steps|_time|throughput|epoch|"
                               r"memory|flos|tokens")


def first_present(keys: Iterable[str], metrics: Iterable[str]) -> str | None:
    names = set(metrics)
    return next((k for k in keys if k in names), None)


def is_eval_metric(key: str) -> bool:
    return _EVAL_PREFIX.match(key) is not None


def lower_is_better(key: str) -> bool:
    """Whether a metric's name says it falls as things get better (a loss, an error, a
    perplexity), whatever data it was measured on."""
    return (_LOWER_IS_BETTER.search(key) is not None
            or not ERROR_WORDS.isdisjoint(_NAME_WORDS.split(key.lower())))


@lru_cache(maxsize=4096)
def eval_direction(key: str) -> int:
    """+1 when higher is better, -1 when lower is better, 0 when it is not a quality
    metric (eval runtime, throughput) and must not be judged."""
    if not is_eval_metric(key) or _NOT_QUALITY.search(key):
        return 0
    if lower_is_better(key):
        return -1
    if _HIGHER_IS_BETTER.search(key):
        return 1
    return 0


def throughput_key(metrics: Iterable[str]) -> tuple[str, str] | None:
    names = set(metrics)
    return next(((k, unit) for k, unit in THROUGHPUT_KEYS if k in names), None)


def step_time_key(metrics: Iterable[str]) -> tuple[str, float] | None:
    """The key of a time per step, and its factor to seconds (None: none printed)."""
    names = set(metrics)
    return next(((k, scale) for k, scale in STEP_TIME_KEYS if k in names), None)


def key_metrics(metrics: Mapping[str, float], limit: int = 12) -> dict[str, float]:
    """The metrics worth a glance, most telling first: losses, eval scores, learning
    rate and gradient norm, then the rest."""
    def rank(key: str) -> int:
        if "loss" in key:
            return 0
        if eval_direction(key):
            return 1
        if "lr" in key or "learning_rate" in key or "grad" in key:
            return 2
        return 3
    keys = sorted(metrics, key=lambda k: (rank(k), k))[:limit]
    return {k: metrics[k] for k in keys}


_NOT_TRAINING_SIGNAL = lazy_re.compile(
    r"(?:^|[_/])(?:time|times|timing|eta|elapsed|runtime|mem|memory|"
                                  r"step_avg|ms)(?:$|[_/])|_ms$|_sec$|_s$|per_second|/s$|it/s|"
                                  r"throughput|samples|tokens|tok/s|tps|flops|mfu|"
    # a setting the run printed (`=> setting grad_accum_steps=16`, `batch_size: 32`)
                                  r"(?:^|_)setting(?:$|_)|(?:^|[_/])num_|_steps$|_size$|"
    # which checkpoint an evaluation loaded (SpeechBrain's `Epoch loaded: 50 - test loss:
    # …`, printed once fit() is over): a count of where training stood, not more of it
                                  r"(?:^|_)(?:epoch|step|iter|iteration)_(?:loaded|restored)"
                                  r"(?:$|_)|(?:^|_)(?:loaded|restored)_(?:epoch|step|iter|"
                                  r"iteration)(?:$|_)")


def is_bookkeeping(key: str) -> bool:
    """Timings, throughput, memory and settings: a NaN there (a timer before its first
    step) says nothing about the weights, and a line of them alone is no training."""
    return _NOT_TRAINING_SIGNAL.search(key) is not None


# A counter, a setting or a count of the data: no figure of how well the model does.
_NOT_A_MEASURE = lazy_re.compile(
    r"(?:^|[_/ ])(?:lr|learning_rate|epoch|epochs|step|steps|iter|iters|iteration|batch|"
    r"labels|instances|img_size|it|eta)(?:$|[_/ ])")


def measures_learning(key: str) -> bool:
    """Whether a metric is a figure of how well the model does (a loss, an accuracy, a
    reward), not a timing, a setting or a counter: a finished run with none of them
    shows nothing of what it learned."""
    return not is_bookkeeping(key) and _NOT_A_MEASURE.search(key.lower()) is None


def sampled_policy(metrics: Mapping[str, float]) -> bool:
    """Whether a record is a policy's trained on its own samples (GRPO, RLOO, online RL
    from a reward: `reward` and `reward_std` beside the `loss`, TRL's `completions/…`
    lengths): not a preference pair's (DPO's `rewards/chosen`, whose loss does fall)."""
    return ("reward" in metrics or "reward_std" in metrics) \
        and any(key.startswith("completions/") or key.startswith("clip_ratio")
                or key == "frac_reward_zero_std" for key in metrics)
