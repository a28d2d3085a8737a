"""The generic line formats — JSON lines, Hugging Face dicts, `key=value` / `key: value`
pairs — and the `Parsed` value every line parser returns.

Parsers of one framework's own lines live in `frameworks`. Each `parse_*` takes one
cleaned text segment and returns a `Parsed` or None; they are tried in
`metric_lines.LINE_PARSERS` order and the first that recognises the segment wins.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import field, replace
from typing import Any

from babysit import lazy_re
from babysit.metric_names import is_q_value
from babysit.model import line_value
from babysit.parsing.text import normalise_key, number_from, to_number


@line_value
class Parsed:
    fmt: str
    step: int | None = None
    target: int | None = None
    epoch: float | None = None
    total_epochs: int | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    per_epoch: int | None = None  # batches in one epoch, when the line says
    rank: int | None = None  # the rank the line names as one of its fields (`… rank 2`)
    # The step is a counter with no name and no total (`Train 249, loss: …`, `[  2]
    # obj=…`): the loop's, whatever it counts (see `parser`: epochs, where the plan says)
    unnamed: bool = False


# Keys that count progress rather than measure training.
STEP_KEYS = ("step", "global_step", "global_steps", "iter", "iters", "iteration", "iter_num",
             "_step", "trainer/global_step", "train/global_step", "train/step", "num_steps",
             "steps", "current_steps", "current_step")
TARGET_KEYS = ("max_steps", "total_steps", "max_iters", "train_iters", "num_training_steps",
               "target_steps")
EPOCH_KEYS = ("epoch", "train/epoch", "trainer/epoch", "epoch_id", "epoch_no", "epoch_number")
_COUNTER_KEYS = frozenset(STEP_KEYS + TARGET_KEYS + EPOCH_KEYS + (
    "v_num", "_runtime", "_timestamp", "timestamp", "time", "eta", "rank", "local_rank",
    "world_size", "pid", "total_epochs", "max_epochs", "num_epochs", "episode"))


_TOTAL_EPOCH_KEYS = ("total_epochs", "max_epochs", "num_epochs")
_PASS_EPOCH_KEYS = (*EPOCH_KEYS, "pass")


def split_counters(values: Mapping[str, float], fmt: str = "") -> Parsed:
    """Pull step/target/epoch out of a flat key→number map; the rest are metrics."""
    names = tuple(values)
    plan = _PLANS.get(names)
    if plan is None:
        plan = _plan(names)
    step_key, target_key, epoch_key, total_key, counters = plan
    if not counters:
        return Parsed(fmt, metrics=dict(values))
    epoch = values[epoch_key] if epoch_key is not None else None
    return Parsed(fmt,
                  _int_or_none(values[step_key]) if step_key is not None else None,
                  _int_or_none(values[target_key]) if target_key is not None else None,
                  epoch if epoch is not None and math.isfinite(epoch) else None,
                  _int_or_none(values[total_key]) if total_key is not None else None,
                  {k: v for k, v in values.items() if k not in counters})


_Plan = tuple[str | None, str | None, str | None, str | None, frozenset[str]]
# Which of a line's names are its step, planned total, epoch and planned epochs, by the
# names it has: a log prints the same few shapes of line over and over.
_PLANS: dict[tuple[str, ...], _Plan] = {}


def _plan(names: tuple[str, ...]) -> _Plan:
    present = _COUNTER_KEYS.intersection(names)
    if "pass" in names and "batch" in names:
        # PaddlePaddle v1's trainer counts its epochs as passes over the data: `Pass=49
        # Batch=1472 samples=188399 AvgCost=9.22` (a `pass` alone may be anything)
        present = present | {"pass"}
    plan = (_first(STEP_KEYS, present), _first(TARGET_KEYS, present),
            _first(_PASS_EPOCH_KEYS, present), _first(_TOTAL_EPOCH_KEYS, present), present)
    if len(_PLANS) >= 512:
        _PLANS.clear()
    _PLANS[names] = plan
    return plan


def _first(keys: tuple[str, ...], present: frozenset[str]) -> str | None:
    return next((key for key in keys if key in present), None)


def _int_or_none(value: float | None) -> int | None:
    if value is None or not math.isfinite(value):
        return None
    return int(value)


# --- JSON lines -------------------------------------------------------------------

_MAX_JSON_DEPTH = 8  # metrics nest a level or two; anything deeper is not a metric
_MAX_JSON_KEYS = 512


_COCO_STATS = lazy_re.compile(r"coco_eval_(?:bbox|segm|keypoints)$")
_COCO_STAT_NAMES = ("map", "map50", "map75")


def _flatten(obj: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """(`a/b/c`, value) pairs, breadth first, without recursion and within bounds, so a
    hostile line cannot exhaust the stack or the time."""
    queue: list[tuple[str, Mapping[str, Any], int]] = [("", obj, 0)]
    emitted = 0
    while queue:
        prefix, mapping, depth = queue.pop(0)
        for key, value in mapping.items():
            name = f"{prefix}/{key}" if prefix else str(key)
            if isinstance(value, Mapping):
                if depth + 1 < _MAX_JSON_DEPTH:
                    queue.append((name, value, depth + 1))
                continue
            if isinstance(value, list) and _COCO_STATS.search(name) \
                    and len(value) in (10, 12) and all(
                        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
                # COCOeval's `stats`, in pycocotools' fixed order (AP, AP50, AP75 first),
                # as every DETR-family `log.txt` writes it: `"test_coco_eval_bbox": [0.0,
                # …]`. -1 is its word for "no such objects", not a score.
                for stat, figure in zip(_COCO_STAT_NAMES, value, strict=False):
                    if figure != -1:
                        yield f"{name}_{stat}", figure
                continue
            yield name, value
            emitted += 1
            if emitted >= _MAX_JSON_KEYS:
                return


def parse_json_line(segment: str) -> Parsed | None:
    """`{"step": 10, "train": {"loss": 2.3}}`; nested keys flatten to `train/loss`.
    Python's json module accepts NaN/Infinity, which is how json.dumps writes them."""
    text = segment.strip()
    if not text.endswith("}"):
        return None
    if not text.startswith('{"'):
        # A label before the object (PySlowFast's `json_stats: {"_type": "train_iter_", …}`)
        at = text.find('{"')
        if at <= 0 or not text[:at].rstrip().endswith((":", "=")):
            return None
        text = text[at:]
    try:  # a text that opens with `{"` decodes to an object or not at all
        obj = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested thousands deep
        return None
    if not isinstance(obj, dict):
        return None
    if _json_settings(obj):
        return None
    split = _split_named(obj)
    values: dict[str, float] = {}
    counted: dict[str, tuple[int, int]] = {}
    for key, value in _flatten(obj):
        number = number_from(value)
        if number is None:
            if isinstance(value, str) and (kind := _counted_as_string(key)) is not None \
                    and (found := _N_OF.match(value)) is not None:
                counted[kind] = (int(found.group(1)), int(found.group(2)))
            continue
        name = normalise_key(key)
        if split and name not in _COUNTER_KEYS:
            name = f"{split}_{name}"
        if isinstance(value, str) and not math.isfinite(number) \
                and not any(hint in name for hint in _METRIC_HINTS):
            continue  # the word "nan" as a note or a label, not a measured value
        values[name] = number
    if not values:
        return None
    if split:
        # (an evaluation's own iterations, not the training's: mmcv's `{"mode": "val",
        # "epoch": 4, "iter": 360, "mIoU": 0.0998}`, the 360 its loader's length — read as
        # a step it sent the run back from 650 at every evaluation)
        values = {k: v for k, v in values.items() if k not in _PASS_ITERATIONS}
    parsed = split_counters(values, "jsonl")
    if not counted:
        return parsed
    epoch, batch = counted.get("epoch"), counted.get("step")
    if split:
        batch = None  # an evaluation's batches count its pass, not training's steps
    if epoch is not None and batch is not None:
        # `"epoch": "1/20", "iter": "10/316"`: the batch of its epoch (placed in the run
        # as `[e/E][n/N]` is, see metric_lines)
        return Parsed("epoch-batch", batch[0], batch[1], float(epoch[0]), epoch[1],
                      parsed.metrics, per_epoch=batch[1])
    if epoch is not None:
        return replace(parsed, epoch=float(epoch[0]), total_epochs=epoch[1])
    if batch is not None:
        return replace(parsed, step=batch[0], target=batch[1])
    return parsed


def _json_settings(obj: Mapping[str, Any]) -> bool:
    """A JSON object that is the run's configuration, printed once at its start (OneIE's
    `{"coref": true, "bert_model_name": "roberta-large", …, "max_epoch": 60, …}`), not a
    record of training: flags (true, false, null) among its words, so many and so large
    a share of its values as make a configuration of a Python dict (`_CONFIG_WORDS`), or
    a planned count by its name among them. A record's words are labels and times
    (PySlowFast's `"_type"`, `"eta"`, `"gpu_mem"`), never flags; and a record names the
    step or the epoch it is at (babysit's own hook writes a flag beside its `"step": 5`)."""
    if any(isinstance(value, (int, float)) and not isinstance(value, bool)
           and normalise_key(str(key)) in _AT_COUNTERS for key, value in obj.items()):
        return False
    scalars = [value for value in obj.values() if not isinstance(value, Mapping)]
    words = [value for value in scalars if value is None or isinstance(value, bool)
             or (isinstance(value, str) and number_from(value) is None)
             or (isinstance(value, list) and not all(
                 isinstance(v, (int, float)) and not isinstance(v, bool) for v in value))]
    if len(words) < _CONFIG_WORDS or len(words) < _CONFIG_SHARE * len(scalars):
        return False
    return any(value is None or isinstance(value, bool) for value in words) \
        or any(_PLANNED_COUNT.match(normalise_key(str(key))) for key in obj)


_AT_COUNTERS = frozenset(STEP_KEYS + EPOCH_KEYS) - {"num_steps", "steps"}


# Counters a JSON line may give as text, `"epoch": "1/20"` (PySlowFast's json_stats),
# `"global_step/max_steps": "410/438"` (ms-swift's logging.jsonl): the name's first part.
_EPOCH_NAMES = frozenset(("epoch", "epochs"))
_STEP_NAMES = frozenset(("iter", "iters", "iteration", "iterations", "step", "steps",
                         "global_step", "globalstep", "update", "updates"))


