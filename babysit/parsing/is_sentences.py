"""Metrics said in sentences: `avg loss so far is 0.035`, `val loss is 0.033, val mse is 0.013`.

A hand-written loop may print its figures as prose, clause by clause, with its counters
as clauses of their own: `Epoch 3, Step 75, total used time 120.4 (s), avg loss so far
is 0.035`. Each clause (split at commas and semicolons) of the form `<name> is <number>`
(a colon after the verb too: `Validation error after epoch 10 is: 1.047`) is a metric
named by its last few words, without filler (`so far`, `current`, `now`); `Epoch N`,
`Step N`, `Iter N`, `Batch N` anywhere in the line are its counters. A line
counts only when one of its names is metric-like (a loss, an error, an accuracy, a
learning rate...): `the dataset is 3 GB` is no metric.

A step counted within its epoch (`Epoch 1, Step 25` after `Epoch 0, Step 125`) is placed
in the run by `EpochLocalSteps`: the epochs before it times the steps one epoch had.
"""

from __future__ import annotations

import math
import re

from babysit import lazy_re
from babysit.metric_names import BEST_SO_FAR_WORDS
from babysit.parsing.formats import Parsed, looks_like_metrics
from babysit.parsing.text import normalise_key, to_number

_VALUE = r"(?P<value>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?%?|[-+]?(?:nan|inf(?:inity)?))"
_CLAUSE_VALUE = lazy_re.compile(
    rf"^(?P<name>[A-Za-z][\w./-]*(?: [A-Za-z][\w./-]*){{0,5}}) (?:is|was|=):? {_VALUE}\.?$",
    re.IGNORECASE)
# Run-on sentences (`parse_run_on_sentences`): a clause may hold several figures, one
# after another, when the loop put no comma between them (`Total rewards in episode 73
# is 3.8 total number of steps are 3626`, hardikbansal/Qlearning's `print`). A value
# offered as one of two (`LossTensor is inf or nan`) is no reading of either.
_RUN_ON_VALUE = lazy_re.compile(
    rf"(?:^|(?<=\s))(?P<name>[A-Za-z][\w./-]*(?: [A-Za-z][\w./-]*){{0,5}}) "
    rf"(?:is|are|was|were|=):? {_VALUE}\.?(?=\s|$)(?!\s+or\b)",
    re.IGNORECASE)
_COUNTER = lazy_re.compile(
    r"(?P<of>\b(?:in|at|of|for|after|on) )?"
    r"\b(?P<word>[Ee]poch|[Ss]tep|[Ii]ter(?:ation)?|[Bb]atch|[Ee]pisode)\s+(?P<n>\d+)\b")
# A name that counts (`total number of steps`): a count of the loop's units, no measure.
_COUNTS = frozenset({"steps", "episodes", "epochs", "iterations", "iters", "batches"})
# Words that make a figure a best-so-far or a bound (never cut from its name).
_BOUND_WORDS = frozenset(BEST_SO_FAR_WORDS)
_FILLER = frozenset({"so", "far", "now", "current", "currently", "the", "of", "this", "is",
                     "and"})
_MAX_NAME_WORDS = 3
# Names a sentence gives its figures beyond the usual metric hints (`test mse is 0.007`).
_MORE_HINTS = ("error", "mse", "mae", "rmse", "f1", "auc", "wer", "cer", "bleu")


def parse_is_sentences(segment: str) -> Parsed | None:
    """The counters and `<name> is <number>` metrics of a line; None when it has no such
    clause with a metric-like name."""
    return _sentences(segment, loose=False) if " is " in segment or " is:" in segment \
        else None


def parse_run_on_sentences(segment: str) -> Parsed | None:
    """As `parse_is_sentences`, for a line no other format read: several `<name> is|are
    <number>` in one clause, each figure where it stands (`… is 3.8 total number of
    steps are 3626`). Tried last: a line a framework's format knows (BigDL's `Loss is
    1.26. Current learning rate is 0.046.`) is that format's."""
    if " is " not in segment and " are " not in segment:
        return None
    return _sentences(segment, loose=True)


