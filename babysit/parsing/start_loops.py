"""A run started again and again that never trained: a crash loop.

A job restarted by a scheduler or a wrapper that appends to one log (`>> train.log`, a
`while true` around the script, torchrun's elastic restarts) shows each start by what
the program prints first: its banner, its configuration, its `fold: 0 training` header.
When that first line comes back again and again and not one training record was read
in between or since, every start died (or was killed) before it trained anything — a
code-league genre classifier's `========== fold: 0 training ==========` ten times and
nothing else; a VITS run's configuration dict, `Train Epoch: 1 [0%]` and its first loss,
three times over; a GST-Tacotron launch that printed its hyper-parameters thrice. The
error each start died on went elsewhere (stderr, a scheduler's file). Whatever the last
start is doing, the run is crash-looping: high while nothing trains (what the log
printed may be training in a shape not read, so it is no blocker alone), resolved by a
start that trains past its first record.

Not a line the run prints at every epoch's start (YOLO's `Epoch GPU_mem box_loss …`
header before each epoch's bar): between its returns the run's step moved on. Nor a
launch that says it finished.

The first line of words (its logger's head aside: each start's time differs) must come
back `_STARTS` times in all; a start's first record — one step of loss, the same each
time, no more — is no training past the start.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.model import EventKind, LogEvent, Record
from babysit.parsing.log_prefix import message
from babysit.parsing.text import clean

# A line of words (two at least), not a rule, a number or a bracket of a dump.
# (the first word at a word's start: one run of 64 KiB of letters took a minute, each of
# its positions scanned to its end)
_WORDED = lazy_re.compile(r"\b[A-Za-z]{3}.*?\b[A-Za-z]{3}")

_STARTS = 3  # starts of the run, the first line each time
# Records one start may print and still have trained nothing past its first step.
_FIRST_RECORDS = 1
# The detail of the event that says a start got through (the anomaly resolves).
GOT_THROUGH = "got-through"


class StartLoops:
    """The log's first line, how often it came back, and the records since it did."""

    def __init__(self) -> None:
        self._first: str | None = None
        self._starts = 0
        self._records = 0  # training records since the latest start
        self._most = 0  # the most any start printed
        self._said = False
        self._through = False
        self._step: int | None = None  # the run's step when the second start came
        self._moved = False  # the step moved between starts: no start is a new one
        self._done = False  # the log said a run finished
        # The first start's first figures (step, epoch, values): each start that dies
        # where the first did prints the same, or none.
        self._first_print: tuple[object, ...] | None = None

    def completed(self) -> LogEvent | None:
        """The log said a run finished: a start that finishes is no crash (the event that
        the loop is over, where it was said)."""
        self._done = True
        if self._said and not self._through:
            self._through = True
            return LogEvent(EventKind.CRASH_LOOP, "", GOT_THROUGH)
        return None

    def started(self, raw_line: str, step: int | None) -> LogEvent | None:
        """Note one raw line (`step`: where the run stands); the crash-loop event the first
        time the run is seen starting for the `_STARTS`-th time with no start past its
        first record and the run's step where the first start left it."""
        if self._first is None and (not raw_line.strip() or _WORDED.search(raw_line) is None):
            return None  # (the first line of words marks a start: a rule recurs anyway)
        if self._first is not None and self._first[:8] not in raw_line:
            return None  # (a substring test first: most lines are no start)
        text = message(clean(raw_line)).strip()  # (each start's time in its head differs)
        if not text:
            return None
        if self._first is None:
            if "loss" in text.lower():
                self._moved = True  # (a line naming a loss is a record's, no start-up's)
            self._first = text
            self._starts = 1
            return None
        if text != self._first:
            return None
        self._starts += 1
        self._records = 0
        if self._starts == 2:
            self._step = step  # where the first start left the run
        elif step != self._step:
            self._moved = True  # a line printed at each epoch's start, not a new start
        if self._starts >= _STARTS and self._most <= _FIRST_RECORDS and not self._said \
                and not self._moved and not self._done:
            self._said = True
            return LogEvent(EventKind.CRASH_LOOP, text[:500],
                            f"the run started {self._starts} times and no start trained "
                            f"past its first record")
        return None

    def measured(self, record: Record, raw_line: str) -> None:
        """A record with figures was read: a start whose figures differ from the first
        start's (an epoch further on, another loss) made progress of its own, and its
        first line was no new start (YOLO's header line before each epoch's bar). A first
        line that is itself a record marks no start at all."""
        if self._moved or self._done:
            return  # (decided: no crash loop to look for, nothing to keep per record)
        if self._first is not None and self._first[:8] in raw_line \
                and message(clean(raw_line)).strip() == self._first:
            self._moved = True
            return
        shown = (record.step, record.epoch, tuple(sorted(record.metrics.items())))
        if self._starts <= 1:
            if self._first_print is None:
                self._first_print = shown
        elif shown != self._first_print:
            self._moved = True

    def trained(self) -> LogEvent | None:
        """A training record was read; the event that the crash loop is over when a start
        trained past its first record after it was said."""
        self._records += 1
        self._most = max(self._most, self._records)
        if self._said and not self._through and self._records > _FIRST_RECORDS:
            self._through = True
            return LogEvent(EventKind.CRASH_LOOP, "", GOT_THROUGH)
        return None