def _counted_as_string(key: str) -> str | None:
    """`epoch` or `step` for a JSON key whose text value may be `n/N`; None otherwise."""
    head = key.lower().split("/", 1)[0].strip()
    return "epoch" if head in _EPOCH_NAMES else "step" if head in _STEP_NAMES else None


_PASS_ITERATIONS = frozenset(("iter", "iters", "iteration", "iterations"))
_N_OF = lazy_re.compile(r"^\s*(\d{1,9})\s*/\s*(\d{1,9})\s*$")
# The field that says which split a JSON line measured (`"_type": "val_epoch"`, mmcv's
# `"mode": "val"`), and the words of a split that is not training.
_SPLIT_FIELDS = ("_type", "type", "mode", "split", "phase")
_HELD_OUT = lazy_re.compile(r"^(val|valid|validation|eval|test)(?:_|$)")


def _split_named(obj: Mapping[str, Any]) -> str:
    """The held-out split a JSON record names in a field of its own (`val`, `test`), so
    that its measures are not taken for training's; "" otherwise."""
    for name in _SPLIT_FIELDS:
        value = obj.get(name)
        if isinstance(value, str):
            found = _HELD_OUT.match(value.strip().lower())
            return found.group(1) if found is not None else ""
    return ""


# --- Hugging Face Trainer ---------------------------------------------------------

# `{'loss': 2.34, 'grad_norm': nan, ...}` (4.x) or `{'loss': '2.34', ...}` (5.x).
_HF_PAIR = lazy_re.compile(r"'([^']+)':\s*'?([^,'}\s]+)'?")
# Values in a dict that are no numbers (words, paths, flags), at least so many and so large
# a share of its pairs: a configuration (a metric dict may carry one, `'phase': 'train'`).
_CONFIG_WORDS = 3
_CONFIG_SHARE = 0.2
# A dict its line introduces as settings (in any language that borrows the word: `Config:`,
# `Configurando LoRA:`, `training args:`, `hparams`): the run's configuration.
_CONFIG_HEAD = lazy_re.compile(
    r"(?i)\b(?:conf(?:ig\w*)?|(?:\w+_)?cfg|settings?|args|arguments|kwargs|hparams|"
    r"hyper-?param\w*|options|parameters|params?|"
    # (or its parts' weights: AutoGluon's `Ensemble Weights: {'CatBoost_BAG_L1': 0.238, …}`
    # after each ensemble's fit, a loss's `Loss weights: {'ce': 1.0, 'dice': 0.5}`)
    r"weights)\b")
# A configuration written as a Python call (OpenMMLab's config dump: `optim_wrapper =
# dict(optimizer=dict(type='Adam', lr=0.0005))`, `param_scheduler = [dict(type=…`): the
# keywords of a call, one of them a quoted name (a training record names no `type='…'`),
# or a call whose first argument is a keyword (`AdamW(lr=0.001667, momentum=0.9)`,
# `Namespace(epochs=3, lr=0.1)`): a constructor's settings. Not a tensor's repr
# (`tensor(0.52, device='cuda:0')`): a value.
_CONFIG_CALL = lazy_re.compile(r"\b(?!tensor\()\w+\((?:[^()]*,\s*)?\w+=(?:'[^']*'|\"[^\"]*\")|"
                               r"\b(?!tensor\()[A-Za-z_]\w*\(\s*[A-Za-z_]\w*=")
# A setting quoted in a sentence (Ultralytics: `'optimizer=auto' found, ignoring 'lr0=0.01'
# and 'momentum=0.937'`): words about a value, not a measured one.
_QUOTED_SETTING = lazy_re.compile(r"'[^'\s=]+=[^'\s]*'|\"[^\"\s=]+=[^\"\s]*\"")
_HAS_LETTER = lazy_re.compile(r"[A-Za-z]")
_EQUALS_WORD = lazy_re.compile(r"=[A-Za-z]")
# `key=value` pairs whose value is a word: so many, and so large a share of a line's
# pairs, make it a configuration (Ultralytics' `task=detect, mode=train, model=yolov8m.pt,
# data=data.yaml, epochs=100, …`), printed once, not a record of training.
_WORD_PAIR = lazy_re.compile(r"(?<![\w.])[A-Za-z_]\w*=(?P<value>[^\s,;)]+)")


# A planned count by its name: how many epochs or steps the run is to train.
# (the singular behind a qualifier too, OneIE's `"max_epoch": 60`: a record names the epoch
# it is at bare)
_PLANNED_COUNT = lazy_re.compile(r"^(?:(?:num|n|max|total|num_train|train)_)?epochs$|"
                                 r"^(?:num|n|max|total|num_train)_epoch$|"
                                 r"^(?:num|n|max|total)_(?:steps|iters|iterations)$")


def parse_hf_dict(segment: str) -> Parsed | None:
    start = segment.find("{'")
    if start < 0:
        return None
    if start and segment[start - 1] == '"' and segment.rstrip()[-1:] != "}" \
            and '",' in segment:
        return None  # a dict quoted as one cell of a CSV row (the shapes read the row)
    if start and _CONFIG_HEAD.search(segment, 0, start) is not None:
        return None  # `Config:{'feat_dim': 512, …}`, `Configurando LoRA: {'r': 16, …}`
    end = segment.find("}", start)
    pairs = _HF_PAIR.findall(segment, start, end if end > 0 else len(segment))
    try:  # the usual dict: every value a plain number, read in one comprehension
        values = {normalise_key(key): float(value) for key, value in pairs}
    except ValueError:
        values = {}
        for key, value in pairs:
            try:
                number: float | None = float(value)
            except ValueError:
                number = to_number(value)
            if number is not None:
                values[normalise_key(key)] = number
        words = len(pairs) - len(values)
        if words >= _CONFIG_WORDS and words >= _CONFIG_SHARE * len(pairs):
            # Names, paths and flags among the numbers (`{'train_bs': 128, 'device':
            # 'cuda:4', 'load_ckpt': False, …}`): the run's configuration, printed once
            # at its start, not a record of its training.
            return None
    if not values:
        return None
    if any(_PLANNED_COUNT.match(key) for key in values):
        # A planned count among its names (`{'device': 'cpu', 'num_layers': 2, 'epochs': 50,
        # 'batch_size': 32, …}`, an OGB script's arguments at its start): the run's
        # configuration, not a record of training (a record names the epoch it is at).
        return None
    if all(v == int(v) for v in values.values() if math.isfinite(v)) \
            and not looks_like_metrics(values) and not names_a_measure(values):
        # Whole numbers under names that measure nothing: counts or settings (HydraGNN's
        # `Number of calls to timers:` then `{'create_model': 1, 'train_validate_test':
        # 1}` after its last epoch), not a record of training.
        return None
    parsed = split_counters(values, "hf-trainer")
    split = _SPLIT_LABEL.search(segment, 0, start) if start else None
    if split is None:
        return parsed
    # A dict its line labels as one split's figures (an MVSNet script's `avg_test_scalars:
    # {'loss': 5.08, …}` after each epoch's test pass; `val_metrics: {…}`): its figures
    # are that split's, not the training's, under names that say so.
    word = split.group(1).lower()
    prefix = "test" if word == "test" else "eval" if word == "eval" else "val"
    return replace(parsed, metrics={k if EVALISH.search(k) else f"{prefix}_{k}": v
                                    for k, v in parsed.metrics.items()})


# The label a dict's line gives it, naming a split: `avg_test_scalars:`, `val_metrics =`,
# `Validation results`; the word glued to others by `_` or apart (not a file's name,
# `test.py:12`).
_SPLIT_LABEL = lazy_re.compile(r"(?i)(?:^|[\s_\[(])(test|val|valid|validation|eval|dev)"
                               r"(?:[_ ][a-z]+)?\s*[:=]?\s*$")
# A metric name that says its split: `eval_loss`, `val/acc`, `test_f1`.
EVALISH = lazy_re.compile(r"(?:^|[_/])(?:eval|val|valid|validation|test|dev)(?:[_/]|$)")


# --- generic `key=value` / `key: value` -----------------------------------------------

_KV = lazy_re.compile(
    # Up to three words before a colon name one metric: `Train Loss: 0.04`,
    # `Validation L1 Loss: 0.5`, `grad norm = 1.2`.
    # (`@`: a retrieval metric at its cut-off, `R@1`, `ndcg@10`)
    # (a name in brackets, a hand-written logger's `[epoch]: 199, [batch]: 24000, [loss]: 4.99`)
    # (not a word right after `=`: the value of a field before it, `dataset=Etth1
    # iteration=001` names `iteration`, not `Etth1 iteration`)
    r"(?<![\w./@=-])(?P<open>\[)?"
    # (no word of it ends a sentence: `Epoch 10 completed. Average Loss: 121.3` names
    # `Average Loss`)
    # (and at a range of cut-offs: COCO's `mAP@0.50:0.95: 0.37`)
    r"(?P<key>[A-Za-z_][\w./-]*(?<!\.)(?:@\d+(?:\.\d+)?(?::\d+(?:\.\d+)?(?=\s*:))?)?"
    r"(?: [A-Za-z_][\w./-]*(?<!\.)(?:@\d+(?:\.\d+)?)?){0,3})(?(open)\])"
    r"\s*[=:]\s*"
    # (a thousands separator only before three digits: `Epoch:199,Loss:0.31` is two pairs)
    r"(?P<value>[+-]?(?:(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)\.?\d*(?:[eE][+-]?\d+)?|"
    # (a non-finite word whole, never the start of one: Sign Language Transformers'
    # `Gloss Reference :	INFORM`, the sign for "inform", is no `inf` in units `ORM`; Paddle
    # pads a NaN it formats to a width, `loss: nanxxx`)
    r"\.\d+(?:[eE][+-]?\d+)?|(?:nan|NaN|NAN)(?=x*(?![A-Za-z]))|(?:inf|Inf|INF)(?![A-Za-z])|tensor\([^)]*\)|"
    # a list of one (`lr: [0.0002497]`: a scheduler's `get_last_lr()`, one group)
    r"\[\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*\](?!\s*,\s*\d)))"
    # (not the hours of a clock's reading: FairMOT's `|Tot: 0:06:37 |ETA: 0:00:05`)
    r"(?!:\d\d)(?P<unit>%|[A-Za-z/]*)"
)
# The counter's number may sit in brackets after its word (`Iteration[5/1000]`,
# `Iter[20/500]`), as an epoch's does (`Epoch[3]`).
# An outer loop's counter by other names, each with its plan (`Episode 8/10`, `Round
# 3/50`, `Generation 12/100`, `Update 7/976`): reinforcement learning counts episodes and
# updates, evolutionary search generations, federated learning rounds.
# (the plural as well before a count of a total: PaddleSeg's `Epochs: 1/200 || Iters:
# 10/85000 || Lr: …`)
# (`=` too: a hand-written logger's `[train] epoch=1 step=10/320 loss=1379.8`)
# (`it`, short for iteration, with its plan only: DLRM's `Finished training it
# 1000/19186 of epoch 0, …, loss 0.534200`)
_STEP_OF = lazy_re.compile(r"\b(?:(?:[Ss]tep|[Ii]ter(?:ation)?|[Ee]pisode|[Rr]ound|[Gg]eneration|"
                           r"[Uu]pdate)s?|it)\s*[:#=]?\s*\[?\s*(?P<step>\d+)\s*"
                           r"(?:/|of)\s*(?P<target>\d+)")
