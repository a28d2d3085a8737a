"""Which metric names are an evaluation's, and which way each improves (issue 24).

`metric_names.eval_direction` knows the names that begin with an evaluation prefix
(`val_loss`, `eval/accuracy`) and `eval_trends.held_out_direction` the scores only held-out
data is ever scored on (BLEU, mIoU, WER). Runs name their evaluations in more ways than
that: the held-out set as a suffix (`loss_val`, `acc_test`), as a folder of the data it was
read from (wav2letter's `data/dev-clean-TER`, read as `data/dev_clean_ter`), or not at all
for a score that needs the true labels a model never trains on (a clustering's NMI and
adjusted Rand index). This module reads a name as words (split at `/`, `_`, `-`, `.` and
spaces) so that the evaluation's mark may sit anywhere, and the metric word says the
direction.
"""

from __future__ import annotations

import re
from functools import lru_cache

from babysit.metric_names import ERROR_WORDS, eval_direction
from babysit.rules.eval_trends import held_out_direction

_WORDS = re.compile(r"[/_\-. ]+")
_UNIT = re.compile(r"\([^()]{1,8}\)$|\[[^\[\]]{1,8}\]$|%$")
# A mean average precision's name, at its IoU cut-off or none (`map`, `map50`, `map75`).
_MAP_WORD = re.compile(r"map(?:\d{2})?(?:\([a-z]\))?")
# Words that name a held-out set: a split (`val`, `dev`, `test`), or the set itself.
# (and in the languages scripts are written in: Portuguese `Erro Validação`, Spanish
# `pérdida validación`, Italian, German, Russian)
_EVAL_WORDS = frozenset({"eval", "evaluation", "val", "valid", "validation", "dev", "test",
                         "testing", "heldout", "holdout", "validação", "validacao",
                         "validación", "validacion", "validazione", "validierung",
                         "валидация", "валидации", "тест"})
# Words that make a name something other than one evaluation's figure: the training's own
# (`train_ter` beside `data/dev_clean_ter`), a best-so-far that can only ever improve, a
# count, a timing.
_NOT_EVALUATION = frozenset({"train", "training", "treino", "treinamento", "entrenamiento",
                             "addestramento", "обучение", "best", "min", "max", "time", "runtime",
                             "samples", "steps", "step", "epoch", "epochs", "tokens", "size",
                             "count", "num", "per", "second", "wps", "wpb", "bsz", "ups",
                             "memory", "mem", "throughput", "std", "stdev", "var",
                             # (the latest evaluation restated on every training line:
                             # Darknet's `Last accuracy mAP@0.5 = 40.34 %, best = 40.34 %`)
                             "last"})
# The metric word, by the way it improves. Errors and distances fall (metric_names'
# table); agreement with the truth (accuracy, overlap, agreement between clusterings,
# fidelity of an image) rises.
# (`accu`, `ac`: accuracy cut short, `val_accu`, a hand loop's `valid_ac`; a held-out
# set's word beside it is needed, as for any of these)
_HIGHER = frozenset({"acc", "accuracy", "accu", "ac", "acurácia", "acuracia", "precisão",
                     "exactitud",
                     "accuratezza", "genauigkeit", "точность",
                     "auc", "auroc", "map", "miou", "iou", "dice", "f1",
                     "bleu", "sacrebleu", "psnr", "ssim", "precision", "recall", "meteor",
                     "chrf", "nmi", "ari", "top1", "top5", "reward", "return"})
