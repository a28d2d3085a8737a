"""A loop's counter under a name of the run's own, as its progress when the log gives no other.

A script that fits one model per day, per window, per subject or per trial prints its
outer loop as a count of its plan and little else (a rolling forecast's `[ 6.8%] Day
5/73 (2026-01-04) | 0.8s/day | ETA: 54s`, then `Day 10/73`, … `Day 73/73`, then
`Done.`). The word is the script's own, so no list of counter words knows it; the
shape does: the same word before `N/M` on line after line, its `M` the same and its `N`
rising, is the loop's counter of its plan. Read so only in a log whose progress nothing
else said (no step, no training record, no epoch): there the run's own counter decides,
and a data pass's `File 3/10` or an evaluation's `Test 4/20` is no word on the run's
plan. Seen on three lines before it counts: a count said once or twice is a remark. Not
a counter the formats know by name (an epoch's header they did not take as progress is
none here either), nor a verb's count (`Training Completed 3/48`: what it did).
"""

from __future__ import annotations

from dataclasses import replace

from babysit import lazy_re
from babysit.model import Record
from babysit.parsing.readers import Line, ParseContext

# A word, then `N/M` (a colon or `#` between them at most), not inside a path or a date.
_COUNTER = lazy_re.compile(r"(?<![\w/.-])(?P<word>[A-Z][a-z]{2,}|[a-z]{3,}|[A-Z]{3,})\s*[:#]?\s*"
                           r"(?P<n>\d{1,7})\s*/\s*(?P<m>\d{1,7})(?![\d/.:-])")
# Words whose count is some other loop's: data being read or written, an evaluation's
# pass, the machines, an inner loop of batches.
_NOT_THE_RUN = frozenset({
    "file", "files", "shard", "shards", "image", "images", "sample", "samples", "batch",
    "batches", "download", "downloading", "loading", "part", "parts", "page", "pages",
    "worker", "workers", "rank", "gpu", "gpus", "node", "nodes", "test", "testing", "val",
    "valid", "validation", "eval", "evaluation", "evaluating", "chunk", "chunks", "record",
    "records", "row", "rows", "line", "lines", "item", "items", "request", "requests",
    "attempt", "retry", "try", "layer", "layers", "block", "blocks",
    # the counters the formats know by name: a line of theirs they did not take as
    # progress (an epoch's header alone, `==> Epoch 196/200`) is none here either
    "epoch", "epochs", "step", "steps", "iter", "iters", "iteration", "iterations", "round",
    "rounds", "episode", "episodes", "update", "updates", "generation", "fold", "folds",
    "trial", "trials", "run", "runs", "stage", "task", "tasks", "phase"})
_SEEN_BEFORE_COUNTING = 3


class NamedCounters:
    """A RecordReader: the step of a loop counted as `Word N/M` in a log whose progress
    nothing else said."""

    def __init__(self) -> None:
        self._word: str | None = None
        self._plan = 0
        self._last = 0
        self._seen = 0

    def wants(self, line: Line) -> bool:
        return "/" in line.text and not line.in_traceback

    def amend(self, line: Line, record: Record | None, context: ParseContext) -> Record | None:
        if record is not None and (record.step is not None or record.metrics):
            return record
        if context.progress_unit != "none" and self._seen < _SEEN_BEFORE_COUNTING:
            return record
        found = _COUNTER.search(line.text)
        if found is None:
            return record
        word, n, m = found.group("word"), int(found.group("n")), int(found.group("m"))
        low = word.lower()
        if low in _NOT_THE_RUN or low.endswith(("ed", "ing")) or not 0 < n <= m or m < 2:
            # (a verb's count is what it did, `Training Completed 3/48`, not a loop's name)
            return record
        if word == self._word and m == self._plan and n > self._last:
            self._seen += 1
        elif self._seen >= _SEEN_BEFORE_COUNTING:
            return record  # the loop already known: another counter is some other loop's
        else:
            self._word, self._plan, self._seen = word, m, 1
        self._last = n
        if self._seen < _SEEN_BEFORE_COUNTING:
            return record
        context.step, context.target, context.step_found = n, m, True
        line.advanced = True
        line.claimed = True
        if record is None:
            return Record(step=n, target_steps=m)
        return replace(record, step=n, target_steps=m)
