"""The outermost counter at its declared total: the last planned epoch was trained.

A run that counts its epochs against a total (`Epoch 14/14`, `epoch: 20/20, iter: 10/14`,
`=== EPOCH 199/199 ===`) says by that counter alone how far it is through its plan; a
counter inside it (the batches of one epoch, `iter: 10/14`) says nothing of the plan.
The last planned epoch is over when it has had as many training records as the epoch
before it (a run in its only epoch, `Epoch 1/1`, or part-way through its last, is not
over) and then:

- the run printed on past its training record without training (its evaluation, a
  summary, the next phase), or
- its records are one per epoch (Keras' `verbose=2` line, a per-epoch summary) and the
  last one is not part-way through its epoch (a Keras `verbose=1` bar at `37/100`): the
  record of an epoch is printed as that epoch ends, or
- its last record shows the counter inside the epoch at its total (`Epoch 1000/1000::
  100%| 41/41`, `epoch: 20/20, iter: 14/14`): the last batch of the last epoch was trained,
  or
- its last record stands at the count where each of the epochs before it printed its
  last (`(61/62)` in a loop printing every 20 batches of 62, PaddleOCR's PAN at `Epoch:
  [600 | 600]`), with the learning rate's schedule at its end there too (`LR: 0.000000`):
  the last print the epoch makes. Either alone is no end: a live run's log stops at its
  last epoch's last print a batch before the end, and a schedule may end before its plan.

0- or 1-based, as the run counts: an `Epoch 99/100` after an `Epoch 0/100` is the last.
An excerpt that begins past the run's first epochs does not show how it counts: there,
the counter one short of its total (`Epoch [299/300]`, first seen at `Epoch [47/300]`) is
the last epoch of a run counting from 0 and the last but one of a run counting from 1.
Its epoch over, the log stops where a finished run's log stops, though nothing says it
finished (LAST_PRINT: ENDED, outcome not confirmed; a live run reopens it by training on).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from babysit.model import EventKind, LogEvent
from babysit.parsing.log_prefix import message

FINAL_EPOCH = "final-epoch"  # the last planned epoch said it was done (see `endings`)
# The last planned epoch trained and over, read from the order of lines: the end however
# an inner counter compares with babysit's reckoning of the plan, once the log has
# stopped (a live run may yet print another record of it).
LAST_EPOCH = "last-epoch"
# An epoch's evaluation announced on a line of its own, by its number, no figure on it
# (`Eval epoch: 65`): its figures follow, as they did every epoch before. (An unnumbered
# `Evaluating ...` may be the final evaluation itself, its results printed elsewhere.)
_EVAL_OPENS = re.compile(r"^(?:Eval(?:uat\w*)?|Valid\w*|Test(?:ing)?)\b(?:\s+epoch)?\s*:?"
                         r"\s*\d+\s*[.:…]*$", re.IGNORECASE)
# The log stops at the run's last logging point before its planned total, and says
# nothing after it: the run is over once nothing more comes, its outcome not confirmed
# (`core.lifecycle` makes it ENDED, never SUCCEEDED; `endings` gives it for steps).
LAST_PRINT = "last-print"


# The share of its planned epochs below which a run is well short of its plan (as
# `core.lifecycle.premature` reckons steps).
_WELL_SHORT = 0.98
# Epochs before the last whose last records must all stand at the count the last one's
# does, before that count is the epoch's last print; and how near its total it must be
# (a loop printing every 50 of 120 batches prints its last at 101/120).
_SAME_ENDS = 3
_NEAR_TOTAL = 0.8


@dataclass
class FinalEpoch:
    """Follows the outer counter and the training records in it; asked at the end of a
    read whether the last planned epoch is over."""

    _epoch: int | None = None
    _total: int | None = None
    _base: int | None = None  # 0 or 1: how the run counts its epochs
    _first: int | None = None  # the first epoch counted (past 1: the base is a guess)
    _records: int = 0  # training records in the current epoch
    _epochs_seen: int = 0  # epochs whose training records were counted
    _one_each: bool = True  # every earlier epoch had one training record
    _before: int = 0  # training records of the epoch before the current one
    _printed_on: bool = False  # a line that is not training came after the last record
    _eval_opened: bool = False  # ... and the last of them announced an evaluation
    _said: tuple[int, int] | None = None
    _credited: bool = False  # the line being read was counted as a training record
    # Times the total moved with the counter (`Epoch 118/118`, `Epoch 119/119`: Keras fit
    # in a loop, one epoch a call, its `initial_epoch` and `epochs` both moved on each
    # time, sealed-19's FCRN): such a total is each call's, not the run's plan.
    _total_moves: int = 0
    _line_part_way: bool = False  # the line being read shows an inner counter short of its end
    _last_part_way: bool = False  # so did the last training record
    _line_at_end: bool = False  # the line being read shows its inner counter at its total
    _last_at_end: bool = False  # so did the last training record
    _relaunched: bool = False  # the start-up came again, and no counter since
    # The outer counter went back since the last training record (`Epoch 1/30` after
    # `Epoch 30/30`): a new launch or the script's next experiment began.
    _went_back: bool = False
    _header: int | None = None  # the epoch the latest header line named
    # The last training record was the line naming the epoch itself, its figures with it
    # (`Epoch [4/5], Avg Loss: 0.1653`: the epoch's summary); how many such lines the
    # current epoch had, and each epoch before it (the latest few).
    _last_named: bool = False
    _named: int = 0
    _named_ends: tuple[int, ...] = ()
    _line_inner: tuple[int, int] | None = None  # the inner counter of the line being read
    # Whether the run names each epoch with its figures after that epoch's training
    # records, never before them (see `counted`): None until the first count.
    _counts_close: bool | None = None
    _last_inner: tuple[int, int] | None = None  # that of the last training record
    # The header of the last of the repetitions the run planned (`Running fold 2/2` after
    # `0/2` and `1/2`), once read (see `loop_over`).
    last_repetition: str | None = None
    # The inner counter of the last training record of each of the epochs before the
    # current one (the latest few).
    _ends: tuple[tuple[int, int] | None, ...] = ()

    def new_line(self, part_way: bool = False, at_end: bool = False) -> None:
        """A line is about to be read; `part_way`: its progress bar stands short of its
        total (`37/100`); `at_end`: at its total (`41/41`)."""
        self._credited = False
        self._line_part_way = part_way
        self._line_at_end = at_end and not part_way
        self._line_inner = None

    def part_way(self, inner: tuple[int, int] | None = None) -> None:
        """The line being read shows a counter inside the epoch short of its total
        (`iter: 10/14`): `inner` (done, total), where it shows one alone."""
        self._line_part_way = True
        self._line_at_end = False
        self._line_inner = inner

    def inner_at_end(self) -> None:
        """The line being read shows the counter inside the epoch at its total (`iter:
        14/14`), and none short of it."""
        self._line_at_end = not self._line_part_way

    def counted(self, epoch: float, total: int, trains: bool = False,
                figures: bool = False) -> None:
        """A line names the outer counter: epoch `epoch` of `total`; `trains`: the line
        is a training record of that epoch (`epoch: 20/20, iter: 10/14, total_loss: 1.0`),
        whether or not its inner counter moved the run's step; `figures`: it reports
        figures, though not the training's own (the epoch's summary)."""
        if epoch != int(epoch) or total <= 0:
            return
        whole = int(epoch)
        self._relaunched = False
        self._note_closing(whole, trains, figures)
        if self._epoch is not None and whole < self._epoch and total == self._total:
            self._went_back = True
        if self._base is None:
            self._base = 0 if whole == 0 else 1
            self._first = whole
        if self._total is not None and total != self._total and whole == total \
                and whole != self._epoch:
            self._total_moves += 1
        if whole != self._epoch or total != self._total:
            if self._records and self._epoch is not None:  # not records before any epoch
                self._epochs_seen += 1
                self._one_each = self._one_each and self._records == 1
                self._before = self._records
                self._ends = (*self._ends[1 - _SAME_ENDS:], self._last_inner)
                self._named_ends = (*self._named_ends[1 - _SAME_ENDS:], self._named)
            self._records = self._named = 0
            self._last_at_end = False  # (a new epoch's records say where it stands)
        self._epoch, self._total = whole, total
        if trains:
            self.trained()
            self._credited = True
            self._last_named = True
            self._named += 1
        elif self._records:
            # A line of this epoch after its training records that is not one of them
            # (its evaluation, `Epoch: 19/20, top 1 acc: 0.26`): the run printed on.
            self._printed_on = True

    def _note_closing(self, whole: int, trains: bool, figures: bool) -> None:
        """Whether the run's counted lines close their epochs: a summary with figures of
        its own, printed after the epoch's training records, the first of them after
        records of the first epoch (a distillation loop's `epoch =  0  step =  50  of
        total steps  201  loss = …` lines, then `epoch :  1  /  100  | TL : …  | VL : …`).
        A header opening its epoch comes before any record; one count that trains, or
        comes with no record before it, or skips an epoch, breaks the pattern."""
        if self._counts_close is False or whole == self._epoch:
            return
        if self._epoch is None and not (trains or figures):
            return  # (the first line of a new shape may be held back unread: the next decides)
        closes = not trains and figures and self._records > 0 and (
            self._epoch is None or whole == self._epoch + 1)
        self._counts_close = closes

    def _closed_by_count(self) -> bool:
        """Whether the last line that counted closed the epoch it names, in a run whose
        counts have closed every epoch (`_note_closing`), nothing trained since."""
        return bool(self._counts_close) and self._records == 0 \
            and self._epochs_seen >= _SAME_ENDS

    def headed(self, epoch: int) -> None:
        """An epoch's header line (`Epoch of: 0 Perf:`, `epoch :  3`). Before any epoch
        was counted, the run counts from where its first header stands (the header's own
        figures may be no record yet: a template's first line is read as none). A header
        whose epoch went back starts a new launch (a sweep's next configuration)."""
        if self._base is None and epoch in (0, 1):
            self._base = self._first = epoch
        if self._header is not None and epoch < self._header:
            self._went_back = True
        self._header = epoch

    def named_next(self, epoch: int, trains: bool = False) -> None:
        """A line names the epoch after the current one by its number alone, in a run
        whose counter names its total elsewhere (PaddleViT's `Now training epoch 99.
        LR=0.000000`, then `Epoch[099/100], Step[0000/0196], …`): that epoch began, and
        the line is its first, not a record of the epoch before (else the last epoch,
        with no such line after it, looks shorter than the others and never over)."""
        if self._epoch is not None and self._total is not None and epoch == self._epoch + 1:
            self.counted(epoch, self._total, trains)

    def went_back(self) -> bool:
        """Whether the outer counter went back since this was last asked (each training
        record asks): the lines before it ended a launch, not a stage of this one."""
        went, self._went_back = self._went_back, False
        return went

    def well_short(self) -> bool:
        """Whether the outer counter stands well short of the total it names (`Epoch 1 of
        1000`): the run's work is far from done, whatever it prints between epochs."""
        planned, epoch = self.planned, self._epoch
        if planned is None or epoch is None or self._base is None:
            return False
        return epoch - self._base + 1 < _WELL_SHORT * planned

    @property
    def planned(self) -> int | None:
        """The total the outer counter names (`Epoch 1/3`: 3), if any; none where it
        moved with the counter more than once (each call's, see `_total_moves`)."""
        return None if self._total_moves >= 2 else self._total

    def trained(self) -> None:
        """A training record was read (once a line)."""
        if self._credited:
            return
        self._last_named = False
        self._records += 1
        self._last_part_way = self._line_part_way
        # (a record with no inner counter after the epoch's bar at its total is the
        # epoch's summary: `GAN Epoch 20/20: 100%|…| 469/469`, then `Epoch 20 | G: 1.297 |
        # D: 1.014`; the epoch stays trained to its end)
        self._last_at_end = self._line_at_end or (
            self._last_at_end and not self._line_part_way and self._line_inner is None)
        self._last_inner = self._line_inner
        self._printed_on = self._eval_opened = False

    @property
    def evaluation_cut(self) -> bool:
        """Whether the log's last line after training announced an evaluation that printed
        nothing: it stops inside the last epoch's evaluation."""
        return self._eval_opened

    def launched(self) -> None:
        """The run's start-up printed again after its last record: a new launch, whose
        epochs are still to come. Until the outer counter is named again, the earlier
        launch's last planned epoch is not the log's end (a run relaunched into its log
        after `Epoch 400/400` is running; an excerpt whose first lines were an epoch's
        header names it again at the next epoch)."""
        self._relaunched = True

    def printed_on(self, text: str) -> None:
        """A line that did not train, after training."""
        if self._records and text.strip():
            self._printed_on = True
            # (an evaluation announced and nothing after it: the log stops inside the
            # last epoch's evaluation, CTR-GCN's `Eval epoch: 65` with no Top1 under it)
            said = message(text).strip()
            self._eval_opened = len(said) < 60 and _EVAL_OPENS.match(said) is not None

    def over(self, schedule_over: bool = False) -> LogEvent | None:
        """At the end of a read: a COMPLETED event the first time the last planned
        epoch was trained and is over (see the module's docstring); `schedule_over`: the
        learning rate's schedule reached its end at the last record."""
        epoch, total, base = self._epoch, self.planned, self._base
        closed = self._closed_by_count()
        if epoch is None or total is None or base is None or not self._epochs_seen \
                or self._relaunched or self._said == (epoch, total) \
                or (self._records < self._before and not self._summed_up() and not closed):
            return None
        last = epoch - base + 1 >= total
        if not last and not self._last_if_from_zero(epoch, total):
            return None
        per_epoch = self._one_each and self._records == 1 and self._epochs_seen >= 1 \
            and not self._last_part_way
        if not (self._printed_on or per_epoch or self._last_at_end or self._summed_up()
                or closed or (schedule_over and self._at_last_print())) \
                or self._eval_opened:
            return None
        self._said = (epoch, total)
        if not last:
            return LogEvent(EventKind.COMPLETED,
                            f"epoch {epoch} of {total}, the last planned if the run counts "
                            f"from 0 (the log began at epoch {self._first})", LAST_PRINT)
        return LogEvent(EventKind.COMPLETED,
                        f"epoch {epoch} of {total}, the last planned, was trained", LAST_EPOCH)

    def _summed_up(self) -> bool:
        """Whether the last record is the epoch's own summary, the one line naming it with
        its figures, as each epoch before it had one (`Epoch [5/5], Avg Loss: 0.1623`):
        the epoch is over whatever else its records were (four ranks' lines printed before
        its header, counted in the epoch before). A line per step naming its epoch (`Epoch
        [3/5] step 10 loss …`) is no summary."""
        return self._last_named and self._named == 1 and len(self._named_ends) >= 2 \
            and all(named == 1 for named in self._named_ends)

    def _at_last_print(self) -> bool:
        """Whether the last record stands where each of the epochs before it printed its
        last (`(61/62)` every time: a loop printing every 20 batches prints no 62nd), near
        its total: the epoch has nothing left to print."""
        last = self._last_inner
        return last is not None and len(self._ends) == _SAME_ENDS \
            and all(end == last for end in self._ends) and last[0] >= _NEAR_TOTAL * last[1]

    def _last_if_from_zero(self, epoch: int, total: int) -> bool:
        """Whether `epoch` is one short of its `total` in an excerpt that began past the
        run's first epochs (how the run counts is not shown): the last, if from 0."""
        return self._first is not None and self._first > 1 and epoch == total - 1
