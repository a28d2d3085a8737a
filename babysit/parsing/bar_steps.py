"""Where a progress bar puts the run: the training loop's step, an epoch's batch, or
nothing (an evaluation, a data pass).

Bars alone are ambiguous, so this keeps the context: the longest loop seen, the epoch
a Keras header announced, where each epoch's bar starts (epoch bars restart at 0), the
columns of an Ultralytics table, and whether the run prints its global step itself
(then the bars only say how far the current epoch is).
"""

from __future__ import annotations

import re
from functools import lru_cache

from babysit import lazy_re
from babysit.model import EventKind, LogEvent
from babysit.parsing.bars import Bar
from babysit.parsing.final_epoch import FINAL_EPOCH
from babysit.parsing.fit_returns import fit_returned
from babysit.parsing.formats import Parsed
from babysit.parsing.frameworks import parse_ultralytics_row
from babysit.parsing.outer_loops import OuterRounds
from babysit.parsing.shapes import ShapeReader

_EVAL_DESC = lazy_re.compile(
    r"valid|eval|test|predict|sanity|inferenc|Class\s+Images", re.IGNORECASE)
# (ColossalAI's `[Epoch 5 / Train]`: bracketed, its phase after a slash)
_EPOCH_DESC = lazy_re.compile(r"^(\[)?[Ee]poch[\s:]*(\d+)(?:\s*/\s*(-?\d+))?"
                              r"(?:\s*/\s*[A-Za-z]+)?(?(1)\])(?:\s*:)?$")
# The training phase's name with the epoch's index in brackets (SpecVQGAN's classifier,
# `train (0): 100% 8835/8835 [7:56:52<00:00, 3.24s/it, loss=0.0169]` under `num_epochs:
# 100`): the bar counts that epoch's batches, as `Epoch 0:` would.
_PHASE_EPOCH = lazy_re.compile(r"^(?:[Tt]rain(?:ing)?|TRAIN(?:ING)?)\s*[(\[]\s*(\d+)\s*[)\]]"
                               r"\s*:?$")
# A training bar whose description opens on its epoch of the plan, then its own figures
# (FixMatch: `Train Epoch: 148/1024. Iter: 1024/1024. LR: 0.0294. … Loss: 0.1614. …: 100%|█|
# 1024/1024`): the bar counts that epoch's iterations, as `Epoch 148/1024:` would.
_TRAIN_EPOCH_OF_PLAN = lazy_re.compile(r"^(?:[Tt]rain(?:ing)?\s+)?[Ee]poch\W{0,3}(\d+)\s*/\s*"
                                       r"(\d+)")
# A bar's description that names training (`Training Progress`, `train`, `Train Epoch`).
_TRAINING_DESC = lazy_re.compile(r"(?<![A-Za-z])(?:[Tt]rain(?:ing)?|TRAIN(?:ING)?)(?![a-z])")
# A bar described only as the epochs' loop (no number of its own).
_EPOCH_LOOP = lazy_re.compile(r"^(?:[Ee]pochs?|EPOCHS?)\s*:?$")
# An epoch named anywhere in a bar's description (`Train Epoch: 19 Loss: 0.36`).
EPOCH_IN_DESC = lazy_re.compile(r"\b[Ee]poch\W{0,3}(\d+)\b")
_EPOCH_PLAN_IN_DESC = lazy_re.compile(r"\b[Ee]poch\W{0,3}\d+\s*/\s*(\d+)\b")


@lru_cache(maxsize=256)  # a run draws a handful of bars, each under one description
def _describe(desc: str) -> tuple[bool, tuple[str, str | None] | None]:
    """Whether a bar's description names an evaluation, and the epoch (and last epoch)
    it names, if any."""
    epoch = _EPOCH_DESC.match(desc)
    if epoch is None and (phase := _PHASE_EPOCH.match(desc)) is not None:
        return False, (phase.group(1), None)
    if epoch is None and (of_plan := _TRAIN_EPOCH_OF_PLAN.match(desc)) is not None:
        return False, (of_plan.group(1), of_plan.group(2))
    return (_EVAL_DESC.search(desc) is not None,
            (epoch.group(2), epoch.group(3)) if epoch is not None else None)


