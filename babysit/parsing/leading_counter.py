"""A counter with no name at the start of a metric line: `[12/540] | loss: 2.28`,
`12/540 - mae: 2.50`, `12: loss 1.98, ppl 0.38`.

A loop that prints its step first often prints it bare. The formats read the line's
metrics and, finding no `step` or `iter` word, left it without a step: the run's
progress was then counted in records, and a step printed on every line was lost.

- `N/M` (bracketed or not) at the start of the message, before the metrics, is the step
  and the planned total: a total makes it a counter. One that comes round again (back
  down, with the same total, from half its total or more) counts an epoch's batches: the
  step is then the rounds before times its total plus its count, so steps keep rising.
  One back down from early in its count is a relaunch's, counted afresh.
- A bare `N:` (or `[  N] |`) is also what `srun -l` puts before each task's lines
  (`0: loss 1.2`), and what a terminal that wrapped `aux_loss_0: 0.31` leaves: it is the
  step only once it has risen from the line before it, so the first such line has none;
  once it goes back down, or stays the same on three lines in a row, it is a label (an
  evaluation's line may repeat its training step once).
- `[e/E] n` (a bracketed counter, then a bare count, then the metrics: a multi-label
  classifier's `[2/41] 1300), Loss: 0.066, mAP 89.43%`) is two loops: the bracket the
  epoch of E, the count under it the step.
"""

from __future__ import annotations

from babysit import lazy_re

# The counter, then at once a metric's name (after a separator, if any): not a Keras
# bar's `37800/37800 [=====…] - 29s - loss: …`, whose count is of samples in an epoch.
# The counter may follow the split it counts for (`[ Train | 001/100 ] loss = 1.23`,
# `Valid | 001/100 | loss 0.8`): an evaluation's line loses it again (`evaluation`).
_SPLIT = (r"(?:(?:[Tt]rain(?:ing)?|TRAIN|[Vv]al(?:id(?:ation)?)?|VAL(?:ID)?|[Tt]est|TEST|"
          r"[Ee]val|EVAL|[Dd]ev|DEV)\s*[|:]?\s*)?")
# Or after the outer counter's own name, shortened (`E  1/500 | Loss:4.23 | TrA:38.29%`,
# `Ep 3/20 - loss`): the epochs of a loop that prints one line each. Never a batch's or
# an iteration's name (`Batch 7/7 | loss`: the batches of one epoch, no plan of the run);
# the whole word is the formats' (`Epoch 1/10 - Validation Loss: 0.29`, an evaluation's).
_OWN_NAME = r"(?:(?:E|EP|Ep|ep)\s*[:#]?\s*)?"
# (or its figures each in brackets: EDSR-PyTorch's `[800/7800]\t[L1: 17.2393]\t92.7+0.3s`,
# copied by most super-resolution repositories)
# (or its rate next, the figures after it: a voxel NCA's `[100/25001]\t 0.658it/s\t time:
# 0:02:32~10:30:47\t loss: 2144.273>19.277`)
_OF_TOTAL = lazy_re.compile(r"^\s*(?:\[\s*" + _SPLIT + r"(\d+)\s*/\s*(\d+)\s*\]|"
                            + _SPLIT + _OWN_NAME + r"(\d+)\s*/\s*(\d+))"
                            r"(?=\s*(?:[|,:-]\s*)?\[?[A-Za-z]|\s+\d+(?:\.\d+)?\s*(?:it/s|s/it)\b)")
_SPLIT_FIRST = frozenset("TtVvEeDd")
_SAME_AS_LABEL = 3
_OF_TOTAL_THEN_COUNT = lazy_re.compile(
    r"^\s*\[\s*(\d+)\s*/\s*(\d+)\s*\]\s*(\d+)\s*\)?\s*[|,:-]?\s*(?=[A-Za-z])")
# (or bracketed, padded to its width, before a separator: EstraNet's TF2 loop under absl,
# `[  5000] | gnorm  8.33 lr  0.000125 | loss  5.56`; read as the bare `N:` is): not a
# bracketed label with no separator after it (sealed-10's rltrader, a stock's code
# `[035420] RL:a3c Net:dnn LR:0.001`); or bracketed, then at once a `name=value` pair
# (Wapiti's CRF trainer: `  [   2] obj=16052.89   act=201733   err= 3.71%/25.41%`).
# Or bare, then the figures in brackets, each a name and its value (the Keras-GAN
# examples' `print("%d [D loss: %f, acc.: %.2f%%] [G loss: %f]" % (epoch, …))`: `9999 [D
# loss: 0.725000, acc.: 43.75%] [G loss: 0.911461]`).
# Or a count marked as one in brackets, then other brackets (DeepFaceLab's `[07:52:56]
# [#054663][1784ms] loss_src:0.060 loss_dst:0.032`: the iteration, then its time).
_BARE = lazy_re.compile(r"^\s*(?:(\d+):\s+|\[\s*(\d+)\s*\]\s*[|:,-]\s+|"
                        r"\[\s*(\d+)\s*\]\s+(?=[A-Za-z][\w.-]*\s*=)|"
                        r"(\d+)\s+\[(?=[A-Za-z][\w. ]{0,30}[:=])|"
                        r"\[\s*#\s*(\d+)\s*\](?:\[[^\[\]]{1,16}\])*\s*)[A-Za-z]")


