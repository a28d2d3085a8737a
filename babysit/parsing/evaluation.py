"""Telling an evaluation's metrics from the training's.

An evaluation pass prints lines much like training's (`Test: [ 0/50] loss: 0.35`), and
its loss is not a training loss: a rule that read it as one would see a spike at every
validation. These say which metrics of a record are the training's own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from babysit import lazy_re
from babysit.metric_names import is_bookkeeping, is_eval_metric
from babysit.parsing.formats import EVALISH, Parsed

# An evaluation's line: `Test: [ 0/50] loss: 0.35`, `Eval: loss 0.4`, `Validation: ...`,
# Flair's `DEV : loss 0.177 - f1-score (micro avg)  0.65`; a head set apart from its
# values as the fields are (`Evaluation | loss 0.4`, `Validation, loss: 0.4`).
# Its counters count the evaluation's batches and its metrics are not the training's.
# A final summary's (`Test set results: cost= 1.0`, `Final PPO metrics: loss=…`) too, and
# a sentence's (`Epoch 3 evaluated with loss: 0.016, dice score: 7e-05`).
_EVAL_HEAD = lazy_re.compile(r"(?:^|[\s\[\]|>-])(?:(?:(?:[Tt]est(?:ing)?|TEST|"
                        r"[Ee]val(?:uat(?:e|ion|ing))?|EVAL|[Vv]al(?:id(?:ation|ating)?)?|VAL|[Dd]ev|DEV|CV)"
                        # (or the set's own name after it: BasicSR's `Validation ValSet,
                        # \t\t # psnr: 19.3865`, `Validation Set5\t # psnr: …`)
                        # (a name with a digit or a capital inside it, as sets are
                        # named, not a measure's word: `Valid Loss, AUC: 0.53 0.67`)
                        r"(?: set)?(?: results?| metrics)?"
                        r"(?: [A-Z][\w.-]{0,30}?(?:\d|[a-z][A-Z])[\w.-]{0,30}(?=,|\t))?|"
                        r"[Ff]inal(?: \w+)? (?:metrics|results?|scores?|evaluation))"
                        r"\s*(?:\(\w+\))?\s*(?::|\[|\]|,|\||\t| - |(?=\s\s)|"
                        # the head before the pass's own counter (WeNet's `CV Batch 4/0
                        # loss 28.5` beside `TRAIN Batch 4/203700 loss 12.6`), or before
                        # the training's counter it was run at (WIDER-event's `TEST in
                        # epoch24, loss = 3.64, acc = 45.5%` beside `TRAIN in epoch 24 ,
                        # step 650, loss = 0.109`)
                        # (or the epoch it ran after, its word and number at once:
                        # DivideMix's `| Test Epoch #4\t Accuracy: 95.91%`)
                        r"\s(?=(?:[Bb]atch|BATCH|[Ss]tep|[Ii]ter)\b|"
                        r"(?:[Ee]poch|EPOCH)\s*#\s*\d+\b|(?:[Ee]poch|EPOCH)\s+\d+\s*[\t:|,]|"
                        r"(?:in|at|after|on) (?:[Ee]poch|EPOCH|[Ss]tep|STEP|[Ii]ter\w*)"
                        r"\s*\d))|"
                        r"(?:[Ee]valuated|[Vv]alidated) with )|"
                        # TF's Estimator writes each evaluation's results under this head
                        # (tensorflow_estimator/python/estimator/estimator.py,
                        # `_write_dict_to_summary`: `Saving dict for global step %d: %s`),
                        # behind its logger's (`INFO:tensorflow:`): its `loss` is the
                        # evaluation's, its `global_step` the step the evaluated
                        # checkpoint was written at, not a new one
                        r"\bSaving dict for global step \d+: ")
# The line's first field named for an evaluation, its split word apart from the name
# (`Test Accuracy: 89.86  Loss: 0.3443`, each SambaFlow worker's result; `Validation
# Loss = 0.41, Accuracy = 0.88`; a language-style-transfer run's `dev loss 24.01, rec
# 19.32, adv 4.69` after its training steps' `loss 40.94, rec 33.87, adv 7.07`: one word
# and its value after a space, where it names no counter, `Val epoch 0 has acc 0.25`):
# the fields after it are that split's too. Not a name glued to its split (`val_loss: 0.3
# loss: 0.4` names each field's own).
_EVAL_FIRST_FIELD = lazy_re.compile(r"\s*(?:[Tt]est(?:ing)?|TEST|[Ee]val(?:uation)?|EVAL|"
                                    r"[Vv]al(?:id(?:ation)?)?|VAL|[Dd]ev|DEV) "
                                    r"(?:[A-Za-z][A-Za-z -]{0,30}?\s*[:=]\s*|"
                                    r"(?![Ee]poch|EPOCH|[Ss]tep|STEP|[Ii]ter|ITER|[Bb]atch|BATCH)"
                                    r"[A-Za-z][A-Za-z-]{0,30}\s+)[-+]?\.?\d")
_ASSIGNMENT = lazy_re.compile(r"[=:]\s*[-+]?\.?\d")
# Nothing but a loop's counter (`epoch: 0`, `Step 40/100`, `[iter 5]`), behind a logger's
# head at most.
_COUNTER_ONLY = lazy_re.compile(r"^(?:.*\s-\s)?\W*(?:epoch|step|iter(?:ation)?|batch|round)"
                                r"\s*[:=#]?\s*\d+(?:\s*/\s*\d+)?\W*$", re.IGNORECASE)
_TIMESTAMP = lazy_re.compile(r"\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d+)?\]?")
# A metric name that an evaluation's: `eval_loss`, `val/acc`, `test_f1`.
_TEST_WORD = lazy_re.compile(r"(?<![A-Za-z])(?:[Tt]est(?:ing)?|TEST(?:ING)?)(?![a-z])")


def as_eval(text: str, parsed: Parsed, test_apart: bool = False) -> Parsed:
    """A generic key/value line that an evaluation printed (its head says so, before any
    value): its metrics are the evaluation's and its counters not the training's.
    `test_apart`: the run printed a validation split's lines too, so a test split's keep
    their own name (see below)."""
    head = _EVAL_HEAD.search(text, 0, 80)
    stamp = _TIMESTAMP.match(text)  # `2022-12-13 02:38:07,613 DEV : loss …`: no assignment
    since = stamp.end() if stamp is not None else 0
    first = _EVAL_FIRST_FIELD.match(text, since) if head is None else None
    if head is None and first is None:
        return parsed
    if head is not None and _ASSIGNMENT.search(text, since, head.start()) is not None \
            and _COUNTER_ONLY.match(text[since:head.start()]) is None:
        # (a value before the head is the line's own, unless it is the counter the
        # evaluation ran at: `epoch: 0 validation, acc: 0.60, loss: 2.15`)
        return parsed
    # In a run that validates too, a test split's figures keep its name (`test set:
    # Average loss: 0.75` after each epoch's `val set: Average loss: 0.59`): one series
    # each, not a validation curve that seems to jump at the end. (A run whose only
    # evaluation is its `Test:` pass after each epoch validates on it.)
    said = (head if head is not None else first).group(0)  # type: ignore[union-attr]
    prefix = "test/" if test_apart and _TEST_WORD.search(said) is not None else "eval/"
    # (a field that names the training, `Train Loss`, stays the training's)
    metrics = {k if is_eval_metric(k) or "train" in k or EVALISH.search(k) else f"{prefix}{k}": v
               for k, v in parsed.metrics.items()}
    return Parsed(parsed.fmt, epoch=parsed.epoch, total_epochs=parsed.total_epochs,
                  metrics=metrics)


# A line that says it is the training's (`Train -   loss: 5.02` after `Eval -    loss:
# 4.98`, the same names; `[ Train | 002/100 ] loss = 0.7` after `[ Valid | 001/100 ]
# loss = 0.8`; a bullet's `- Train metrics: loss: 1.36` after `- Eval metrics: loss:
# 1.33`): its metrics are the training's, whatever came before.
_TRAIN_HEAD = lazy_re.compile(r"\s*(?:[\[*|>-]\s*)?(?:[Tt]rain(?:ing)?|TRAIN(?:ING)?)\b(?![/_.])")


# A line headed by a validation split's word (not a test's).
VALIDATION_HEAD = lazy_re.compile(r"^\W*(?:[Vv]al(?:id(?:ation)?)?|VAL(?:ID)?|[Dd]ev|DEV)\b")


def says_training(text: str) -> bool:
    """Whether the line's head says its values are the training's."""
    return _TRAIN_HEAD.match(text) is not None


# A run's summary of itself, no training record: the best it reached, how many epochs it
# ran (an iTransformer script's `iTransformer   best_val_loss=0.1045  epochs_run= 69  time=
# 79.6s` after its last epoch). A record of nothing else is no training.
_SUMMARY_NAME = lazy_re.compile(r"(?:^|_)(?:best|lowest|highest)(?:_|$)|"
                                r"^(?:epochs|steps|iters|iterations)_(?:run|done|trained)$")


def trains(metrics: Mapping[str, float]) -> bool:
    """Whether a record's metrics are the training's own (not only an evaluation's,
    not only timings)."""
    names = tuple(metrics)
    found = _TRAINS.get(names)
    if found is None:
        found = any(EVALISH.search(k) is None and not is_bookkeeping(k)
                    and _SUMMARY_NAME.search(k) is None for k in names)
        if len(_TRAINS) >= 512:
            _TRAINS.clear()
        _TRAINS[names] = found
    return found


def training_names(metrics: Mapping[str, float]) -> tuple[str, ...]:
    """The names among a record's metrics that are the training's own (not an
    evaluation's, not a bar's rate or timings)."""
    names = tuple(metrics)
    found = _TRAINING_NAMES.get(names)
    if found is None:
        found = tuple(k for k in names if EVALISH.search(k) is None and not is_bookkeeping(k))
        if len(_TRAINING_NAMES) >= 512:
            _TRAINING_NAMES.clear()
        _TRAINING_NAMES[names] = found
    return found


# `trains` and `training_names` by a record's names: a log prints the same few sets of
# names on every line, and the answers depend on the names alone.
_TRAINS: dict[tuple[str, ...], bool] = {}
_TRAINING_NAMES: dict[tuple[str, ...], tuple[str, ...]] = {}


class EvaluationSummaries:
    """The names the last evaluation pass printed, until training moves on."""

    def __init__(self) -> None:
        self._names: set[str] = set()
        self._prefix = "eval/"  # the pass's names' prefix: `test/` for a test pass's
        self._epoch: float | None = None  # the last epoch a line said

    def trained(self) -> None:
        if self._names:  # at every step: no new set when there is nothing to forget
            self._names, self._prefix = set(), "eval/"

    def summary(self, parsed: Parsed, text: str = "") -> Parsed:
        """A line that repeats the names an evaluation pass just printed, before training
        moves on (DETR's `Averaged stats: … loss: 50.3` after its `Test: [3/4] … loss:
        50.3` lines), is that pass's summary: its metrics are the evaluation's, not a
        training loss of 50."""
        names = parsed.metrics.keys()
        epoch, self._epoch = self._epoch, parsed.epoch if parsed.epoch is not None \
            else self._epoch
        if parsed.epoch is not None and epoch is not None and parsed.epoch > epoch:
            # `Epoch 9  loss=1.97` after `Epoch 8  loss=2.03` and its validation: a
            # new epoch is training that moved on, not the pass's summary
            self._names = set()
            return parsed
        if not trains(parsed.metrics):
            # one pass may print its results a line each (BERT's `***** Eval results
            # *****`, then `  eval_accuracy = 0.85`, `  loss = 0.72`): the pass's names
            # are all those it printed before training moved on
            self._names |= {k.removeprefix("eval/").removeprefix("test/") for k in names}
            if any(k.startswith("test/") for k in names):
                self._prefix = "test/"  # (a test pass's summary keeps its split's name)
            return parsed
        # (the summary may write a pass's `acc1` as `Acc@1`: torchvision's references,
        # ` * Acc@1 70.939 Acc@5 89.990` after `Test:  [16000/16667] … acc1: 100.0 (70.8)`)
        said = {k: k if k in self._names else k.replace("@", "") for k in names}
        if parsed.step is not None or not self._names or not set(said.values()) <= self._names:
            return parsed
        if text and _OWN_COUNTER.match(text) is not None:
            # A line that opens on a counter of its own (cnn-text-classification's
            # `Batch[410/8544] - loss: 0.05  acc: 100.0000%(16/16)` after its `Evaluation
            # - loss: … acc: …` lines): training's progress, not the pass's summary.
            self._names = set()
            return parsed
        return Parsed(parsed.fmt, epoch=parsed.epoch, total_epochs=parsed.total_epochs,
                      metrics={k if is_eval_metric(k) else f"{self._prefix}{said[k]}": v
                               for k, v in parsed.metrics.items()})


# A line opening on a counter of its own: `Batch[410/8544]`, `Step [20]`, `Iter 30/500`.
_OWN_COUNTER = lazy_re.compile(r"^\W{0,3}[A-Za-z]+\s*(?:\[\s*\d+\s*(?:/\s*\d+\s*)?\]|"
                               r"\d+\s*/\s*\d+)")


# An evaluation pass's progress line as a metric logger prints it (torchvision's reference
# scripts and the many that copied their `MetricLogger`: DETR, DeiT, DINO, MAE,
# torchdistill): the split's name, the batch counter of the pass, and each meter as the
# batch's value then the pass's running average, `Test:  [ 0/16667]  eta: 15:00:01  acc1:
# 0.0000 (0.0000)  acc5: 100.0000 (100.0000)`.
_PASS_PROGRESS = lazy_re.compile(
    r"^\W{0,3}(?:[Tt]est|TEST|[Vv]alid(?:ation)?|[Vv]al|[Ee]val(?:uation)?|[Ee]valuating)\b"
    r"[^\[\]]{0,30}\[\s*\d+\s*/\s*\d+\s*\]")
_RUNNING_AVERAGE = lazy_re.compile(r"\d\s+\([-+]?\d[\d.]*(?:[eE][-+]?\d+)?\)")


def pass_in_progress(text: str) -> bool:
    """Whether a line is an evaluation pass's progress, a batch's figures beside the
    running averages (`Test:  [1000/16667]  acc1: 100.0000 (70.5429)`): no evaluation of
    the model yet (a batch of three scores 0 or 100), only the pass's summary is."""
    return "[" in text and "(" in text and _PASS_PROGRESS.search(text) is not None \
        and _RUNNING_AVERAGE.search(text) is not None
