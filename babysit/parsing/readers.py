"""The seam between LogParser and the readers it runs on each line.

LogParser holds the context every reader shares (the step, the planned total, the
phase) and builds a line's record from its formats; a reader knows one kind of line (a
sentence that says a value is NaN, a `nan` in a metric's slot, a line about the run's
size, the lines after training stopped...) and keeps the state that kind needs. The
parser runs its readers in a fixed order after the record is built; each may amend the
record or make one, and may claim the line (it was understood, even without a record).
A few readers run before the formats instead (`ClaimingReader`): a line they claim
(a Keras epoch header) is theirs alone.

Most lines of a training log are metric lines none of the readers cares about, so each
reader says first, cheaply, whether a line may be its kind (`wants`: substring tests,
no regular expression); only then is it asked to read it.
"""

from __future__ import annotations

from typing import Protocol

from babysit.model import Record

# The progress units that count steps (the run's own, or its training records counted):
# a log counted in epochs only, or not at all, has none a reader may place things at.
STEP_UNITS = ("step", "record")

class Line:
    """One line as the readers see it: the text after its rank label and any progress
    bar, and what the parser learned of it so far."""

    __slots__ = ("_hints", "advanced", "claimed", "in_traceback", "rank", "text")

    def __init__(self, text: str, rank: int | None, in_traceback: bool) -> None:
        self.text = text
        self.rank = rank
        self.in_traceback = in_traceback
        self.advanced = False  # the line moved training on (a new step, an epoch trained)
        self.claimed = False  # a reader understood it: it counts as read, record or not
        self._hints: bool | None = None

    @property
    def hints_non_finite(self) -> bool:
        """Whether the text has what a non-finite token needs (most lines lack it), asked
        by two readers: substring tests, which run at every metric line ~4× faster than
        a pattern of alternatives."""
        hints = self._hints
        if hints is None:
            text = self.text
            hints = self._hints = "nan" in text or "inf" in text or "NaN" in text \
                or "Inf" in text or "NAN" in text or "INF" in text
        return hints


class ParseContext(Protocol):
    """What the readers may read of the parser's shared context, and the one thing they
    may change: the step (a sentence that names the step its NaN came at)."""

    step: int | None
    target: int | None
    # Whether the log gives steps of its own: a reader that finds the run's own step
    # counter where the formats did not (a checkpoint named by its step) says so.
    step_found: bool

    @property
    def progress_unit(self) -> str:
        """`step`, `record`, `epoch` or `none`: what the log's progress is counted in so
        far (`STEP_UNITS`: in steps, the run's own or its records counted)."""
        ...


class ClaimingReader(Protocol):
    """Reads a line before the formats do (a header that sets their context); a line it
    claims is its alone: the formats and the readers after them never see it."""

    def wants(self, line: Line) -> bool:
        """Whether the line may be this reader's kind: cheap, called on most lines."""
        ...

    def read(self, line: Line, context: ParseContext) -> Record | None:
        """The record the line makes, if any; sets `line.claimed` when the line is its."""
        ...


class RecordReader(Protocol):
    """Reads a line after its record was built (None when the formats found nothing)."""

    def wants(self, line: Line) -> bool:
        """Whether the line may be this reader's kind: cheap, called on every line."""
        ...

    def amend(self, line: Line, record: Record | None, context: ParseContext) -> Record | None:
        """The line's record with what this reader read in it (the same record when it
        read nothing); may set `line.claimed`."""
        ...


class TrainingListener(Protocol):
    """A reader whose state lasts until training moves on (a count of skipped batches,
    an open failure): told at each training record."""

    def trained(self) -> None: ...
