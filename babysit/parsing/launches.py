"""Seeing a new launch of the run begin in the same log.

People relaunch into the same file (`>> train.log`, a logger that appends, Slurm's
`--open-mode=append`, a notebook cell run again): a log then holds several launches,
and only the last one is the run. What marks a launch is what a program prints when it
starts — its arguments, its configuration, a banner — before it trains: the log's
*preamble*. Those lines come back when the program starts again, and at no other time
(a line the preamble itself repeats, a separator, a box border, is no mark).

A launch is only looked for after a failure (a crash, a fatal signal) that training has
not gone past: there, a start-up line printed again says the dead process was replaced
and the failure is no longer the run's end — once the new process shows more than its
start-up. A rerun whose log stops while it has printed only start-up lines its first
launch printed has shown nothing of its own, and the failure is still the last word on
the run (sealed-14's DDRNet paste: `RuntimeError: CUDA error: an illegal memory access
was encountered`, the shell's prompt with the same command run again under
`CUDA_LAUNCH_BLOCKING=1`, then only its `Found 2975 train images.` / `Found 500 val
images.`); any other line (more of a longer start-up, a step, the work it begins, a
failure) is the new launch at work, and begins it. Everywhere else a relaunch shows itself by
its steps (they go back), and a start-up line that recurs (a dataset loader that prints
again for each evaluation) must not be taken for one.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.model import EventKind, LogEvent, Record
from babysit.parsing.events import exception_line
from babysit.parsing.formats import has_counter
from babysit.parsing.launch_ends import said_shape, start_up_shape
from babysit.parsing.log_prefix import message
from babysit.parsing.text import clean

_WORD = lazy_re.compile(r"[A-Za-z]{3}")
# The time alone on a line (a job script's `date` before its command and after it: `Tue Feb
#  8 17:08:29 EST 2022`, then `Tue Feb  8 17:22:06 EST 2022` after `real 13m35.599s`): a
# clock's reading, printed again at the end, no start-up's mark.
_CLOCK = lazy_re.compile(r"^\s*(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\w*,?\s+)?"
                         r"(?:\d{1,2}\s+)?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\w*"
                         r"\.?\s+(?:\d{1,2},?\s+)?(?:\d{4}\s+)?\d{1,2}:\d{2}(?::\d{2})?"
                         r"(?:\s*[AP]M)?(?:\s+[A-Z]{2,5}|\s+[+-]\d{4})?(?:\s+\d{4})?\s*$")
# The first lines of a preamble mark a launch best; a long one (a model printed layer
# by layer) is read no further than this.
_PREAMBLE_LINES = 400
_MARKS = 8
# Events after which the process is gone unless something follows: a new launch is
# looked for after them.
_FATAL_KINDS = frozenset({EventKind.EXCEPTION, EventKind.OOM, EventKind.CUDA_ERROR,
                          EventKind.HARDWARE_FAULT, EventKind.SEGFAULT, EventKind.HOST_KILL,
                          EventKind.STOPPED_BY_SIGNAL, EventKind.WORKERS_STOPPED,
                          EventKind.NCCL, EventKind.JOB_STATE})


# An out-of-memory error the framework caught and said so at a warning's level, skipping
# the batch (fairseq's `| WARNING | fairseq.trainer | OOM: Ran out of memory with
# exception: …`, `attempting to recover from OOM in forward/backward pass`, each followed
# by PyTorch's memory summary, which a log cut by Colab opened on): the process goes on.
_SURVIVED_OOM = lazy_re.compile(r"\b(?:WARNING|WARN|W\d{4})\b.*\b(?:OOM|[Oo]ut of memory)\b|"
                                r"\brecover(?:ing|ed)? from (?:an? )?OOM\b")


def _fatal(event: LogEvent) -> bool:
    """Whether an event is a failure after which the process is gone unless something
    follows (`_FATAL_KINDS`, less an OOM the framework survived)."""
    return event.kind in _FATAL_KINDS and not (
        event.kind is EventKind.OOM and _SURVIVED_OOM.search(event.line) is not None)


def _failing(line: str) -> bool:
    """A line of a traceback: what a failure prints, not what a start-up does."""
    text = line.strip()
    return "Traceback (" in text or text.startswith("File \"") \
        or exception_line(text) is not None


# A line about a passing condition (a tracker's `wandb: Network error (TransientError),
# entering retry loop.`, a connection retried): printed whenever the condition comes
# back, at start-up or long after — no mark of a launch (after an OOM, wandb's retries
# while it synced read as the run launched again, and hid the OOM).
_PASSING = lazy_re.compile(r"(?i)\bretr(?:y|ying|ies)\b|network error|transient|"
                           r"connection (?:reset|refused|error|lost)|reconnect")


# Distinct start-up lines before the first one comes again that make it a launch that
# died in its start-up (a library's import notice printed twice at once is not).
_RESTARTED_AFTER = 3
# Start-up marks a launch told by its lines' says alone must print again (see `begins`).
_SAID_LEAST = 4


# A shell tool's usage or complaint (`usage: conda [-h] …`, `conda: error: …`, `bash: …:
# command not found`).
_TOOL_COMPLAINT = lazy_re.compile(r"^\s*(?:usage: \S+ |[\w.-]+: (?:error|[Ee]rror):|"
                                  r"(?:ba|z)?sh: .*(?:command not found|No such file))")


# A batch scheduler's epilogue block around its report on a job (Torque/PBS: `Begin PBS
# Epilogue Sat Oct 15 21:10:24 EDT 2022` … `End PBS Epilogue …`).
_EPILOGUE = lazy_re.compile(r"^\s*(Begin|End)\b[\w ]{0,20}\bEpilogue\b")


class LaunchReader:
    def __init__(self) -> None:
        self._preamble: dict[str, int] = {}  # shape -> times seen before training began
        self._order: list[str] = []
        self._marks: frozenset[str] | None = None  # None while the preamble is read
        self._armed = False  # a failure was read, and training has not gone past it
        # Armed by a completion rather than a failure: the marks printed again since.
        self._after_completion: set[str] | None = None
        self._first_mark: str | None = None  # the first line of the preamble's marks
        self._first_needle = ""
        self._first_line = ""  # the preamble's first line as printed
        # What each preamble line says behind its logger's head, and the first mark's.
        self._said: dict[str, str] = {}
        self._said_marks: dict[str, str] = {}  # a mark's said shape -> the mark
        self._said_matched = 0  # marks matched by their said shape since a completion
        self._first_said = ""
        self._said_needle = ""
        # After a failure, the start-up line a new launch began with, while the launch has
        # printed nothing but its start-up since (see the module's docstring).
        self._held: str | None = None
        self._epilogue = False  # inside a scheduler's epilogue block
        # Whether the preamble's lines are still wanted (its first few hundred): read
        # at every line, so kept as a plain attribute.
        self.learning = True

    @property
    def in_preamble(self) -> bool:
        return self._marks is None


    @property
    def armed(self) -> bool:
        """Whether a failure was read that training has not gone past."""
        return self._armed

    def remember(self, line: str) -> None:
        """A line of the preamble (cleaned): printed before training, not a record."""
        # (a word in what the line says, not in its logger's head: `… INFO ` with nothing
        # after it, or `… INFO ====…`, is a blank or a rule, no mark; an AlphaZero loop's
        # closing banner between two such lines read as its start-up printed again)
        if self._marks is None and len(self._order) < _PREAMBLE_LINES \
                and _WORD.search(message(line)) is not None and not _failing(line) \
                and _PASSING.search(line) is None and _CLOCK.match(line) is None:
            key = start_up_shape(line)
            if self._order and key == self._order[0] and len(self._order) >= _RESTARTED_AFTER:
                # The preamble's first line again before any training: the launch before
                # died in its start-up (a dual encoder's `Namespace(… n_epochs=10 …)`, its
                # HTTP checks, then `Namespace(… n_epochs=20 …)` and the same checks). The
                # start-up is this launch's, its lines each marks, not lines it repeats.
                self._preamble.clear()
                self._order.clear()
                self._said.clear()
            if key not in self._preamble:
                if not self._order:
                    self._first_line = line.strip()
                self._order.append(key)
                self._said[key] = said_shape(line)
                self.learning = len(self._order) < _PREAMBLE_LINES
            self._preamble[key] = self._preamble.get(key, 0) + 1

    def begins(self, line: str) -> bool:
        """Whether a line (cleaned) read after a failure begins a new launch; after a
        completion, the second mark of the preamble printed again does (one start-up
        line may come back in a final evaluation: a test set loaded as the training set
        was)."""
        if not self._armed or not self._marks or _WORD.search(line) is None:
            return False
        key = start_up_shape(line)
        if key not in self._marks:
            # (or says what a mark says, behind another logger's head, `said_shape`: from
            # the first thing the program prints on, as a launch begins; an evaluation's
            # `==> Checkpoint trained from version: …` says a start-up line again alone)
            found = self._said_marks.get(said_shape(line))
            begun = self._after_completion is not None and self._first_mark is not None \
                and self._first_mark in self._after_completion
            if found is None or (found != self._first_mark and not begun):
                return False
            key = found
            self._said_matched += 1
        if self._after_completion is not None:
            # A launch begins with the first thing its program prints, and goes on to
            # print more of its start-up (a second script run with the same
            # configuration, `infer.py` after `trainer.py`, begins otherwise).
            if key == self._first_mark or self._after_completion:
                self._after_completion.add(key)
            # (a launch told by what its lines say alone shows more of its start-up)
            least = _SAID_LEAST if self._said_matched else 2
            if len(self._after_completion) < min(least, len(self._marks)):
                return False
        self._armed = False
        self._after_completion = None
        self._said_matched = 0
        return True

    def first_printed_again(self, raw_line: str) -> bool:
        """Whether a line (not armed: after no failure or completion) is the first line
        of the run's start-up printed again: the start of a launch appended to the log
        after one that stopped without a word (see `parsing.loop_over`). A substring test
        first: it is asked of every line that did not train."""
        needle = self._first_needle
        if needle and needle in raw_line:
            line = clean(raw_line)
            return start_up_shape(line) == self._first_mark and not self._loop_header(line)
        # (the same said behind another logger's head: see `said_shape`)
        said = self._said_needle
        return bool(said) and said in raw_line and said_shape(clean(raw_line)) == self._first_said

    def _loop_header(self, line: str) -> bool:
        """Whether a line is the preamble's first line with another count in it: a log
        that opens on the loop's own header (`Epoch 1: ------`, the PyTorch quickstart's
        shape) prints `Epoch 2: ------` as its next epoch, after a test pass read as a
        possible end too; only that very line, its count as well, begins the run again."""
        return bool(self._first_line) and line.strip() != self._first_line \
            and has_counter(line) and start_up_shape(line) == self._first_mark

    def first_is_periodic(self) -> None:
        """The first line of the start-up came back while training went on: it is printed
        as the run trains, and marks no launch (`first_printed_again` stops asking)."""
        self._first_needle = self._said_needle = ""

    def launch(self, raw_line: str) -> LogEvent | None:
        """The LAUNCHED event when a line read after a failure begins a new launch (the
        parser asks only outside a traceback): after a failure, at the first line past the
        start-up printed again (see the module's docstring)."""
        line = clean(raw_line)
        if "pilogue" in line and (edge := _EPILOGUE.match(line)) is not None:
            self._epilogue = edge.group(1) == "Begin"
            return None
        if self._epilogue:
            # The scheduler's report on the job that just ended (Torque's `Begin PBS
            # Epilogue`, then `Job ID:`, `User ID:`, `Job name:` as its prologue printed
            # them at the start): the job's own identity said again, no new launch.
            return None
        if self._held is not None:
            return self._past_start_up(line)
        after_failure = self._after_completion is None
        if after_failure and self._held is None and _TOOL_COMPLAINT.search(line) is not None:
            # A tool's complaint the job script's start printed too (`usage: conda …`,
            # `conda: error: argument COMMAND: invalid choice: 'deactivate'` after the run's
            # traceback, `'activate'` before it): the script's own lines around the run, no
            # new launch of it.
            return None
        if not self.begins(line):
            return None
        if after_failure:
            self._held = line.strip()[:500]
            self._armed = True  # (asked of each line until the launch shows more)
            return None
        return self._launched(line.strip()[:500])

    def _past_start_up(self, line: str) -> LogEvent | None:
        """The held launch, begun once a line is not one of the start-up's marks."""
        marks = self._marks or frozenset()
        if not line.strip() or (_WORD.search(line) is not None and start_up_shape(line) in marks):
            return None  # still the start-up its first launch printed
        held, self._held = self._held, None
        self._armed = False
        return self._launched(held or line.strip()[:500])

    @staticmethod
    def _launched(line: str) -> LogEvent:
        return LogEvent(EventKind.LAUNCHED, line,
                        "the run's start-up lines were printed again: a new launch")

    def after(self, raw_line: str, record: Record | None, advanced: bool,
              in_traceback: bool) -> str | None:
        """What a line just read says about launches: training moved (`advanced`), a
        line of the preamble, or a failure that ends the process. Returns the shape of a
        start-up line printed again after training began, failure or not (the closing
        block judges what it ends: see `closing.ClosingBlock.start_up_again`)."""
        again = None
        if advanced:
            self.trained()
        elif self.learning and (record is None or not record.events) and not in_traceback:
            self.remember(clean(raw_line))
        elif self._marks and not in_traceback and (record is None or not record.events):
            text = clean(raw_line)
            key = start_up_shape(text)
            # (not the loop's own counter, `epoch:  0` before the first epoch's records
            # then `epoch:  1`: it comes back at every epoch, no new launch's start-up)
            again = key if key in self._marks and not has_counter(text) else None
        if record is not None and record.events \
                and any(_fatal(e) for e in record.events):
            self.failed()
        elif record is not None and record.events and not self._armed \
                and any(e.kind is EventKind.COMPLETED for e in record.events):
            self.finished()
        return again

    def trained(self) -> None:
        """Training moved: the preamble is over, and a failure before it was survived."""
        self._close_preamble()
        self._held = None
        self._armed = False
        self._after_completion = None

    def failed(self) -> None:
        """A failure that ends the process unless something follows it."""
        self._close_preamble()
        self._held = None
        self._armed = True
        self._after_completion = None

    def finished(self) -> None:
        """The run said its training is over: a launch appended after it (the same
        script run again into the same log) is the run the log now holds."""
        self._close_preamble()
        self._armed = True
        self._after_completion = set()
        self._said_matched = 0
        self._held = None

    def settled(self) -> LaunchReader:
        """This reader with its preamble closed where it stands, and no failure armed:
        what a parser that starts further on needs of the log's start."""
        self._close_preamble()
        self._armed = False
        self._held = None
        return self

    def _close_preamble(self) -> None:
        if self._marks is None:
            once = [k for k in self._order if self._preamble[k] == 1]
            self._marks = frozenset(once[:_MARKS])
            self._first_mark = once[0] if once else None
            # Its longest stretch without a number, for a quick test of a line.
            self._first_needle = max(self._first_mark.split("#"), key=len).strip() \
                if self._first_mark else ""
            self._first_said = self._said.get(self._first_mark or "", "")
            self._said_marks = {self._said[k]: k for k in self._marks if k in self._said}
            # (a said shape as long as its line is no head's shorter say)
            if self._first_said and self._first_said != self._first_mark:
                self._said_needle = max(self._first_said.split("#"), key=len).strip()
            self.learning = False
            self._preamble, self._order, self._said = {}, [], {}
