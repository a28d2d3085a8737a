"""Which run, experiment or worker a record belongs to, in a log where several print at once.

A sweep run in parallel, or an agent with one worker per environment, writes the records
of several independent trainings into one log, each line headed by whose it is:

    … - INFO - Run: XOR_QFNN_All_fold_1 | Epoch: 100 | Train Loss: 0.6965
    [035420][Epoch 49/50] Epsilon:0.0204 … Loss:46.203955 ET:77.5534
    [005930][Epoch 50/50] Epsilon:0.0000 … Loss:53.355371 ET:78.7871

Read as one series, the losses of thirty-six experiments (or five stocks) jumped from one
level to another at every line: a false divergence and false spikes. Each label's
records are one series; the record carries its label (`Record.series`, and `source` so
that a finding names it), and the run's rules judge one series, the first label's, as
they judge rank 0 of a multi-rank run (`MetricSeries.is_primary`). The others' events
and non-finite values still count.

A label is the head of the run's message, in one of two shapes:

- a field that names a run (`Run:`, `Experiment:`, `Trial:`, `Worker:`, `Job:`,
  `Config:`) with a value that is not a number, before a separator (`|`, `,`, ` - `);
- a token in brackets with no space in it, glued to the record (`[035420][Epoch …`,
  `[worker-3] loss …`): not a level (`[INFO]`), a rank prefix, a counter (`[12/540]`,
  a bare `[5]`) or a time.

Labels count only once the log shows they interleave: two or more of them, and a label
printed again right after another one's record of the same figures, three times over (a
counter never goes back to a value it left; one run named at every line has one label; a
logger's sections, fairseq's `[train_inner]` and `[valid]`, print different figures, and a
name before a level, `[train_inner][INFO]`, is a logger's).
"""

from __future__ import annotations

import re
from dataclasses import replace

from babysit import lazy_re
from babysit.metric_names import is_bookkeeping
from babysit.model import Record
from babysit.parsing.log_prefix import message
from babysit.parsing.readers import Line, ParseContext

_NAMED = lazy_re.compile(
    r"(?:run|experiment|exp|trial|worker|job|config)\s*[:=]\s*"
    r"(?P<name>[^|,\s](?:[^|,]*?[^|,\s])?)\s*(?:\||,| - )", re.IGNORECASE)
_BRACKETED = lazy_re.compile(
    r"\[(?P<name>[\w.:@/-]{2,40})\]"
    # (not a logger's name before its level: fairseq's `[train_inner][INFO] - {…}`)
    r"(?!\s*\[?(?:INFO|DEBUG|WARNING|WARN|ERROR|CRITICAL)\b)(?=\[|\s*[A-Za-z])")
_NOT_LABEL = lazy_re.compile(
    r"(?:INFO|DEBUG|WARN(?:ING)?|ERROR|CRITICAL|NOTICE|TRACE|FATAL|rank\d+|default\d+|"
    r"[1-9]\d*|\d+/\d+|\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?)", re.IGNORECASE)
_UNPLACED = "(a series the line does not name)"
_RETURNS = 3  # a label printed again after another's record, this many times: interleaved
_MOST = 4096  # labels kept apart at most (a sweep of thousands is not watched per run)


class SeriesLabels:
    """A RecordReader: the label of the run or worker a training record belongs to, once
    the log shows its labels interleave."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._last: str | None = None
        self._returns = 0
        self._names: frozenset[str] = frozenset()  # the last labelled record's metric names

    @property
    def confirmed(self) -> bool:
        return self._returns >= _RETURNS and len(self._seen) >= 2

    def wants(self, line: Line) -> bool:
        text = line.text
        return "[" in text or ":" in text or "=" in text

    def amend(self, line: Line, record: Record | None, context: ParseContext) -> Record | None:
        if record is None or not record.metrics or record.series:
            return record
        label = _label(message(line.text))
        if label is None:
            if self.confirmed and not all(map(is_bookkeeping, record.metrics)):
                # Once the series interleave, a record naming none of them (a sweep's
                # `✅ Completed in 115991s | Test Accuracy: 43.33%` after each experiment)
                # is some series' we cannot tell: not a point of the first one's curve.
                return replace(record, series=_UNPLACED)
            return record
        names = frozenset(record.metrics)
        if label != self._last:
            # A return counts between records of one shape: runs of a sweep print the
            # same figures; a logger's sections (`[train]`, `[valid]`) print different ones.
            if label in self._seen and self._last is not None and names == self._names:
                self._returns += 1
            elif len(self._seen) < _MOST:
                self._seen.add(label)
            self._last = label
        self._names = names
        if not self.confirmed:
            return record
        return replace(record, series=label, source=record.source or label)


def _label(text: str) -> str | None:
    """The label heading a run's message, as printed (`Run: XOR_QFNN_All_fold_1`,
    `[035420]`); None when it has none."""
    head = text.lstrip()
    if head.startswith("["):
        found = _BRACKETED.match(head)
        if found is None or _NOT_LABEL.fullmatch(found.group("name")):
            return None
        return f"[{found.group('name')}]"
    found = _NAMED.match(head)
    if found is None:
        return None
    name = found.group("name")
    try:
        float(name)
        return None  # `run: 3` is a counter
    except ValueError:
        pass
    return head[:found.end("name")].strip()