# A step is a whole number: `Loss for final step: 0.0014298395.` (TF1's Estimator) names
# a value, not step 0. `ITER` may be printed in capitals (a hand-written PyTorch loop's
# `ITER 14500 TRAINING (phase 1). loss_vae: 0.1070; loss_recon: 0.0410`); a capitalised
# `STEP` is left out: beside an epoch (`STEP 41 - EPOCH 1/1000`) it counts the epoch's
# batches, which the epoch already places.
# (not a name's qualifier in brackets: `Val(step1) MAE=0.0282`, a forecaster's error at
# its first lead step)
_STEP_WORD = lazy_re.compile(
    r"(?<!\w\()\b(?:[Ss]tep|[Ii]ter(?:ation)?|ITER(?:ATION)?|global_step)\s*[:=#]?\s*\[?\s*"
    r"(?P<step>\d+)\b(?!\.\d)")
# A reinforcement-learning loop's episode, opening its line (`Episode 20, Average Reward
# (last 100): 21.65`, `Episode 154 reward: 15.99`), or an evolutionary search's generation
# (`Generation: 3\tString: …\tFitness: 22`): the loop's counter, its step.
_EPISODE_LEAD = lazy_re.compile(r"^\W*(?:[Ee]pisode|[Gg]eneration)\s*[:#=]?\s*(\d+)\b(?![./]\d)")
# A boosting library's round, leading its row before a tab (XGBoost's `[12]\ttrain-rmse:
# 0.5`, LightGBM's `[12]\tvalid_0's l2: 0.2`).
_ROUND_LEAD = lazy_re.compile(r"^\s*\[(\d+)\]\t")
# An epoch's batch and the batches in it, beside the epoch (`batch 40/500`, `batch=
# [51/3503]`); `batch 16` alone is a batch size.
_BATCH_OF = lazy_re.compile(r"\b(?:[Mm]ini)?[Bb]atch\s*[:=#]?\s*\[?\s*(?P<batch>\d+)\s*/\s*"
                           r"(?P<total>\d+)")
# A batch counter glued to the epoch's, in its own brackets (`Epoch:[1/1](37/500)`,
# `Epoch [3/20][40/500]`): the epoch's batches.
_GLUED_BATCH = lazy_re.compile(r"\s*\]?\s*[(\[]\s*(\d+)\s*/\s*(\d+)\s*[)\]]")
# The next field after the epoch's, a word and its own bracketed counter (`Epoch [1/5],
# lter [100/468], Loss: 2.2063`, a notebook's typo for `Iter`; `Epoch [2/10] | Step
# [40/500]`): the epoch's batches, whatever the word.
# (a word no reader knows: a known one, `step:[ 2/ 535]`, is placed by metric_lines)
_INNER_COUNTER = lazy_re.compile(r"\s*\]?\s*[,|;-]?\s*(?![Ss]tep|STEP|[Ii]ter|ITER|[Bb]atch|BATCH|"
                                 r"[Ee]pisode|[Rr]ound)[A-Za-z]{1,12}\s*[:=#]?\s*"
                                 r"\[\s*(\d+)\s*/\s*(\d+)\s*\]")
_LEADING_COUNT = lazy_re.compile(r"^\s*(\d+):\s+[A-Za-z]")
# The epoch's counter, or its short form `Ep` when it opens a bracket with the epochs in
# all (a hand-written loop's `[Ep 003/20] loss=0.1889 train_auc=0.5147`); `Ep 3` alone
# may be an episode.
_EPOCH_WORD = lazy_re.compile(
    r"\b(?:[Ee]poch|EPOCH|(?:[Ee]pochs|EPOCHS)(?=\s*[:=#]?\s*\[?\s*\d+\s*/\s*\d+)|"
    # (the epochs done, a sentence of their own: FANN's `Epochs   300000. Current error:
    # 0.4799208045. Bit fail 195.`)
    r"[Ee]pochs(?=\s+\d+\.(?:\s|$))|"
    r"(?<=\[)Ep(?=\s+\d+\s*/\s*\d+\s*\]))"
    # (named as an id or a number, words apart: K-BERT's `Epoch id: 18, Training steps:
    # 600`, `Epoch No. 3`, `Epoch number 5`; not a setting's `epoch_num`)
    r"(?:\s+(?:id|ID|[Nn]o\.?|[Nn]umber|[Nn]um)(?=\s*[:=#]?\s*\d))?\s*[:=#]?\s*\[?\s*"
    # (not a share of the epoch: StarSpace's `Epoch: 100.0%`)
    # (its plan after a bar inside the brackets too: bearpaw's pytorch-classification,
    # `Epoch: [45 | 45] LR: 0.000500`, copied into many continual-learning repositories)
    r"(?P<epoch>\d+)(?![.\d]*\s*%)(?:\s*(?:/|\|(?=\s*\d+\s*\]))\s*(?P<epochs>\d+))?")
# The epoch's number before its word, in brackets (SSL backdoor code's `[994-epoch]
# time:28.181 | knn acc: 83.121 | loss:7.177`): the same counter, said the other way.
_EPOCH_AFTER = lazy_re.compile(r"\[\s*(?P<epoch>\d+)[- ](?:[Ee]poch|EPOCH)\s*\](?P<epochs>)")


def _epoch_word(segment: str) -> re.Match[str] | None:
    """The line's epoch counter, its word before its number or after it."""
    found = _EPOCH_WORD.search(segment)
    if found is not None and _in_best_aside(segment, found.start()):
        # (the epoch a best was reached at, in the evaluation's aside: EDSR-PyTorch's
        # `[SRRAW x4]\tPSNR: 6.674 (Best: 22.112 @epoch 72)` is epoch 79's evaluation, a
        # fork's `(Best: 37.373 from epoch 1)` likewise; FreeRec's `TRAIN @Epoch: 35` is
        # the record's own)
        found = _EPOCH_WORD.search(segment, segment.find(")", found.end()) + 1) \
            if ")" in segment[found.end():] else None
    if found is None and "poch]" in segment:
        found = _EPOCH_AFTER.search(segment)
    return found


def _in_best_aside(segment: str, at: int) -> bool:
    """Whether position `at` is inside parentheses that open on a best (`(Best: 22.1 …`)."""
    opened = segment.rfind("(", 0, at)
    return opened >= 0 and ")" not in segment[opened:at] \
        and segment[opened + 1:opened + 5].lower() == "best"


# A name and its number with only a space between (`loss_total 10.812`): a loss's name
# may carry a part after it, and the word of the split it was measured on before it
# (`| valid loss  5.53 |`: an evaluation's loss, never the training loss); a language
# model's negative log-likelihood is its loss (`nll 2.31`); a task's measures by their
# short names (TF NMT's `global step 6100 lr 1e-05 … ppl 171.46 bleu 0.00`, `f1 0.82`,
# `wer 12.3`, `iou 0.63`), a loss named for its kind (ctrNet's `logloss 0.365`). Names in
# lower case only: `Loss 1.25 | Train Acc 0.61` is a line of fields, read whole by
# `spaced_fields` (acronyms: `_SPACED_ACRONYM`).
# (`Acc@1`: torchvision's reference scripts, ` * Acc@1 70.939 Acc@5 89.990` closing each
# evaluation pass)
_SPACED_KV = lazy_re.compile(
    r"(?<![\w./-])(?P<key>(?:(?:[Vv]alid(?:ation)?|[Vv]al|[Ee]val|[Tt]est|[Dd]ev|[Tt]rain(?:ing)?)"
                        r" +)?(?:[a-z]+[_/])?(?:(?:log|ce|bce|nll|mse|kl)?loss(?:_[a-z]+)?|"
                        # (capitalised alone, after a counter: pt.darts's `Train: [ 1/50]
                        # Step 000/355 Loss 2.303 Prec@(1,5) (10.2%, 50.0%)`)
                        r"(?:(?<=\d )|(?<=\d\] ))Loss|"
                        r"lr|grad_norm|gnorm|nll|"
                        r"acc|accuracy|ppl|perplexity|bleu|wer|cer|f1|m?iou|dice|auc|rmse|"
                        r"mae|mse|top[15]|[Aa]cc@\d+))\s+"
                        r"(?P<value>[+-]?(?:\d[\d.]*(?:[eE][+-]?\d+)?|nan|inf))\b")
# A snake_case name and its number with no sign between, beside fields that have one
# (a MARL loop's `epoch: 100 avg_reward: 1.89 avg_winrate: 0.0 test_avg_reward 17.51
# test_avg_winrate 0.7`): a name of several words joined so is a field's.
_SNAKE_KV = lazy_re.compile(r"(?<![\w./-])(?P<key>[a-z][a-z0-9]*(?:_[a-z0-9]+)+)\s+"
                            r"(?P<value>[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|nan|inf))"
                            r"(?![\w.:/%-])")