# A training split's word, then its count bare, then the metrics (DGCNN's `Train 249, loss:
# 1.276107, train acc: 0.999132`, its evaluation's `Test 249, loss: …` after it): the
# count is the loop's, read as the bare `N:` is (only once it has risen). An evaluation's
# line keeps the training's step.
_TRAIN_BARE = lazy_re.compile(r"^\s*(?:[Tt]rain(?:ing)?|TRAIN(?:ING)?)\s+(\d+)\s*[,:|-]\s+"
                              r"(?=[A-Za-z])")


class LeadingCounter:
    """Reads the leading counter of metric lines, remembering the last bare `N:`."""

    def __init__(self) -> None:
        self._last_bare: int | None = None
        self._last_of: tuple[int, int] | None = None  # the last `N/M` read
        self._of_gap = 0  # the interval between the last two `N/M` of one total (0: unknown)
        self._rounds = 0  # times an `N/M` counter came round again (went back down)
        self._same = 0  # lines in a row with the same bare count
        self._label = False  # a bare count stayed or went down: a label, not a counter
        self._last_train: int | None = None  # the last `Train N,` count
        # The count an unnamed counter was first read at: its line is no record (the
        # count has not risen yet), but it says whether the loop counts from 0 or 1.
        self.first_count: int | None = None

    @staticmethod
    def outer(message: str) -> tuple[int, int, int] | None:
        """The epoch, the planned epochs and the step of a `[e/E] n` head, or None."""
        if message[:1] not in ("[", " "):
            return None
        found = _OF_TOTAL_THEN_COUNT.match(message)
        if found is None:
            return None
        epoch, epochs, count = (int(g) for g in found.groups())
        return None if epoch > epochs or epochs < 2 else (epoch, epochs, count)

    def first(self, message: str) -> None:
        """A line not read as a record, whose template may be read from its next line
        on: a bare count of 0 or 1 at its start, before any other bare count, is where
        the counter begins."""
        if self._last_bare is not None or self._label or (message[:1] not in ("[", " ") \
                and not message[:1].isdecimal()):
            return
        bare = _BARE.match(message)
        if bare is not None:
            count = int(bare.group(1) or bare.group(2) or bare.group(3) or bare.group(5))
            if count <= 1:
                self._last_bare = count

    def read(self, message: str) -> tuple[int, int | None] | None:
        """The step (and planned total) the message starts with, or None."""
        first = message[:1]
        if first == "[" or first.isdecimal() or first == " " or first in _SPLIT_FIRST:
            of_total = _OF_TOTAL.match(message)
            if of_total is not None:
                step = int(of_total.group(1) or of_total.group(3))
                total = int(of_total.group(2) or of_total.group(4))
                if step > total:
                    return None
                last = self._last_of
                self._last_of = (step, total)
                if last is not None and total == last[1] and step > last[0]:
                    self._of_gap = step - last[0]
                if last is not None and total == last[1] and step < last[0]:
                    # (came round: its last value within one of its intervals of the total;
                    # deep-text-recognition's `[1/60000]` after `[36000/60000]`, printed
                    # every 2,000, is a relaunch, though past half its total)
                    came_round = last[0] + self._of_gap > total if self._of_gap \
                        else 2 * last[0] >= total
                    self._of_gap = 0
                    if came_round:
                        self._rounds += 1  # it came round again: an epoch's batches
                    else:
                        # Back to its start well short of its total (a text-recognition
                        # run's `[1/300000]` after `[600/300000]`): no round of an epoch
                        # ends there, the program started again.
                        self._rounds = 0
                if self._rounds:
                    # MONAI's `1/16, train_loss: 0.1162` under `epoch 14/300`: the
                    # rounds before, then this one's batch; its total is an epoch's
                    return self._rounds * total + step, None
                return step, total
            if first in "Tt":
                train = _TRAIN_BARE.match(message)
                if train is not None:
                    count, before = int(train.group(1)), self._last_train
                    if before is None:
                        self.first_count = count
                    self._last_train = count
                    # (a new launch starts it again: counted from there)
                    return (count, None) if before is not None and count > before else None
            bare = _BARE.match(message) if first not in _SPLIT_FIRST else None
            if bare is not None and not self._label:
                count = int(bare.group(1) or bare.group(2) or bare.group(3) or bare.group(4)
                            or bare.group(5))
                before = self._last_bare
                self._last_bare = count
                if before is None:
                    self.first_count = count
                if before is not None and count < before:
                    self._label = True
                    return None
                if count == before:
                    # an evaluation's line after the training's at the same step, or
                    # a task's label: a label once it stays on a few lines in a row
                    self._same += 1
                    self._label = self._same >= _SAME_AS_LABEL
                    return None
                self._same = 0
                return (count, None) if before is not None else None
        return None
