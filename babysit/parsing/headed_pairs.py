"""`Epoch 57: Train Loss -0.0356`: a counter's head, then names each followed by a value.

A hand-written loop often prints its epoch (or step) as the line's head and then its
metrics as plain `name value` pairs, without `=` or `:` between them; a name may be
several words (`Train Loss`, `Val Acc`) or a project's own (`Train_rf 4.855e-01`). The
head names the counter (`Epoch`, `Step`, `Iter`, `Iteration`, `Batch`, optionally `N/M`),
and every word group after it must be followed by its number: a sentence (`Epoch 5:
saving the model`) has words without values and is not read.

With `known_names` (a line seen for the first time) a pair must name something
metric-like (a loss, an accuracy...); a line the run prints over and over may use any
name (the caller knows it recurs).
"""

from __future__ import annotations

import re

from babysit import lazy_re
from babysit.parsing.formats import Parsed, looks_like_metrics
from babysit.parsing.text import normalise_key, to_number

_HEAD = lazy_re.compile(
    r"^\s*(?P<word>[Ee]poch|EPOCH|[Ss]tep|STEP|[Ii]ter(?:ation)?|ITER(?:ATION)?|[Bb]atch)"
    # (one run of spaces before the bracket, one after: three optional runs in a row made
    # `Epoch 3` and 60,000 spaces a minutes-long line)
    r"\s*\[?\s*(?P<n>\d+)(?:\s*/\s*(?P<total>\d+))?\s*(?:\]\s*)?[:,|\-]\s+(?P<rest>.+)$")
# Where a logger's prefix ends, just before a counter's head.
_PREFIX_END = lazy_re.compile(
    r"(?:\]|\s-|INFO:?)(?=\s+(?:[Ee]poch|EPOCH|[Ss]tep|STEP|[Ii]ter|ITER|[Bb]atch)\s*\[?\s*\d)")
# A counter in what was taken for the logger's prefix: the line is not headed by one.
_COUNTER = lazy_re.compile(r"\b(?:[Ee]poch|EPOCH|[Ss]tep|STEP|[Ii]ter\w*|ITER\w*)\s*\[?\s*\d")
_NAME_WORD = lazy_re.compile(r"^[A-Za-z][\w./%@()-]*$")
_NUMBER = lazy_re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?%?$|^[-+]?(?:nan|inf)$",
                          re.IGNORECASE)
_MAX_NAME_WORDS = 3
_SEPARATORS = str.maketrans({",": " ", "|": " ", ";": " "})


# An aside in parentheses closing the line (a trading agent's `epoch 01: actor 1.1159
# critic 0.0061 Q -0.0330 val Sharpe +0.588 (mean|a| 0.232)`): its own pairs when it
# holds some, else nothing the line measures.
_ASIDE = lazy_re.compile(r"\s\((?P<inside>[^()]{1,40})\)\s*$")


def pairs_after_head(rest: str) -> dict[str, float] | None:
    """`Train Loss -0.0356, Val Loss 0.041`: each group of words and the number after
    it; None when a word group has no number after it, or a name is too long to be one."""
    aside = _ASIDE.search(rest) if rest.endswith(")") else None
    if aside is not None:
        before = pairs_after_head(rest[:aside.start()])
        if before is not None:
            inside = pairs_after_head(aside.group("inside")) or {}
            before.update({k: v for k, v in inside.items() if k not in before})
        return before
    values: dict[str, float] = {}
    words: list[str] = []
    for token in rest.translate(_SEPARATORS).split():
        if _NUMBER.match(token):
            if not words:
                return None  # a number nobody names
            number = to_number(token)
            if number is None:
                return None
            values.setdefault(normalise_key(" ".join(words)), number)
            words = []
        elif _NAME_WORD.match(token) and len(words) < _MAX_NAME_WORDS:
            words.append(token.rstrip(":="))
        else:
            return None
    if words or not values:
        return None
    return values


def parse_headed_pairs(segment: str, known_names: bool = True) -> Parsed | None:
    """`Epoch 57: Train Loss -0.0356` as epoch 57 with `train_loss`; `Step 12/100 - loss
    0.5 acc 0.9` as step 12 of 100. None for any other line."""
    if "=" in segment:
        return None  # `key=value` lines are parse_key_values'
    head = _HEAD.match(segment)
    if head is None:
        # After a logger's prefix (`[time][module][INFO] -    Epoch 0: ...`, `INFO: ...`).
        prefix = _PREFIX_END.search(segment, 0, 200)
        if prefix is None or _COUNTER.search(segment, 0, prefix.end()) is not None:
            return None  # `epoch 5 - iter 300/900 - loss 0.4`: two counters, another format's
        head = _HEAD.match(segment[prefix.end():])
        if head is None:
            return None
    values = pairs_after_head(head.group("rest"))
    if values is None or (known_names and not looks_like_metrics(values)):
        return None
    n = int(head.group("n"))
    total = int(head.group("total")) if head.group("total") else None
    if head.group("word").lower() == "epoch":
        return Parsed("headed-pairs", epoch=float(n), total_epochs=total, metrics=values)
    return Parsed("headed-pairs", n, total, metrics=values)