# The cheap test first: a snake_case word's tail, spaces, a number's start.
_SNAKE_HINT = lazy_re.compile(r"[a-z0-9]_[a-z0-9]+\s+[-+\dni]")
# A measure's upper-case acronym and its number, named for the split it was scored on
# (`Eval AUC 0.982286.`) or opening a field of its own (`| AUC 0.91`, `, WER 12.3`): not
# after another word (`baseline RMSE 16.91`, `Best AUC 0.98`: some other figure's).
_SPACED_ACRONYM = lazy_re.compile(
    r"(?:(?P<split>\b(?:[Vv]alid(?:ation)?|[Vv]al|[Ee]val|[Tt]est|[Dd]ev) +)|"
    r"(?:^|(?<=[|,;:(\[]))\s*)"
    r"(?P<name>AUC|BLEU|WER|CER|RMSE|MAE|MSE|PPL|NLL|m?AP|m?IoU)\s+"
    r"(?P<value>[+-]?\d[\d.]*(?:[eE][+-]?\d+)?)\b")
# A field of a comma-separated record that is one word and its number, between commas
# (cs231n's `Finished epoch 43 / 60: cost 0.228707, train: 0.917000, val 0.714000, lr …`:
# `cost` and `val` are fields as `train:` is, only without the colon).
_COMMA_FIELD = lazy_re.compile(
    r"(?:^|,\s*|:\s+|\s[-–|]\s+)(?P<key>[A-Za-z][A-Za-z_]*(?:-[A-Za-z][A-Za-z_]*)*)\s+"
    r"(?P<value>[+-]?(?:\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+|nan|inf))(?=\s*(?:,|$))")
# A summary's cells, each a name in words and its number, set apart by tabs or runs of
# spaces (`Training Loss 1.7513 \tValidation Accuracy 0.2273`).
_CELL_KV = lazy_re.compile(r"(?<![\w./-])(?P<key>(?:[A-Z][a-z]+ )?(?:Loss|Accuracy|Acc))\s+"
                           r"(?P<value>[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?=\s*(?:\t|\s\s|$))")
# A field between pipes that is a measure's name in up to four words and its number, with
# no colon (NoiLIn's `Epoch: [120 | 120] | Train Time: 108.00 s | Natural Test Acc 0.8499 |
# PGD10 Test Acc 0.4673 | Valid Acc 0.4690`, its colon fields read by the readers above):
# the name must end in a measure's word, so a note between pipes is not a figure, and be
# of two words or more (`| Loss 0.41 |` alone is `spaced_fields`' to read, with its
# counters: demucs's validation pass prints its running loss so).
_PIPE_FIELD = lazy_re.compile(
    r"(?:^|\|)\s*(?P<key>(?:[A-Za-z][A-Za-z0-9@-]* ){1,3}(?i:acc|accuracy|loss|error|err|f1|"
    r"auc|iou|miou|map|psnr|ssim|bleu|rmse|mae|mse|ppl|perplexity))\s+"
    r"(?P<value>[+-]?(?:\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|nan|inf))\s*%?\s*(?=\||$)")

# `142.1 samples/s`, `12,345 tokens/sec`: the number comes before its unit.
_RATE_UNIT = lazy_re.compile(
    r"(?<![\w.])(?P<value>\d[\d,]*(?:\.\d+)?)\s*(?P<unit>samples|tokens|tok|"
                        r"sequences|seqs|images|imgs|steps|it)\s*/\s*(?:s|sec|second)\b")
_RATE_NAMES = {"samples": "samples/s", "tokens": "tokens/s", "tok": "tokens/s",
               "sequences": "samples/s", "seqs": "samples/s", "images": "samples/s",
               "imgs": "samples/s", "steps": "steps_per_second", "it": "it/s"}

_METRIC_HINTS = ("loss", "lr", "learning_rate", "grad", "norm", "acc", "ppl", "perplexity",
                 "nll",
                 "throughput", "samples", "tokens", "tok", "mfu", "f1", "bleu", "rouge", "wer",
                 "reward", "kl", "entropy", "score", "auc", "it/s", "tps", "dice", "iou", "psnr",
                 "ssim", "fitness",
                 # a ranking's measures (link prediction, retrieval, recommendation:
                 # `Hits @10: 0.1436`, `Mean rank: 280.7`, `MRR`, `NDCG@10`, `recall@20`;
                 # not a bare `precision`, a setting's word: `Mixed precision: 16`)
                 "hits@", "mrr", "mean_rank", "ndcg", "recall@")


# A source file's path and line, `…/dreambooth/train_dreambooth_colossalai.py:669` (a
# logger's record, a warning's origin): never a metric and its value. (A bare file name,
# DeepSpeed's `[logging.py:128:log_dist]`, is still read as before: the timestamps of
# those lines feed the throughput readings of its excerpts, a change of its own.)
# (a shell or Perl script too: a Kaldi recipe's `steps/nnet2/train_pnorm_fast.sh: 30 + 10 =
# 40 iterations`)
_SOURCE_FILE = lazy_re.compile(r"[/\\][\w.-]+\.(?:py|pyx|ipynb|cc|cpp|cxx|c|h|hpp|cu|rs|go|js|"
                               r"ts|jl|java|lua|rb|scala|sh|bash|zsh|pl|pm)$")


# A name in brackets before its number (`[Loss] nan | [step]   104 | [time] 0.4m`): the
# bracket sets the name apart as `:` or `=` would.
_BRACKET_KV = lazy_re.compile(
    r"\[(?P<key>[A-Za-z][\w ./-]{0,30})\]\s*(?P<value>[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|"
    r"\.\d+)|nan|NaN|NAN|inf|Inf|INF)(?![\w.])")


# A name and its number joined by a dash, each pair in brackets of its own and strung
# together (ACGPN's `[step-5130]--[loss_G-54.817070]--[loss_D-2.265346]--[ETA-…]`): read
# where a line has two such pairs at least (one alone may be a name, `[rank-0]`).
_BRACKET_DASH_KV = lazy_re.compile(
    r"\[(?P<key>[A-Za-z][\w./]{0,30})-(?P<value>[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)|"
    r"nan|NaN|NAN|inf|Inf|INF)\]")


# A name with its number in brackets after it (`Loss[0.1234] lr[0.001]`): the brackets
# hold the value as `:` or `=` would set it after the name.
_NAME_BRACKET_KV = lazy_re.compile(
    r"(?<![\w./-])(?P<key>[A-Za-z][\w./-]{0,30})\[(?P<value>[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|"
    r"\.\d+)|nan|NaN|NAN|inf|Inf|INF)\]")
# A name that says the counter it was measured at before its value (`Cost after
# iteration 100: 0.69`, `Minibatch loss at step 500: 1.23`, `Average loss at step 2000 :
# 4.3`): the counter is the line's (read where counters are), the name is the value's.
# The count may come first (`Loss after 1 epochs: 0.276`, a Torch7 CBOW script, sealed-20;
# 2s-AGCN's and its descendants' `Mean test loss of 10 batches: 2.29`).
_AT_COUNTER = lazy_re.compile(
    # (from the start of a run of spaces only: tried inside one, `\s+` made a line of
    # 60,000 spaces quadratic, 400 s)
    r"(?<!\s)\s+(?:at|after|for|on|in|of)\s+(?:the\s+)?(?:(?:[Ss]tep|[Ii]ter(?:ation)?|[Ee]poch|[Bb]atch|"
    r"[Ee]pisode|[Rr]ound|[Uu]pdate)\s*#?\s*\d+|\d+\s+(?:[Ss]teps?|[Ii]ter(?:ation)?s?|[Ee]pochs?|"
    r"[Bb]atch(?:es)?|[Ee]pisodes?|[Rr]ounds?|[Uu]pdates?))"
    r"(?=\s*[:=]\s*(?:[-+.\d]|nan|NaN|inf|Inf))")
# A possessive name, a boosting library's data set and metric (`valid_0's l2`,
# `training's binary_logloss`): the set and the metric, as `valid_0/l2`.
_POSSESSIVE = lazy_re.compile(r"(?<=\w)'s (?=[A-Za-z_])")
# A qualifier in parentheses between a name and its value (`Eval Acc (total): 0.88`,
# `Loss (val): 0.61`, `Time (s): 3.2`): a word of the name (`Eval Acc total`).
_QUALIFIER = lazy_re.compile(r"(?<=[A-Za-z])\s*\(([A-Za-z][\w.-]{0,15}(?: [\w.-]{1,15})?)\)"
                             r"(?=\s*[=:]\s*[-+.\dnNiI])")


# A change from one value to another (`Validation loss decreased (inf --> 0.0635)`,
# pytorchtools' EarlyStopping; `lr: 0.1 -> 0.01`): the value before the arrow is the old
# one (often a best-so-far's starting `inf`), not a value the run measured now.
_ARROW_TEXT = r"\s*(?:-+>|=+>|→)"
_OLD_VALUE = lazy_re.compile(rf"[-+]?(?:\d[\d.eE+-]*|inf|nan|Inf|NaN){_ARROW_TEXT}\s*")
_ARROW = lazy_re.compile(_ARROW_TEXT)


def changed_from(text: str, end: int) -> bool:
    """Whether the value that ends at `end` is the old side of a change (`inf --> 0.06`)."""
    return _ARROW.match(text, end) is not None


# Seconds in a unit of time, as a duration's parts print it (`6m45s`, `1s99ms`, `2h03m`).
_SECONDS_IN = {"h": 3600.0, "m": 60.0, "min": 60.0, "s": 1.0, "ms": 0.001}
_DURATION_PART = lazy_re.compile(r"(\d+(?:\.\d+)?)(ms|min|h|m|s)(?![A-Za-z])")


def _duration(number: float, unit: str, text: str, end: int) -> float:
    """A duration's seconds: its first part (`number` `unit`) and the parts glued after
    it (`text` from `end`)."""
    seconds = number * _SECONDS_IN[unit]
    while (part := _DURATION_PART.match(text, end)) is not None:
        seconds += float(part.group(1)) * _SECONDS_IN[part.group(2)]
        end = part.end()
    return round(seconds, 6)


# Several names before one colon, then as many values (Python's `print("Valid Loss, AUC:",
# loss, auc)`: `Valid Loss, AUC: 0.533157 0.669853`): each value is its own name's, in
# order, not all the last name's. A name with a number in it is a counter (`epoch 3,
# loss: …`), not this shape.
_NUMBER_TEXT = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NAMES_THEN_VALUES = lazy_re.compile(
    rf"^\s*(?P<names>[A-Za-z][A-Za-z_ .-]{{0,30}}(?:,\s*[A-Za-z][A-Za-z_ .-]{{0,30}})+):\s*"
    rf"(?P<values>{_NUMBER_TEXT}(?:\s+{_NUMBER_TEXT})+)\s*$")


