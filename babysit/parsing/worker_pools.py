"""gensim's word-vector trainers (Word2Vec, Doc2Vec, FastText): their progress and their end,
read from the worker pool's own lines.

gensim prints no loss and no step. Its `train()` feeds jobs of words to a pool of worker
threads and says how the pool stands: a job queued (`queueing job #0 (5000 words, 5000
sentences) at alpha 0.02500`, DEBUG), the share done (`PROGRESS: at 45.00% examples,
…`, `EPOCH 1 - PROGRESS: at …` from 3.3 on), each worker as it finishes, counting down
(`worker thread finished; awaiting finish of 2 more threads` … `of 0 more threads`), and
the totals (`training on 5000 raw words (1381 effective words) took 0.0s, …`).

- The count reaching 0 more threads is the pool's last worker done: every job queued
  was trained. Before 3.3, one pool runs all the epochs (the corpus times `iter`
  words queued), so that line is the end of `train()`; sealed-14's HoloClean paste of a
  FastText fit ends on it, its closing totals cut. From 3.3 on a pool runs one epoch,
  and the epoch's report follows it at once (`EPOCH - 1 : training on 1000 raw words
  (275 effective words) took 0.0s, …`): a line of the pool after it is more training,
  and takes the end back (see below).
- The closing totals (`training on 5000 raw words …`, `training on a 5000 raw words …`
  from 3.3 on, not an epoch's `EPOCH - 1 : training on …`) are the trainer's own
  summary as `train()` returns.

With no other progress in the log, each of the pool's lines is a step of its work
counted (as babysit counts the records of a log that prints no step): training seen, and
a line after the pool's end moves it on, so an epoch's end is not taken for the run's.
"""

from __future__ import annotations

from dataclasses import replace

from babysit import lazy_re
from babysit.model import EventKind, LogEvent, Record
from babysit.parsing.events import SUMMARY
from babysit.parsing.readers import Line, ParseContext

# A worker of the pool done, and how many it still waits on (0: the pool's last).
_WORKER_DONE = lazy_re.compile(
    r"\bworker thread finished; awaiting finish of (\d+) more threads?\b")
# The pool's other lines: a job queued (DEBUG), the share done (`PROGRESS: at 45.00%
# examples`, `EPOCH 2 - PROGRESS: at …` from 3.3 on), an epoch's report (`EPOCH - 1 :
# training on 80 raw words`, gensim 4's `EPOCH 0: training on …`).
_PROGRESS = lazy_re.compile(r"\bqueueing job #\d+ \(\d+ words|"
                            r"(?:^|[\s:])(?:EPOCH (?:- )?\d+\s*(?:-\s*)?)?PROGRESS: at [\d.]+% "
                            r"(?:examples|words)|"
                            r"\bEPOCH (?:- )?\d+\s*: training on \d+ raw words")
# The closing totals of `train()`, not an epoch's (behind its `EPOCH - 1 : `).
_TOTALS = lazy_re.compile(r"(?<!: )\btraining on (?:a )?\d+ raw words \(\d+ effective words\) "
                          r"took\b")


class WorkerPools:
    """A RecordReader: gensim's worker-pool lines as the run's progress and end, in a log
    that gives no other progress (see the module's docstring)."""

    def __init__(self) -> None:
        self._step: int | None = None  # the last step this reader gave

    def wants(self, line: Line) -> bool:
        text = line.text
        return not line.in_traceback and ("more thread" in text or "PROGRESS: at" in text
                                          or "queueing job #" in text or "raw words" in text)

    def amend(self, line: Line, record: Record | None, context: ParseContext) -> Record | None:
        if context.progress_unit != "none" and (self._step is None or context.step != self._step):
            return record  # the log's own progress decides
        text = line.text
        event: LogEvent | None = None
        done = _WORKER_DONE.search(text)
        if done is not None and done.group(1) == "0":
            event = LogEvent(EventKind.COMPLETED, text.strip()[:500])
        elif done is None and _TOTALS.search(text) is not None:
            if self._step is None:
                return record  # totals with no pool seen: nothing trained that babysit read
            line.claimed = True
            return self._with(record, None, LogEvent(EventKind.COMPLETED, text.strip()[:500],
                                                     SUMMARY))
        elif done is None and _PROGRESS.search(text) is None:
            return record
        step = (self._step or 0) + 1
        self._step = context.step = step
        context.step_found = True
        line.advanced = line.claimed = True
        return self._with(record, step, event)

    @staticmethod
    def _with(record: Record | None, step: int | None, event: LogEvent | None) -> Record:
        base = record if record is not None else Record()
        events = (*base.events, event) if event is not None else base.events
        return replace(base, step=step if step is not None else base.step, events=events)