_TRAINING_RETURN = frozenset({"reward", "return"})
# Scores that need the true labels of data the model was not fitted on: a clustering is
# trained without labels, so its NMI and adjusted Rand index against them are an
# evaluation whatever the line calls them (E2DTC's `Epoch 6  Acc: 0.8913  nmi: 0.8267`).
# A word error rate of the training set says `train` and is left out above.
_HELD_OUT_WORDS = frozenset({"nmi", "ari", "ter"})
# A retrieval's or a ranking's figure at its cut-off (`R@1`, `recall@10`, `ndcg@5`,
# `hit@20`, `mAP@100`): scored on held-out queries, higher is better.
_AT_CUTOFF = re.compile(r"(?:r|recall|hit|hits|hr|ndcg|p|prec|precision|map|mrr|acc)@\d+")
# ... and as retrieval code writes it without the `@` (ALBEF's and BLIP's `val_txt_r1`,
# `test_img_r10`, their mean `val_r_mean`, CLIP retrieval's `rsum`): higher is better,
# counted only under a split's word (`r1` alone may be anything).
_RECALL_AT = re.compile(r"r(?:1|5|10|50|100)|rsum")
_RECALL_WORDS = frozenset({"r", "recall"})
# A perplexity of a codebook's use (wav2vec 2.0's `valid_prob_perplexity` and
# `valid_code_perplexity`, a VQ model's code perplexity) counts the codes in use: no fit to
# held-out data, and falling is the worry, not rising.
_CODEBOOK_WORDS = frozenset({"code", "codes", "codebook", "prob"})


def name_words(key: str) -> list[str]:
    """A metric's name as its lowercase words (split at `/`, `_`, `-`, `.` and spaces),
    without the unit a CSV header puts after it (`test_acc(%)`, `time(s)`, `loss[nats]`)."""
    return [w for w in _WORDS.split(_UNIT.sub("", key.lower())) if w]


@lru_cache(maxsize=4096)
def evaluation_direction(key: str) -> int:
    """+1 when higher is better, -1 when lower is better, for a metric that an evaluation
    on held-out data reports; 0 for any other metric (the training's, a timing, a count,
    a best-so-far)."""
    words = name_words(key)
    if _CODEBOOK_WORDS.intersection(words) and "perplexity" in words:
        return 0
    known = eval_direction(key) or held_out_direction(key)
    if known:
        return known
    if not words or _NOT_EVALUATION.intersection(words):
        return 0
    if any(_MAP_WORD.fullmatch(w) for w in words):
        # A detector's mean average precision (Ultralytics' `metrics/mAP50-95(B)`): only
        # ever scored on held-out images, whatever the name says of the set.
        return 1
    # The metric word is the last that is not the set's: `loss_val`, `acc_test`; nor a
    # number, its order or cut-off (R2Gen's `test_BLEU_4`: BLEU over 4-grams).
    named = [w for w in words if w not in _EVAL_WORDS and not w.isdigit()]
    if not named:
        return 0
    metric = named[-1]
    if _AT_CUTOFF.fullmatch(metric):
        return 1  # a retrieval's figure: only ever scored on held-out queries
    if _EVAL_WORDS.intersection(words) and (
            _RECALL_AT.fullmatch(metric)
            or (metric in ("mean", "sum") and len(named) > 1 and named[-2] in _RECALL_WORDS)):
        return 1
    direction = -1 if metric in ERROR_WORDS or metric.endswith("loss") else \
        1 if metric in _HIGHER or metric.startswith("rouge") else 0
    if direction == 0:
        return 0
    if _EVAL_WORDS.intersection(words) or metric in _HELD_OUT_WORDS:
        return direction
    return 0


@lru_cache(maxsize=4096)
def score_direction(key: str) -> int:
    """+1 for a quality score whose name says nothing of the data it was measured on
    (`dice`, `psnr`, `acc`): higher is better. 0 for any other name (a loss, whose
    training and evaluation figures look alike; the training's, a best-so-far, a count,
    a timing). Whether it is an evaluation's is for its record to say (eval_context)."""
    words = name_words(key)
    if not words or _NOT_EVALUATION.intersection(words) or _CODEBOOK_WORDS.intersection(words):
        return 0
    # A bare reward or return is the training's own: a reinforcement-learning loop prints
    # the episodes it trains on with no loss beside them (`Episode 9730 | Avg Reward:
    # 133.80 | Epsilon: 0.010`); an evaluation's says so (`eval_reward`, above).
    return 1 if words[-1] in _HIGHER and words[-1] not in _TRAINING_RETURN else 0