def names_then_values(text: str) -> dict[str, float] | None:
    """`A, B: 1 2` read as `A: 1, B: 2`; None for a line of another shape, or one whose
    names and values do not pair up."""
    match = _NAMES_THEN_VALUES.match(text)
    if match is None:
        return None
    names = [n.strip() for n in match.group("names").split(",")]
    numbers = [to_number(v) for v in match.group("values").split()]
    if len(names) != len(numbers) or any(n is None for n in numbers):
        return None
    return {normalise_key(n): v for n, v in zip(names, numbers, strict=True) if v is not None}


# A value led by the index of the model output it was measured on, one `[i] value` per
# output (onert_train's `Epoch 1/5 - time: 4430.210ms/step - loss: [0] 30090.0898`): the
# index is no part of the value; the first output's value is read as the name's.
_OUTPUT_INDEX = lazy_re.compile(r"(?<=[=:])(\s*)\[\d{1,2}\]\s+(?=[-+.\d]|nan|inf)")


# An average meter's field: a name, its latest value and its running average in
# parentheses (`AverageMeter.__str__` of pytorch/examples' ImageNet script and the many
# repositories that copied it: `Loss 2.1180 (2.1081)`, `Acc@1  71.09 ( 69.92)`), read as
# the latest value. Without a colon anywhere the line is read whole as fields (see
# `spaced_fields`); this is for a line that mixes it with `key: value` (SwAV's `… Loss
# 2.0834 (2.1081)\tLr: 0.0006`), where the colon's pair would otherwise be all it says.
_METER_KV = lazy_re.compile(
    r"(?<![\w./@-])(?P<key>[A-Za-z][\w./-]*(?:@\d+)?)\s+"
    r"(?P<value>[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|nan|inf)\s*"
    r"\(\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*\)|"
    r"(?<![\w./@-])(?P<nkey>[A-Za-z][\w./-]*(?:@\d+)?)\s+(?P<nvalue>nan|inf)\s*\(\s*\w+\s*\)")


# A held-out split's word setting off the rest of a line (`… | valid (3.29 sec): n=5400,
# loss=1.610`, `train: loss=0.3 | val: loss=0.4`).
_SPLIT_WORD = lazy_re.compile(r"(?<![\w/.-])(valid(?:ation)?|val|eval(?:uation)?|dev|test)"
                              r"(?![\w/.-])", re.IGNORECASE)
_SPLIT_PREFIX = {"test": "test/"}


def _held_out_part(text: str) -> tuple[int, str] | None:
    """Where a line's second half, a held-out split's, begins, and the prefix its
    metrics take: one line holding both splits under the same names, each half behind
    its split's word. Only when a name before the word is named again after it (a
    `Validation Loss: 0.5` names its own split and stays as it is)."""
    lowered = text.lower()
    if "val" not in lowered and "test" not in lowered and "dev" not in lowered:
        return None
    # The line's pairs read once (not once before each split word and once after it: a
    # 64 KiB line of `Train / Val | ` took a minute so), each name's last place among them.
    pairs = list(_KV.finditer(text))
    keys = [normalise_key(pair.group("key")) for pair in pairs]
    starts = [pair.start() for pair in pairs]
    last_at = {key: at for at, key in enumerate(keys)}
    latest = -1  # the last place, among the pairs after, of a name seen before the word
    taken = 0  # the pairs wholly before the word
    for word in _SPLIT_WORD.finditer(text):
        while taken < len(pairs) and pairs[taken].end() <= word.start():
            latest = max(latest, last_at[keys[taken]])
            taken += 1
        if not taken:
            continue
        first = bisect.bisect_left(starts, word.end())
        if first < len(pairs) and not text[word.end():starts[first]].strip():
            # (the word's own field, `Val Loss: 0.52`, names its split alone: the half is
            # held out only if the fields after it repeat the training's — `| LR: 1e-3 |
            # Elapsed: 49s` after it are the line's, not the validation's)
            first += 1
        if latest >= first:
            return word.start(), _SPLIT_PREFIX.get(word.group(1).lower(), "eval/")
    return None


# Fields apart by a slash: a number, then the next field's name and its colon
# (GRU4Rec's `Epoch: 1/Loss:0.942/TrainingTime:89.213(min)`): no fraction is followed so.
_SLASH_FIELDS = lazy_re.compile(r"(\d)/(?=[A-Za-z_][\w ]{0,30}:)")


# A field's value then its limit, after a comma (MATLAB's Neural Network Toolbox:
# `Epoch 25/10000, Time 14.685, Performance 0.035786/1e-12, Gradient 0.74431/1e-06,
# Validation Checks 0/500`): the figure is the value, its goal or maximum no part of it.
_VALUE_OF_LIMIT = lazy_re.compile(r"(,\s*[A-Za-z][A-Za-z ]{0,30}\s[-+]?\d[\d.]*(?:[eE][-+]?\d+)?)"
                                  r"/[-+]?\d[\d.]*(?:[eE][-+]?\d+)?(?=,|\s*$)")


# A count over its total with the share they make (NCRF++'s `acc: 847790.0/927206.0=0.9143`):
# the figure is the share.
_COUNT_SHARE = lazy_re.compile(r"(?<![\w.])\d+(?:\.\d+)?/\d+(?:\.\d+)?=(?=[-+]?\.?\d)")


# A figure named, then the details of how it was measured in brackets, then its value
# (StudioGAN's `FID score (Step: 2000, Using valid moments): 314.88`, `Inception score
# (Step: 2000, 10000 generated images): 1.35`): the figure under its name, and the count
# the details give (`Step: 2000`) as its own.
_DETAILED_FIGURE = lazy_re.compile(
    r"^\W{0,3}(?P<name>[A-Za-z][\w@/.-]*(?: [A-Za-z][\w@/.-]*){0,3})\s*"
    r"\((?P<inner>[^()]{3,120})\)\s*[:=]\s*"
    rf"(?P<value>{_NUMBER_TEXT}|nan|inf)\s*\.?$")
_DETAIL_COUNTER = lazy_re.compile(r"\b(?P<counter>[Ss]tep|[Ii]ter(?:ation)?|[Ee]poch)\s*[:=]?\s*"
                                  r"(?P<count>\d+)\b")


def _detailed_figure(text: str) -> dict[str, float] | None:
    found = _DETAILED_FIGURE.match(text)
    if found is None or ("," not in found.group("inner") and ":" not in found.group("inner")):
        return None  # (a short qualifier alone, `Average Reward (last 100): …`, is a name's)
    number = to_number(found.group("value"))
    if number is None:
        return None
    values = {normalise_key(found.group("name")): number}
    counter = _DETAIL_COUNTER.search(found.group("inner"))
    if counter is not None:
        word = counter.group("counter").lower()
        values["iter" if word.startswith("iter") else word] = float(counter.group("count"))
    return values


# A loss printed with the terms it adds up (SGL's `loss : 7.0305 = 0.6931 + 6.3374 + 0.0000`,
# NGCF's `[0.53 = 0.51 + 0.02]`): what follows the value, two to eight terms.
_TERMS = lazy_re.compile(r"\s*=\s*((?:[+-]?\d+\.?\d*(?:[eE][+-]?\d+)?\s*\+\s*){1,7}"
                         r"[+-]?\d+\.?\d*(?:[eE][+-]?\d+)?)(?![\w.])")


def _terms(key: str, text: str, end: int) -> dict[str, float]:
    """The terms a loss's value is said to be the sum of, as `<key>_term1`, … (empty when
    none follow it): a sum of terms is no single cross-entropy (the rules that judge a
    loss against ln K leave it alone, see rules/loss_parts.sums_its_terms)."""
    terms = _TERMS.match(text, end)
    if terms is None or "loss" not in key:
        return {}
    return {f"{key}_term{i}": float(term)
            for i, term in enumerate(terms.group(1).split("+"), 1)}


# A held-out or training split's word cut short before the metric's name (`Val. Loss:
# 0.690 |  Val. Acc: 51.10%`): the split's word, so the figure stays that split's.
_SPLIT_ABBREVIATION = lazy_re.compile(r"\b((?i:val|valid|eval|test|dev|train|trn))\. (?=[A-Za-z])")


# Counters in brackets named by a tuple after them, before the measure's colon (a CIFAR
# hand loop's `Loss [31, 100](epoch, minibatch):  3.2093`): each name its counter.
_NAMED_COUNTERS = lazy_re.compile(r"(?P<key>[A-Za-z][\w ]{0,40}?)\s*\[(?P<values>\d+(?:,\s*\d+)+)\]"
                                  r"\s*\((?P<names>[A-Za-z_]\w*(?:,\s*[A-Za-z_]\w*)+)\)\s*:")


def _named_counters(match: re.Match[str]) -> str:
    values = [v.strip() for v in match.group("values").split(",")]
    names = [n.strip() for n in match.group("names").split(",")]
    if len(values) != len(names):
        return match.group(0)
    pairs = ", ".join(f"{name}: {value}" for name, value in zip(names, values, strict=True))
    return f"{pairs}, {match.group('key')}:"


# An accuracy given as the count right out of the set's size, its share after it or not
# (PyTorch's MNIST example and the loops copied from it: `Accuracy: 9907/10000 (99%)`):
# the share right, as any accuracy is, not the count. The name may carry one word of
# its own, capitalised or a number (a multi-source adaptation's two classifiers and their
# ensemble: `Accuracy C1: 15/277 (5%)`, `Accuracy Ensemble: 17/277 (6%)`).
_COUNTED_SHARE = lazy_re.compile(r"\b(?P<name>(?i:acc(?:uracy)?|correct)(?: [A-Z0-9]\w{0,15})?)"
                                 r"\s*(?P<sep>[:=]?)\s*"
                                 r"(?P<right>\d+)\s*/\s*(?P<size>\d+)"
                                 r"(?:\s*\(\s*\d+(?:\.\d+)?\s*%\s*\))?")


