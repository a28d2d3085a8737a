"""Closing lines that ended a launch, not a stage: a run's start-up printed again after
them.

A closing-looking line that the run printed between its training records before is
taken for a stage's (`Training done for epoch 3`, every epoch), and so is no end when
the log stops after it (see `closing`). A log may hold several runs, though: a script
run again into the same file (`START train.py` … `END train.py`, again and again), a
sweep's configurations one after another in one notebook cell (`training with: …`,
`Starting training for 5 epochs`, …, `training time:  872.6`). Their closing line
recurs too, each time followed by the run's own start-up lines (its preamble, see
`launches`) before training again: it ended a run, and said again at the last run's end
it is that run's end.

A start-up line may also be the run's header between records (`starting epoch: 1`
printed once before training, then at every epoch): one printed in more than a third of
the stretches between records is a header, and a closing line followed only by headers
is a stage's after all (a per-epoch `Test accuracy`, then `starting epoch: 2`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from babysit import lazy_re
from babysit.parsing.log_prefix import message

_DIGITS = lazy_re.compile(r"\d+")
_KEY_CHARS = 100

_MAX_KEPT = 256
# A start-up line printed in more than this share of the stretches between training
# records is the run's header, not a new launch.
_HEADER_SHARE = 1 / 3


def start_up_shape(line: str) -> str:
    """A start-up line's shape, as launches are told apart by (`launches`): its numbers
    masked (timestamps, pids, sizes change between launches), cut where a changed setting
    would make two launches' lines differ."""
    return _DIGITS.sub("#", line.strip())[:_KEY_CHARS]


def said_shape(line: str) -> str:
    """The shape of what a start-up line says behind its logger's head (a script whose
    logging moved to another module, `train.log - INFO - train : True` then `logger.py -
    print_config - INFO - train : True`, prints the same start-up)."""
    return start_up_shape(message(line) or line)


class LaunchEnds:
    """The start-up lines printed again between training records, and the closing lines
    they followed."""

    def __init__(self) -> None:
        self._stretches = 0  # stretches between training records closed so far
        self._in_stretches: Counter[str] = Counter()  # stretches each start-up line was in
        self._stretch: set[str] = set()  # start-up lines of the current stretch
        self._after_close: set[str] = set()  # those printed after one of its closing lines
        # Closing lines (their templates) that ended a launch, and the start-up lines
        # that followed them.
        self._ends: dict[str, frozenset[str]] = {}

    def start_up_again(self, shape: str, after_close: bool) -> None:
        """A start-up line printed again; `after_close`: a closing-looking line came
        before it since the last training record."""
        self._stretch.add(shape)
        if after_close:
            self._after_close.add(shape)

    def trained(self, closings: Iterable[str]) -> bool:
        """Training moved on after a stretch whose closing-looking lines are `closings`
        (templates). True when they ended a launch (kept here, not as a stage's)."""
        self._stretches += 1
        for shape in self._stretch:
            self._in_stretches[shape] += 1
        ended = bool(self._after_close)
        if ended:
            marks = frozenset(self._after_close)
            for shape in closings:
                if len(self._ends) < _MAX_KEPT:
                    self._ends[shape] = marks
        self._stretch, self._after_close = set(), set()
        return ended

    def recurs(self, shape: str) -> bool:
        """Whether a closing line kept as a launch's end was a stage's after all: every
        start-up line printed after it turned out to be a header."""
        marks = self._ends.get(shape)
        return marks is not None and all(self._header(mark) for mark in marks)

    def _header(self, shape: str) -> bool:
        return self._in_stretches[shape] > _HEADER_SHARE * self._stretches
