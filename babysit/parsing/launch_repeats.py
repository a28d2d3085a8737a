"""The last launch ended as every launch before it did: a sweep's last run is over.

A script that trains one configuration after another (a sweep, seeds, folds) into one
log shows how each of its runs ends: the counter climbs to the same place (`epoch :
49`), the same line follows (`finish evaluation`), and the next run's counter starts
again. Each of those ends was a finished run's: the script went on to the next. When
the log's last run stops at that same place, followed by that same line, it ended as
the others did, and once nothing more comes it is over the same way (LIKE_LAUNCHES). So
too where an earlier run said it finished (`Early stopping triggered.`, then `Training
selesai.`) and the last one prints that same closing line, wherever it stopped. A line
printed between records inside a run (`>> No improvement (3 epochs).`) ends nothing.
A failure's words never make such an end (a run that dies at the same epoch each time
is read by its failure), and a run that stops anywhere else, or says anything else,
proves nothing by this.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from babysit import lazy_re
from babysit.model import EventKind, LogEvent
from babysit.parsing.shapes import template

# The detail of the COMPLETED event this gives (see `endings.AFTER_TRAINING`).
LIKE_LAUNCHES = "like-launches"

# Words that say a run failed or was stopped: no finished run's last line.
_FAILED = lazy_re.compile(r"Traceback|[Ee]rror|ERROR|[Ee]xception|Killed|[Tt]erminat|[Aa]bort|"
                          r"[Ii]nterrupt|[Ff]ail|FAIL|[Cc]ancel|nan\b|NaN")
# A training loss's name (not an evaluation's).
_LOSS = lazy_re.compile(r"^(?!.*(?:eval|val|valid|test|dev)[_/]).*(?:loss|cost|nll)")
# Earlier launches whose ends, none said finished, make a pattern.
_PATTERN = 2
# Launches whose ends are kept: enough for any sweep a log holds.
_KEPT = 64
# Lines kept after each launch's last record: its end, and room for a stray warning
# printed before it (matplotlib's `More than 20 figures have been opened`).
_LINES_AFTER = 3


@dataclass
class LaunchRepeats:
    """Follows, for each launch, where its counter stopped and the first lines after its
    last training record."""

    # The templates of the first lines after the last record, and those lines.
    _after: dict[str, str] = field(default_factory=dict)
    # Each earlier launch's end: where its counter stood, the templates after it, and
    # whether the run said it finished there (an early stop, a completion line).
    _ends: list[tuple[float, frozenset[str], bool]] = field(default_factory=list)
    # Templates printed after a record that training went on from, inside a launch (an
    # epoch's `>> No improvement (3 epochs).`): no launch's end.
    _between: set[str] = field(default_factory=set)
    _failed = False  # a line after the last record said something failed
    _done = False  # the run said it finished since the last record
    _start: float | None = None  # where the current launch's counter began
    _lost = False  # a record of the current launch carried a training loss

    def after_record(self, text: str) -> None:
        """A line after the last training record (blank lines say nothing)."""
        line = text.strip()
        if not line or len(self._after) >= _LINES_AFTER or self._failed:
            return
        if _FAILED.search(line) is not None:
            self._failed, self._after = True, {}
        else:
            self._after.setdefault(template(line), line)

    def said_done(self) -> None:
        """The run said it finished (its own words, not babysit's reading of the loop)."""
        self._done = True

    def trained(self, relaunched: bool, stood_at: float | None, now_at: float | None,
                names: Iterable[str] = ()) -> None:
        """A training record at `now_at`, of metrics `names`; `relaunched`: the counter
        went back, so the launch before ended where it `stood_at`, with the lines kept as
        its end. A record where the counter stood (the next run's settings, `lr : 0.5,
        opti_lr : 0.001`, read as figures) keeps them."""
        if relaunched and stood_at is not None and stood_at != self._start and self._lost \
                and len(self._ends) < _KEPT:
            # (a launch whose counter never moved, a step stuck where a bar left it, ran
            # nothing this can compare; nor did one without a loss: an evaluation's table,
            # its rows counting images, read as records)
            self._ends.append((stood_at, frozenset(self._after), self._done))
        elif not relaunched and now_at != stood_at and len(self._between) < _KEPT:
            self._between.update(self._after)
        if relaunched or self._start is None:
            self._start, self._lost = now_at, False
        if relaunched or now_at != stood_at:
            self._after, self._failed, self._done = {}, False, False
        self._lost = self._lost or any(_LOSS.search(name) is not None for name in names)

    def judge(self, stands_at: float | None) -> LogEvent | None:
        """At the end of a read: a COMPLETED event when the last launch ended with a line
        every earlier launch printed after its last record, never between records: where
        each of them stopped too, or wherever it stopped after saying it finished."""
        if not self._ends or stands_at is None or stands_at == self._start or not self._lost:
            return None
        # (ends nobody said were finished prove it by their pattern alone: one earlier
        # launch that stopped where this one did may have been stopped there too, a job
        # cut at the same epoch; two or more are the script's own cadence)
        said = all(done for _, _, done in self._ends)
        if not said and len(self._ends) < _PATTERN:
            return None
        for shape, line in self._after.items():
            if shape not in self._between and all(
                    shape in after and (done or stood == stands_at)
                    for stood, after, done in self._ends):
                return LogEvent(EventKind.COMPLETED, line[:500], LIKE_LAUNCHES)
        return None