def _counted_share(match: re.Match[str]) -> str:
    right, size = int(match.group("right")), int(match.group("size"))
    if size == 0 or right > size:
        return match.group(0)
    return f"{match.group('name')}{match.group('sep') or ':'} {right / size:.6g}"


# A figure said as a phrase, its name then `of` then its value (a SAC loop's `Episode:
# 1/200 return of -388.20 average reward of: -466.14in 1000 steps`): the name's last word
# a measure's, the value not the count of what follows it (`Mean test loss of 296
# batches: 4.1` is read by `_AT_COUNTER`).
_PHRASED = lazy_re.compile(r"(?i)\b(return|reward|loss|accuracy|error|perplexity) of "
                           r"(?=[-+]?(?:\d|\.\d))(?![-+.\d]+%?\s*[A-Za-z]+\s*:)")


def key_values(text: str) -> dict[str, float]:
    if "/" in text and ("cc" in text or "CC" in text or "orrect" in text) \
            and (shared := _COUNTED_SHARE.sub(_counted_share, text)) != text:
        text = shared
    if " of " in text and (phrased := _PHRASED.sub(r"\1: ", text)) != text:
        text = phrased
    if ". " in text and (unabbreviated := _SPLIT_ABBREVIATION.sub(r"\1 ", text)) != text:
        text = unabbreviated
    if "](" in text and (named := _NAMED_COUNTERS.sub(_named_counters, text)) != text:
        text = named
    if "(" in text and ")" in text and (detailed := _detailed_figure(text)) is not None:
        return detailed
    if "=" in text and "/" in text and (shared := _COUNT_SHARE.sub("", text)) != text:
        text = shared
    if "/" in text and (slashed := _SLASH_FIELDS.sub(r"\1 | ", text)) != text:
        text = slashed
    if ", " in text and "/" in text and (limited := _VALUE_OF_LIMIT.sub(r"\1", text)) != text:
        text = limited
    if ", " in text and ":" in text and (paired := names_then_values(text)) is not None:
        return paired
    values: dict[str, float] = {}
    if ": [" in text or "= [" in text or "=[" in text:
        text = _OUTPUT_INDEX.sub(r"\1", text)
    if ">" in text or "→" in text:
        text = _OLD_VALUE.sub("", text)
    if "'s " in text:
        text = _POSSESSIVE.sub("/", text)
    if "(" in text and ")" in text:
        # (one word of the name: `Average Reward (last 100)` is `average_reward_last_100`)
        text = _QUALIFIER.sub(lambda qualifier: " " + qualifier.group(1).replace(" ", "_"), text)
    if " at " in text or " after " in text or " for " in text or " on " in text \
            or " in " in text or " of " in text:
        text = _AT_COUNTER.sub("", text)
    if "]" in text:
        for pair in _BRACKET_KV.finditer(text):
            number = to_number(pair.group("value"))
            if number is not None:
                values[normalise_key(pair.group("key"))] = number
        for pair in _NAME_BRACKET_KV.finditer(text):
            number = to_number(pair.group("value"))
            if number is not None:
                values.setdefault(normalise_key(pair.group("key")), number)
        if "-" in text and len(dashed := _BRACKET_DASH_KV.findall(text)) >= 2:
            for key, value in dashed:
                number = to_number(value)
                if number is not None:
                    values.setdefault(normalise_key(key), number)
    held_out = _held_out_part(text)
    for pair in _KV.finditer(text):
        number = to_number(pair.group("value"))
        if number is None:
            continue
        if "." in pair.group("key") and ("/" in pair.group("key") or "\\" in pair.group("key")
                                         or text[pair.end():pair.end() + 1] == "]") \
                and _SOURCE_FILE.search("/" + pair.group("key").lstrip("/\\")):
            # (a bare file name too where its line closes a logger's head: SGAN's
            # `[INFO: trainer.py:  214]:   [val] ade: 6.443`)
            continue
        key = normalise_key(pair.group("key"))
        unit = pair.group("unit")
        counts = key in STEP_KEYS or key in EPOCH_KEYS
        if counts and unit == "%":
            # A share of the loop done, not a count: fastText-style `Epoch: 100.0%  lr: …
            # loss: …` (StarSpace prints it at the end of every epoch) is no epoch 100.
            continue
        if unit == "%" and (key in SPLIT_NAMES or key == "training"):
            # A split named bare with a percentage (PGL's `Train: 86.67%, Valid: 84.98%,
            # Test: 81.23%`, an OGB ROC-AUC): a score on that split, never its loss.
            key = f"{key}_score"
        if unit in _SECONDS_IN and (counts or text[pair.end():pair.end() + 1].isdecimal()):
            # A duration, not a count: Torch7's bar `Tot: 6m45s | Step: 1s99ms` (a step's
            # time, not step 1); a compound one is read whole, in seconds.
            number = _duration(number, unit, text, pair.end())
            key = f"{key}_time" if counts else key
        elif unit == "ms" and not key.endswith("_ms"):
            key = f"{key}_ms"
        if held_out is not None and pair.start() > held_out[0]:
            key = f"{held_out[1]}{key}"
        values[key] = number
        if "+" in text:
            values.update(_terms(key, text, pair.end()))
    if " | " in text:
        for pair in _PIPE_FIELD.finditer(text):
            number = to_number(pair.group("value"))
            if number is not None:
                values.setdefault(normalise_key(pair.group("key")), number)
    if "\t" in text or "  " in text:
        for pair in _CELL_KV.finditer(text):
            values.setdefault(normalise_key(pair.group("key")), float(pair.group("value")))
    for pair in _SPACED_KV.finditer(text):
        number = to_number(pair.group("value"))
        if number is not None:
            values.setdefault(normalise_key(pair.group("key")), number)
    if values and "_" in text and (":" in text or "=" in text) \
            and _SNAKE_HINT.search(text) is not None:
        for pair in _SNAKE_KV.finditer(text):
            number = to_number(pair.group("value"))
            if number is not None:
                values.setdefault(normalise_key(pair.group("key")), number)
    if "AUC" in text or "BLEU" in text or "ER " in text or "MSE" in text or "AE " in text \
            or "AP " in text or "IoU" in text or "PL " in text or "LL " in text:
        for pair in _SPACED_ACRONYM.finditer(text):
            number = to_number(pair.group("value"))
            if number is not None:
                values.setdefault(normalise_key((pair.group("split") or "") + pair.group("name")),
                                  number)
    if ") " in text or ")\t" in text or text.endswith(")"):
        for pair in _METER_KV.finditer(text):
            key, value = (pair.group("key"), pair.group("value")) if pair.group("key") \
                else (pair.group("nkey"), pair.group("nvalue"))
            number = to_number(value)
            if number is not None:
                values.setdefault(normalise_key(key), number)
    if ", " in text or " - " in text:
        # (a dash between fields too: TorchMD's `EPOCH 7 / 50 - RMSD 3.03`)
        for pair in _COMMA_FIELD.finditer(text):
            number = to_number(pair.group("value"))
            if number is not None:
                values.setdefault(normalise_key(pair.group("key")), number)
    if "/s" in text:
        for rate in _RATE_UNIT.finditer(text):
            number = to_number(rate.group("value"))
            if number is not None:
                values.setdefault(_RATE_NAMES[rate.group("unit")], number)
    if not values and "_" in text and (paired := _all_pairs(text)) is not None:
        return paired
    return values


# A line made of `name number` pairs and nothing else, each name in lower case with an
# underscore somewhere among them (an RL architecture search's `arch_epoch 099 top1_acc
# 0.9387 top5_avg_acc 0.9366 top20_avg_acc 0.9346 baseline 0.9189`).
_PAIR_NAME = r"[a-z][a-z0-9@]*(?:_[a-z0-9@]+)*"
_PAIR_NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)"
_ALL_PAIRS = lazy_re.compile(rf"^\s*(?:{_PAIR_NAME}\s+{_PAIR_NUMBER}\s+){{2,}}{_PAIR_NAME}\s+"
                             rf"{_PAIR_NUMBER}\s*$")
_PAIR = lazy_re.compile(rf"(?<![\w@])({_PAIR_NAME})\s+({_PAIR_NUMBER})")


def _all_pairs(text: str) -> dict[str, float] | None:
    """The pairs of a line of `name number` pairs (see `_ALL_PAIRS`); a loop's counter
    named for its loop (`arch_epoch`, `outer_epoch`) is the epoch, where none other is."""
    if _ALL_PAIRS.match(text) is None:
        return None
    values: dict[str, float] = {}
    for name, value in _PAIR.findall(text):
        number = to_number(value)
        if number is not None:
            values.setdefault(normalise_key(name), number)
    if "epoch" not in values:
        counter = next((k for k in values if k.endswith("_epoch") and values[k] == int(values[k])),
                       None)
        if counter is not None:
            values["epoch"] = values.pop(counter)
    return values


def batch_of(segment: str) -> tuple[int, int] | None:
    """An epoch's batch and the batches in it, where the line says (`batch 40/500`)."""
    if "atch" not in segment:
        return None
    found = _BATCH_OF.search(segment)
    return None if found is None else (int(found.group("batch")), int(found.group("total")))


def names_a_measure(values: Mapping[str, float]) -> bool:
    """Whether a name is, word for word, a measure the hints above do not catch (`mae`,
    `rmse`, `xent`, `ce`, `top1`, `gnorm`): whole words only, never `ce` in `balance`; or
    a short name followed by its split (`q3_train`)."""
    return any(_MEASURE_WORD.search(key) or _SPLIT_SUFFIX.match(key) for key in values)


# A phase's label, its epoch of the plan with the share done, then the epoch's batch with
# its share in brackets (OpenPCDet: `Train:   10/10 (100%) [ 927/928 (100%)]  Loss: …`).
_SHARED_COUNTERS = lazy_re.compile(r"^\s*(?:Train|Training|TRAIN|Epoch|EPOCH|Eval|Val|Test)\s*:?"
                                   r"\s+(\d+)\s*/\s*(\d+)\s*\(\s*\d+%\)\s*\[\s*(\d+)\s*/\s*"
                                   r"(\d+)\s*\(\s*\d+%\)\s*\]")
