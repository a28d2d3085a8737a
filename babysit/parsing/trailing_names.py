"""Figures named after their values, clause by clause, behind a leading counter: Darknet's
iteration line ` 10090: 1.262299, 1.207728 avg loss, 0.001000 rate, 4.776061 seconds,
645760 images` (AlexeyAB's fork adds `, 64.197013 hours left`).

Each comma-separated clause is `<number> <name>` (the name's words after the number, a
unit or what it measures), or a bare number before the first named one (Darknet's loss
of this iteration beside its running average: a figure with no name, left out). The
counter before the colon is the step. A line counts only when every clause has one of
these forms, two or more are named, and one of the names is metric-like (a loss, a rate,
an accuracy...): `3 files, 2 folders` is no training line.
"""

from __future__ import annotations

import re

from babysit import lazy_re
from babysit.parsing.formats import Parsed, looks_like_metrics
from babysit.parsing.text import normalise_key, to_number

# (a second count before the step, as some forks print the batch's ordinal first)
_LINE = lazy_re.compile(r"^\s*(?:\d+\s*:\s*)?(\d+)\s*:\s*(.+?)\s*$")
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)"
_NAMED = lazy_re.compile(rf"^({_NUMBER})\s+([A-Za-z][A-Za-z ]{{0,30}}?)$", re.IGNORECASE)
_BARE = lazy_re.compile(rf"^(?:{_NUMBER})$", re.IGNORECASE)
_MIN_NAMED = 2


def parse_trailing_names(segment: str) -> Parsed | None:
    """The step and named figures of a `N: v, v name, v name, …` line; None otherwise."""
    if "," not in segment:
        return None
    line = _LINE.match(segment)
    if line is None:
        return None
    metrics: dict[str, float] = {}
    for clause in line.group(2).split(","):
        clause = clause.strip()
        named = _NAMED.match(clause)
        if named is not None:
            value = to_number(named.group(1))
            if value is None:
                return None
            metrics[normalise_key(named.group(2))] = value
        elif _BARE.match(clause) is None or metrics:
            return None  # (a bare figure only before the named ones)
    if len(metrics) < _MIN_NAMED or not looks_like_metrics(metrics):
        return None
    return Parsed("trailing-names", int(line.group(1)), metrics=metrics)
