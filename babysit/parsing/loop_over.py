"""Evidence that a run's training loop is over, though nothing in the log says how it went.

A log that stops mid-run and a log whose run finished without a word look alike at their
last line; what tells them apart is where that line sits in the run and what came after
it. These are facts about the whole log, judged once per read (like the closing block,
see `endings`), each enough to say the loop is over, none enough to say it succeeded:

- The learning rate's schedule reached its end: a decay down to exactly 0 at the last
  training record (Julia's hand-written loop: `alpha = 3.3e-7`, then `alpha = 0.0` at
  `Batch = 300000`), or a decay that flattened out on its floor (build-nanogpt's cosine at
  `lr 6.0000e-05` = 10 % of its peak for its last ten steps). A stepped schedule lands on
  each level with a jump and holds it, and is no evidence; nor is a rate held at its
  floor for long (a schedule that decays before its plan is done).
- The count an earlier launch stopped at, reached again: a log that holds several
  launches (the counter back at its start) whose earlier launch stopped at epoch 30, and
  then ran again from epoch 1, is over once its latest launch stops at 30 too.
- What a finished loop prints, once, after its last training record: an evaluation that
  never ran between training records (`Validation Accuracy: 0.51` after the fourth
  epoch's average loss, and nothing after it), samples generated or the model being
  saved when it never was between records (both only in a run seen past two epoch ends
  without them: an excerpt cannot tell a final evaluation from the first periodic one),
  a scheduler's epilog (`GPU Epilog Script v0.30`).
- The count it stopped at is one a plan names, in a run that gave none: 100, 200, 500 or
  1000 whole epochs done (see `round_count`), its last line no work under way.

The lifecycle makes such a run ENDED once the log has stopped ("outcome not confirmed"),
never SUCCEEDED, and a later training record drops the evidence (a live run went on). Two
of them, one of each kind, are the end of the run's own plan (LOOP_DONE: SUCCEEDED once
the log has stopped): where the loop stopped (its schedule at its end, a count a plan
names) and what a loop does once its work is done (saved its model, ran a final
evaluation, drew samples, or the script began its next phase: nnU-Net's `finished
prediction` after its learning rate reached 0): a loop that went 20000 epochs, then
printed `saved model mse loss: 0.084`, finished what it set out to do. A count an earlier
launch stopped at too (it may have been stopped there), a scheduler's epilog or the
shell's prompt (they come however the process ended) are no such evidence.
An evaluation after the last record, alone, says the loop is over wherever it stood, even
well short of a plan the run announced (LOOP_LEFT: ENDED; an early stop that said
nothing): where the loop stood says nothing then.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping, Sequence
from itertools import pairwise

from babysit import lazy_re
from babysit.metric_names import LR_KEYS
from babysit.model import EventKind, LogEvent, Record
from babysit.parsing.evaluation import trains
from babysit.parsing.formats import EVALISH
from babysit.parsing.log_prefix import message
from babysit.parsing.round_count import MIN_RECORDS, completed, round_units, under_way
from babysit.parsing.schedule_tail import at_its_end
from babysit.parsing.shapes import template
from babysit.parsing.shell_prompts import (
    LearnedPrompt,
    is_job_report,
    is_prompt,
    is_shutdown_notice,
    is_time_report,
)

LOOP_OVER = "loop-over"  # a completion detail (see `core.lifecycle`): ENDED, not SUCCEEDED
# Where the loop stopped and what it did after both say it is over (see the docstring):
# the end of its plan, SUCCEEDED once the log has stopped.
LOOP_DONE = "loop-done"
# An evaluation the loop never ran between its records, run after its last, wherever the
# loop stood: over, though perhaps short of its plan (an early stop that said nothing, a
# Keras fit at epoch 37 of 100 then `The MSE is 326.19`): ENDED, even well short of it.
LOOP_LEFT = "loop-left"
# The shell took the terminal back after the last training record (its prompt, or its
# report of the time the command took): the process is over wherever the run stood, its
# plan done or not (ENDED, not SUCCEEDED).
SHELL_BACK = "shell-back"

# Names of a step size where no learning-rate key is printed (a hand-written loop's
# `alpha`, `eta`, `step_size`).
_STEP_SIZE_KEYS = ("alpha", "eta", "step_size")
_RATE_KEYS = (*LR_KEYS, *_STEP_SIZE_KEYS)
# Training records before any of this is evidence: a loop that printed fewer has no shape.
_MIN_RECORDS = 3
# The rate's floor: at most this share of the highest rate the log shows (a decay, not
# noise in a constant; an excerpt may begin after the peak).
_FLOOR_SHARE = 0.5
# A counter this large on a round count when the process exits is its plan's end (a small
# one, `10` or `50`, is as often where a short test run was stopped).
_ROUND_EXIT_MIN = 1000
# The value before the floor within this share of it: a smooth approach (a cosine's or a
# linear decay's tail), not a step down onto a new level.
_SMOOTH = 0.01
# Records at the floor: at least this many (a level, printed), over at most this share of
# the steps since the peak (a decay that ended long before the plan holds its floor).
_FLOOR_POINTS = 3
_FLOOR_SPAN = 0.02
_MIN_DECAY_RECORDS = 50
# Epoch ends trained past without an evaluation, before one after the last record is
# evidence (see `after`).
_MIN_EPOCH_ENDS = 2
_LONG_STRETCH = 1000  # training records with no save, before a save is the loop's end
# The largest count of units a counter that moves by one at each record is read as (see
# `_round_count`).
_MAX_UNITS = 1000
# Prints of its interval a loop's plan must hold before one print short of a round count
# is evidence (see `_printed_before`).
_MIN_PRINTS = 100
# Stops at one count in a row that make the "launches" rounds of an outer loop (a
# calibration over five maturities, ten epochs each, is five runs that each finished).
_ROUNDS = 8
# Names of the training records' figures kept at most (a log's records carry a few).
_NAMES_KEPT = 256
# Records an earlier launch must have trained to give a count.
_MIN_LAUNCH = 3
# How far into its count an earlier launch's first record may be, for the count it
# stopped at to say where the loop ends.
_SEEN_FROM_START = 0.1
# What a loop does once it is over: generate samples with the trained model
# (`Generating images...`, `generated 16 samples`), save it (`Saving model to out/`,
# `Saving checkpoint at epoch 100`).
# (what is saved named by its word, or by its file: an RL script's `Agent saved to
# …/exp_003/agent.pt` after its last epoch)
_AFTER_LOOP = lazy_re.compile(
    r"\b(?:([Gg]enerat(?:e|es|ed|ing)|GENERAT(?:E|ING))|[Ss]av(?:e|es|ed|ing)|SAV(?:E|ING))\b"
    r"(?(1)|(?:.{0,40}\b(?:[Mm]odel|MODEL|[Ww]eights|[Cc]heckpoint|CHECKPOINT|ckpt|[Aa]gent|"
    r"[Pp]olicy|[Nn]etwork)s?\b|.{0,200}\.(?:pt|pth|ckpt|h5|keras|safetensors|params|"
    r"pdparams)\b))")
# The next phase of the script, said in a few words: the trained model put to use on
# held-out data (nnU-Net v1 after its last epoch: `finished prediction`, `evaluation of
# raw predictions`, `determining postprocessing`; `Testing...`, `Running inference`).
_PHASE_WORD = lazy_re.compile(r"\b(?:predict(?:ion|ions|ing)|inference|testing|"
                              r"evaluat(?:ion|ing)|post-?processing)\b", re.IGNORECASE)
# A report of the time training took: a timer's or a duration's word and a training
# word, then a figure (`Local timer: train_validate_test : 10939.83`, `Total training
# time: 3:02:11`, `Training took 5.2 hours`).
_TRAINING_TIMED = lazy_re.compile(
    r"(?:\b(?:[Tt]imer|[Tt]ime|TIME|[Ee]lapsed|[Tt]ook|[Dd]uration)\b.{0,40}?\b(?:[Tt]rain|TRAIN)"
    r"|\b(?:[Tt]rain|TRAIN)\w*\b.{0,40}?\b(?:[Tt]imer|[Tt]ime|TIME|[Ee]lapsed|[Tt]ook|"
    r"[Dd]uration)\b)[^\d\n]{0,20}\d")
_PHASE_WORDS_MAX = 6  # a phase's announcement, not a sentence about something else
# A line whose head says the model was saved, its figures after (`saved model mse loss:
# 0.084`, `Saved best model, acc 0.91`): the finished model's, no training record.
_SAVED_HEAD = lazy_re.compile(
    r"^\W*(?:(?:the|final|best|trained)\s+)?(?:model|weights|checkpoint)\s+(?:saved|written)\b|"
    r"^\W*(?:saved?|saving)\s+(?:(?:the|final|best|trained)\s+)?"
    r"(?:model|weights|checkpoint|ckpt)s?\b",
    re.IGNORECASE)
# W&B's last words as the script's process exits (`wandb.finish`, called by the script or
# at exit: `wandb: Synced 8 W&B file(s), 0 media file(s), …`, `wandb: Find logs at: …`,
# and first of them `wandb: 🚀 View run NAME at: URL` — the footer names the run and puts
# a colon; the header at start-up says `View run at URL`): the process is over. A crash
# prints its traceback before them, a kill leaves none.
_TRACKER_EXIT = lazy_re.compile(r"^\s*wandb: (?:Synced \d+ W&B file|Find logs at:|"
                                r"(?:\S+\s+)?View run \S.*? at: )")
# A scheduler's job epilog (Slurm, PBS and site scripts print one as the job ends), or
# the report a site's epilog prints under its own banner (`======== GPU REPORT ========`,
# then nvidia-smi's accounting of the job's process, `Is Running : 0`).
# (PBS Pro's report opens on the job's id alone: `is_job_report`)
# (or the launcher's account of the application it ran, as that exits: Cray ALPS's
# `aprun`, `Application 83028875 resources: utime ~77411s, stime ~8618s, Rss ~1689484`)
_EPILOG = lazy_re.compile(r"\b(?:[Ee]pilog(?:ue)?|EPILOG(?:UE)?)\b|"
                          r"^Application \d+ resources: utime ~?\d|"
                          r"^\s*[=#*-]{3,}\s*(?:GPU|JOB)\s+(?:USAGE\s+|RESOURCE\s+)?REPORT\s*[=#*-]{3,}\s*$")


def _next_phase(text: str) -> str | None:
    """The template of a line that announces a phase of work on the trained model
    (`_PHASE_WORD`, in a few words after any logger's head), else None."""
    low = text.lower()
    if "predict" not in low and "infer" not in low and "test" not in low \
            and "evaluat" not in low and "process" not in low:
        return None
    said = message(text).strip()
    if len(said.split()) > _PHASE_WORDS_MAX or _PHASE_WORD.search(said) is None:
        return None
    return template(said)


def says_saved(text: str) -> bool:
    """Whether the line's head says the model was saved (its figures are the saved
    model's: no training record)."""
    return ("av" in text or "AV" in text or "ritten" in text) \
        and _SAVED_HEAD.search(text.strip()) is not None


def _rate(metrics: Mapping[str, float] | None) -> float | None:
    """The record's learning rate (lookups, not a set built: read at every record)."""
    if not metrics:
        return None
    for key in _RATE_KEYS:
        if key in metrics:
            return metrics[key]
    return None


class _Cadence:
    """A counter's print cadence: its first value, its latest, the interval it last moved
    by, and the even interval it kept before that move (0: none)."""

    __slots__ = ("before", "even", "first", "interval", "last")

    def __init__(self) -> None:
        self.first: float | None = None
        self.last: float | None = None
        self.interval = 0.0
        self.even = True
        self.before = 0.0

    def note(self, value: float) -> None:
        if self.first is None:
            self.first = value
        if self.last is not None and value > self.last:
            moved = value - self.last
            self.before = self.interval if self.even else 0.0
            self.even = self.even and (not self.interval or moved == self.interval)
            self.interval = moved
        elif self.last is not None and value < self.last:
            self.even = False
        self.last = value


class LoopOver:
    """Follows the training records and what comes after the last of them; `judge`
    says, once per read, whether the loop is over (see the module's docstring)."""

    def __init__(self) -> None:
        self._records = 0  # training records of the current launch
        self._epoch_cadence = _Cadence()  # the epochs' print cadence (see `_final_print`)
        self._epoch: float | None = None  # the epoch of its last one
        self._epochs = 0  # times its epoch moved on (epoch ends it trained past)
        self._first: float | None = None  # the current launch's first counter
        self._count: float | None = None  # its last counter (a step, else an epoch)
        self._earlier: list[float] = []  # where earlier launches stopped
        self._epoch_now: float | None = None  # the epoch the latest record said
        self._interval = 0.0  # the smallest recent move of the counter (its logging interval)
        self._even = True  # the counter moved by the same interval at every record
        self._epoch_each = True  # the epoch moved on by one at every record
        self._last_says_epoch = False  # the last record said its epoch
        self._first_epoch: float | None = None  # the current launch's first epoch
        self._open = False  # the last line read announced work under way
        # The last training records' rates, with their counters.
        self._rates: deque[tuple[float, float]] = deque(maxlen=64)
        self._peak = 0.0
        self._peak_at = 0.0  # the counter the peak was read at
        self._since_peak = 0  # records since it
        self._evals_between: set[frozenset[str]] = set()  # evaluations between records
        self._evals_after: set[frozenset[str]] = set()  # those since the last record
        self._lines_between: set[str] = set()  # templates of such lines between records
        self._lines_after: set[str] = set()  # those since the last record
        self._after: list[str] = []  # evidence read after the last training record
        self._names: set[str] = set()  # the names training records carried
        # Of it, what a loop does once it has done its work (a final evaluation, its
        # model saved, samples drawn): not a scheduler's epilog, not the shell's prompt.
        self._finished: list[str] = []
        self._evaluated_after: str | None = None  # of it, an evaluation's
        self._shell: str | None = None  # the shell's word after the last record (SHELL_BACK)
        self._exited: str | None = None  # the script's process said it exited, after them
        self._prompt = LearnedPrompt()  # the prompt the log opened with, if any
        self._said: str | None = None  # the detail judged, once per stretch after the records
        # Whether the loop may be over as the log stands (trained enough, and no new launch
        # began since): a plain attribute, read at every line.
        self.after_training = False

    def trained(self, counter: float | None, metrics: Mapping[str, float] | None,
                epoch: float | None = None) -> None:
        """Training moved on to `counter` (a step, else an epoch) with a record of
        `metrics`, in `epoch`. A counter back at the launch's start (after it went on)
        is a new launch appended to the same log."""
        if counter is not None and self._first is not None and self._count is not None \
                and counter <= self._first < self._count:
            next_epoch = epoch is not None and self._epoch_now is not None \
                and epoch > self._epoch_now
            if self._records >= _MIN_LAUNCH and self._first <= _SEEN_FROM_START * self._count \
                    and not next_epoch:
                # (not a counter of each epoch's batches, back at 0 as the epoch moves on:
                # MMCV's JSON log, `"epoch": 9, "iter": 16040` then `"epoch": 10, "iter":
                # 20`, stops at the same count every epoch)
                # (only a launch seen from its start: a log that opens on the tail of an
                # earlier run, `Episode 9730` to `9990`, shows where that run stopped, not
                # that it ran its whole count)
                self._earlier.append(self._count)
            self._records = 0
            self._epochs = 0
            self._first = None
            self._first_epoch = None
            self._interval = 0.0
            self._even = self._epoch_each = True
            self._epoch_cadence = _Cadence()
            self._rates.clear()
            self._peak, self._peak_at, self._since_peak = 0.0, 0.0, 0
        if epoch is not None:
            self._epoch_now = epoch
            self._epoch_cadence.note(epoch)
        if self._first is None:
            self._first = counter
        if counter is not None:
            if self._count is not None and counter > self._count:
                moved = counter - self._count
                self._even = self._even and (not self._interval or moved == self._interval)
                self._interval = moved
            elif self._count is not None:
                self._even = False
            self._count = counter
        self._records += 1
        if metrics and len(self._names) < _NAMES_KEPT:
            self._names.update(metrics)
        if self._first_epoch is None:
            self._first_epoch = epoch
        # (a record that says no epoch leaves the count alone: the start-up's figures
        # before the first epoch, PCNO's `Start training, lr_ratio = 10` above `Epoch :  0`;
        # a line of its own beside each epoch's, HydraGNN's `Tasks RMSE: [0.158]` — but
        # the last record must say its epoch, see `_round_count`)
        self._epoch_each = self._epoch_each and (
            epoch is None or self._epoch is None or epoch == self._epoch + 1)
        self._last_says_epoch = epoch is not None
        if epoch is not None and (self._epoch is None or int(epoch) != int(self._epoch)):
            # (the whole epoch: Hugging Face's `'epoch': 0.37` moves at every record)
            self._epochs += self._epoch is not None
            self._epoch = epoch
        rate = _rate(metrics)
        if rate is not None:
            at = counter if counter is not None else float(self._records)
            self._rates.append((at, rate))
            if rate >= self._peak:
                self._peak, self._peak_at, self._since_peak = rate, at, 0
            else:
                self._since_peak += 1
        # The evaluations read since the last record ran between records: periodic.
        if self._evals_after:
            self._evals_between |= self._evals_after
            self._evals_after.clear()
        if self._lines_after:
            self._lines_between |= self._lines_after
            self._lines_after.clear()
        if self._after:
            self._after.clear()
            self._finished.clear()
        self._evaluated_after = None
        self._shell = None
        self._exited = None
        self._said = None
        self._open = False
        self.after_training = self._records >= _MIN_RECORDS

    def launched(self) -> None:
        """The run's start-up printed again after its last training record: a new
        launch, not yet trained; nothing read of the earlier one's end is this one's."""
        self.after_training = False
        self._after.clear()
        self._finished.clear()
        self._evaluated_after = None
        self._shell = None
        self._exited = None

    def after(self, text: str, record: Record | None) -> None:
        """A line that did not move training on (outside a traceback)."""
        if not self._records:
            self._prompt.opening(text)
            return
        # What the run prints between its first records is remembered too (a save after
        # each of an excerpt's first epochs is periodic), though it is evidence only
        # once the loop has a shape (`after_training`).
        evidence: list[str] = self._after if self.after_training else []
        finished: list[str] = self._finished if self.after_training else []
        metrics = record.metrics if record is not None else None
        if record is not None and any(e.kind is EventKind.LOSS_SCALE for e in record.events):
            # (a mixed-precision scaler's figure, `Gradient overflow.  Skipping step, loss
            # scaler 0 reducing loss scale to 256.0` in the epoch apex skips steps: no
            # evaluation, whatever names it carries)
            metrics = None
        if metrics and ((not trains(metrics) and any(EVALISH.search(k) for k in metrics))
                        or (self._names and self._names.isdisjoint(metrics))):
            # (an evaluation by its names, or figures under names no training record
            # carried: Keras' fit over, then `The MSE is 326.19, the RMSE is 18.06.`)
            # Evidence only where the run went past epoch ends without it: an excerpt of
            # one epoch (or a log that prints no epoch) cannot tell a final evaluation
            # from the first of its periodic ones. Each one is remembered all the same
            # (an excerpt's first epochs show which evaluations are periodic).
            shape = frozenset(metrics)
            if shape not in self._evals_between and shape not in self._evals_after:
                self._evals_after.add(shape)
                if self._epochs >= _MIN_EPOCH_ENDS:
                    why = f"an evaluation the run did not print between its training " \
                          f"records ({text.strip()[:160]})"
                    evidence.append(why)
                    finished.append(why)
                    if self.after_training and self._evaluated_after is None:
                        self._evaluated_after = why
        elif is_prompt(text) or self._prompt.again(text):
            # The shell took the terminal back: the run's process is over (`shell_prompts`).
            self._shell_back(evidence, f"the shell's prompt after the last training record "
                                       f"({text.strip()[:160]})")
        elif "wandb:" in text and _TRACKER_EXIT.search(text) is not None:
            # (the script's own end, not the shell's: at a plan's count, a finished loop)
            # Evidence only at a round count a plan names (see `judge`): alone it says
            # the process is over, which the run's own lines say better when they can.
            if self.after_training and self._exited is None:
                self._exited = f"W&B's closing lines as the script's process exited, after " \
                               f"the last training record ({text.strip()[:160]})"
        elif is_time_report(text):
            # The shell reported the time the command took: it is over (`shell_prompts`).
            self._shell_back(evidence, f"the shell's report of the time the command took, "
                                       f"after the last training record ({text.strip()[:160]})")
        elif is_shutdown_notice(text):
            # The interpreter is shutting the process down (`shell_prompts`).
            self._shell_back(evidence, f"the interpreter's notice as the process shut down, "
                                       f"after the last training record ({text.strip()[:160]})")
        elif metrics and not says_saved(text):
            return
        # (substring tests first: most lines have none of these words)
        elif (("pilog" in text or "PILOG" in text or "REPORT" in text
               or text.startswith("Application "))
              and _EPILOG.search(text) is not None) or is_job_report(text):
            evidence.append(f"the job's epilog ({text.strip()[:160]})")
        elif ("rain" in text or "RAIN" in text) and _TRAINING_TIMED.search(text) is not None:
            # How long training took, said once after it (HydraGNN's `Local timer:
            # train_validate_test : 10939.83`, a `Total training time: 3:02:11`): the
            # training function returned. (Not a line the run printed between its
            # records: an epoch's own `train time 35s`.)
            if self._first_after(template(text.strip())):
                why = f"the time training took, which the run did not print between its " \
                      f"training records ({text.strip()[:160]})"
                evidence.append(why)
                finished.append(why)
        elif (phase := _next_phase(text)) is not None:
            # The script went on to its next phase (predicting, testing, evaluating),
            # which it never did between its records.
            if self._first_after(phase):
                # (evidence of the end of a loop seen at its plan's end only: alone, the
                # first of a periodic evaluation's `Evaluating...` looks the same)
                finished.append(f"the script's next phase, which the run did not begin "
                                f"between its training records ({text.strip()[:160]})")
        elif ("av" in text or "AV" in text or "enerat" in text or "ENERAT" in text) \
                and (doing := _AFTER_LOOP.search(text)) is not None \
                and self._first_after(template(text.strip()), self._long_stretch(text)):
            # Samples generated, a model being saved: what a loop does once it is over,
            # unless the run did it between its records too (a sample every epoch).
            what = "samples generated" if doing.group(1) else "a model being saved"
            why = f"{what}, which the run did not do between its training records " \
                  f"({text.strip()[:160]})"
            evidence.append(why)
            finished.append(why)

    def _first_after(self, line_shape: str, long_stretch: bool = False) -> bool:
        """Whether a line of this shape is new after the loop (the run never printed it
        between its records, nor after them before), in a run seen past enough epoch ends
        (or a `long_stretch` of records) for that to mean anything; the shape is
        remembered either way."""
        if line_shape in self._lines_between or line_shape in self._lines_after:
            return False
        self._lines_after.add(line_shape)
        return self._epochs >= _MIN_EPOCH_ENDS or long_stretch

    def _long_stretch(self, text: str) -> bool:
        """Whether a save names no step and comes after `_LONG_STRETCH` training records
        with no save among them, in a run that counts no epochs (SEASS's `Model saved in
        dir ./models` after 3,750 records of its one epoch): a cadence that long is no
        cadence; a periodic save names the step it was taken at."""
        return self._records >= _LONG_STRETCH \
            and not any(ch.isdecimal() for ch in message(text))

    def _shell_back(self, evidence: list[str], why: str) -> None:
        evidence.append(why)
        if self.after_training and self._shell is None:
            self._shell = why

    @property
    def only_over(self) -> bool:
        """Whether the loop was judged over (LOOP_OVER, LOOP_LEFT), and not yet done."""
        return self._said in (LOOP_OVER, LOOP_LEFT)

    def judge(self, read: Sequence[str] = (), planned: bool = False,
              last_repetition: str | None = None) -> LogEvent | None:
        """At the end of a read (its lines, `read`): a COMPLETED event (detail LOOP_OVER;
        SHELL_BACK when the shell took the terminal back) the first time the log, as it
        stands, shows the loop over; `planned`: the run
        announced its plan (then a round count is no evidence: the plan decides);
        `last_repetition`: the header of the last repetition the run planned, once read."""
        for line in reversed(read):
            if line.strip():
                self._open = under_way(line)
                break
        if self._said in (SHELL_BACK, LOOP_DONE) or not self.after_training:
            return None
        if self._shell is not None:
            self._said = SHELL_BACK
            return LogEvent(EventKind.COMPLETED, self._shell, SHELL_BACK)
        # Where the loop stood: at its plan's end (its schedule's, a count a plan names),
        # or where an earlier launch stopped too (which may have been stopped there).
        schedule_end = self._schedule_end()
        round_count = None if planned else self._round_count() or self._final_print()
        if schedule_end is not None and round_count is None and not planned:
            # (beside the schedule at its end, a recipe's count too: MAE's 400 epochs)
            recipe_count = self._round_count(recipes=True)
            if recipe_count is not None and self._said != LOOP_DONE:
                self._said = LOOP_DONE
                return LogEvent(EventKind.COMPLETED, f"{schedule_end}, and {recipe_count}",
                                LOOP_DONE)
        at_end = schedule_end or round_count
        stood = at_end or self._launch_count()
        after = self._after[0] if self._after else None
        if at_end is not None and self._finished:
            # (also after LOOP_OVER was said of one of them: a last line read late, its
            # newline still to come when the read before it was judged)
            self._said = LOOP_DONE
            return LogEvent(EventKind.COMPLETED, f"{at_end}; then {self._finished[0]}",
                            LOOP_DONE)
        if at_end is None and not planned and self._exited is not None \
                and self._count is not None and self._count >= _ROUND_EXIT_MIN \
                and self._count == int(self._count) and round_units(int(self._count)) \
                and self._said != LOOP_DONE:
            # The script's process exited (W&B's closing lines) with its counter on a round
            # count a plan names (SB3's `total_timesteps | 1000000`, a tail of the log that
            # never showed the run's start): the loop ran to its plan.
            self._said = LOOP_DONE
            return LogEvent(EventKind.COMPLETED, f"the loop stopped at {self._count:g}, a count "
                            f"a plan names; then {self._exited}", LOOP_DONE)
        if round_count is not None and self._exited is not None and self._said != LOOP_DONE:
            # ... or with its epochs at such a count (`Finished Epoch 99` of a loop from 0,
            # then W&B's `Program ended successfully.`): the loop ran to its plan.
            self._said = LOOP_DONE
            return LogEvent(EventKind.COMPLETED, f"{round_count}; then {self._exited}",
                            LOOP_DONE)
        if schedule_end is not None and round_count is not None and self._said != LOOP_DONE:
            # Two signs that do not depend on each other: the schedule ran out exactly where
            # the loop completed a count a plan names (a metrics file that never prints an
            # ending, MAE's `log.txt`: epoch 99 of an unprinted 100, its cosine at its
            # floor). A live run has neither; a run killed by chance at that very record
            # is rarer than the finished runs such files record.
            self._said = LOOP_DONE
            return LogEvent(EventKind.COMPLETED, f"{schedule_end}, and {round_count}",
                            LOOP_DONE)
        if self._exited is not None and self._said != LOOP_DONE:
            # The process exited short of any count a plan names, with no error of its
            # own before W&B's footer: the run is over, its outcome the lifecycle's to
            # weigh (its plan reached or not), as when the shell takes the terminal back.
            self._said = SHELL_BACK
            return LogEvent(EventKind.COMPLETED, self._exited, SHELL_BACK)
        why = stood or after
        if self._said is not None or why is None:
            return None
        if stood is None and self._evaluated_after is not None \
                and last_repetition is not None:
            # The last of the repetitions the run planned (`Running fold 2/2`), then the
            # evaluation each earlier one ended with: the plan's last piece is done.
            self._said = LOOP_DONE
            return LogEvent(EventKind.COMPLETED, f"the last of the run's planned repetitions "
                            f"({last_repetition}); then {self._evaluated_after}",
                            LOOP_DONE)
        if stood is None and self._evaluated_after is not None:
            # (a save or samples alone are no such evidence: a run saves its best model
            # whenever it improves, a first time at any epoch)
            self._said = LOOP_LEFT
            return LogEvent(EventKind.COMPLETED, self._evaluated_after, LOOP_LEFT)
        self._said = LOOP_OVER
        return LogEvent(EventKind.COMPLETED, why, LOOP_OVER)

    def schedule_over(self) -> bool:
        """Whether the learning rate's schedule reached its end at the last record."""
        return self.after_training and self._schedule_end() is not None

    def _schedule_end(self) -> str | None:
        rates = [rate for _, rate in self._rates]
        if len(rates) < _FLOOR_POINTS or self._peak <= 0:
            return None
        last = rates[-1]
        if last == 0.0:
            # Down to exactly 0 at the last record, from a decay: not a rate held at 0
            # (that is a schedule stuck, see the lr-schedule rule).
            tail = rates[-4:]
            if rates[-2] > 0 and all(a >= b for a, b in pairwise(tail)):
                return "the learning rate reached 0 at the last training record (its " \
                       "schedule's end)"
            return None
        if last <= _FLOOR_SHARE * self._peak and self._since_peak >= _MIN_DECAY_RECORDS \
                and at_its_end(self._rates):
            # An easing decay (a cosine's tail) whose drops reach zero by the next print or
            # the one after: the schedule's last step, whatever floor it decays to.
            return f"the learning rate's decay eased onto its floor ({last:.4g}, " \
                   f"{last / self._peak:.0%} of its peak) at the last training record (its " \
                   f"schedule's end)"
        held = 0
        for value in reversed(rates):
            if value != last:
                break
            held += 1
        if held == len(rates) or held < _FLOOR_POINTS or last > _FLOOR_SHARE * self._peak:
            return None
        before = rates[-held - 1]
        end, floor_from = self._rates[-1][0], self._rates[-held][0]
        if not last < before <= last * (1 + _SMOOTH) or self._since_peak < _MIN_DECAY_RECORDS \
                or end - floor_from > _FLOOR_SPAN * (end - self._peak_at):
            return None
        return f"the learning rate decayed onto its floor ({last:g}, {last / self._peak:.0%} " \
               f"of its peak) at the last training records (its schedule's end)"

    def _round_count(self, recipes: bool = False) -> str | None:
        """The loop stopped at a count of whole units a plan names (see `round_count`):
        epochs done, where the run counts epochs, else a counter that moved by one at each
        record; and the log's last line is no work under way."""
        count, epoch = self._count, self._epoch
        if count is None or self._records < MIN_RECORDS or self._open:
            return None
        if epoch is not None:
            # Epochs only where each record is one (a step counter's epoch may stand
            # anywhere in an epoch): the counter is the epoch, or the epoch moved on by one
            # at every record (Chainer's LogReport: `"epoch": 500, "iteration": 860`).
            each = count == epoch or (self._epoch_each and self._last_says_epoch)
            done = completed(epoch, self._first_epoch) if each else None
            count, first = epoch, self._first_epoch
        elif self._interval == 1:
            # (a counter past a thousand that moves by one is a step's, not an epoch's)
            done = completed(count, self._first)
            done = done if done is not None and done <= _MAX_UNITS else None
            first = self._first
        else:
            done, first = self._printed_before(count), None
        if done is None:
            return None
        if not round_units(done, recipes):
            # A count from 0 that stops on a round number itself ran `range(epochs + 1)`,
            # a plan's inclusive end (`Epoch:0` … `Epoch:100`, sealed-130's DivideMix).
            if first != 0 or not round_units(int(count), recipes):
                return None
            return f"the loop stopped at {count:g} (counting from 0): a count a plan " \
                   f"names, and nothing trained after it"
        return f"the loop stopped at {count:g}, {done} done: a count a plan names, and " \
               f"nothing trained after it"

    def _final_print(self) -> str | None:
        """The loop's last record printed off its cadence, one short of the next print
        (`Epoch 0`, `10`, … `290`, then `Epoch 299`: `if epoch % 10 == 0 or epoch ==
        epochs - 1`, from 0, evenly): a live loop prints only on its cadence, and this
        print is the one a loop makes of its last index. None otherwise."""
        epochs = self._epoch_cadence
        cadence, count = epochs.before, epochs.last
        if cadence <= 1 or epochs.first != 0 or count is None or not self._last_says_epoch \
                or self._records < MIN_RECORDS or self._open or count != int(count) \
                or cadence != int(cadence) or (count + 1) % cadence != 0 \
                or epochs.interval != cadence - 1:
            return None
        return f"the loop printed its last count ({count:g}) off its cadence of " \
               f"{cadence:g}, as a loop prints its last index: {int(count) + 1} done"

    def _printed_before(self, count: float) -> int | None:
        """The units done where a loop that prints at the start of each interval (`0,
        50, …, 19950`: `if i % 50 == 0`, from 0, evenly) stopped at `count`: its next
        print would have been at `count` + the interval, the count the loop ran to (AWR's
        table of sealed-12, `Iteration` 0 to 19950 of an implied 20000). A loop that prints
        at the end of each interval (`50, 100, …`) prints its last count itself, and a
        step printed there is as often a live run's (see `round_count`): no evidence."""
        if self._first != 0 or not self._even or self._interval <= 1 \
                or count != int(count) or self._interval != int(self._interval):
            return None
        done = int(count + self._interval)
        # Prints enough for a round count to say something: a loop printed every 500 steps
        # to 10000 stops one print before 1000, 2000, 2500, 5000 or 10000 once in four
        # prints, a live run as often as a finished one; AWR's, once in forty.
        return done if done >= _MIN_PRINTS * self._interval else None

    def _launch_count(self) -> str | None:
        count = self._count
        if not self._earlier or count is None or count != max(self._earlier):
            return None
        if len(self._earlier) >= _ROUNDS and len(set(self._earlier[-_ROUNDS:])) == 1:
            # the counter went back after the same count again and again: an inner loop
            # of an outer one (SeqGAN's discriminator `Epoch 0`, `1`, `2` in each of its
            # adversarial rounds), not launches, and the latest round is no last one
            return None
        return f"an earlier launch in this log stopped at {count:g} too, and the latest " \
               f"reached it"