# A phase's label, the epoch of the plan in brackets, then the epoch's step (pt.darts's
# `Train: [ 1/50] Step 000/355 Loss 2.303 Prec@(1,5) (10.2%, 50.0%)`).
_PHASE_EPOCH_STEP = lazy_re.compile(r"^\s*(?:Train|Training|TRAIN|Valid|Val|Test|Eval)\s*:?\s*"
                                    r"\[\s*(\d+)\s*/\s*(\d+)\s*\]\s+(?:Step|Iter|Batch|step|"
                                    r"iter|batch)\s*\[?\s*(\d+)\s*/\s*(\d+)\b")
# A phase's label, the epoch alone in brackets, then the epoch's batch of its batches in
# brackets (FairMOT's bar: `mot/exp |####| train: [3][92/93]|Tot: 0:06:38 |ETA: 0:00:04
# |loss 1656.52 |hm_loss 483.63`).
_PHASE_EPOCH_BRACKETS = lazy_re.compile(
    r"(?:^|[|\s])(?P<phase>[Tt]rain|TRAIN|[Vv]al(?:id)?|VAL|[Tt]est|TEST|[Ee]val)\s*:?\s*"
    r"\[\s*(?P<epoch>\d+)\s*\]\s*\[\s*(?P<batch>\d+)\s*/\s*(?P<of>\d+)\s*\]")
# A loss's splits named bare after a heading that says they are the loss's (funcwj's
# separation trainers: `Loss(time/mini-batch) - Epoch  1: train = 2.31(1581.14s/2500) |
# dev = 2.10(152.82s/625)`).
SPLIT_NAMES = frozenset({"train", "val", "valid", "validation", "dev", "test", "eval"})


def _split_losses(values: Mapping[str, float], segment: str) -> bool:
    return len(values) >= 2 and "train" in values and values.keys() <= SPLIT_NAMES \
        and ("Loss" in segment or "loss" in segment) and has_counter(segment)


# A line opened by the split it reports on (an audio-depth script's `  Val L:0.2388
# ABS:0.4407 RMSE:1.3254 d1:0.4919` every fourth epoch; an arrow or a colon after the split:
# `  Val  →  Sharpe=0.081  Return=-0.2%`): a measure's name after it is an evaluation's
# figure, counter or not.
_SPLIT_HEAD = lazy_re.compile(r"^\s*(?:Val(?:id(?:ation)?)?|VAL(?:ID)?|Test|TEST|Eval(?:uation)?|"
                              r"EVAL|Dev|DEV)(?:\s+|\s*(?:->|→|=>|:|\|)\s*)[A-Za-z][\w@.-]*\s*[:=]\s*"
                              r"[-+]?\.?\d")


# A result's label tagged with its split (easytorch's `Result <val>: [val_time: 30.77 (s),
# val_MAE: 8.9695, val_RMSE: 12.1517, …]` after each epoch's `Result <train>: …`): the
# split's figures, counter or not.
_SPLIT_TAGGED = lazy_re.compile(r"(?:^|\s)[A-Za-z]\w*\s*[<\[(]"
                                r"(?:val|valid|validation|test|eval|dev)[>\])]\s*:", re.IGNORECASE)


def has_counter(segment: str) -> bool:
    """Whether the line counts training (`step 12`, `iter 12`, `Epoch 3`, `[12/540]`): a
    line of such names without one is a summary or a note (`Final avg. MSE: 89.0`, after
    the run's end), not a training record."""
    return _STEP_WORD.search(segment) is not None or _epoch_word(segment) is not None \
        or _COUNT_OF.search(segment) is not None or _LEADING_COUNT.match(segment) is not None \
        or _ROUND_LEAD.match(segment) is not None


# Measures by their usual short names, as whole words of a metric's name.
# (Only these: `Validation bpb`, `mAP`, `psnr` read as measures changed what the rules
# judged on logs that were right — an evaluation's points the rules then weighed.)
# (`l1`, `l2`: LightGBM's regression losses; `cost`: a course's `Cost after iteration N`.)
# (`mrr`, `ndcg`, `hits@10`: a ranking's measures, a knowledge-graph embedding's or a
# recommender's whole report: PyKEEN's benchmark driver, `[2/28] Finished PairRE on
# Countries in 3.2s, MRR=0.7595.`)
# (`sharpe`, `sortino`, `calmar`, `pnl`, `maxdd`: a trading agent's evaluation, `Val →
# Sharpe=0.081  Return=-0.2%  MaxDD=10.1%`, sealed-132)
# (`ade`, `fde`: a trajectory forecaster's average and final displacement errors, SGAN's
# `[val] ade: 6.443`)
# (`eval return`, `avg_return`, `ep_ret`: a reinforcement-learning policy's return, a
# return-conditioned decision transformer's `target return: 132.76, eval return: 26.56`
# under each `Epoch 2` head; never a `return_code`)
# (`map@0.5`: a detector's mean average precision at its IoU cut-off, YOLOv6's `Epoch: 0 |
# mAP@0.5: 0.0 | mAP@0.50:0.95: 0.0`; a bare `map` may be anything)
_MEASURE_WORD = lazy_re.compile(
    r"(?:^|[_/])(?:mae|mse|rmse|xent|ce|top\d+|gnorm|l1|l2|cost|mrr|ndcg|hits|map(?=@)|"
    r"sharpe|sortino|calmar|pnl|maxdd|max_?drawdown|returns?(?!_code)|ret|"
    r"(?:min_?)?[af]de)"
    r"(?:[_/@]|$)")
# A measure named by its own short name, then the split it was measured on (a Theano
# protein-structure script's `epoch  1/100. Q3_train: 63.577%, Q3_test: 60.892%`: Q3
# accuracy on the train and test sets): the split word after the name says the name is
# a measure, whatever it is called. Not a count of the split's examples (`n_train`,
# `num_val`).
_SPLIT_SUFFIX = lazy_re.compile(r"^(?!n_|num_)[a-z][a-z0-9]*_(?:train|test|val|valid|dev)$")
_COUNT_OF = lazy_re.compile(r"(?:^|[\s\[])\d+\s*/\s*\d+(?:\]|[\s,|]|$)")


def looks_like_metrics(values: Mapping[str, float]) -> bool:
    """Whether any name is metric-like (a loss, a learning rate, a norm, an accuracy...)."""
    return any(h in key for key in values for h in _METRIC_HINTS) \
        or any(is_q_value(key) for key in values)


# A mean average precision opening its line, by its own name (AST's validation block:
# `mAP: 0.051291`): not a class's line (`sofa --> mAP : 0.70`), nor `heatmap: 64`.
_LEADING_MAP = lazy_re.compile(r"^\W*m?AP(?:@?[\d.:]+)?\s*[:=]\s*\d")


# The rank a line names among its fields, with only a space before its number (`… lr
# 0.00032621 rank 2`): a global rank, never a `local_rank`.
# (not a ranking's measure: `Mean rank: 280.7`, a link predictor's mean rank of its answers)
_RANK_FIELD = lazy_re.compile(r"(?<![\w.[])(?<![Mm]ean )(?<!MEAN )(?<![Mm]edian )"
                              r"(?:rank|RANK|Rank)\s*[=:]?\s*(\d{1,5})\b")


# A loop variable's name and its count opening a line: `i=150`, `it = 40`, `iter_num=7`.
_LOOP_INDEX = lazy_re.compile(r"^\W*(?P<name>i|it|itr|ii|iter_?num|n_?iter)\s*[=:]\s*(\d+)"
                              r"\b(?![.\d])")


def _configuration_pairs(segment: str) -> bool:
    """Whether the line's `key=value` pairs are a configuration's (see `_WORD_PAIR`)."""
    if len(_EQUALS_WORD.findall(segment)) < _CONFIG_WORDS:
        return False  # (a cheap test first: a metric line has no word after its `=`s)
    pairs = _WORD_PAIR.findall(segment)
    if len(pairs) < _CONFIG_WORDS:
        return False
    # (a word has letters: `detect`, `yolov8m.pt`, `True`; a counter `72/5608` or a
    # duration `00:04:59` is none, nor is `nan`)
    words = sum(1 for value in pairs if _HAS_LETTER.search(value) is not None
                and to_number(value) is None)
    return words >= _CONFIG_WORDS and words >= _CONFIG_SHARE * len(pairs)


# An episode's own steps, counted within it: a plural count, not a global step's name.
_EPISODE_LENGTH_KEYS = ("steps", "num_steps", "current_steps")


def _episode_counts(parsed: Parsed, values: Mapping[str, float], segment: str) -> Parsed:
    """A reinforcement-learning line that names its episode counts its `steps` within
    that episode (a DQN's `Episode 9500, Total Reward: 23.50, Epsilon: 0.05, Steps: 8`:
    the episode ended after 8 moves; the next may take 300): the episode is the loop's
    counter, and the steps a measure of the episode, kept as `episode_steps`."""
    key = next((k for k in _EPISODE_LENGTH_KEYS if k in values), None)
    if key is None or parsed.step is None or parsed.step != _int_or_none(values[key]):
        return parsed
    lead = _EPISODE_LEAD.match(segment)
    episode = values.get("episode") if lead is None else float(lead.group(1))
    if episode is None or not math.isfinite(episode):
        return parsed
    metrics = {k: v for k, v in parsed.metrics.items() if k != "episode"}
    metrics["episode_steps"] = values[key]
    return replace(parsed, step=int(episode), metrics=metrics)


# A step plan this many times smaller than the epochs' at most: the epoch's own counter.
_FEWER_STEPS = 10


_SPACED_AT = lazy_re.compile(r"(?<=[A-Za-z]) @(?=\d)")
# (`in`, `after`, `of`: where the run stood; not `for`, a span: `Time for 100 steps:21.07`,
# StackGAN's, is how long a hundred took)
_COUNTED_NAME = lazy_re.compile(
    r"^\s*(?P<name>[A-Za-z][A-Za-z_ ]{0,40}?) (?:in|after|of) (?P<n>\d+) "
    r"(?P<unit>epochs?|iterations?|iters?|steps?)\s*:\s*(?=[-+\d.]|nan|inf)", re.IGNORECASE)


# A cell that is a bare number (a table's figure, or its index).
_BARE_NUMBER = lazy_re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# Numbers in a row with no name before them, at least, for the row to be a table's.
_LOOSE_CELLS = 3