def _sentences(segment: str, loose: bool) -> Parsed | None:
    counters: dict[str, int] = {}
    for found in _COUNTER.finditer(segment):
        counters.setdefault(found.group("word").lower()[:4], int(found.group("n")))
    # A counter after a preposition qualifies the name before it (`rewards in episode
    # 73 is 3.8`, `Validation error after epoch 10 is: 1.047`): taken out of the name;
    # one on its own ends a clause.
    text = " ".join(_COUNTER.sub(lambda m: "" if m.group("of") else ",", segment).split()) \
        if loose else " ".join(
            _COUNTER.sub(lambda m: " " if m.group("of") else ",", segment).split())
    values: dict[str, float] = {}
    for clause in text.replace(";", ",").split(","):
        clause = clause.strip()
        matches = _RUN_ON_VALUE.finditer(clause) if loose else \
            (m for m in (_CLAUSE_VALUE.match(clause),) if m is not None)
        for match in matches:
            words = [w for w in match.group("name").split() if w.lower() not in _FILLER]
            number = to_number(match.group("value"))
            if not words or number is None or words[-1].lower() in _COUNTS:
                continue
            if loose and not math.isfinite(number):
                # `The grad norm is inf. Skipping updating the model.`: a non-finite value
                # said in a sentence is `nonfinite_words`' to read (it knows a skip).
                continue
            if _BOUND_WORDS.intersection(w.lower() for w in words):
                # `Last lowest train loss is inf`: a best-so-far, its sentinel before the
                # first epoch ends; the name keeps the word that says so.
                values.setdefault(normalise_key(" ".join(words)), number)
                continue
            values.setdefault(normalise_key(" ".join(words[-_MAX_NAME_WORDS:])), number)
    if not values or not (looks_like_metrics(values)
                          or any(h in k for k in values for h in _MORE_HINTS)):
        return None
    step = counters.get("step", counters.get("iter", counters.get("batc")))
    epoch = counters.get("epoc")
    return Parsed("is-sentences", step, epoch=float(epoch) if epoch is not None else None,
                  metrics=values)


class EpochLocalSteps:
    """Places a step that counts within its epoch: it starts again when the epoch moves
    on, so the run's step is the epochs before it times the steps one epoch had (the
    last step seen in the first epoch)."""

    def __init__(self) -> None:
        self._first_epoch: int | None = None
        self._epoch: int | None = None
        self._last_step: int | None = None
        self._per_epoch: int | None = None

    def place(self, parsed: Parsed) -> Parsed:
        """The line's step in terms of the run (unchanged until an epoch is seen to end)."""
        if parsed.step is None or parsed.epoch is None:
            return parsed
        epoch = int(parsed.epoch)
        if self._first_epoch is None:
            self._first_epoch = epoch
        if self._epoch is not None and epoch == self._epoch + 1 and self._per_epoch is None \
                and self._last_step is not None and parsed.step <= self._last_step:
            # The first epoch ended at its last step, or at the total its lines name
            # (`iter 10/14`, logged every 10: the epoch had 14).
            total = parsed.target if parsed.target and parsed.target >= self._last_step \
                else None
            # (none known from an epoch whose only print was its step 0: DeepPurpose's
            # `Training at Epoch 2 iteration 0 with loss 2429.69`, printed every hundred
            # iterations of epochs shorter than that)
            self._per_epoch = (total or self._last_step) or None
        self._epoch, self._last_step = epoch, parsed.step
        if self._per_epoch is None:
            return parsed
        done = epoch - self._first_epoch
        return Parsed(parsed.fmt, done * self._per_epoch + parsed.step, parsed.target,
                      done + parsed.step / self._per_epoch, parsed.total_epochs,
                      parsed.metrics, per_epoch=self._per_epoch)
