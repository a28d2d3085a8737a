"""Evaluations of many subjects at one point of the run: a battery, one line per subject.

A run that scores its model on a suite of tasks, or breaks an evaluation down by class,
prints a line per subject, each naming it before the same figures: nanochat's CORE
evaluation (`Evaluating: hellaswag_zeroshot (0-shot, type: multiple_choice)... accuracy:
0.5034 | centered: 0.3378`, then `Evaluating: jeopardy (10-shot, …)... accuracy: 0.1582 |
…`, twenty-two of them), UniMatch's per-class IoU (`***** Evaluation ***** >>>> Class [0
background] IoU: 94.57, EMA: 94.84`, then `… Class [1 aeroplane] IoU: 84.90, …` before
its `MeanIoU: 86.27`). Read as one metric they make a curve that jumps from subject to
subject, "worse than its best" whenever a hard one follows an easy one. Each such line is
one subject's share of the evaluation — a breakdown, no series — and the evaluation's own
aggregate, where the run prints one (a line with other figures), is what is judged.

Two lines in a row are rows of one battery when they hold the same figures, their heads
(the text before the first figure's value) differ in words, not only in numbers (`Epoch
3 | loss` and `Epoch 4 | loss` are one series), the words that differ name no split
(`Train: loss` and `Valid: loss` are two series, the validation's judged), and the lines
say they evaluate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from babysit import lazy_re

# Where a line's first figure's value begins: after a name and its `:` or `=`.
_FIRST_VALUE = lazy_re.compile(r"[:=]\s*[-+]?(?:\d|\.\d|nan|inf)", re.IGNORECASE)
_DIGITS = lazy_re.compile(r"\d+")
_SPACES = lazy_re.compile(r"\s+")
_WORDS = lazy_re.compile(r"\w+|\W")
_SPLIT_WORD = lazy_re.compile(r"(?<![A-Za-z])(?:train\w*|eval\w*|val|valid\w*|test\w*|dev)"
                              r"(?![A-Za-z])", re.IGNORECASE)


def _head(text: str) -> str | None:
    """The line's text before its first figure's value, its numbers taken out and its
    runs of spaces made one (a counter padded to its width, `iter   9` then `iter  10`,
    is the same head)."""
    found = _FIRST_VALUE.search(text)
    return _SPACES.sub(" ", _DIGITS.sub("", text[:found.start()])) if found is not None \
        else None


def _subjects(one: str, other: str) -> tuple[str, str]:
    """What differs between two heads, in whole words: each without the words it shares
    with the other at the start and at the end (`Train Error: Avg loss` and `Test
    Error: Avg loss` differ in `Train` and `Test`, not in `rain` and `est`)."""
    mine, theirs = _WORDS.findall(one), _WORDS.findall(other)
    start = 0
    while start < min(len(mine), len(theirs)) and mine[start] == theirs[start]:
        start += 1
    end = 0
    while end < min(len(mine), len(theirs)) - start and mine[-end - 1] == theirs[-end - 1]:
        end += 1
    return "".join(mine[start:len(mine) - end]), "".join(theirs[start:len(theirs) - end])


class Batteries:
    """Which evaluation lines are one subject's row of a battery."""

    def __init__(self) -> None:
        self._last: tuple[str, frozenset[str]] | None = None  # the last line's head, names
        self._last_indented = False  # the last line was indented under a heading
        self._batteries: set[frozenset[str]] = set()  # the figures' names of each battery

    def breakdown(self, text: str, names: Iterable[str], indented: bool = False) -> bool:
        """Whether the line (its message) is a subject's row of a battery: it follows a
        row of another subject with the same figures, or holds the figures of one.
        `indented`: the line sits indented under a heading, as the last did too: a block
        that breaks one figure down by subject (PINNx's `[DEBUG] Loss dict at epoch 0:`,
        then `  data: loss=13.3, weight=35.2`, `  momentum_x: loss=293.5, weight=1.0`, …
        one line per term of its loss) needs no word of evaluating."""
        head = _head(text)
        figures = frozenset(names)
        last, self._last = self._last, (head, figures) if head is not None else None
        block, self._last_indented = indented and self._last_indented, indented
        if head is None:
            return False
        if figures in self._batteries:
            # (the first row of a later evaluation too, after the training's lines)
            return _SPLIT_WORD.search(head) is not None or block
        if last is None or last[1] != figures or last[0] == head:
            return False
        mine, theirs = _subjects(head, last[0])
        if not re.search(r"[A-Za-z]", mine + theirs) or _SPLIT_WORD.search(mine + " " + theirs):
            return False
        if _SPLIT_WORD.search(head) is None and not block:
            return False  # (the lines must say they evaluate, or sit in a block)
        self._batteries.add(figures)
        return True