def _row_of_cells(segment: str, values: Mapping[str, float]) -> bool:
    """Whether a line of names and numbers apart by spaces only is a row of a table, not
    pairs: it opens on a bare number (the frame's index, a counter), and more of its
    numbers follow another number than a name (AutoGluon's leaderboard: `6
    LightGBM_BAG_L2  0.778763  accuracy  295.271434  1471.467147 …`, the metric's name a
    cell of the `eval_metric` column, the number after it a prediction time — read as an
    accuracy of 295)."""
    cells = segment.split()
    if len(cells) < 2 * _LOOSE_CELLS or _BARE_NUMBER.fullmatch(cells[0]) is None:
        return False
    loose = sum(1 for before, cell in itertools.pairwise(["0", *cells])
                if _BARE_NUMBER.fullmatch(cell) and _BARE_NUMBER.fullmatch(before))
    return loose >= _LOOSE_CELLS and loose > len(values)


def parse_key_values(segment: str, known_names: bool = True) -> Parsed | None:
    """`step=100 loss=2.3 lr=1e-4`, `Step 100/1000 | loss: 2.3`, `iter 5 loss 2.3`.

    A line counts only if it carries something metric-like, so ordinary log chatter
    with a colon in it (`Loading: 3 files`) is not mistaken for training output; with
    `known_names=False` (a line whose shape the run prints over and over, with a step)
    any name will do (`l_pix: 0.03`)."""
    if "=" in segment:
        if "(" in segment and _CONFIG_CALL.search(segment) is not None:
            return None
        if "'" in segment or '"' in segment:
            segment = _QUOTED_SETTING.sub(" ", segment)
        if _configuration_pairs(segment):
            return None
    if " @" in segment:
        segment = _SPACED_AT.sub("@", segment)  # `Hits @10: 0.1436`: the measure `hits@10`
    if " epoch" in segment or " iter" in segment or " step" in segment:
        # `training loss in 1 epoch: 2071.04` (a KB-completion trainer's), `loss after 3
        # epochs: 0.52`: the counter inside the name, the value after the colon — not an
        # epoch of 2071
        counted = _COUNTED_NAME.match(segment)
        if counted is not None:
            unit = counted.group("unit").rstrip("s")
            segment = f"{unit} {counted.group('n')}, {counted.group('name')}: " \
                      f"{segment[counted.end():]}"
    values = key_values(segment)
    if values and "=" not in segment and ":" not in segment and _row_of_cells(segment, values):
        return None
    if known_names and not looks_like_metrics(values) and not (
            names_a_measure(values) and (has_counter(segment)
                                         or _SPLIT_HEAD.match(segment) is not None
                                         or _SPLIT_TAGGED.search(segment) is not None)) \
            and not ("AP" in segment and _LEADING_MAP.match(segment)) \
            and not _split_losses(values, segment):
        return None
    if not values:
        return None
    if "%)" in segment and (shares := _SHARED_COUNTERS.match(segment)) is not None:
        # `Train:   10/10 (100%) [ 927/928 (100%)]  Loss: 0.2179 (0.242)  LR: 1.008e-09`
        # (OpenPCDet's train_utils): the epoch of the plan, then the epoch's batch, each
        # with its share; the label is no figure.
        epoch_at, epochs, batch, batches = (int(g) for g in shares.groups())
        kept = {k: v for k, v in values.items() if k != normalise_key(segment.split(":")[0])}
        return Parsed("kv-epoch-batch", batch, batches, float(epoch_at), epochs, kept,
                      per_epoch=batches)
    if "[" in segment and (phase := _PHASE_EPOCH_STEP.match(segment)) is not None:
        # `Train: [ 1/50] Step 000/355 Loss 2.303`: the epoch of the plan, then the
        # epoch's step, as OpenPCDet's above; the label is no figure.
        epoch_at, epochs, batch, batches = (int(g) for g in phase.groups())
        label = segment.split(":")[0].split("[")[0].strip()
        kept = {k: v for k, v in values.items() if k != normalise_key(label)}
        if label.lower().startswith(("val", "test", "eval")):
            # An evaluation pass's batches: its running figures part way through are no
            # evaluation yet (a NaN still counts); at its last batch they are the pass's.
            prefix = "test_" if label.lower().startswith("test") else "val_"
            kept = {f"{prefix}{k}": v for k, v in kept.items()
                    if batch >= batches or not math.isfinite(v)}
            return Parsed("key-value", None, None, float(epoch_at), epochs, kept)
        return Parsed("kv-epoch-batch", batch, batches, float(epoch_at), epochs, kept,
                      per_epoch=batches)
    if "][" in segment and (phase := _PHASE_EPOCH_BRACKETS.search(segment)) is not None:
        # `train: [3][92/93]` (FairMOT's progress bar): the epoch in brackets, then the
        # epoch's batch of its batches; the label is no figure.
        label = phase.group("phase")
        epoch_at, batch, batches = (int(phase.group(g)) for g in ("epoch", "batch", "of"))
        kept = {k: v for k, v in values.items() if k != normalise_key(label)}
        if label.lower().startswith(("val", "test", "eval")):
            prefix = "test_" if label.lower().startswith("test") else "val_"
            kept = {f"{prefix}{k}": v for k, v in kept.items()
                    if batch >= batches - 1 or not math.isfinite(v)}
            return Parsed("key-value", None, None, float(epoch_at), None, kept)
        return Parsed("kv-epoch-batch", batch, batches, float(epoch_at), None, kept,
                      per_epoch=batches)
    parsed = _episode_counts(split_counters(values), values, segment)
    step, target, epoch, total_epochs = parsed.step, parsed.target, parsed.epoch, None
    loop_name: str | None = None  # the loop variable that gave the step, not a metric
    epoch_word = _epoch_word(segment)
    step_of = _STEP_OF.search(segment)
    if step_of is not None and "[" in step_of.group() and (
            epoch_word is not None or (step is not None and step != int(step_of.group("step")))):
        # A bracketed counter beside an epoch counts that epoch's batches (`Epoch:[ 1/ 5],
        # step:[ 2/ 535]`, placed in the run by metric_lines), and a field named `step`
        # outranks an inner loop's `iter[ 14/ 15]` beside it.
        step_of = None
    if step_of is not None:
        step, target = int(step_of.group("step")), int(step_of.group("target"))
    elif step is None:
        step_word = _STEP_WORD.search(segment) or _ROUND_LEAD.match(segment) \
            or _EPISODE_LEAD.match(segment)
        if step_word is not None and "[" in step_word.group() and epoch_word is not None:
            step_word = None
        if step_word is not None:
            step = int(step_word.group(1))
        elif (loop := _LOOP_INDEX.match(segment)) is not None:
            # A loop's own index first, by the name the code gave it (`i=150  total=1.83
            # map=0.30  lag=1.53`, a Julia script printing its iteration): its step.
            step, loop_name = int(loop.group(2)), normalise_key(loop.group("name"))
        elif not known_names and (lead := _LEADING_COUNT.match(segment)) is not None:
            # A line the run prints over and over that begins with a bare count (CatBoost's
            # `999:<TAB>learn: 0.249<TAB>total: 12m 12s<TAB>remaining: 0us`): its iteration.
            # (A count that never moves is a task label, taken off before: `srun -l`.)
            step = int(lead.group(1))
    if epoch_word is not None:
        epoch = epoch if epoch is not None else float(epoch_word.group("epoch"))
        if epoch_word.group("epochs"):
            total_epochs = int(epoch_word.group("epochs"))
    metrics = {k: v for k, v in parsed.metrics.items() if k not in ("step", "iter", "epoch")}
    if loop_name is not None:
        metrics.pop(loop_name, None)
    glued = _GLUED_BATCH.match(segment, epoch_word.end()) \
        if step is None and epoch_word is not None else None
    if glued is not None:
        # `Epoch:[1/1](37/500), Reward: 0.38`: the batch of its epoch, glued to it
        # (MiniMind's trainers), placed in the run as `[e/E][n/N]` is.
        batches = int(glued.group(2))
        return Parsed("kv-epoch-batch", int(glued.group(1)), batches, epoch, total_epochs,
                      metrics, per_epoch=batches)
    inner = _INNER_COUNTER.match(segment, epoch_word.end()) \
        if step is None and epoch_word is not None and glued is None else None
    if inner is not None and epoch_word is not None and epoch_word.group("epochs") \
            and 0 <= int(inner.group(1)) <= int(inner.group(2)):
        batches = int(inner.group(2))
        return Parsed("kv-epoch-batch", int(inner.group(1)), batches, epoch, total_epochs,
                      metrics, per_epoch=batches)
    if step is None and epoch is not None and "atch" in segment \
            and (batch_of := _BATCH_OF.search(segment)) is not None:
        # `epoch=1 | batch= [51/3503]`: the batch of its epoch, placed in the run as
        # `[e/E][n/N]` is (metric_lines).
        batches = int(batch_of.group("total"))
        metrics.pop("batch", None)
        return Parsed("kv-epoch-batch", int(batch_of.group("batch")), batches, epoch,
                      total_epochs, metrics, per_epoch=batches)
    if step_of is not None and target and step is not None and total_epochs \
            and (step >= target or _FEWER_STEPS * target <= total_epochs) \
            and epoch is not None and epoch < total_epochs:
        # (or a plan of far fewer steps than the epochs': no run has that, so the
        # counter is the epoch's own, DAMO-YOLO's `epoch: 3/200, iter: 0/2`; only far
        # fewer, as the bracketed `[Epoch 400/400][Iter: 90/97]` are placed elsewhere)
        # A counter at its total beside an epoch short of its plan (FixMatch's `Train
        # Epoch: 148/1024. Iter: 1024/1024. LR: 0.0294. …`): both cannot be the run's, so
        # the `i/N` counts the epoch's iterations, placed in the run as `[e/E][n/N]` is.
        metrics.pop("train_epoch", None)
        return Parsed("kv-epoch-batch", step, target, epoch, total_epochs, metrics,
                      per_epoch=target)
    named = values.get("rank")
    if named is None and "rank" in segment.lower():
        field = _RANK_FIELD.search(segment)
        named = float(field.group(1)) if field is not None else None
    rank = int(named) if named is not None and named.is_integer() and 0 <= named < 65536 \
        else None
    return Parsed("key-value", step, target, epoch, total_epochs, metrics, rank=rank)


LineParser = Callable[[str], "Parsed | None"]

# Specific shapes first; the permissive key/value parser last.
