"""Multi-line report blocks: a head line, then one `name = value` line per metric.

A hand-written loop (Julia's `println`, R's `cat`, a C++ trainer) may print each report
as a block rather than a line:

    REPORT
      Batch = 299900
      alpha = 3.3e-7
      Correct = 99.27%

Each member line alone names nothing a format knows; together they are one record. A
block is believed only once its head comes back (a configuration dump under `Config:` is
printed once): until then its lines are left to the formats, as any line; from then on a
block is read as soon as it has all the names the first one had, so the last block of
the log is read without waiting for a head after it. The block's counter is the member
named like a step (`Batch`, `Iteration`, `Step`, `Iter`) or an epoch.

A tool's statistics report has the same shape, set apart by indentation rather than by
an unindented head (MLatom's Fortran part, `MLatomF`, prints one for each data set):

     Statistical analysis for 90 entries in the validation set
       MAE =           0.0000003101810
       RMSE =           0.0000004801514
       linear regression of {y, y_est} by f(a,b) = a + b * y
         R^2 =           0.9999999999249

A head is any line indented less than the members after it (a count in it is masked when
heads are compared); a line indented deeper than the head that is no pair (a sub-heading,
`largest positive outlier`) stays inside the block. Reports for different sets have
different heads, so a block is believed too once the names of the block before it came
back (three or more, one of them metric-like: a configuration's sections seldom share
three metric names) — then the block before it is read as well.
"""

from __future__ import annotations

import math

from babysit import lazy_re
from babysit.parsing.evaluation import as_eval
from babysit.parsing.formats import Parsed, looks_like_metrics, names_a_measure, split_counters
from babysit.parsing.text import normalise_key, to_number

# `  Batch = 100`, `  Correct = 14.15%`, `    train loss: 0.25`: indented, one pair.
_MEMBER = lazy_re.compile(
    r"^\s+(?P<name>[A-Za-z][\w./%()-]*(?: [A-Za-z][\w./%()-]*){0,2})\s*[=:]\s*"
    r"(?P<value>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?%?|[-+]?(?:nan|NaN|inf|Inf))\s*$")
# A block's head: one to three words, no digit, not indented (`REPORT`, `Training report:`).
_HEAD = lazy_re.compile(r"^[A-Za-z=#*\[-][A-Za-z =#*:\[\]-]{0,40}$")
# An indented head may be longer and count what it reports on (`Statistical analysis for
# 361 entries in the sub-training set`), but holds no value of its own.
_INDENTED_HEAD = lazy_re.compile(r"^[A-Za-z][A-Za-z0-9 ,()/*-]{0,79}$")
_COUNT = lazy_re.compile(r"\d+")
# A setting whose value is no number (`  STEPS: (30, 60)`, `  NAME: ''` in a YAML
# configuration dump): no sub-heading of a report; the block ends there.
_SETTING = lazy_re.compile(r"^\s+[\w.-]+\s*:\s*\S")
_STEP_NAMES = ("batch", "batches", "iteration", "iter", "step", "update", "updates")
_SHARED_NAMES = 3  # names a block must share with the one before it to be a report


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


class ReportBlocks:
    """The block being read, and the names of a complete one."""

    def __init__(self) -> None:
        self._head: str | None = None  # the head of the block being read
        self._values: dict[str, float] = {}
        self._repeated = False  # the head came back: blocks are the run's reports
        self._names: frozenset[str] | None = None  # the names of the first complete block
        self._read = False  # the block being read was returned already
        self._indent = 0  # the head's indentation
        # The last block closed before any was believed: (head, values).
        self._before: tuple[str, dict[str, float]] | None = None

    @staticmethod
    def wants(text: str) -> bool:
        """Whether the line may be a block's (cheap: no pattern)."""
        return text[:1].isspace() or (len(text) <= 42 and not any(c.isdecimal() for c in text))

    def read(self, text: str) -> Parsed | bool | None:
        """A block's record when this line completes one (or, being a head, closes the
        first one); True when the line is part of a block; None otherwise."""
        member = _MEMBER.match(text) if self._head is not None else None
        if member is not None:
            value = to_number(member.group("value"))
            if value is None:
                return None
            self._values.setdefault(normalise_key(member.group("name")), value)
            if not self._repeated and self._names_came_back():
                # The block before had these names: both are the run's reports (this one
                # is read at its next member or head, or at its names' completion).
                before_head, before = self._before or ("", {})
                self._repeated, self._names, self._before = True, frozenset(before), None
                return self._parsed(before_head, before)
            if not self._repeated:
                return None  # not yet known to be a report: the formats read it as before
            if not self._read and self._names is not None and self._names <= self._values.keys():
                self._read = True
                return self._parsed(self._head, self._values)
            return True
        indent = _indent(text)
        if self._head is not None and self._values and indent > self._indent \
                and _SETTING.match(text) is None:
            return True if self._repeated else None  # a sub-heading inside the block
        stripped = text.strip()
        if not stripped or (_HEAD.match(stripped) is None if not indent
                            else _INDENTED_HEAD.match(stripped) is None):
            self._head = None
            return None
        head = _COUNT.sub("#", stripped)
        if head != self._head or len(self._values) < 2:
            # not (yet) a head that came back after a block: nothing to say about it
            closed = None
            if self._repeated and not self._read and self._head is not None \
                    and len(self._values) >= 2:
                closed = self._parsed(self._head, self._values)  # a report under another head
            elif len(self._values) >= _SHARED_NAMES and self._head is not None:
                self._before = (self._head, self._values)
            self._head, self._values, self._read, self._indent = head, {}, False, indent
            return closed
        closed = None
        if not self._repeated:
            # The head came back: its blocks are the run's reports (the first one may
            # have been read by the formats already, line by line: it is not read again).
            self._repeated, self._names = True, frozenset(self._values)
        elif not self._read:
            closed = self._parsed(head, self._values)
        self._values, self._read = {}, False
        return closed if closed is not None else True

    def _names_came_back(self) -> bool:
        """Whether the block being read has all the names (three or more, one of them
        metric-like) of the block closed just before it."""
        before = self._before[1] if self._before is not None else None
        return before is not None and len(before) >= _SHARED_NAMES \
            and before.keys() <= self._values.keys() \
            and (looks_like_metrics(before) or names_a_measure(before))

    @staticmethod
    def _parsed(head: str | None, values: dict[str, float]) -> Parsed:
        """The block's record; a head that names an evaluation (`Validation`) makes its
        metrics the evaluation's."""
        parsed = split_counters(dict(values), "report-block")
        if parsed.step is None and parsed.epoch is None:
            for name in _STEP_NAMES:
                value = parsed.metrics.get(name)
                if value is not None and math.isfinite(value) and value == int(value):
                    metrics = {k: v for k, v in parsed.metrics.items() if k != name}
                    parsed = Parsed("report-block", int(value), parsed.target, None,
                                    parsed.total_epochs, metrics)
                    break
        return as_eval(f"{head}: ", parsed) if head else parsed