class BarSteps:
    def __init__(self) -> None:
        self.main_total: int | None = None
        # The epoch in which a bar of each total finished: a data pass's bar finishing
        # before training (vLLM's `Capturing CUDA graphs … 67/67` under verl) is not the training
        # bar's earlier lap.
        self._done_in: dict[int, int] = {}
        # Where the main bar stood last, and its clock.
        self._main_last: tuple[int, float | None] = (0, None)
        self.epoch_hint = 0  # the whole epochs the log's lines say have begun
        # The epoch the latest header line announced (`Epoch 3` alone, `#### EPOCH 3 ####`):
        # the records under it are that epoch's; it goes back when a new run starts.
        self.header_epoch: int | None = None
        # Such header lines read (each says something, however often the same line comes:
        # a sweep's `epoch :  0` again at each configuration's start).
        self.headers_read = 0
        self._said_base: int | None = None  # 0 or 1: how the records count their epochs
        self.summarised = False  # the trainer printed its summary of the whole run
        self._main_measured = False  # the main bar carried figures of its own (a loss)
        self.laps = 0  # times the main bar finished again in a later epoch: an epoch's
        self._bar_epoch: int | None = None
        self._first_bar_epoch: int | None = None
        self._epoch_offset = 0
        self._epoch_last_n = 0
        self._epoch_total: int | None = None  # the total of the epoch's first bar
        self._planned_epochs: int | None = None  # the plan an epoch bar names (`Epoch 1/50`)
        self.keras_epoch: tuple[int, int] | None = None
        # An outer loop's rounds around the `fit` calls (see `outer_loops`).
        self.rounds = OuterRounds()
        self._keras_last_n: int | None = None  # the last training bar under this header
        self._keras_batches: int | None = None  # batches per epoch, once a bar says
        self._keras_first_epoch_n = 0  # batches counted in a first epoch of unknown length
        self._keras_returned = False  # another loop's bar said fit returned (`fit_returns`)
        # Keras bars with no epoch header above them (a paste that kept only each epoch's
        # last frames): the last one's (n, total), and the epochs they showed finished.
        self._keras_bare: tuple[int, int | None] | None = None
        self._keras_bare_laps = 0
        self._keras_bare_headers = 0  # epoch headers read by the last bare Keras bar
        self.yolo_columns: tuple[str, ...] = ()
        # The run prints its own global step (Lightning's checkpoint messages): bars then
        # only count the batches of the current epoch.
        self.global_step_printed = False
        self.evaluating = False  # the last bar seen was an evaluation's
        self._main_trains = False  # the main bar's description names training
        # A bar named for training took over from a longer one named for something else
        # (`Processing: 7473/7473`, then `Training Progress: 1/1000`): read once by the
        # parser, which forgets the step and total that bar gave.
        self.took_over = False
        self._main_desc = ""  # the main bar's description
        # Descriptions of bars a training bar took over from: passes over the data, which
        # count no step when they come again (the next experiment's, or a relaunch's).
        self._passed_over: set[str] = set()
        # The line before the bars said an evaluation pass begins (`Eval begin...`).
        self.eval_banner = False
        self._epochs_done = False  # the outer loop's bar reached its total

    def epoch_said(self, epoch: float) -> None:
        """A record names its epoch: the whole epochs begun are that many, one more for
        a run that counts from 0 (its first whole epoch was `0`): a per-epoch summary
        printed after the epoch's bar, `Epoch 0000 in static KGE | Ave Loss: 7.7` (a
        hand loop's `logging.info(f"Epoch {epoch:04d} …")` over `range(epochs)`), closes
        the first epoch, so the bar finishing after it counts the second one."""
        if self._said_base is None and epoch == int(epoch):
            self._said_base = 0 if epoch == 0 else 1
        begun = int(epoch) + (1 if self._said_base == 0 else 0)
        if begun > self.epoch_hint:
            self.epoch_hint = begun

    def table_bar(self, bar: Bar, shapes: ShapeReader) -> Parsed | None:
        """A bar drawn after a table row (YOLOv5: `0/299  3.6G  0.08 ... 45  640:
        100%|...| 7/7`): the row says the epoch and the losses; the bar counts the
        batches of that epoch, so its count is neither the run's step nor its total
        (the trainer may accumulate several batches per step)."""
        if not bar.desc or self.yolo_columns or bar.style != "tqdm" or not any(
                c.isdecimal() for c in bar.desc):
            return None
        row = shapes.bar_row(bar.desc)
        if row is None:
            return None
        self.evaluating = False
        rate = {"it/s": bar.rate} if bar.rate is not None else {}
        epoch = row.epoch + bar.n / bar.total if row.epoch is not None and bar.total else \
            row.epoch
        return Parsed("table", row.step, row.target, epoch, row.total_epochs,
                      {**row.metrics, **rate})

    def from_bar(self, bar: Bar) -> tuple[Parsed | None, list[LogEvent]]:
        """Decide whether a bar is the training loop's, and if so where it puts us."""
        evaluating, epoch_match = _describe(bar.desc)
        # (a bar under an evaluation's banner is that pass's when it carries figures, a
        # loss in the training bar's shape; one without any still counts as it did)
        evaluating = evaluating or (self.eval_banner and bool(bar.metrics))
        self.evaluating = evaluating
        if evaluating:
            return Parsed(bar.style), []
        if bar.total is not None and bar.total <= 1 and not bar.metrics \
                and not self.yolo_columns and not any(ch.isdecimal() for ch in bar.desc):
            # A bar over one item with no figures (`0% 0/1`, then `100% 1/1`: FuxiCTR's
            # epoch of a toy dataset's single batch, and each evaluation's) counts no
            # loop: neither a step nor, finished, the end of the run. (Keras's `1/1
            # [====] - loss: 0.46` is an epoch's record, its figures on it; so is an
            # Ultralytics row drawn as its bar's description, `1/100 0G 3.39 …: 100% 1/1`.)
            return Parsed(bar.style), []
        if bar.data_pass or bar.desc in self._passed_over:
            # Preparing data (`Filtering prompts: 1000000/1000000 examples/s`): neither
            # where training stands nor how long it will be.
            return Parsed(bar.style), []
        rate = {"it/s": bar.rate} if bar.rate is not None else {}
        if _EPOCH_LOOP.match(bar.desc) and bar.total is not None:
            # The outer loop's own bar (the Hugging Face examples' `trange(epochs,
            # desc="Epoch")`: `Epoch:  20%|…| 1/5`): it counts epochs, not steps.
            # Its rate is epochs a second: no throughput beside the batches' bar nested
            # in it (OpenPCDet's `epochs: 18%|…| 2/11 [1:23:30<4:52:33, 1950.35s/it, …]`
            # over `train: 57%|…| 1057/1856 [… 1.04s/it]`), read as one series they make
            # a 2,000-fold slowdown at every redraw of the outer bar.
            self.epoch_said(float(bar.n))
            ended: list[LogEvent] = []
            if bar.total > 1 and bar.n == bar.total and not self._epochs_done:
                # tqdm counts an iteration once its body is over: the outer bar at its
                # total (`Epochs: 100%|██████████| 20/20`) is every planned epoch trained.
                self._epochs_done = True
                ended.append(LogEvent(EventKind.COMPLETED, f"{bar.desc}: {bar.n}/{bar.total}",
                                      FINAL_EPOCH))
            return Parsed(bar.style, None, None, float(bar.n), bar.total), ended
        if bar.style == "keras":
            return self._from_keras_bar(bar, rate)
        if self.yolo_columns:
            row = parse_ultralytics_row(bar.desc, self.yolo_columns)
            if row is not None:
                return row, []
            if not bar.desc:
                # The row's bar drawn before its row (`  0%|   | 0/37`): that epoch's
                # batches, neither the run's step nor its total (see `table_bar`).
                return Parsed(bar.style), []
        if bar.style == "tqdm" and self.keras_epoch is not None and bar.total \
                and self.keras_epoch[1] > 1 and _TRAINING_DESC.search(bar.desc) \
                and epoch_match is None and "poch" not in bar.desc:
            # A training bar under a header line in Keras's shape (`Epoch 3/30`, then
            # `Training: 100%|…| 183/183`): it counts the batches of the epoch the header
            # announced, from 0 in every epoch.
            if self.main_total is not None and not self._main_trains and not self.laps:
                self._take_over()
            epoch, epochs = self.keras_epoch
            self.main_total, self._main_desc, self._main_trains = bar.total, bar.desc, True
            return Parsed(bar.style, (epoch - 1) * bar.total + bar.n, epochs * bar.total,
                          epoch - 1 + bar.n / bar.total, epochs, {**bar.metrics, **rate},
                          per_epoch=bar.total), []
        if bar.desc == "Training":
            # Lightning 1.x opens with `Training: 0/18` before its `Epoch 0:` bars: that
            # total is one epoch's, not the run's. A longer bar before it named something
            # else (`统计类别频率: 1464/1464`, a pass over the data): it counted no step.
            if self.main_total is not None and not self._main_trains and not self.laps:
                self._take_over()
            return Parsed(bar.style, bar.n, None, None, None, {**bar.metrics, **rate}), []
        if epoch_match is not None:
            return self._from_epoch_bar(bar, int(epoch_match[0]), epoch_match[1], rate), []
        current = self._bar_epoch if self._bar_epoch is not None else self.epoch_hint
        if bar.total is not None and bar.total == self._planned_epochs and bar.metrics \
                and not bar.desc.strip() and current and abs(bar.n - current) <= 1:
            # A bar with no name over the plan's epochs, drawn between the epochs' own bars
            # (`Epoch 1/50 [Train]: …| 323/323`, then `  2%|▏ | 1/50 [… train_acc=14.47%,
            # val_acc=14.92%]`): the outer loop's, its figures those of the epochs it
            # counts done (no step, no rate: it counts epochs).
            self.epoch_said(float(bar.n))
            return Parsed(bar.style, None, None, float(bar.n), bar.total, dict(bar.metrics)), []
        if bar.total is not None and self.main_total is not None and bar.total < self.main_total:
            if self._main_trains or not _TRAINING_DESC.search(bar.desc) or self.laps:
                # A shorter loop inside training: an evaluation or a data pass.
                self.evaluating = True
                return Parsed(bar.style), []
            # The first bar named for training, after a longer one that named something
            # else (a data pass the run printed under its own word): this one is the
            # training's, the other counted no step.
            self._take_over()
        if bar.total is not None:
            named = EPOCH_IN_DESC.search(bar.desc) if "poch" in bar.desc else None
            planned = _EPOCH_PLAN_IN_DESC.search(bar.desc) if named is not None else None
            if planned is not None:
                self._planned_epochs = int(planned.group(1))  # (`Epoch 1/50 [Train]`)
            if named is not None and int(named.group(1)) > self.epoch_hint:
                # The bar says which epoch it counts: one that finishes again under a
                # later epoch is that epoch's, however few of its redraws the log kept.
                self.epoch_hint = int(named.group(1))
            if bar.total == self.main_total and bar.total in self._done_in \
                    and self._restarted(bar):
                # The main bar finished and counts again from the start, to the same
                # total: it counts one epoch's batches (a loop that prints no epoch of
                # its own), not the run's steps.
                self.laps += 1
                del self._done_in[bar.total]
            if bar.n == bar.total and self.main_total in (None, bar.total):
                done = self._done_in.get(bar.total)
                # (not after the trainer's summary of the whole run: TRL's bar closes at
                # `43/43 [57:42<00:00]` after its `{'train_runtime': …, 'epoch': 1.0}`)
                if done is not None and self.epoch_hint > done and not self.summarised:
                    # The bar finished again, in a later epoch: it counts one epoch's
                    # batches, not the run's steps (a Hugging Face bar redrawn after an
                    # evaluation finishes again in the same epoch).
                    self.laps += 1
                if bar.total in self._done_in or len(self._done_in) < 64:  # (bounded)
                    self._done_in[bar.total] = self.epoch_hint
            if self.main_total is not None and bar.total != self.main_total \
                    and not self._main_measured:
                # A longer bar after bars that carried no figure (kohya's caching passes,
                # `240/240` done again and again, then `steps: 219/60000, avr_loss=0.165`):
                # the laps were those passes', not this bar's.
                self.laps = 0
            self._main_measured = (bar.total == self.main_total and self._main_measured) \
                or bool(bar.metrics)
            self.main_total, self._main_desc = bar.total, bar.desc
            self._main_trains = _TRAINING_DESC.search(bar.desc) is not None
            self._main_last = (bar.n, bar.elapsed)
        metrics = {**bar.metrics, **rate}
        if self.laps:
            return Parsed(bar.style, self.laps * bar.total + bar.n if bar.total else bar.n,
                          None, None, None, metrics, per_epoch=bar.total), []
        return Parsed(bar.style, bar.n, bar.total, None, None, metrics), []

    def _take_over(self) -> None:
        """A bar named for training took over from the main bar, named otherwise."""
        if self._main_desc and len(self._passed_over) < 16:
            self._passed_over.add(self._main_desc)
        self.main_total, self.took_over = None, True
        self._done_in.clear()

    def _restarted(self, bar: Bar) -> bool:
        """The main bar began again: its count or its clock went back (a bar redrawn
        after an evaluation keeps both; a log that keeps only each bar's last frame
        shows the next epoch's `1156/1156 [05:17` after this one's `[05:18`)."""
        n, elapsed = self._main_last
        return bar.n < n or (bar.n == n and elapsed is not None and bar.elapsed is not None
                             and bar.elapsed < elapsed)

    def _from_epoch_bar(self, bar: Bar, epoch: int, last: str | None,
                        rate: dict[str, float]) -> Parsed:
        """A bar per epoch (Lightning, hand-written tqdm loops): the global step is the
        steps of the epochs before plus this bar's count."""
        # Lightning numbers epochs from 0 (`Epoch 0:`); hand-written loops mostly from 1.
        base = 0 if bar.desc.startswith("Epoch") and (bar.style == "rich" or last is None) \
            else 1
        fmt = {"rich": "lightning-rich"}.get(bar.style, "tqdm-epochs")
        if bar.style == "tqdm" and base == 0:
            fmt = "lightning"
        metrics = {**bar.metrics, **rate}
        fraction = bar.n / bar.total if bar.total else 0.0
        epochs = None
        if last is not None and int(last) >= 0:
            # Lightning's rich bar shows the last epoch's index (`Epoch 2/2` of three
            # epochs; -1 or -2 means no limit); a hand-written tqdm loop its total.
            epochs = int(last) + 1 if bar.style == "rich" else int(last)
            self._planned_epochs = epochs
        target = epochs * bar.total if epochs and bar.total else None
        printed = bar.metrics.get("step") if "step" in bar.metrics else None
        if printed is not None:
            # The loop prints its own global step in the postfix (`step=100`): trust it.
            metrics.pop("step", None)
            return Parsed(fmt, int(printed), target, epoch + fraction, epochs, metrics,
                          per_epoch=bar.total)
        if epoch == self._bar_epoch and bar.total is not None and self._epoch_total \
                is not None and bar.total != self._epoch_total and bar.n <= self._epoch_last_n:
            # Under the same `Epoch 3:` a bar that counts again to another total is
            # another loop's (a hand loop's validation pass drawn with the epoch's own
            # description): its loss is no training loss, its count no step.
            self.evaluating = True
            return Parsed(bar.style)
        if epoch != self._bar_epoch:
            self._epoch_total = bar.total
        if self.global_step_printed:
            self._bar_epoch = epoch
            return Parsed(fmt, None, target, epoch + fraction, epochs, metrics)
        if self._first_bar_epoch is None:
            self._first_bar_epoch = epoch
            # Joining mid-run (a long log's tail): assume the earlier epochs were full.
            self._epoch_offset = max(0, epoch - base) * (bar.total or 0)
        elif self._bar_epoch is not None and epoch != self._bar_epoch:
            self._epoch_offset += self._epoch_last_n
            self._epoch_last_n = 0
        self._bar_epoch = epoch
        self._epoch_last_n = max(self._epoch_last_n, bar.n)
        return Parsed(fmt, self._epoch_offset + bar.n, target, epoch + fraction, epochs,
                      metrics, per_epoch=bar.total)

    def keras_header(self, epoch: int, epochs: int) -> None:
        """`Epoch 3/5`: the Keras bars that follow count the batches of that epoch."""
        self.keras_epoch = (epoch, epochs)
        self._keras_last_n = None
        self._keras_returned = False
        self.rounds.fit_header(epoch, epochs)

    def _bare_keras_bar(self, bar: Bar, metrics: dict[str, float]) -> Parsed:
        """A Keras bar with no `Epoch n/N` header seen: its count is the run's until it
        finishes and counts again to the same total (`12300/12300`, then `12299/12300` of
        the next epoch): then each finish is an epoch's, and the total no plan."""
        last = self._keras_bare
        if last is not None and last[1] is not None and last[0] == last[1] \
                and bar.total == last[1]:
            # (or finished again, each epoch's bar kept at its end only: under a new
            # epoch's header line, Keras 0.x's `Epoch 12` then `61878/61878 [====] - loss`;
            # or with none, a notebook's loop of one-epoch `fit` calls on a stateful LSTM,
            # `49519/49519 [====] - 87s 2ms/step - loss: 0.0056` fifteen times)
            self._keras_bare_laps += 1
        self._keras_bare = (bar.n, bar.total)
        self._keras_bare_headers = self.headers_read
        if not self._keras_bare_laps or bar.total is None:
            return Parsed("keras", bar.n, bar.total, None, None, metrics)
        laps = self._keras_bare_laps
        return Parsed("keras", laps * bar.total + bar.n, None, laps + bar.n / bar.total, None,
                      metrics, per_epoch=bar.total)

    def _from_keras_bar(self, bar: Bar,
                        rate: dict[str, float]) -> tuple[Parsed | None, list[LogEvent]]:
        """A Keras bar counts the batches of the epoch its header announced (from 1 in
        every epoch): the global step adds the batches of the epochs before."""
        events: list[LogEvent] = []
        metrics = {k: v for k, v in {**bar.metrics, **rate}.items() if k != "eta"}
        if self.keras_epoch is None:
            return self._bare_keras_bar(bar, metrics), events
        epoch, epochs = self.keras_epoch
        finished = self._keras_last_n is not None and self._keras_batches is not None \
            and self._keras_last_n >= self._keras_batches
        if self._keras_last_n is not None and (
                bar.n < self._keras_last_n
                or (bar.total is not None and bar.total != self._keras_batches)
                or (finished and not bar.metrics)):
            # Under the same header a training bar only counts up, to the same total,
            # with its loss: this one is another loop's (`model.evaluate` or `predict`
            # after `fit`; predict's bar has no metric at all).
            self.evaluating = True
            returned = fit_returned(epoch, epochs, finished and not self._keras_returned,
                                    bool(self.rounds.window))
            if returned is not None:
                self._keras_returned = True  # said once under a header
                events.append(returned)
            return Parsed("keras"), events
        self._keras_last_n = bar.n
        if bar.total is not None:
            self._keras_batches = bar.total
        elif epoch == 1:
            # `37/Unknown`: a dataset of unknown length; its first epoch gives the length.
            self._keras_first_epoch_n = max(self._keras_first_epoch_n, bar.n)
        batches = self._keras_batches
        if batches is None and epoch > 1 and self._keras_first_epoch_n:
            batches = self._keras_first_epoch_n
        if batches is None:
            step = bar.n if epoch == 1 else None
            return Parsed("keras", step, None, None, epochs, metrics), events
        # (a generator that yields a batch past its `steps_per_epoch`, `1364/1363`, ends
        # the epoch at its total all the same: the step does not run past the plan)
        n = min(bar.n, batches)
        step = (epoch - 1) * batches + n
        if self.rounds.window:
            # One round's `fit` of a longer run the log shows part of: its plan is the
            # call's, and its end no end of the run.
            return Parsed("keras", step, None, epoch - 1 + min(bar.n / batches, 1.0), None,
                          metrics, per_epoch=batches), events
        if epoch == epochs and bar.total is not None and bar.n >= bar.total:
            events.append(LogEvent(EventKind.COMPLETED, f"Epoch {epoch}/{epochs} finished",
                                   "keras: last epoch finished"))
        return Parsed("keras", step, epochs * batches, epoch - 1 + min(n / batches, 1.0),
                      epochs, metrics, per_epoch=batches), events

    def restart_epochs(self, offset: int) -> None:
        """The run printed its global step: later epoch bars count from there. Where it
        is the bars' own count (one optimizer step a batch: Lightning's `Epoch 0, global
        step 255:` after `Epoch 0: 255/255`), the bars go on giving the step; where it is
        not (gradients accumulated, several optimizers), only the printed one does."""
        if not self.global_step_printed and self._bar_epoch is not None \
                and offset == self._epoch_offset + self._epoch_last_n:
            return
        self.global_step_printed = True
        self._epoch_offset = offset
