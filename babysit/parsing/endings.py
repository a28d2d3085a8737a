"""Evidence that a run reached its end which no single line says in so many words.

Frameworks print their last training step and then do something else: a final
evaluation, a test pass, inference, an export, a summary. A completion sentence is one
line (see `events`); these are facts about the order of lines, and so they are kept
here, beside the parser:

- The last step logged is within one logging interval of the planned total, and the run
  printed on past it without training: it left its loop at its planned end (`Epoch 2/2,
  step 540/542` then `RMSE 30.96, MAPE 0.39`). A run that announced no total gives it
  away where it prints on an even grid from 0 and then its last iteration off the grid
  (`Step: 4000`, `Step: 4999`: a loop of 5000).
- A test pass, inference or an export after training (Lightning's `trainer.test()` row
  of `metrics.csv`, `******** Test evaluation ********`): what scripts do once training
  is over. Validation is not: it runs between epochs.
- The epoch a `epoch N done` line names is the last one planned (0- or 1-based, as the
  run counts).
- The run's own estimate of the time left is zero (`eta: 0:00:00`, `0us remaining`).
- The model saved to a `final` path.
- The log stops at the run's last logging point before its planned total (`[4/5][150/190]`
  printed every 50 batches): where a finished run's log stops, though nothing says it
  finished (LAST_PRINT, the weakest: the run ENDED, outcome not confirmed).

Each is reported as a COMPLETED event whose detail names the kind; the lifecycle takes
the weaker ones (`AFTER_TRAINING`) only once the log has stopped, and never when the
run stood well short of a planned total.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import replace

from babysit import lazy_re
from babysit.model import EventKind, LogEvent, Record
from babysit.parsing.closing import (
    CELL_ENDED,
    CLOSING,
    ClosingBlock,
    names_best_epoch,
    names_best_value,
    sums_up_folds,
)
from babysit.parsing.completion_words import says_finished, says_plan_reached
from babysit.parsing.evaluation import trains
from babysit.parsing.events import SUMMARY
from babysit.parsing.final_epoch import FINAL_EPOCH, LAST_EPOCH, LAST_PRINT, FinalEpoch
from babysit.parsing.launch_repeats import LIKE_LAUNCHES, LaunchRepeats
from babysit.parsing.llmc import FINAL_VALIDATION
from babysit.parsing.loop_over import LOOP_DONE, LOOP_LEFT, LOOP_OVER, SHELL_BACK, LoopOver
from babysit.parsing.readers import Line, ParseContext
from babysit.parsing.run_eta import RunEta
from babysit.parsing.runner_exits import RETURNED
from babysit.parsing.shapes import template
from babysit.parsing.shell_prompts import is_shutdown_notice

# Completion details (see `core.lifecycle`).
AFTER_PLAN = "after-plan"  # printed on past its last step, at its planned total
FINAL_TEST = "final-test"  # a test pass, inference or an export after training
ETA_ZERO = "eta-zero"  # the run's own estimate of the time left is zero
# FINAL_EPOCH: the last planned epoch said it was done, or was trained (`final_epoch`)
FINAL_SAVE = "final-save"  # `Saving the final model` (see `events`)
# The run said it stopped at its own plan (Lightning's `max_epochs=6000` reached): the end,
# even where babysit's own reckoning of the planned steps says more.
PLAN_REACHED = "plan-reached"
# Evidence that holds only once nothing more comes (a live run may go on training).
FINAL_PATH = "final-path"  # a checkpoint saved to a `final` path
# The run's own sentence that training is over, in words no signature lists (see
# `completion_words`): like the closing block, it proves the end once nothing more comes,
# and not well short of the plan (YOLOX says `Training of experiment is done` however
# training ended).
SAID = "said-finished"
# The closing block (see `closing`) is such evidence too: a script's own last words, read
# by their shape, prove the end only once nothing more comes, and never well short of a
# plan the run announced (YOLOX prints `Training of experiment is done` in a `finally:`,
# however training ended).
AFTER_TRAINING = frozenset({AFTER_PLAN, FINAL_TEST, ETA_ZERO, FINAL_PATH, CLOSING, CELL_ENDED,
                            SAID, LOOP_DONE, LIKE_LAUNCHES})
# Evidence read from the order of lines, or from what earlier lines planned: the history
# scan, which reads lines alone, cannot see it (the log's end is always read in full).
# The log stops at the last step the run would print before its planned total, and says
# nothing after it: the run is over once nothing more comes, its outcome not confirmed
# (`core.lifecycle` makes it ENDED, never SUCCEEDED).
# (LAST_PRINT is kept with `final_epoch`, which gives it too.)
FROM_ORDER = AFTER_TRAINING | {FINAL_EPOCH, LAST_EPOCH, LAST_PRINT, FINAL_VALIDATION, LOOP_OVER,
                                LOOP_LEFT, SHELL_BACK}

# Completions read from where the loop stopped, not from anything the run said: they
# leave the script's exit status after them its evidence (see `noted`).
_UNSAID = (LOOP_OVER, LOOP_LEFT, LAST_PRINT, SHELL_BACK)

_TEST_NAME = lazy_re.compile(r"(?:^|/)test(?:[_/]|$)", re.IGNORECASE)
# A line headed by the test split: `test set: Average loss: …`, `Test: acc 0.9`.
_TEST_HEAD = lazy_re.compile(r"^\W*(?:[Tt]est(?:ing)?|TEST)(?: set| split| data)?\s*[:|,-]")
# Banners of a test pass, inference or an export: FuxiCTR `******** Test evaluation
# ********`, Lightning's `Testing DataLoader 0:` bar, `Running inference`, `Exporting
# model to ONNX`, `Start testing`.
_AFTER_TRAINING_BANNER = lazy_re.compile(
    r"\*+\s*Test(?:ing)?\b|\b[Tt]est(?:ing)? (?:evaluation|results?)\b|Testing DataLoader|"
    # (framed by rules: Distiller's `--- test ---------------------`, `=== TEST ===`)
    r"[-=#]{3,}\s*(?:[Tt]est(?:ing)?|TEST(?:ING)?)\s*[-=#]{3,}|"
    r"\b[Ss]tart(?:ing)? (?:testing|inference|to test)\b|"
    r"\b[Rr]unning (?:inference|test(?:s|ing)?)\b|"
    r"\bExport(?:ing)? (?:the )?(?:model|to ONNX|ONNX)|\b[Ee]xported (?:the )?model\b|"
    r"\b(?:Evaluat(?:e|ing)|[Ss]tart(?:ing)? (?:to )?test(?:ing)?|[Rr]un(?:ning)? test) "
    r"(?:on )?(?:the )?test (?:set|split|data)")
# A cheap check first: most lines have none of these words.
_BANNER_WORD = lazy_re.compile(r"[Tt]est|nference|xport")
# `epoch: 19 done`, `**** Epoch=116 end ****`, `Epoch 3 finished`, `==end-of-epoch 3==`.
_EPOCH_DONE = lazy_re.compile(r"\b[Ee]poch[\s:=#]*(\d+)\s*(?:is\s+|has\s+)?"
                              r"(?:done|end(?:ed)?|finished|completed?)\b|"
                         r"\b(?:[Ee]nd|END)[\s_-]+(?:of[\s_-]+)?(?:[Ee]poch|EPOCH)[\s:=#]*(\d+)\b")
# A save named by the epochs done: `Saving checkpoint at 40 epochs`, `…/epoch_40.pth`.
_SAVED_EPOCH = lazy_re.compile(r"\bat (\d+) epochs?\b|\bepoch[_-](\d+)\.(?:pth|pt|ckpt|h5|pkl)\b",
                               re.IGNORECASE)
# The outer counter and its total: `Epoch 14/14`, `epoch: 20/20, iter: 10/14`, `Epoch
# [299/300]`, `=== EPOCH 199/199 ===`, `Epoch:[ 19 | 19 ]`, `epoch 3 of 10`.
# (a counter of the plan in parentheses after the epoch's own number, Pointnet2's `****
# Epoch 57 (150/150) ****` of a fine-tune resumed at its plan's epoch 94: the plan's)
_EPOCH_OF = lazy_re.compile(r"\b(?:[Ee]poch|EPOCH)\b[\s:=#\[(]*(?:\d+\s+\(\s*)?(\d+)\s*"
                            r"(?:/|\b(?:out\s+)?of\b|\|)\s*(\d+)\b")
# The epoch named by its number alone, no total after it (`Now training epoch 99.`).
# (A `|` after it sets the next field apart, `Epoch 100 | Step 2360/2449 | Loss: 0.01`,
# unless a number follows it: then it may be the total, `Epoch 3 | 10`.)
_EPOCH_ALONE = lazy_re.compile(r"\b[Ee]poch\s*[:=#]?\s*(\d+)\b(?!\s*(?:/|of\b|\|\s*\d|\.\d))")
_ETA_ZERO = lazy_re.compile(r"\b(?:ETA|[Ee]ta|[Tt]ime left|[Rr]emaining)[:=]?\s*0?0:00:00\b|"
                            r"(?<![\d.])0(?:\.0+)?\s?(?:us|µs|ms|s) remaining\b|"
                            # CatBoost's `999: learn: 0.249 total: 12m 12s remaining: 0us`
                            r"\b[Rr]emaining:?\s+0(?:\.0+)?\s?(?:us|µs|ms|s)\s*$|"
                            # a JSON record's own field: detectron2's metrics.json (its
                            # CommonMetricPrinter puts `eta_seconds` = the median iteration
                            # time × (max_iter - iteration - 1) into the storage JSONWriter
                            # writes): `"eta_seconds": 0.0` at iteration max_iter - 1
                            r"\"eta(?:_seconds|_s)?\":\s*0(?:\.0+)?\s*[,}]|"
                            # in words of units: fastText's `ETA:   0h 0m 0s`
                            r"\b(?:ETA|[Ee]ta)[:=]?\s*(?:0+\s*[dh]\s*)?0+\s*m(?:in)?\s*0+\s*s\b|"
                            # the run's own share of its plan, done (fastText's and
                            # word2vec's `Progress: 100.0%`, StarSpace's `(100.0%)` after an
                            # epoch's own share): its progress, not a bar's (a tqdm bar
                            # named `Progress` draws its `|` after the share, and may be an
                            # epoch's)
                            # a time left printed rounded that came out negative: the run
                            # is past its planned total (insightface's arcface_torch:
                            # `Required: -0 hours` at its last step)
                            r"\b(?:[Rr]equired|[Rr]emaining|ETA|[Ee]ta|[Tt]ime left)[:=]?\s+"
                            r"-0(?:\.0+)?\s*(?:h|hours?|hrs?|min|minutes?|s|secs?|seconds?)\b|"
                            r"\b[Pp]rogress:?\s+100(?:\.\d+)?\s?%(?!\s*\|)|"
                            r"\b[Pp]rogress:?\s+1\d\d\.\d+\s?%(?!\s*\|)")
# Even gaps between prints before an off-grid last print gives the loop's total away (see
# `EndingReader._implied_total`): enough to show the grid.
_GRID_PRINTS = 3
# The share of the plan past which a last step is at the planned end whatever the
# interval (as `core.lifecycle.premature` reckons it).
_NEAR_END = 0.98
_FINAL_PATH = lazy_re.compile(r"(?:^|[/\\_\-])final(?:[_\-.][\w.-]*)?[/\\]?$", re.IGNORECASE)


# A stage's end said this many times in a row, each at most this many training records
# after the one before, is said at the end of every round, not of stages.
_ROUND_ENDS = 4
_ROUND_RECORDS = 5


# A part of the run named by its number (`epoch 3`, `stage: 2`, `fold #4`).
_NAMES_A_PART = lazy_re.compile(r"(?i)\b(?:epoch|stage|phase|fold|round|step|iter\w*|cycle|"
                                r"task)\b\s*[:#=]?\s*\d")


class EndingReader:
    """Follows the order of a log's lines for the evidence above. The parser tells it
    when training moved (`stepped`), and asks it, for each line, what that line adds."""

    def __init__(self) -> None:
        self._run_eta = RunEta()  # an ETA that is the whole run's (MMCV's, MMEngine's)
        self._step: int | None = None
        self._interval = 0  # steps between logged training steps (see `stepped`)
        self._intervals: tuple[int, ...] = ()
        self._trained = False  # a training record was read
        self._said_at: int | None = None  # the step the after-plan evidence was given at
        self._target: int | None = None  # the planned total, as the last line knew it
        self._last_print_at: int | None = None  # the step LAST_PRINT was given at
        self._first_step: int | None = None  # the first step read
        self._epoch_base: int | None = None  # 0 or 1: how the run counts its epochs
        self._final_said = False
        self._tested = False  # a test pass was read since training last moved
        self._tests_between = False  # the run tests between its training steps
        self.completed = False  # a completion was read (its later records are not training)
        self._said_done = False  # a completion was ever read (kept past a reopening)
        self.closing = ClosingBlock()  # the lines after the last training record
        self.final_epoch = FinalEpoch()  # the outer counter at its total
        self.loop = LoopOver()  # the loop over, with nothing said (see `loop_over`)
        self.repeats = LaunchRepeats()  # each launch's end (see `launch_repeats`)
        self._test_held: LogEvent | None = None  # see `test_record`
        self._epochs_trained = False  # a training record that names only its epoch
        self._epoch_said: float | None = None  # the epoch such a record named last
        self._first_epoch_said: float | None = None  # and first
        self._epoch_names: frozenset[str] = frozenset()  # the names of that last record
        # Epochs of a log that prints no step (see `epoch_record`).
        self._first_epoch: float | None = None
        self._last_epoch: float | None = None
        # The last few gaps between the epochs printed: a run may print every 40th
        # (`Epoch [161/200]` is then its last print of a run of 200).
        self._epoch_gaps: tuple[float, ...] = ()
        self._planned_epochs: int | None = None
        self._plan_said: float | None = None
        # The epoch of the latest training record of any kind: a later launch's, counted
        # afresh, when the records that judge the plan stopped short of it.
        self._epoch_seen: float | None = None
        # The last training record showed a counter inside its epoch short of its total
        # (`Epoch:[1/1](1700/44160) loss:5.241`): the epoch it names was under way.
        self._record_part_way = False
        # The run's own word that its training ended, said before in the same words and
        # trained on after (a stage's end, `_recurring_is_a_stage`), and no training since.
        self._stage_said: LogEvent | None = None
        # Training records between the stage ends said so (the latest few), and since
        # the last (see `last_stage_over`).
        self._stage_gaps: deque[int] = deque(maxlen=_ROUND_ENDS)
        self._since_stage = 0
        self._counter_back = False  # the training's counter went back since the last
        # The start-up's first line came again after the last training record: a new
        # launch that has not trained yet (see `launch_seen`).
        self._launch_pending = False
        # Whole epochs training stepped through (two are enough to tell), and whether an
        # evaluation's bar was drawn yet (see `evaluation_bar`).
        self._epochs_stepped: set[int] = set()
        self._evaluated_by_bar = False

    def stepped(self, step: int, metrics: Mapping[str, float] | None = None,
                epoch: float | None = None) -> None:
        """Training moved on to `step` (with a record of `metrics`, in `epoch`)."""
        self.loop.trained(step, metrics, epoch)
        if self._first_step is None:
            self._first_step = step
        if self._step is not None and step > self._step:
            # The logging interval is the smallest of the last few: a jump (a resume, a
            # header that names the epoch's end) is not how often the run logs.
            self._intervals = (*self._intervals[-3:], step - self._step)
            self._interval = min(self._intervals) if len(self._intervals) > 1 else 0
        # Steps that go back start a new launch: what closed the stretch before ended a
        # run, and is no stage's line (`Saved model to …`, then `step: 0` again).
        relaunched = self._step is not None and step < self._step
        stood_at = self._epoch_said if epoch is not None and self._epoch_said is not None \
            else self._step
        if epoch is not None:
            # (or its epochs, a whole one or more: a log whose steps babysit counts)
            relaunched = relaunched or (self._epoch_said is not None
                                        and epoch <= self._epoch_said - 1)
            self._epoch_said = epoch
            if len(self._epochs_stepped) < 2 and epoch == epoch:  # (not a NaN)
                self._epochs_stepped.add(int(epoch))
        self._step = step
        self._trained = True
        # (or the outer counter did, in a header between records: `Epoch 1/30` after
        # `Epoch 30/30`, a script's next experiment)
        relaunched = self.final_epoch.went_back() or relaunched
        self._counter_back = self._counter_back or relaunched
        self.repeats.trained(relaunched, stood_at, epoch if epoch is not None else step,
                             metrics or ())
        self.closing.trained(relaunched)
        self.final_epoch.trained()
        self._said_at = None
        self._stage_said = None
        self._since_stage += 1
        self._launch_pending = False
        self.completed = False
        self._tests_between, self._tested = self._tests_between or self._tested, False

    def trained(self) -> None:
        """A training record was read (a log that prints no step)."""
        self._trained = True
        self._stage_said = None
        self._since_stage += 1
        self._launch_pending = False
        self.final_epoch.trained()
        self.completed = False
        self._tests_between, self._tested = self._tests_between or self._tested, False

    def epoch_record(self, epoch: float, planned: int | None) -> None:
        """A training record of a log that prints no step, at `epoch` of `planned` (its
        own `Epoch 20/20`, else the configuration's `epochs=20`)."""
        if self._first_epoch is None:
            self._first_epoch = epoch
        if self._last_epoch is not None and epoch > self._last_epoch:
            self._epoch_gaps = (*self._epoch_gaps[-2:], epoch - self._last_epoch)
        elif self._last_epoch is not None and epoch < self._last_epoch:
            self._epoch_gaps = ()
        self._last_epoch = epoch
        self._planned_epochs = planned or self._planned_epochs

    def evaluated_at(self, counter: tuple[int, int]) -> None:
        """An evaluation's line opened on `N/M` (`[7 / 10]: Accuracy on test set`) in a
        log that counts its epochs and names no plan: at the epoch trained last, it is
        that epoch of M planned (an evaluation pass's own batches count from 1 again
        each time, and are not at the epoch's number)."""
        done, planned = counter
        if self._last_epoch is not None and self._planned_epochs is None \
                and done == self._last_epoch and planned >= done and planned > 1:
            self._planned_epochs = planned

    def forget_epochs(self) -> None:
        """The records given as epochs were not (see `parser._unnamed_counter`)."""
        self._first_epoch = self._last_epoch = None
        self._planned_epochs = None
        self._epoch_gaps = ()

    def loop_over(self, read: Sequence[str]) -> LogEvent | None:
        """At the end of a read (its lines): the loop seen over (see `loop_over`), told
        whether the run announced a plan (its epochs, or its steps): a count a plan names
        is evidence only where the run named none."""
        planned = self.final_epoch.planned or self._planned_epochs or self._target
        return self.loop.judge(read, planned=planned is not None,
                               last_repetition=self.final_epoch.last_repetition)

    def launches_alike(self) -> LogEvent | None:
        """At the end of a read: the last launch ended as each earlier one did (see
        `launch_repeats`)."""
        return self.repeats.judge(self._epoch_said if self._epoch_said is not None
                                  else self._step)

    def last_epoch_over(self) -> LogEvent | None:
        """At the end of a read: the last planned epoch over (see `final_epoch`), told
        whether the learning rate's schedule ended at the last record."""
        return self.final_epoch.over(schedule_over=self.loop.schedule_over())

    def closing_judged(self) -> LogEvent | None:
        """At the end of a read: the closing block's judgement (see `closing`), held back
        in a log that counts epochs, not steps, while its last epoch stands well short of
        the epochs it planned: the lifecycle checks a closing against the planned steps,
        and an epoch-only log has none (`* The network will run for: 30 epochs`, then
        `Time ran: 912.5` after epoch 8 is a run stopped early, not one that finished)."""
        closing = self.closing.judge()
        if closing is None or not self._short_of_planned_epochs():
            return closing
        return None

    def _short_of_planned_epochs(self) -> bool:
        epoch, planned = self._last_epoch, self._planned_epochs
        if self._step_counted():
            return False
        if epoch is None or not planned:
            # (the outer counter's own plan, printed on a line of its own: `Epoch 2 of 1000
            # took 69.8s` above the epoch's figures)
            return self.final_epoch.well_short()
        base = 0 if self._first_epoch == 0 else 1
        done = epoch - base + 1
        if done >= _NEAR_END * planned:
            return False
        return not self._printed_last(done, planned)

    def _printed_last(self, done: float, planned: int) -> bool:
        """Whether `done` epochs is the run's last printing point before its plan: it
        prints every `gap` epochs, each gap the same, and the next would be past it."""
        gaps = self._epoch_gaps
        return len(gaps) >= 2 and len(set(gaps)) == 1 and done + gaps[-1] > planned

    def _step_counted(self) -> bool:
        """Whether the run's steps (not only its records) give its progress: its plan is
        checked against them instead."""
        return self._target is not None

    def launch_seen(self) -> None:
        """A new launch began after the last training record: the last epoch read was the
        earlier launch's, and its plan is no word on this one's (`plan_reached`)."""
        self._launch_pending = True

    def epoch_seen(self, epoch: float) -> None:
        """A training record at `epoch`, whether or not it counts toward the plan."""
        self._epoch_seen = epoch

    def plan_reached(self) -> LogEvent | None:
        """At the end of a read: the last training record is the last planned epoch
        (0- or 1-based, as the run counts), and nothing trained after it; else the last
        step is the run's last logging point before its planned total (LAST_PRINT)."""
        epoch, planned = self._last_epoch, self._planned_epochs
        if epoch is None:
            return self._last_print()
        if epoch is None or not planned or epoch != int(epoch) or self._plan_said == epoch \
                or self._record_part_way or self.final_epoch.evaluation_cut \
                or self._launch_pending:
            return None
        if self._epoch_seen is not None and self._epoch_seen < epoch - 1:
            # The latest training record stands a whole epoch or more earlier (a record
            # part-way through the last epoch is placed at its fraction): a later launch,
            # counted afresh, trains (ST-GCN's log of forty launches, the last at `Training
            # epoch: 0` with its `Iter 0` record after an earlier launch's 49 of 50).
            return None
        base = 0 if self._first_epoch == 0 else 1
        if epoch - base + 1 < planned:
            gaps = self._epoch_gaps
            if base == 0 and gaps and gaps[-1] > 1 and self._printed_last(epoch + 1, planned):
                # Printed every `gap` epochs from epoch 0 (MuseGAN's `Epoch 0/1000`,
                # `Epoch 10/1000` … `Epoch 990/1000`): the last print such a loop makes
                # before its plan, where a finished run's log stops too (LAST_PRINT).
                self._plan_said = epoch
                return LogEvent(EventKind.COMPLETED,
                                f"epoch {int(epoch)}, the run's last logging point before "
                                f"its planned {planned} epochs", LAST_PRINT)
            return None
        self._plan_said = epoch
        return LogEvent(EventKind.COMPLETED, f"epoch {int(epoch)}, the last of {planned} planned",
                        AFTER_PLAN)

    def _last_print(self) -> LogEvent | None:
        """The last step read is within one logging interval of the planned total (the
        next print would be at or past it), and no line after it said more (that is
        AFTER_PLAN's evidence). Only for a run whose prints start at its first step (`0,
        50, 100, …`: a loop that prints at the start of each interval never prints its
        planned total); one that prints at the end of each (`50, 100, …`) prints it."""
        # (a loop's own last print off its grid gives the total where none was announced:
        # `Step=990000`, then `Step=999999` and nothing more, `_implied_total`)
        step, target, interval = self._step, self._target or self._implied_total(), \
            self._interval
        if step is None or not target or not interval or not step < target <= step + interval \
                or self._first_step is None or self._first_step >= interval \
                or self._said_at == step or self._last_print_at == step:
            return None
        self._last_print_at = step
        if self._first_step == 0 and step == target - 1 \
                and (interval == 1 or step % interval != 0):
            # Every step printed, counted from 0 (`[  0/200]` … `[199/200]`): the last one
            # printed is the loop's last, as a 0-based epoch count's is (`plan_reached`);
            # so is a print off the loop's cadence at that last index, which a loop makes
            # only for its last step (an Equinox example's `Step: 99999/100000` after
            # `Step: 99000/100000`: `if step % 1000 == 0 or step == steps - 1`).
            return LogEvent(EventKind.COMPLETED,
                            f"step {step}, the last of {target} counted from 0", AFTER_PLAN)
        return LogEvent(EventKind.COMPLETED,
                        f"step {step}, the run's last logging point before its planned "
                        f"total of {target}", LAST_PRINT)

    def epoch_trained(self, epoch: float | None = None,
                      metrics: Mapping[str, float] | None = None) -> None:
        """A training record that names its epoch and no step (see `after_record`)."""
        self.loop.trained(epoch, metrics, epoch)
        self._epochs_trained = True
        # (the epoch going back starts a new launch, as steps that go back do: what
        # closed the stretch before it ended a run, `test： f1:0.0` after each of three)
        said = self._epoch_said
        names = frozenset(metrics or ())
        relaunched = epoch is not None and said is not None and (
            # (one back under other names is the same epoch counted from 0 on another
            # line: a DGL script's `Epoch 28, Learning Rate: 0.01` before the epoch's
            # work, `Run 00 | Epoch 00027 | Loss 3.14 …` after it)
            (epoch < said and (said - epoch > 1 or names == self._epoch_names))
            # or the same record at the first epoch again after a closing line (a launch
            # that ran one epoch and tested, then the next launch's first): a launch's
            # end (not the epoch's own evaluation after its test banner, other names)
            or (epoch == said == self._first_epoch_said and names == self._epoch_names
                and self.closing.pending(late=True)))
        self._epoch_names = names
        if epoch is not None:
            self._epoch_said = epoch
            if self._first_epoch_said is None:
                self._first_epoch_said = epoch
        relaunched = self.final_epoch.went_back() or relaunched
        self._counter_back = self._counter_back or relaunched
        self.repeats.trained(relaunched, said, epoch, metrics or ())
        self._tests_between, self._tested = self._tests_between or self._tested, False
        self._test_held = None
        if relaunched:
            self.completed = False  # a new launch trains after the last one's end
        self.closing.trained(relaunched)
        self.final_epoch.trained()
        self._stage_said = None
        self._since_stage += 1
        self._launch_pending = False

    def _note_stage_said(self, text: str) -> None:
        """A stage's end said in the words of the run's end: the run's, if the log ends
        there (`last_stage_over`), unless it names the part it ended (`Training done for
        epoch 3`: that epoch's, however many follow)."""
        if _NAMES_A_PART.search(text) is None:
            self._stage_said = LogEvent(EventKind.COMPLETED, text.strip()[:500], SAID)
            # (a counter that went back between them: each stage a run of its own, a
            # sweep's, however short; a gap that cannot be a round's)
            self._stage_gaps.append(_ROUND_RECORDS + 1 if self._counter_back
                                    else self._since_stage)
            self._since_stage, self._counter_back = 0, False

    def last_stage_over(self) -> LogEvent | None:
        """The run's own word that its training ended, in the words it used for each
        stage before (a pruning run's two phases, each closed by the word-language-model
        example's `| End of training | test loss  5.41 | test ppl   222.86`), with no
        training after it to the log's end: the last stage's end is the run's (once).
        Not a line said at the end of every round, a few records apart (an AlphaZero
        worker's `Training time: 16.7s` after each of its 94 training steps, three loss
        lines each): a log that stops after one more round says nothing of the run's end.
        A sweep's runs, each closed by `Training finished!` after hundreds of records, are
        stages whose last is the run's."""
        said, self._stage_said = self._stage_said, None
        gaps = self._stage_gaps
        # (each round printed its training: ends with nothing trained between them are
        # a sweep's runs that print none, or a script's stages)
        per_round = len(gaps) == _ROUND_ENDS and 1 <= min(gaps) <= max(gaps) <= _ROUND_RECORDS
        return None if per_round else said

    def after_record(self, text: str) -> None:
        """A line that did not move training on: part of the closing block, once training
        has begun."""
        if self._trained or self._epochs_trained:
            self.repeats.after_record(text)
            self.closing.add(text)
            self.final_epoch.printed_on(text)

    def quiet_line(self, text: str) -> None:
        """A line said twice before with nothing in it, said again: it may still be the
        first line after a launch's last record (see `launch_repeats`)."""
        if self._trained or self._epochs_trained:
            self.repeats.after_record(text)

    def noted(self, events: list[LogEvent]) -> list[LogEvent]:
        """The line's events, as the run's end should hear them. An exit status 0 after
        the run said it finished (YOLOv5's early stop, then W&B's `(success)` as the
        script exits) adds nothing: dropped. Nor is it the run's word on its training:
        the closings the reading still owes (the plan reached) are read after it."""
        if self._said_done:
            events = [e for e in events if e.detail != RETURNED
                      or e.kind is not EventKind.COMPLETED]
        if any(e.kind is EventKind.COMPLETED and e.detail != RETURNED for e in events):
            self.completed = True
            # (the loop seen over, or its last print, says nothing of how the process
            # ended: the exit status after it is the evidence, not a repeat)
            said = any(e.kind is EventKind.COMPLETED and e.detail not in (RETURNED, *_UNSAID)
                       and e.detail != LIKE_LAUNCHES for e in events)
            self._said_done = self._said_done or said
            if said:
                self.repeats.said_done()
        return events

    def line_events(self, text: str, target: int | None, planned_epochs: int | None,
                    events: list[LogEvent], metrics: bool,
                    trains: bool | None = None) -> list[LogEvent]:
        """What one line says about the end, besides the events it carries itself;
        `metrics`: the line reports metrics (a record, not a banner); `trains`: it is a
        training record (default: `metrics`)."""
        found: list[LogEvent] = []
        self._target = target
        # The pattern needs an `/`, `of` or `|` after the epoch: a loss dict's `'epoch':
        # 0.02`, at every metric line, has none, and no search is made.
        of = _epoch_of(text) if ("poch" in text or "POCH" in text) and (
            "/" in text or "of" in text or "|" in text) else None
        if "/" in text:
            inner = _inner_counters(text, of)
            if any(done < total for done, total in inner):
                self.final_epoch.part_way(inner[0] if len(inner) == 1 else None)
            elif any(done == total > 1 for done, total in inner):
                self.final_epoch.inner_at_end()
        if metrics if trains is None else trains:
            self._record_part_way = "/" in text and _far_inside(text, of)
        if of is not None:
            self.final_epoch.counted(int(of.group(1)), int(of.group(2)),
                                     metrics if trains is None else trains, metrics)
        elif "poch" in text and self.final_epoch.planned is not None \
                and (alone := _EPOCH_ALONE.search(text)) is not None:
            self.final_epoch.named_next(int(alone.group(1)),
                                        metrics if trains is None else trains)
        if "poch" in text and ("done" in text or "end" in text or "finish" in text
                               or "omplete" in text or "End" in text) \
                and (done := _EPOCH_DONE.search(text)) is not None:
            epoch = int(done.group(1) or done.group(2))
            planned_epochs = planned_epochs or self.final_epoch.planned
            if self._epoch_base is None:
                self._epoch_base = 0 if epoch == 0 else 1
            if planned_epochs and not self._final_said \
                    and epoch - self._epoch_base + 1 >= planned_epochs:
                self._final_said = True
                found.append(LogEvent(EventKind.COMPLETED, text.strip()[:500], FINAL_EPOCH))
        self._recurring_is_a_stage(text, events)
        if (said := self._said(text, events)) is not None:
            found.append(said)
        zero = ("0:00:00" in text or "emaining" in text or '"eta' in text or "0s" in text
                or "rogress" in text or "-0" in text) \
            and (_ETA_ZERO.search(text) or _eta_within_one_iteration(text)) \
            and _at_planned_end(text, target, planned_epochs)
        if zero or (metrics and self._run_eta.ends_here(text)):
            found.append(LogEvent(EventKind.COMPLETED, text.strip()[:500], ETA_ZERO))
        for event in events:
            if event.kind is not EventKind.CHECKPOINT_SAVED:
                continue
            if _FINAL_PATH.search(event.detail):
                found.append(LogEvent(EventKind.COMPLETED, event.line, FINAL_PATH))
            elif (planned := planned_epochs or self.final_epoch.planned) and not self._final_said \
                    and (saved := _SAVED_EPOCH.search(text)) is not None \
                    and int(saved.group(1) or saved.group(2)) == planned:
                # The save a run makes after each epoch, made after the last one it planned
                # (OpenMMLab's `Saving checkpoint at 40 epochs` under `max_epochs=40`,
                # `epoch_40.pth`): the last epoch's training is over.
                self._final_said = True
                found.append(LogEvent(EventKind.COMPLETED, text.strip()[:500], FINAL_EPOCH))
        if self._trained and not metrics and _BANNER_WORD.search(text) \
                and _AFTER_TRAINING_BANNER.search(text):
            found.extend(self._tested_once(text))
        return found

    def _recurring_is_a_stage(self, text: str, events: list[LogEvent]) -> None:
        """A completion sentence the run printed between its training records before
        (`Training done for epoch 3`, each epoch), or a summary of the training's time
        (`Training time: 10.4s`, after each step), ends a stage, not the run: its events
        become NEW_STAGE, in place."""
        for index, event in enumerate(events):
            if event.kind is EventKind.COMPLETED and event.detail in ("", SUMMARY) \
                    and self.closing.recurs(template(text.strip())):
                events[index] = LogEvent(EventKind.NEW_STAGE, event.line, "a stage finished")
                self._note_stage_said(text)

    def _said(self, text: str, events: list[LogEvent]) -> LogEvent | None:
        """The run's own sentence that its training is over (see `completion_words`),
        unless the run printed it before and trained on (a per-epoch `Training done`);
        `events`: what the line's signatures already found."""
        if says_plan_reached(text):
            return LogEvent(EventKind.COMPLETED, text.strip()[:500], PLAN_REACHED)
        if any(e.kind is EventKind.COMPLETED for e in events) or not says_finished(text):
            return None
        if self.closing.recurs(template(text.strip())):
            self._note_stage_said(text)
            return None
        return LogEvent(EventKind.COMPLETED, text.strip()[:500], SAID)

    def evaluation_bar(self, text: str) -> list[LogEvent]:
        """An evaluation's bar drawn: the first the run drew, after training went through
        two epochs or more without one, is a test pass after training (a W&B output.log's
        `Eval Minibatch: 100%|…| 332/332` after five epochs whose validation drew no bar,
        then a classification report). A validation between epochs draws its bar after
        the first."""
        first, self._evaluated_by_bar = not self._evaluated_by_bar, True
        if not first or not self._trained or len(self._epochs_stepped) < 2:
            return []
        return self._tested_once(text)

    def _tested_once(self, text: str) -> list[LogEvent]:
        """A test pass is the end only in a run that does not test between its steps
        (detectron2's periodic `Start inference on N batches`)."""
        self._tested = True
        if self._tests_between or self.final_epoch.well_short():
            # (a test after each epoch of a plan far from done: Lasagne's MNIST example
            # tests after `Epoch 1 of 1000 took 70.4s`; the next epoch shows it periodic)
            return []
        return [LogEvent(EventKind.COMPLETED, text.strip()[:500], FINAL_TEST)]

    def after_step(self, text: str, target: int | None, trains: bool) -> LogEvent | None:
        """A line read after the last training step: when that step is within one
        logging interval of the planned total and this line is not training, the run
        has left its training loop at its planned end. An interval wider than the last
        few hundredths of the plan counts only for a run whose prints start at its first
        step (see `_last_print`): one printing at the end of each interval (`50, 100, …,
        550` of 600) has one more print to come."""
        step = self._step
        target = target or self._implied_total()
        if trains or step is None or not target or not self._interval \
                or self._said_at == step or not text.strip():
            return None
        if not step < target <= step + self._interval:
            return None
        if self.final_epoch.well_short():
            # Its outer counter short of its total (CLIP4Clip's `Epoch: 2/5, Step:
            # 156/156`, then the epoch's evaluation): the steps counted were that epoch's.
            return None
        if step < min(_NEAR_END * target, target - 1) \
                and (self._first_step is None or self._first_step >= self._interval):
            return None
        self._said_at = step
        return LogEvent(EventKind.COMPLETED, text.strip()[:500], AFTER_PLAN)

    def _implied_total(self) -> int | None:
        """The planned total a loop's last print gives away, where the run announced none:
        a loop that prints on an even grid from 0 (`if i % 1000 == 0`) and prints its last
        iteration too (`or i == steps - 1`) ends on a step one short of the grid (`Step:
        0`, `1000`, …, `4000`, then `Step: 4999`): a count no live run prints, the last of
        a 0-based loop of `step + 1`."""
        intervals, step = self._intervals, self._step
        if step is None or self._first_step != 0 or len(intervals) < _GRID_PRINTS + 1:
            return None
        *grid, last = intervals
        if grid[-1] <= 1 or any(gap != grid[-1] for gap in grid) or last != grid[-1] - 1:
            return None
        return step + 1

    def wants(self, line: Line) -> bool:
        """The lines that did not move training on, read after it, and the interpreter's
        shutdown notice wherever it is (a killed run's bar never ended its line: `23/50000
        [00:11<6:45:51, 2.05it/s]/usr/lib/…/resource_tracker.py:216: UserWarning: …`)."""
        return not line.in_traceback and (not line.advanced or is_shutdown_notice(line.text))

    def amend(self, line: Line, record: Record | None, context: ParseContext) -> Record | None:
        """Evidence of the run's end in a line read after training moved: at the planned
        total, or a test pass."""
        text = line.text
        event = None
        self.loop.after(text, record)
        if record is not None and record.metrics:
            event = self.test_record(text, record.metrics)
        training = record is not None and (record.epoch is not None or trains(record.metrics))
        if not training or "inal " in text or "FINAL" in text or names_best_epoch(text) \
                or names_best_value(text) or sums_up_folds(text):
            # Not a training record (one at the step a bar gave is not the end), or the
            # final metrics (`… - Final PPO metrics: loss_objective=…`), or the best epoch's
            # (`Best Epoch 6  Acc: 0.89`, an epoch that names itself), or the best so far
            # (Pointnet2's `Best accuracy is: 0.91321` after each epoch's test), or the
            # folds' figure summed up (`cv_score_fold_mean: 0.7807`): the closing block.
            self.after_record(text)
        if event is None:
            event = self.after_step(text, context.target, training)
        if event is None:
            return record
        self.noted([event])
        if record is None:
            return Record(step=context.step, target_steps=context.target, events=(event,),
                          rank=line.rank)
        return replace(record, events=(*record.events, event))

    def test_record(self, text: str, metrics: Mapping[str, float]) -> LogEvent | None:
        """A record of test metrics only, after training: a test pass once training is
        over (Lightning's `trainer.test()` row)."""
        if not (self._trained or self._epochs_trained) or not metrics or not (
                all(_TEST_NAME.search(k) for k in metrics)
                # (or a line headed by the split, its figures named for an evaluation:
                # PyTorch's MNIST example's `test set: Average loss: 0.7464, Accuracy: …`
                # after the `val set:` line of every epoch)
                or (_TEST_HEAD.match(text) is not None and not any(trains({k: v})
                                                                   for k, v in metrics.items()))):
            return None
        tested = next(iter(self._tested_once(text)), None)
        if self._trained:
            return tested
        # In a log that counts epochs, not steps, an epoch after the test does not take
        # back an end said before it (see `core.lifecycle`): the test is the end only if
        # no epoch trained after it, asked at the end of the read (`test_held`).
        self._test_held = tested
        return None

    def test_held(self) -> LogEvent | None:
        """At the end of a read: a test pass after the last epoch trained, in a log that
        counts epochs (see `test_record`)."""
        held, self._test_held = self._test_held, None
        return held


_COUNTER = lazy_re.compile(r"(?<![\d.])(\d+)\s*/\s*(\d+)(?![\d.])")


def _epoch_of(text: str) -> re.Match[str] | None:
    """The outer counter and its total (`Epoch 14/14`), unless the count is past the
    total: then the number after it is another field's (demucs's `Valid | Epoch 10 | 6/7 |
    Loss 0.41`: a `|` between fields, the batch counter after it), not a plan."""
    of = _EPOCH_OF.search(text)
    if of is None or int(of.group(1)) > int(of.group(2)):
        return None
    return of


def _inner_counters(text: str, epoch: re.Match[str] | None) -> list[tuple[int, int]]:
    """The counters a line shows other than its epoch's (`37/100`, `iter: 10/14`), as
    (done, total)."""
    skip = epoch.span() if epoch is not None else (-1, -1)
    return [(int(m.group(1)), int(m.group(2))) for m in _COUNTER.finditer(text)
            if not skip[0] <= m.start() < skip[1]]


# A counter alone, not a part of a date (`01/06/2022`) or a path.
_LONE_COUNTER = lazy_re.compile(r"(?<![\d./])(\d+)\s*/\s*(\d+)(?![\d./])")
# Short of its total by more than a last print's gap could be (a loop printing every 50 of
# 120 batches ends its epoch at 100/120).
_FAR_INSIDE = 0.9


def _far_inside(text: str, epoch: re.Match[str] | None) -> bool:
    """Whether a line shows a counter besides its epoch's well short of its total: a
    record inside its epoch (`Epoch:[1/1](1700/44160) loss:5.241`)."""
    skip = epoch.span() if epoch is not None else (-1, -1)
    return any(int(m.group(1)) < _FAR_INSIDE * int(m.group(2))
               for m in _LONE_COUNTER.finditer(text) if not skip[0] <= m.start() < skip[1])


# A progress bar's share done, as tqdm and Julia's ProgressMeter print it.
_PERCENT = lazy_re.compile(r"(?<![\d.])(\d{1,3})%\s*\|")


_ETA_FIELD = lazy_re.compile(r"\"eta_seconds\":\s*(\d+(?:\.\d+)?)\s*[,}]")
_TIME_FIELD = lazy_re.compile(r"\"time\":\s*(\d+(?:\.\d+)?)\s*[,}]")


def _eta_within_one_iteration(text: str) -> bool:
    """A JSON record whose time left is at most its own time per iteration: the last
    iteration's (detectron2 versions that count the iteration under way in the time left
    write `"eta_seconds": 1.55` beside `"time": 1.64` at iteration max_iter - 1)."""
    eta, took = _ETA_FIELD.search(text), _TIME_FIELD.search(text)
    return eta is not None and took is not None \
        and float(eta.group(1)) <= 1.5 * float(took.group(1))


def _at_planned_end(text: str, target: int | None, planned_epochs: int | None) -> bool:
    """Whether an ETA of zero is the whole run's: the line names no counter (its ETA is
    the run's), or its counter stands at the planned total or the planned epochs. The
    torchvision reference scripts print `eta: 0:00:00` at the end of every epoch
    (`Epoch: [5]  [1250/1251]  eta: 0:00:00`): that counter is the epoch's batches. A bar
    that shows itself short of 100 % is not at the end, whatever its estimate rounds to."""
    percent = _PERCENT.search(text)
    if percent is not None and int(percent.group(1)) < 100:
        return False  # a bar short of its end (`81%|█████   | ETA: 0:00:00`): rounding
    counters = [(int(m.group(1)), int(m.group(2))) for m in _COUNTER.finditer(text)]
    if not counters:
        return True
    return any(total in (target, planned_epochs) and done >= total - 1
               for done, total in counters)
