"""LogParser: the stateful part of parsing.

Lines alone are ambiguous: a Hugging Face loss dict has no step (the progress bar
before it does), a Keras bar counts batches within the epoch its header announced, an
mmengine line counts batches within its epoch, and a traceback's meaning arrives on its
last line. LogParser keeps exactly that context and turns each line into zero or one
Record.

How a line is read (`_feed`), in order (a rich log record wrapped over several lines is
first joined back into one, `rich_wrap`):
1. its rank label is split off, and a progress bar read (`bars`, `bar_steps`);
2. a line without a bar may be a header (`headers`, a ClaimingReader): then it is theirs;
3. the formats (`formats`, `frameworks`, `shapes`) read what follows the bar, and the
   event signatures (`events`, `failures`, `oom_skips`) and the run's plan (`plan`) read
   the lines that may carry them;
4. `_merge` builds the record in terms of the whole run (the step, the planned total);
5. the RecordReaders (`readers`) read the line after it, in order — the evidence of an
   end (`endings`), the step a checkpoint's name gives (`saved_steps`), a stray `nan`
   (`stray_values`), a NaN said in words (`nonfinite_words`), the run's facts (`facts`)
   — each amending the record.
A reader keeps its own state; LogParser keeps only what they share.
"""

from __future__ import annotations

import math
import os
import traceback
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from babysit import lazy_re
from babysit.metric_names import GOAL_FIGURE, is_eval_metric
from babysit.model import EventKind, LogEvent, Reading, Record
from babysit.parsing.announced_evals import AnnouncedEvals
from babysit.parsing.banner_counters import BannerCounters
from babysit.parsing.bar_steps import BarSteps
from babysit.parsing.bars import parse_bar
from babysit.parsing.best_round import BestRoundEcho
from babysit.parsing.class_accuracies import ClassAccuracies
from babysit.parsing.closing import closes, names_best_epoch, names_best_value, sums_up_folds
from babysit.parsing.closing_measures import ClosingMeasures
from babysit.parsing.correct_counts import marks_epoch
from babysit.parsing.counterless_results import CounterlessResults
from babysit.parsing.empty_epochs import EmptyEpochs
from babysit.parsing.enclosing_bars import EnclosingBars
from babysit.parsing.endings import EndingReader
from babysit.parsing.epoch_cadence import EpochCadence
from babysit.parsing.epoch_counter import EpochCounter
from babysit.parsing.epoch_local_steps import EpochLocalSteps
from babysit.parsing.evaluation import training_names, trains
from babysit.parsing.events import EARLY_STOP, SUMMARY, find_events
from babysit.parsing.facts import FactsReader, may_configure_lr
from babysit.parsing.failures import FailureReader
from babysit.parsing.foreign_words import in_english
from babysit.parsing.formats import EVALISH, Parsed, parse_key_values
from babysit.parsing.frameworks import lightning_global_step
from babysit.parsing.headers import HeaderReader
from babysit.parsing.idle_bar import IdleBar
from babysit.parsing.julia_log_blocks import JuliaLogBlocks
from babysit.parsing.kaldi import KaldiWrap
from babysit.parsing.launches import LaunchReader
from babysit.parsing.log_prefix import message, without_bracketed_heads
from babysit.parsing.loop_over import says_saved
from babysit.parsing.metric_lines import MetricLineReader
from babysit.parsing.named_counters import NamedCounters
from babysit.parsing.nonfinite_words import NonFiniteWords
from babysit.parsing.oom_skips import OomSkips
from babysit.parsing.plan import RunPlan, saved_step
from babysit.parsing.readers import Line, RecordReader, TrainingListener
from babysit.parsing.redraws import kept_lines
from babysit.parsing.rich_wrap import RichWrap
from babysit.parsing.rounded_zeros import unresolved_lr
from babysit.parsing.running_totals import RunningTotals
from babysit.parsing.save_failures import SaveFailures
from babysit.parsing.save_notices import FinalSaveNotice
from babysit.parsing.saved_steps import SavedSteps
from babysit.parsing.search_trials import SearchTrials
from babysit.parsing.series_labels import SeriesLabels
from babysit.parsing.settings_block import SettingsBlock
from babysit.parsing.shapes import ShapeReader, template
from babysit.parsing.solver_ends import SolverEnds
from babysit.parsing.stage_milestones import StageMilestones
from babysit.parsing.start_loops import StartLoops
from babysit.parsing.status_column import planned_from_share, split_status_box
from babysit.parsing.stray_values import StrayNonFinite
from babysit.parsing.task_labels import TaskLabels
from babysit.parsing.text import clean, split_rank, to_number
from babysit.parsing.thread_failures import ThreadFailures
from babysit.parsing.timestamps import line_time
from babysit.parsing.tracker_history import TrackerHistory
from babysit.parsing.trailing_duration import TrailingDuration
from babysit.parsing.worker_pools import WorkerPools
from babysit.parsing.wrapped_lines import unwrap_all

# A line that opens on a warning's word (`Warning: step duration: 0.088 s at step 299 …`,
# `WARNING: …`), behind any logger's head.
_WARNING_LINE = lazy_re.compile(r"^\W{0,3}(?:[Ww]arning|WARNING)\s*[:!-]")

# Set to "1" (the test suite does), a line babysit's reading fails on raises instead of
# being counted and read past: a bug must fail its test, not hide in a count.
STRICT_READING_ENV = "BABYSIT_STRICT_READING"
_MAY_CARRY_EVENTS = frozenset({"key-value", "jsonl", ""})
# An epoch of the plan named in a bar's description (`Epoch 10/10 - Training`).
_EPOCH_OF_PLAN = lazy_re.compile(r"\b[Ee]poch\W{0,3}(\d+)\s*/\s*(\d+)\b")
_SAVE_BEGINS = lazy_re.compile(r"\b[Ss]aving\b")
_TIME_OF_DAY = lazy_re.compile(r"\d\d:\d\d:\d\d")
# An epoch's summary loss this many times the largest of the latest batch losses is their
# sum, not their mean (`_epoch_totals`).
_EPOCH_SUM_RATIO = 10.0
_RECENT_BATCHES = 50
# A heading over the run's best results, its figures indented under it (R2Gen's `Best
# results (w.r.t BLEU_4) in validation set:` then `\tepoch : 26`, `\ttrain_loss : 0.374`
# after its early stop): a restatement of an earlier epoch, no record.
_BEST_HEADING = lazy_re.compile(r"^\W{0,4}(?:[Bb]est|BEST)\b[^:=]{0,80}:\s*$")
# The best result restated on one line with its figures (a slot-filling BLSTM's `BEST RESULT:
# \tEpoch : 21\tbest valid (Loss: … F1 : 98.10 …)` after its last epoch): the run's closing
# word on its best, not a record of epoch 21 trained again.
_BEST_RESULT = lazy_re.compile(r"^\W{0,4}(?:[Bb]est|BEST)\s+(?:[Rr]esults?|RESULTS?)\s*:\s*\S")
# A best's block is a handful of figures; past this many indented lines the log indents its
# training lines, and they are read again.
_BEST_BLOCK_LINES = 40
# A banner that opens an evaluation's report: `=== Final Val Metrics ===`, `----- Test
# results -----`, `*** Validation metrics ***` (words between rules of `=`, `-`, `*`, `#`).
_REPORT_BANNER = lazy_re.compile(
    r"^\s*[=*#-]{3,}\s*(?:[Ff]inal |FINAL |[Bb]est |BEST )?(?:[Vv]al(?:id(?:ation)?)?|VAL(?:ID)?|"
    r"[Tt]est|TEST|[Ee]val(?:uation)?|EVAL)\b[\w ]{0,30}?[=*#-]{3,}\s*$")
# A report's summary line, by its label (`  Mean: P=52.88% …`, `Overall: acc 0.91`).
_SUMMARY_LABEL = lazy_re.compile(r"\s*(?:[Mm]ean|MEAN|[Aa]v(?:era)?ge?|AVG|[Oo]verall|OVERALL|"
                                 r"[Tt]otal|TOTAL|[Aa]ll|ALL|[Mm]acro|[Mm]icro|[Ww]eighted)\b")
_BANNER_RULES = frozenset(" \t=*#-")
_EVAL_BANNER = lazy_re.compile(r"\*+ Running [Ee]valuation \*+|Evaluating\b|Validation DataLoader")
# A training record's names that measure no result of it: its pace, its time, its rate.
_PACE = lazy_re.compile(r"speed|time|throughput|samples|per_s(?:ec)?\b|/s$|\beta\b|^lr\b|"
                        r"learning_rate")


def _trains_visibly(metrics: Mapping[str, float]) -> bool:
    """Whether a record gives a figure of the training's own, a loss or a training
    accuracy, beyond its pace (PLIF's `speed per epoch 612.4` between its evaluations is
    none)."""
    return any(_PACE.search(k) is None for k in training_names(metrics))


# A line that says, alone, that an evaluation pass begins (paddle.hapi's `Eval begin...`,
# `Start validation`, `Evaluating...`): the bars drawn under it count that pass's batches
# and their loss is the evaluation's, in the shape the training's bars have.
_EVAL_BEGINS = lazy_re.compile(
    r"^\s*(?:(?:[Ee]val(?:uation)?|EVAL|[Vv]alid(?:ation)?|VALID(?:ATION)?|[Tt]est(?:ing)?|TEST)"
    r"\s+(?:[Bb]egins?|[Ss]tarts?|[Ss]tarted)|"
    r"(?:[Ss]tart(?:ing)?|[Bb]egin(?:ning)?|[Rr]unning)\s+(?:the\s+)?(?:[Ee]val(?:uation)?|"
    r"[Vv]alid(?:ation)?|[Tt]est(?:ing)?)|[Ee]valuating|[Vv]alidating)\b[\s.:!…]*$")
_EVAL_BEGINS_FIRST = frozenset("EeVvTtSsBbRr")  # the letters such a line can begin with


def _begins_evaluation(line: str) -> bool:
    """Whether a line says alone that an evaluation pass begins (`_EVAL_BEGINS`); a test
    of its first letter first, as most lines of a log are none (every line asks)."""
    return line.lstrip()[:1] in _EVAL_BEGINS_FIRST and _EVAL_BEGINS.match(line) is not None


def _may_carry_failure(text: str) -> bool:
    """Whether a line in a training format may carry a failure glued after it (or be the
    shell's report of a kill whose command line reads as a configuration: `line 6: 13536
    Killed  melody_rnn_train --hparams="{'batch_size':64}"`). Substring
    tests, not a pattern of alternatives: they run at every metric line, ~4× faster."""
    return "Error" in text or "error" in text or "Exception" in text or "signal" in text \
        or "Traceback (" in text or "Killed" in text


# A comment: what it says about losses or errors is not the run's.
_COMMENT = ("# ", "## ", "// ")
_FIRST_NAMES = frozenset({"loss", "train_loss", "lr", "learning_rate", "grad_norm"})
# A line that names an evaluation (`[Eval][Epoch 4][Avg]CELoss: 3.20`).
_EVAL_LINE = lazy_re.compile(r"\b(?:[Ee]val(?:uation)?|EVAL|[Vv]al(?:id(?:ation)?)?|VAL|"
                             r"[Tt]est|TEST)\b")
# A step's own figures: a Trainer dict that has them is a step's record even when it
# carries the running `train_runtime` too (TRL 0.23 with `include_num_input_tokens_seen`
# logs `'train_runtime': 256.2, 'train_tokens_per_second': 0.0` in every step's dict);
# the end-of-training summary has `train_loss`, never these.
_STEP_DICT_KEYS = ("loss", "learning_rate", "grad_norm", "train/loss", "train/learning_rate")
# A record of the whole run, every figure under one key that names it its summary (a
# JSON-lines metrics file's last object, `{"_summary": {"final_test_acc": 0.0, …,
# "stopped_step": 30000}}`, read as `_summary/final_test_acc`): the run's end, no step.
_RUN_SUMMARY_KEY = lazy_re.compile(r"(?i)^_{0,2}(?:run_)?(?:summary|final(?:_(?:results?|metrics|"
                                   r"summary|stats|scores))?)/")
# What only a training step prints: its learning rate, its gradients (an evaluation pass
# prints a loss too).
_TRAINING_ONLY = lazy_re.compile(r"(?:^|[/_])lr(?:$|[/_])|learning_rate|grad")


def _combined(bar: Parsed | None, text: Parsed | None) -> Parsed | None:
    """What a bar and the text after it say together; the text wins where both speak."""
    if bar is None or text is None:
        return text if bar is None else bar
    return Parsed(bar.fmt or text.fmt,
                  text.step if text.step is not None else bar.step,
                  text.target if text.target is not None else bar.target,
                  text.epoch if text.epoch is not None else bar.epoch,
                  text.total_epochs if text.total_epochs is not None else bar.total_epochs,
                  {**bar.metrics, **text.metrics},
                  text.per_epoch if text.per_epoch is not None else bar.per_epoch)


def _with_bar(bar: Record, after: Record) -> Record:
    """The record of the line after a bar, with what the bar said."""
    return replace(after, metrics={**bar.metrics, **after.metrics},
                   target_steps=after.target_steps or bar.target_steps)


def _same_moment(bar: Record, after: Record) -> bool:
    """Whether a bar-only record and the record of the line after it describe the same
    step: the bar said nothing but where the run is and how fast it goes."""
    return (not bar.events and after.step == bar.step and after.rank == bar.rank
            and after.epoch is not None and bar.epoch is None)


# Times in a row the start-up's first line comes back within `_PERIODIC_GAP` records of
# its last return before it is taken for periodic output rather than relaunches.
_PERIODIC_MARK = 3
_PERIODIC_GAP = 2

class LogParser:
    """Feed it lines in order; it returns what each line said."""

    def __init__(self, count_records: bool = True) -> None:
        # Lines parsed alone (the history scan) cannot count the records before them.
        self._count_records = count_records

        # --- the context the readers share ---------------------------------------------
        self.step: int | None = None
        self.target: int | None = None
        self.plan = RunPlan()  # what header lines said: a total, epochs, the schedule
        self._per_epoch_fmt = ""  # the format whose counter gave the batches per epoch
        # The latest losses of each name the batch-by-batch records carried (`_epoch_totals`).
        self._batch_losses: dict[str, deque[float]] = {}
        self._goal_reached = False  # the run's own desired error was reached
        # What the run was doing at the last line read (see LogSnapshot.phase).
        self.phase = "setup"
        self._report_block = False  # under a banner of an evaluation's report
        self._best_block = 0  # lines left under a heading of the run's best (`_BEST_HEADING`)
        self._empty_epochs = EmptyEpochs()  # epochs that ran no iteration
        self._class_accuracies = ClassAccuracies()  # a classifier answering one class
        self._cadence = EpochCadence()  # stepped records one an epoch, or many
        self._epochs_recorded = False  # epochs were given to the endings
        # ... by evaluations alone, no training record read yet (see `_merge`), and the
        # epoch of the first such evaluation (it may come before any training)
        self._epochs_by_evaluations = False
        self._training_figures = False  # a record gave a figure of the training's own
        self._first_evaluated: float | None = None
        # ... and whether the second was the epoch after it (None: not yet seen)
        self._each_epoch_evaluated: bool | None = None
        # An unnamed counter taken for the planned epochs; False once it ran past them.
        self._unnamed_epochs: bool | None = None
        self.formats: Counter[str] = Counter()
        self._withdrawn = False  # a total said before turned out to be an epoch's
        self._overrun: int | None = None  # a bar's total the run trained past
        # None: not decided; True: steps come from epoch fractions; False: from bars.
        self._steps_from_epochs: bool | None = None
        # A bar drawn only at its start (`0/10`, a notebook's frozen outer bar) while
        # nothing else gave a step: the epochs after it count it.
        self._idle_bar = IdleBar()
        self._comments: dict[str, int] = {}  # templates of lines behind `# `, and their count
        self._counterless = CounterlessResults()  # an epoch's results with no counter
        self._epoch_counter = EpochCounter()  # `epoch 6 - iter 700/1750`: whose counter
        self._train_names: set[str] = set()  # metrics of the counted training records
        self._stepped_names: set[str] = set()  # metrics of the records that moved the step
        self._stepped_epoch: float | None = None  # the epoch of the last that did
        self.step_found = False  # the log prints a step of its own
        self._trained_at_step = False  # a record with a loss had a step
        # The epochs of training records read since the last bar, while the step stood at
        # that bar's end (see `_bar_counted_no_training`).
        self._epochs_after_bar: set[float] = set()
        self._records_counted = 0  # training records, for a log that prints no step
        self._saves_counted = 0  # those of them whose head says the model was saved
        self._best_round = BestRoundEcho()  # boosting's best round, restated at the end
        self._epochs_counted = False  # training records that each name their epoch, no step

        # --- the line being read ---------------------------------------------------------
        self._advanced = False  # it moved training on
        self._trained = False  # some line moved training on
        self._step_restarts = 0  # the training's counter went back (a new fit, a new loop)
        self._enclosing_bars = EnclosingBars()
        # Records since the start-up's first line was last seen again, and how many times
        # in a row it came back after a record or two (see `_first_again`).
        self._since_again: int | None = None
        self._again_streak = 0
        self._took = False  # it was understood, record or not
        # The bar record just before it, for _merge to fold in (set by feed_lines);
        # _bar_folded says it did.
        self._after_bar: Record | None = None
        self._settings = SettingsBlock()
        self._running_totals = RunningTotals()  # `0/190`, `0/200`: epoch and step
        self._start_loops = StartLoops()  # the run started again and again, untrained
        self._banner_counters = BannerCounters()
        self._announced = AnnouncedEvals()  # `Evaluating on val.`, then its figures
        self._epoch_local = EpochLocalSteps()
        self._trials = SearchTrials()
        self._bar_folded = False

        # --- how much of the log was understood (see `reading`) --------------------------
        self.lines_seen = 0
        self.lines_read = 0
        self.lines_failed = 0  # lines the parser itself failed on (see `_failed_on`)
        self.failure = ""  # the first of those failures, named
        self.metric_names: set[str] = set()
        # Lines that said nothing, by their text: the same warning printed at every step is
        # read twice (the second time may show it is a recurring metric line), then skipped.
        self._quiet: dict[str, int] = {}
        self._previous = ""  # the line read last
        # Records of earlier lines the line just read showed to be records (a metric
        # template's first line, see `MetricLineReader.earlier`): they go before its own.
        self.held: list[Record] = []
        # Quiet lines that close a run (`Saved model to …` after each launch): the last one
        # may be the run's end, and the closing block must see it (see `feed`). Only those
        # that close, not all that might (a warning said at every step that happens to
        # hold `end` would be judged again at every record).
        self._quiet_closing: set[str] = set()

        # --- the readers, each with its own state ----------------------------------------
        self._task_labels = TaskLabels()  # srun -l: `3: …`
        self._bars = BarSteps()  # which bar is the training's, and where it stands
        self._shapes = ShapeReader()  # tables, recurring shapes; notes every line
        self._failures = FailureReader()  # tracebacks, read to their last line
        self._final_save = FinalSaveNotice()  # a log that ends on a library's save notice
        self._threads = ThreadFailures()  # exceptions in helper threads
        self._launches = LaunchReader()  # a new launch after a failure
        self._oom_skips = OomSkips()  # caught OOMs, batch after batch
        self._endings = EndingReader()  # evidence of the end in the order of lines
        self._rich_wrap = RichWrap()
        self._julia_blocks = JuliaLogBlocks()
        self._kaldi_wrap = KaldiWrap()
        self._nan_words = NonFiniteWords()  # a NaN said in words
        self._save_failures = SaveFailures()  # a failure while a save was being written
        self._facts = FactsReader()  # what the run said about itself (Record.facts)
        # Header lines, read before the formats (they set the bars' context).
        self._headers = HeaderReader(self._bars, self._endings.final_epoch, self.formats)
        # What the text after any bar says in a metric format.
        self._metric_lines = MetricLineReader(self._shapes, self.plan,
                                              lambda: self._bars.header_epoch)
        # The readers that read a line after its record was built, in this order.
        self._record_readers: tuple[RecordReader, ...] = (
            self._endings, SavedSteps(), StrayNonFinite(self._shapes), self._nan_words,
            self._facts, StageMilestones(), ClosingMeasures(), TrailingDuration(),
            SolverEnds(), WorkerPools(), SeriesLabels(), TrackerHistory(), NamedCounters())
        # The readers whose counts last until training moves on (a new step, or a
        # counted record of a log that prints none).
        self._training_listeners: tuple[TrainingListener, ...] = (
            self._nan_words, self._oom_skips)

    def feed_lines(self, lines: list[str]) -> list[Record]:
        """Parse many lines in order. A run of redraws of the same tqdm bar is parsed
        only at its last redraw: the ones before it say nothing the last does not."""
        records: list[Record] = []
        pending: str | None = None  # a bar's last redraw, waiting for what follows it

        def feed(line: str) -> Record | None:
            record = self.feed(line)
            if self.held:
                records.extend(self.held)
            return record

        kept = 0
        lines = unwrap_all(lines)  # a Kaggle kernel's or Docker's JSON-wrapped lines
        lines, joined = self._rich_wrap.join(lines)  # wrapped records made whole (`rich_wrap`)
        lines, boxed = self._julia_blocks.join(lines)  # `┌ Info:` boxes (`julia_log_blocks`)
        lines, wrapped = self._kaldi_wrap.join(lines)  # Kaldi's objective lines (`kaldi`)
        joined += boxed + wrapped
        self.lines_seen += len(lines) + joined
        self.lines_read += joined
        for index, is_bar in kept_lines(lines):
            kept += 1
            line = lines[index]
            if is_bar:
                if pending is not None:  # a different bar: the last one is done
                    record = feed(pending)
                    if record is not None:
                        records.append(record)
                pending = line
                continue
            if pending is not None:
                bar_record = feed(pending)
                pending = None
                # A loss dict right after the bar that gave it its step is one point, not
                # two (half the work for the rules, same history): _merge folds the bar in
                # as it builds the record.
                self._after_bar, self._bar_folded = bar_record, False
                try:
                    record = feed(line)
                finally:
                    self._after_bar = None
                if bar_record is not None and not self._bar_folded:
                    if record is not None and _same_moment(bar_record, record):
                        record = _with_bar(bar_record, record)  # a record _merge did not build
                    else:
                        records.append(bar_record)
            else:
                record = feed(line)
            if record is not None:
                records.append(record)
        if pending is not None:
            record = feed(pending)
            if record is not None:
                records.append(record)
        # Once a read, not per line: the closing block, the last planned epoch reached;
        # not when the run said it finished in so many words (that line is the evidence).
        endings = self._endings
        # The last planned epoch trained is read even then: a sentence said at an inner
        # counter's `iter: 10/14` is no early end when the outer one stands at `20/20`.
        # So is the loop seen done where it was seen over before (see `loop_over`).
        # (and a loop only seen over still hears the closing block: a log's last line,
        # unterminated, is read at the end in a read of its own, after the loop was judged
        # over — a notebook cell's `XGBClassifier(objective='multi:softprob')`)
        for closing in (endings.last_epoch_over(),
                        endings.loop_over(lines) if endings.loop.only_over else None,
                        endings.closing_judged() if endings.loop.only_over else None) \
                if endings.completed else (
                endings.closing_judged(), endings.plan_reached(), endings.last_epoch_over(),
                endings.loop_over(lines), endings.launches_alike(), endings.test_held(),
                endings.last_stage_over()):
            if closing is not None and not self._trials.trial_ends([closing]):
                continue  # one trial's end in a search (`search_trials`)
            if closing is not None:
                self._endings.noted([closing])
                records.append(Record(step=self.step, target_steps=self.target,
                                      events=(closing,)))
        self.lines_read += len(lines) - kept  # skipped redraws of a bar: understood
        self.lines_seen -= kept  # feed counts the lines it reads itself
        return records

    def _bar_counted_no_training(self, epoch: float, metrics: Mapping[str, float]) -> bool:
        """Whether the step, which stands at the end of the last bar and was never moved
        by a training record, belongs to no training: records of a second epoch came
        since that bar, no bar drawn between (a training bar is drawn for each epoch)."""
        if not self.step_found or self._trained_at_step or self.step is None \
                or self.step != self.target or not metrics or not trains(metrics):
            return False
        self._epochs_after_bar.add(epoch)
        return len(self._epochs_after_bar) >= 2

    def _failed_on(self, error: Exception) -> None:
        """Count a line the parser failed on, and name the first failure by its
        exception and the place in babysit it was raised."""
        self.lines_failed += 1
        if not self.failure:
            frame = traceback.extract_tb(error.__traceback__)[-1:]
            where = f" at {Path(frame[0].filename).name}:{frame[0].lineno}" if frame else ""
            self.failure = f"{type(error).__name__}{where}"

    def _saved_alone(self, line: str) -> bool:
        """Whether the line says the model was saved, its figures after (`saved model mse
        loss: 0.084`), in a run whose training records are other lines: the saved model's
        figures, no more training. (In a run whose every record says so, faceswap's `saved
        model weights loss_A: 0.19`, it is the record.)"""
        others = self._epochs_recorded or self._records_counted > self._saves_counted
        return others and says_saved(line)

    @property
    def lr_schedule(self) -> str | None:
        """The learning-rate scheduler the run's configuration names, if any."""
        return self.plan.lr_schedule

    @property
    def facts(self) -> dict[str, float]:
        """What the run said about itself so far (its size, tokens per step...)."""
        return self._facts.facts

    def reading(self) -> Reading:
        """How much of the log this parser understood so far."""
        names = sorted(self.metric_names, key=lambda k: (k not in _FIRST_NAMES, k))
        return Reading(self.lines_seen, self.lines_read, tuple(names[:32]), self.progress_unit,
                       self.lines_failed, self.failure)

    @property
    def progress_unit(self) -> str:
        """What the run's steps count: its own `step`, the training records babysit
        counted for a log that prints none, the epochs of a log whose records each name
        one and no step, or nothing yet."""
        if self.step_found:
            return "step"
        if self._records_counted:
            return "record"
        return "epoch" if self._epochs_counted else "none"

    def finish(self) -> list[Record]:
        """No more input will come: what is still open (a traceback the log ends in)."""
        boxed = None
        if self._shapes.box_open and self._shapes.box_recurs:
            # a boxed block the log ends in, its bottom border never printed (a paste
            # that stops at the table with `KL | nan`): its rows are the last record
            boxed = self._feed("-" * 40)
        elif self._metric_lines.block_unfinished:
            # a counter's block the log ends in (an issue's paste cut inside rsl_rl's
            # block, before its closing rule): its figures are the last record
            boxed = self._feed("-" * 40)
        events = self._failures.finish() + self._final_save.finish()
        one_class = self._class_accuracies.close()
        if one_class is not None:
            events.append(one_class)
        records = [boxed] if boxed is not None else []
        if events:
            records.append(Record(step=self.step, target_steps=self.target,
                                  events=tuple(events)))
        return records

    def _first_again(self) -> None:
        """The start-up's first line, printed again. Every record or two, it is no
        start-up but part of what the run prints as it trains (a log that opens mid-run
        on SB3's table takes its first row, `| rollout/ |`, for a preamble): not a mark
        any more. A relaunch, resumed from a checkpoint or not, trains for a while
        before the next."""
        since = self._since_again
        self._again_streak = self._again_streak + 1 \
            if since is not None and since <= _PERIODIC_GAP else 0
        self._since_again = 0
        if self._again_streak >= _PERIODIC_MARK:
            self._launches.first_is_periodic()

    def feed(self, raw_line: str) -> Record | None:
        """Parse one line (already split on newlines and carriage returns)."""
        try:
            return self._read_line(raw_line)
        except Exception as error:  # (one line must not end the watch)
            # A line babysit's own reading fails on is a bug of babysit's: the run it
            # watches goes on, so the watch reads past it and says so (`Reading`).
            self.held = []
            self._failed_on(error)
            if os.environ.get(STRICT_READING_ENV) == "1":
                raise  # the test suite's setting: a bug in reading fails the test
            return None

    def _read_line(self, raw_line: str) -> Record | None:
        self._took = False
        self._advanced = False
        self.held = []
        self.lines_seen += 1
        if raw_line == self._previous and _TIME_OF_DAY.search(raw_line) is not None:
            # The same line, to its timestamp, again at once: a logger with its handler
            # added twice (each record printed once per handler, `Epoch: 99, loss_val:
            # 6.94` five times by the fifth seed), one record, not five.
            self.lines_read += 1
            return None
        self._previous = raw_line
        self._final_save.line(raw_line)
        looping = self._start_loops.started(raw_line, self.step)  # a crash loop (`start_loops`)
        launches = self._launches
        launch = self._launch(raw_line) if launches.armed else None
        if launch is not None or (self._endings.loop.after_training
                                  and launches.first_printed_again(raw_line)):
            if launch is None:
                self._first_again()
            self._endings.loop.launched()  # what it saw of the loop's end was the last launch's
            self._epoch_local.launched()
            self._endings.final_epoch.launched()  # and of its last planned epoch
            self._endings.launch_seen()
        if self._failures.loose_exception is not None and raw_line.strip():
            self._failures.loose_exception = None  # something followed it
        quiet = self._quiet.get(raw_line, 0)
        if quiet >= 2 and "ran out of" not in raw_line and not self._metric_lines.in_block:
            # The very same line said nothing twice: a repeated warning (or a start-up
            # line of a third launch); a caught OOM's is counted (parsing.oom_skips).
            if raw_line in self._quiet_closing and not self._failures.in_traceback:
                self._endings.after_record(raw_line)
            else:
                self._endings.quiet_line(raw_line)  # (a sweep's `finish evaluation` again)
            # (a line printed after every epoch's record, the same each time, still shows
            # the run printing on past the last planned epoch's record: `final_epoch`)
            self._endings.final_epoch.printed_on(raw_line)
            self._shapes.follow_arrays(raw_line)
            self._banner_counters.epoch(raw_line)  # a banner's rule, said again
            self._failures.said_again(raw_line)  # (`Exception ignored in: …` each epoch)
            if raw_line.strip():
                self._bars.eval_banner = _begins_evaluation(raw_line)
            self._start_up_again(launches.after(raw_line, None, False,
                                                self._failures.in_traceback))
            events = tuple(e for e in (launch, looping) if e is not None)
            return Record(step=self.step, target_steps=self.target, events=events) \
                if events else None
        one_class = self._class_accuracies.line(raw_line)
        record = self._feed(raw_line)
        if one_class is not None:
            record = Record(step=self.step, target_steps=self.target, events=(one_class,)) \
                if record is None else replace(record, events=(*record.events, one_class))
        if record is not None and 0.0 in record.metrics.values():
            record = unresolved_lr(record, raw_line)  # (see `rounded_zeros`)
        if record is not None and any(e.kind is EventKind.COMPLETED for e in record.events):
            looping = self._start_loops.completed() or looping
        if record is not None and record.metrics:
            self._start_loops.measured(record, raw_line)
        if self._advanced:
            looping = self._start_loops.trained() or looping
        if looping is not None:
            record = Record(step=self.step, target_steps=self.target, events=(looping,)) \
                if record is None else replace(record, events=(*record.events, looping))
        if record is not None and self._failures.loose_exception is not None \
                and any(e.kind is EventKind.EXCEPTION for e in record.events):
            self._failures.loose_exception = None  # the line's failure is said already
        if self._nan_words.guarding:
            record = self._nan_words.after_guard(record)
        self._start_up_again(launches.after(raw_line, record, self._advanced,
                                            self._failures.in_traceback))
        if self._advanced and self._since_again is not None:
            self._since_again += 1
        if launch is not None:
            record = Record(step=self.step, target_steps=self.target, events=(launch,)) \
                if record is None else replace(record, events=(launch, *record.events))
        record = self._task_labels.place(record)  # where the rank ran, once known
        if record is not None or self._took:
            self.lines_read += 1
        else:
            if len(self._quiet) >= 4096:
                self._quiet.clear()
                self._quiet_closing.clear()
            self._quiet[raw_line] = quiet + 1
            if quiet == 1 and closes(raw_line):
                self._quiet_closing.add(raw_line)
        return record

    def _in_place(self, earlier: Parsed) -> bool:
        """Whether a record of an earlier line still goes where it was printed: no
        record read since has passed its step (nanochat's `Step 00000 | Validation bpb:
        3.32` before training is no record to add after step 19's; a diffusion run's
        `--- PREVIEW (Step 20 | t=428) ---`, read again at step 40, none after step 24)."""
        return earlier.step is None or self.step is None or earlier.step >= self.step

    def _commented_record(self, line: str) -> str | None:
        """A line behind a comment's marker: a comment (what it says about losses or
        errors is not the run's), unless the run prints its template again and again
        with counters and values in it: then a record it chose to mark (an ImageNet loop's
        `# Epoch  49 Time    360.8 lr = 0.005289 avg loss = 0.003278 accuracy = 72.46`
        once an epoch), read without its marker from the second one on."""
        body = line.lstrip()
        body = body[body.index(" ") + 1:]
        if not any(c.isdecimal() for c in body):
            return None
        shape = " ".join(template(body).split())
        seen = self._comments.get(shape, 0)
        if len(self._comments) < 1024 or seen:
            self._comments[shape] = seen + 1
        if not seen and "val" in body.lower():
            # An evaluation's figures by their names, behind the marker (ctrNet's `#
            # Epcho-time 355.16s Eval AUC 0.982286.`, once an epoch): the run's from the
            # first, the one the next evaluation is measured against.
            parsed = parse_key_values(body)
            if parsed is not None and any(is_eval_metric(k) for k in parsed.metrics):
                return body
        return body if seen else None

    def _unnamed_counter(self, count: int) -> None:
        """A training record counted by a number with no name (`Train 249, loss: …`,
        after a configuration's `Namespace(…, epochs=250, …)`), in a run that plans its
        epochs and no steps: the counter is taken for its epochs, and the plan is reached
        at its last (0- or 1-based, as `endings` reckons). A count past the planned
        epochs says it counts something else (iterations): withdrawn for good."""
        planned = self.plan.epochs
        if self._unnamed_epochs is False or self._epochs_recorded or not planned \
                or self.plan.announced is not None or self.target is not None:
            return
        if count > planned:
            self._unnamed_epochs = False
            self._endings.forget_epochs()
            return
        if self._unnamed_epochs is None:
            first = self._metric_lines.unnamed_from
            if first is not None and first < count:
                self._endings.epoch_record(first, planned)  # (its first count: 0 or 1)
        self._unnamed_epochs = True
        self._endings.epoch_record(count, planned)

    def _header_epoch_of_plan(self, epoch: float, stepped: bool) -> None:
        """A record in the epoch a header line announced (`----epoch 20----`, then the
        epoch's steps and its `dev loss`), where the configuration gave the planned epochs
        (`'max_epochs': 20`) and no line names its own total: the outer counter at its
        total, as an `Epoch 20/20` says it (see `final_epoch`); `stepped`: the record moved
        training on (the epoch's `dev loss` after its steps did not). A line that names a
        total (`Epoch 3/10`) keeps the counter to its own."""
        planned = self.plan.epochs
        final = self._endings.final_epoch
        if planned and final.planned in (None, planned):
            final.counted(epoch, planned, stepped)

    def _start_up_again(self, shape: str | None) -> None:
        """A start-up line printed again after training began (see `launches`): the
        closing block judges whether it began a new launch."""
        if shape is not None:
            self._endings.closing.start_up_again(shape)

    def learn_start_up(self, lines: list[str]) -> None:
        """The first lines of a log this parser will read only the end of (the history
        scan reads the rest): its start-up, by which a new launch is seen (`launches`);
        the middle of a log is no start-up."""
        head = LogParser(count_records=False)
        for line in lines:
            head.feed(line)
            if not head._launches.in_preamble:
                break
        self._launches = head._launches.settled()

    def _launch(self, raw_line: str) -> LogEvent | None:
        """A new launch of the run, when this line begins one (see `launches`)."""
        if self._failures.in_traceback:
            return None
        launch = self._launches.launch(raw_line)
        if launch is not None:
            self._failures.launched()
        return launch

    def _feed(self, raw_line: str) -> Record | None:
        # googletest-style `[ ACTION ]` boxes; xLearn's `[ 80% ]` says the row's share of the plan
        line, share = split_status_box(clean(raw_line))
        line = without_bracketed_heads(line)  # NeMo's `[NeMo I … wer:330]`, even mid-line
        if not line or line.isspace():
            return None
        rank, line = self._task_labels.split(line)  # srun -l, torchrun, both
        if self._best_block:
            self._best_block -= 1
            if line[:1] in " \t":
                # a figure of the best, restated: no record, but the closing block's
                # (Optuna's `Best trial:`, then `  Value: 0.8285`, after its last trial)
                self._endings.after_record(line)
                self._took = True
                return None
            self._best_block = 0
        if line[:1] in "Bb*=-# " and (_BEST_HEADING.match(line) or _BEST_RESULT.match(line)):
            self._best_block = _BEST_BLOCK_LINES
            self._endings.after_record(line)
            self._took = True
            return None
        setting = self._settings.inside(line)  # a configuration's line (`settings_block`)
        self._trials.line(line)  # a search's trial closed (`search_trials`)
        if setting or self._settings.headed:
            self._took = True
        if self._best_round.restated(line):
            self._took = True  # understood: the best round said again, no round trained
            return None
        self._shapes.note(line)
        banner_epoch = self._banner_counters.epoch(line)
        if banner_epoch is not None:  # a bare number under a rule (`banner_counters`)
            self._headers.epoch_header(banner_epoch)
            self._took = True
            return None
        commented = line.lstrip().startswith(_COMMENT)
        if commented:
            marked = self._commented_record(line)
            if marked is None:
                if not any(c.isdecimal() for c in line):
                    # a header written as a comment above its columns (`#  step
                    # rmse_val … lr`, DeePMD's lcurve.out): the table's names
                    self._shapes.read(line)
                return None
            line = marked
        in_traceback = self._failures.in_traceback and self._failures.continues(line)
        if in_traceback or line.startswith("Exception in thread "):
            self._threads.line(line, in_traceback)

        events: list[LogEvent] = []
        bar_parsed: Parsed | None = None
        rest = line
        read: Line | None = None
        if in_traceback:
            self._took = True
        if not line or line.isspace():
            self._report_block = False  # a blank line closes a report
        elif line[:1] in _BANNER_RULES and _REPORT_BANNER.match(line):
            self._report_block = True
        bar = None if in_traceback else parse_bar(line)
        self._endings.final_epoch.new_line(
            bar is not None and bar.total is not None and bar.n < bar.total,
            bar is not None and bar.total is not None and bar.total > 1 and bar.n == bar.total)
        if bar is None and line.strip():
            # (the pass is over at its first line that is not a bar: `Eval samples: 224`)
            self._bars.eval_banner = _begins_evaluation(line)
        if bar is not None:
            self._took = True
            if "Class" in bar.desc:
                # A validation table's header drawn with its bar (Ultralytics: `Class
                # Images Instances Box(P R mAP50 mAP50-95): 100%|…|`): the header reader
                # names the columns of the row that follows.
                self._headers.read(Line(f"{bar.desc}:", rank, in_traceback), self)
            row = self._bars.table_bar(bar, self._shapes) if bar.desc else None
            if row is not None:
                bar_parsed = row
                if self._shapes.final_row and bar.total and bar.n == bar.total:
                    events.append(LogEvent(EventKind.COMPLETED, line.strip()[:500],
                                           "final-epoch"))
            else:
                laps = self._bars.laps
                bar_parsed, events = self._bars.from_bar(bar)
                if bar.total is not None and bar.total <= 1 and not bar.metrics and not events \
                        and bar_parsed is not None and bar_parsed.step is None \
                        and not bar_parsed.metrics:
                    # a bar over one item says nothing (see `bar_steps`): what is glued
                    # after it (`0% 0/1 [00:00<?, ?it/s]2025-05-31 … Train loss: 0.69`)
                    # is read as a line of its own
                    bar_parsed = None
                empty = self._empty_epochs.bar(bar, line)
                if empty is not None:
                    events = [*events, empty]
                enclosed = self._enclosing_bars.see(bar, self._trained, self._step_restarts)
                if enclosed is not None:  # a bar around every round, at its end
                    events = [*events, enclosed]
                if self._bars.took_over:
                    # The training's bar took over from a data pass's (bar_steps): that
                    # bar's count was no step, its total no plan.
                    self._bars.took_over = False
                    if self.plan.announced is None:
                        self.target, self._withdrawn = None, True
                    self.step, self.step_found = None, False
                if self._bars.laps and not laps and self.target == self._bars.main_total \
                        and self.plan.announced is None:
                    self.target = None  # that total was one epoch's
                    self._withdrawn = True
            if self._bars.evaluating:
                self.phase = "eval"
                events = [*events, *self._endings.evaluation_bar(line.strip())]
            elif (of_plan := _EPOCH_OF_PLAN.search(bar.desc)) is not None:
                # The bar names its epoch of the plan (`Epoch 10/10 - Training: 100%|…|
                # 2533/2533`): the outer counter, as an `Epoch 10/10` line says it.
                self._endings.final_epoch.counted(
                    float(of_plan.group(1)), int(of_plan.group(2)),
                    bar_parsed is not None and bool(bar_parsed.metrics))
            rest = line[bar.end :]
            if rest.lstrip().startswith("["):
                glued_rank, rest = split_rank(rest.lstrip())
                rank = rank if rank is not None else glued_rank
        elif not in_traceback:
            # the readers' view of it, made once (its figures named in English)
            read = Line(in_english(line), rank, in_traceback)
            if self._headers.wants(read):
                headers = self._bars.headers_read
                record = self._headers.read(read, self)
                if self._bars.headers_read != headers:
                    self._took = True  # (an epoch's header: never a quiet line)
                if read.claimed:
                    self._took = True
                    return record
        parsed: Parsed | None = None
        has_rest = bool(rest.strip())
        # The W&B client's own output (its end-of-run summary and history) repeats the
        # run's metrics out of order: not training lines.
        if not in_traceback and has_rest and ("tokens per" in rest or "param" in rest
                                              or "ocab" in rest or "esired" in rest):
            found_facts = self._facts.said(rest)
            if found_facts:  # a line about the run's size is not a step (`tokens per step: N`)
                # (a configuration's dump may say its plan beside its vocabulary)
                announced = self.plan.read(rest, False)
                if announced is not None:
                    self.target = announced
                return Record(step=self.step, target_steps=self.target, facts=found_facts,
                              rank=rank)
        if not in_traceback and has_rest and not rest.startswith("wandb:") and not setting:
            if read is None:  # a bar's line: the readers read what follows the bar
                read = Line(in_english(rest), rank, in_traceback)
            parsed = self._metric_lines.read(read, bar_parsed is not None, events)
            if parsed is not None and parsed.metrics and ("arning" in rest or "ARNING" in rest) \
                    and _WARNING_LINE.match(message(rest)) is not None \
                    and all(math.isfinite(v) for v in parsed.metrics.values()):
                # A warning's figures are the warning's (ACT's rollouts: `Warning: step
                # duration: 0.088 s at step 299 longer than DT: 0.02 s`, the simulator's step
                # read as the training's, after its 1000th): no record of training. (A
                # non-finite one is never dropped.)
                parsed = None
                self._took = True
            if self._metric_lines.eval_counter is not None and not self.step_found:
                self._endings.evaluated_at(self._metric_lines.eval_counter)
            if self._metric_lines.earlier is not None and bar_parsed is None \
                    and self._in_place(self._metric_lines.earlier[1]):
                first, earlier = self._metric_lines.earlier
                held = self._merge(None, earlier, [], rank, first)
                if held is not None:
                    self.held.append(held)
            if read.claimed:
                self._took = True
                return None
            if parsed is not None and parsed.metrics and self._announced.split is not None:
                epoch = self._announced.epoch
                split = self._announced.take()
                if parsed.step is None and (self.step is not None or (
                        epoch is not None and parsed.epoch == epoch)):
                    # an announced evaluation's figures (`announced_evals`)
                    parsed = replace(parsed, metrics={
                        f"{split}_{k}": v for k, v in parsed.metrics.items()})
            elif parsed is None and self._announced.line(rest):
                self._took = True
            if parsed is not None and bar_parsed is None:
                parsed = self._counterless.read(rest, parsed)  # `MSE_loss = 1.83` an epoch
            if commented and parsed is not None and not parsed.metrics:
                # a configuration's commented-out field, printed again by a relaunch
                # (`  # steps: 99040 # 1238 * 120`), names a count, not where the run is
                parsed = None
        if has_rest and (parsed is None or parsed.fmt in _MAY_CARRY_EVENTS
                         or _may_carry_failure(rest)):
            # (a frame's own code names an error without reporting one: the closing
            # line below it says what happened)
            # (nor does the exception a failed start-up hook names: `failures._SITE_HOOK`)
            found = () if (in_traceback and self._failures.frame_code(rest)) \
                or self._failures.after_site_hook() else find_events(rest)
            found += self._oom_skips.read(rest, found)
            events.extend(found)
            events.extend(self._failures.observe(rest, found))
            self._threads.mark(events)
            parsed = self._from_context(rest, parsed)
            for event in found:
                if event.kind is EventKind.CHECKPOINT_SAVED:
                    self.phase = "save" if _SAVE_BEGINS.search(event.line) else "train"
                    self._saved_past_plan(event.detail)
            if _EVAL_BANNER.search(rest):
                self.phase = "eval"
        elif parsed is not None and parsed.fmt == "hf-trainer" and "batch_size" in rest \
                and "poch" in rest:
            # A configuration printed as a dict (`{'batch_size': 16, …, 'epoch_num': 200}`):
            # its planned epochs, though its numbers read as a record
            self.plan.read(rest, True)
        if has_rest and not in_traceback:
            has_metrics = (parsed is not None and bool(parsed.metrics)) or bar_parsed is not None
            trains = has_metrics and self._may_train(parsed, bar_parsed)
            events.extend(self._endings.line_events(
                rest, self.target, self.plan.epochs, events, has_metrics, trains))
            shared_epoch = parsed.epoch if parsed is not None else None
            if share is not None and parsed is not None and shared_epoch is not None \
                    and not parsed.total_epochs and trains \
                    and (planned := planned_from_share(shared_epoch, share)) is not None:
                # the epoch's row under a box of the plan's share (`[ 80% ] 8  0.61 …`):
                # the epoch of that many, as an `Epoch 8/10` says it
                parsed = replace(parsed, total_epochs=planned)
                self._endings.final_epoch.counted(shared_epoch, planned, trains)
            elif parsed is not None and parsed.fmt == "epoch-batch" and parsed.epoch is not None \
                    and parsed.total_epochs and "poch" not in rest and "POCH" not in rest:
                # an outer counter with no word for it (`[2/41] 1300), Loss: …`): its
                # epoch of the plan, as an `Epoch 2/41` says it (see `final_epoch`)
                self._endings.final_epoch.counted(parsed.epoch, parsed.total_epochs, trains)
        if has_rest and not in_traceback:
            interrupted = self._save_failures.line(rest, events)
            if interrupted is not None:
                events.append(interrupted)
        if events:
            events = self._endings.noted(self._trials.trial_ends(events))
        if rank is None and parsed is not None and parsed.rank is not None:
            rank = parsed.rank  # WeNet's `TRAIN Batch 4/203700 loss 12.6 … rank 2`
        record = self._merge(bar_parsed, parsed, events, rank, line)
        if has_rest:
            if read is None:  # a bar's line: the readers read what follows the bar
                read = Line(in_english(rest), rank, in_traceback)
            read.advanced = self._advanced
            for reader in self._record_readers:
                if reader.wants(read):
                    record = reader.amend(read, record, self)
            if read.claimed:
                self._took = True
        return record

    def _epoch_totals(self, part: Parsed, bar: Parsed | None, own_epoch: float | None,
                      metrics: dict[str, float]) -> dict[str, float]:
        """An epoch's summary line among records placed batch by batch (`Epoch: 60\tBatch:
        5800/6000\tLoss: 0.0060`, then `Epoch: 60\tTime: 3904.7\tLoss: 35.5457`): a loss
        under the batches' name, many times any of theirs, is the epoch's sum over its
        batches, not a point of the batches' series (a spike on every epoch otherwise);
        it is kept as `<name>_epoch_sum`."""
        if part.per_epoch:
            for key, value in metrics.items():
                if "loss" in key and math.isfinite(value):
                    self._batch_losses.setdefault(key, deque(maxlen=_RECENT_BATCHES)).append(
                        abs(value))
            return metrics
        if bar is not None or part.step is not None or own_epoch is None \
                or not self._batch_losses or not self.plan.per_epoch:
            return metrics
        summed = {key for key, value in metrics.items()
                  if key in self._batch_losses and math.isfinite(value)
                  and abs(value) > _EPOCH_SUM_RATIO * max(self._batch_losses[key]) > 0}
        if not summed:
            return metrics
        return {f"{key}_epoch_sum" if key in summed else key: value
                for key, value in metrics.items()}

    def _may_train(self, parsed: Parsed | None, bar: Parsed | None) -> bool:
        """Whether a line with metrics may be a training record of its epoch: in a log
        whose records that moved the step carry names, a line without a step and without
        any of those names is not (`Epoch: 19/20, top 1 acc: 0.26` after the epoch's
        `Iteration step: 62400, loss: 3.33`: its evaluation)."""
        if bar is not None or parsed is None or parsed.step is not None \
                or not self._stepped_names:
            return True
        return not self._stepped_names.isdisjoint(parsed.metrics)

    def _restated(self, metrics: Mapping[str, float]) -> bool:
        """Whether a record restates the training's loss among figures most of which no
        training record carried (a closing summary's dict: TF Model Garden's `Run stats:`)."""
        names = metrics.keys()
        return any("loss" in k and k in self._train_names for k in names) \
            and 2 * len(names - self._train_names) > len(names)

    def _losses(self) -> set[str]:
        """The names the counted training records carry their loss under (all their
        names, for a run that names no loss)."""
        names = self._train_names
        return ({k for k in names if "loss" in k and ("train" in k or k == "loss")}
                or {k for k in names if "loss" in k} or names)

    def _saved_past_plan(self, path: str) -> None:
        """A checkpoint named by a step beyond the total a counter showed (`[Iter 760 /
        762]`, then `Save model to …/3048`): the run is past that total, so it counted
        an inner loop (one epoch's iterations), not the run's plan."""
        saved = saved_step(path)
        target = self.target
        if saved is None or not target or self.step is None or not self.step <= target:
            return
        if target < saved <= 1000 * target:
            self._overrun, self.target, self._withdrawn = target, None, True

    def _from_context(self, rest: str, parsed: Parsed | None) -> Parsed | None:
        """Header lines that say how long the run will be, or where it is."""
        # (a patience rides on whatever the line gives: an argparse Namespace read as
        # settings, `Namespace(epochs=200, lr=0.001, patience=10)`)
        if "patience" in rest or (parsed is None and (
                "param" in rest or "tokens per" in rest or "ocab" in rest
                or may_configure_lr(rest))):
            self._facts.configured(rest)
        announced = self.plan.read(rest, parsed is not None)
        if announced is not None:
            self.target = announced
            if parsed is not None and parsed.step == announced and not parsed.metrics:
                # the plan's own number read as a step (a config's `  steps: 23200`)
                parsed = None
            return parsed or Parsed("", target=announced)
        global_step = lightning_global_step(rest)
        if global_step is not None:
            self._bars.restart_epochs(global_step[1])
            return Parsed("lightning", global_step[1], epoch=float(global_step[0]))
        return parsed

    def _merge(self, bar: Parsed | None, text: Parsed | None, events: list[LogEvent],
               rank: int | None, line: str) -> Record | None:
        if bar is not None and bar.fmt:
            self.formats[bar.fmt] += 1
        if text is not None and text.fmt:
            self.formats[text.fmt] += 1
        part = text if bar is None else bar if text is None else _combined(bar, text)
        if not events and (part is None or (part.step is None and part.target is None
                                            and not part.metrics and part.epoch is None)):
            return None  # an evaluation bar, a format seen: nothing about training
        if part is None:
            part = Parsed("")
        fmt, step, target, epoch = part.fmt, part.step, part.target, part.epoch
        if text is not None and bar is None and step is not None and target is not None \
                and epoch is None and self._running_totals.outer_and_count(line, step, target):
            # `0/190, SamplesPerSec=…`, then `0/200, …`: the epoch and the running step
            # (see `running_totals`); the total it gave before was none
            epoch, step, target = float(step), target, None
            if self.target is not None and self.plan.announced is None:
                self.target, self._withdrawn = None, True
        may_name_best = ("est" in line or "EST" in line) \
            and (epoch is not None or (step is not None and bar is None))
        said = message(line) if may_name_best else line
        if may_name_best and (
                names_best_epoch(said) or (names_best_value(said) and (
                    epoch is not None or (step is not None and self.step is not None
                                          and step < self.step)))):
            # `Best Epoch 6  Acc: 0.89`: the best epoch's figures said again once the loop
            # is over (see `closing`), not a record of that epoch (epoch 11 was the last);
            # so of the best iteration (ReChorus's `Best Iter(dev)=   21`, after epoch 34),
            # and of a best value at the earlier step it came at (StudioGAN's `Best FID
            # score (Step: 28000, Using valid moments): 305.8` after step 100000; PINNx's
            # `Best val_loss: 30.981792 at epoch 1` after epoch 500)
            epoch = None
            step = None if bar is None else step
        own_epoch = epoch
        if step is not None and bar is None and part.target is None \
                and self._epoch_local.stands_still(step, epoch):
            step = None  # (`epoch_local_steps`: a place in the epoch, never moving)
        if step is not None and bar is None and part.target is None and not part.per_epoch:
            step = self._epoch_local.place(step)  # an epoch's own counter (`epoch_local_steps`)
        elif step is None and own_epoch is not None and bar is None and part.metrics \
                and trains(part.metrics):
            self._epoch_local.epoch_closed()
        if epoch is None and bar is None and part.metrics \
                and self._bars.header_epoch is not None:
            epoch = float(self._bars.header_epoch)  # the epoch its header line announced
        metrics = dict(part.metrics)
        if self._report_block and (step is not None or epoch is not None):
            # A record at a counter of the run's (`Epoch 0 :Train_loss:0.888 …`) is the
            # training's: the report above it is over, blank line between them or not (a
            # follower hands the parser no blank lines).
            self._report_block = False
        if self._report_block and metrics and step is None and bar is None:
            # Under a banner that names an evaluation's report (`=== Final Val Metrics
            # ===`, then `  Class 1: P=87.89%  IoU=70.35%` and `  Mean: … mIoU=42.87%`):
            # the evaluation's figures, not training records; of them, a line per class
            # is a breakdown, no series, and only the summary line is kept.
            # A figure named for its split (the Trainer's `***** eval metrics *****`, then
            # `  eval_loss = nan`) is no class's row, and a non-finite one is never
            # dropped, whatever it is.
            summary = _SUMMARY_LABEL.match(line) is not None
            metrics = {k if EVALISH.search(k) else f"eval/{k}": v for k, v in metrics.items()
                       if summary or EVALISH.search(k) or not math.isfinite(v)}
        for event in events:
            if event.kind is EventKind.LOSS_SCALE:
                scale = to_number(event.detail) if event.detail else None
                if scale is not None:
                    metrics["loss_scale"] = scale
        if (("train_runtime" in metrics or "train/train_runtime" in metrics)
                and not any(k in metrics for k in _STEP_DICT_KEYS)) \
                or (metrics and fmt in ("jsonl", "json")
                    and all(_RUN_SUMMARY_KEY.match(k) for k in metrics)):
            # The trainer's end-of-training summary: averages over the whole run, not a
            # step of it. It says training returned (see lifecycle for an early one).
            ended = LogEvent(EventKind.COMPLETED, line.strip()[:500], SUMMARY)
            events.append(ended)
            self._bars.summarised = True
            # (the figures its `***** train metrics *****` block says again after it,
            # `train_loss = 0.53`, are that summary's, no training record)
            self._endings.noted([ended])
            metrics = {}
        if part.per_epoch and self.plan.per_epoch and part.per_epoch != self.plan.per_epoch \
                and fmt == self._per_epoch_fmt and bar is None and step is not None \
                and self.step is not None and step < self.step \
                and not any(_TRAINING_ONLY.search(k) for k in metrics):
            # The training's counter shape over another number of batches, behind the
            # run's step, with none of training's own quantities: an evaluation pass
            # printed in the training's format (Distiller's `--- validate (epoch=0)---`,
            # then `Epoch: [0][  100/  100]  Loss 1.451  Top1 52.45` after `Epoch:
            # [0][  500/  500]  Overall Loss 1.466 … LR 0.01`), never a training record.
            metrics = {k if EVALISH.search(k) else f"eval/{k}": v for k, v in metrics.items()}
            # (its summary line next, `==> Top1: 52.450  Loss: 1.451`, is the pass's too)
            self._metric_lines.evaluations.summary(Parsed(fmt, metrics=metrics))
            return Record(step=self.step, target_steps=self.target, metrics=metrics,
                          events=tuple(events), rank=rank, fmt=fmt)
        if part.per_epoch:
            self.plan.per_epoch = part.per_epoch
            self._per_epoch_fmt = fmt
        if fmt == "hf-trainer" and step is None and bar is None and own_epoch is not None \
                and 0 < own_epoch < 1 and self.step_found and not self._trained_at_step \
                and self.target is not None and self.step == self.target and "loss" in metrics \
                and "loss" not in self._train_names:
            # The Trainer's first records of its first epoch, with no step of their own,
            # after a bar that had already run to its end (an evaluation before training,
            # `100% 31/31`, in a log of stdout): that bar counted no training step. (Not
            # its last record after the training's own bar ended, loss dicts counted before
            # it: TRL's GRPO loop, `2400/2400` then the last loss dict at epoch 0.52.)
            self.step_found = False
            self.step = None
            self.target = None
        if bar is not None:
            self._epochs_after_bar.clear()
        elif step is None and own_epoch is not None and own_epoch == int(own_epoch) \
                and fmt != "hf-trainer" and self._bar_counted_no_training(own_epoch, metrics):
            # A bar run to its end before training (a data pass, `82/82 [00:00<00:00,
            # 847125.44it/s]`), then training records of two epochs or more with no bar
            # between and no step of their own (K-BERT's `Epoch id: 2, Training steps:
            # 100, …`): that bar counted no training step, its total is no plan.
            self.step_found = False
            self.step = None
            if self.plan.announced is None:
                self.target, self._withdrawn = None, True
        if step is None and own_epoch is not None and self._steps_from_epochs is not False \
                and self.plan.epochs and self.target and fmt == "hf-trainer":
            # Loss dicts without a bar to give their step (bars stripped, or a callback
            # that logs them): the epoch fraction of the planned optimizer steps. (Only
            # the dict's own epoch: a header's `Epoch 3:` above a dict of the epoch's
            # test figures says where that epoch began, not where its test ran.)
            step = round(own_epoch * self.target / self.plan.epochs)
            self._steps_from_epochs = True
        if step is None and bar is None and own_epoch is not None and own_epoch >= 1 \
                and own_epoch == int(own_epoch) and self.plan.per_epoch and self.plan.epochs \
                and self.target == self.plan.epochs * self.plan.per_epoch and self.step_found \
                and self.step is not None and metrics and trains(metrics) \
                and (own_epoch - 1) * self.plan.per_epoch <= self.step \
                < own_epoch * self.plan.per_epoch and _EVAL_LINE.search(line) is None:
            # An epoch's training summary after some of its batches (`Epoch 1, Batch 0/8,
            # Loss: 2.55`, then `Epoch 1 Training - Loss: 1.08, Mod Acc: 0.85`), in a run
            # whose plan is its epochs times their batches: the epoch's batches are done,
            # the last of them unlogged; training stands at the epoch's end.
            step = int(own_epoch) * self.plan.per_epoch
        if target is None and self.plan.announced is None and self.plan.epochs \
                and self.plan.per_epoch:
            target = self.plan.epochs * self.plan.per_epoch  # planned epochs × batches per epoch
        if bar is not None and bar.step is not None:
            self._steps_from_epochs = False  # the bars say where the run is
        if fmt != "hf-trainer":
            # (the Trainer's `'epoch': 0.01` is its progress through the epochs, logged every
            # few steps, never the counter of a bar over them)
            step = self._idle_bar.step_of(bar, step, target, epoch, metrics, self.step)
        if epoch is not None:
            self._bars.epoch_said(epoch)
        if self._epoch_counter.observe(epoch, step) and part.target is not None:
            self._overrun, self.target, self._withdrawn = part.target, None, True  # an epoch's
        if target is not None and target == self._overrun:
            target = None
        if step is not None and self.target and self.plan.announced is None \
                and step > self.target and (target is None or step > target):
            # The run trains on past a bar's total (verl's `Training Progress: 50/50`,
            # then `step:51 - ...`): that total was not the run's plan.
            self._overrun, self.target, self._withdrawn = self.target, None, True
        has_loss = step is not None and any("loss" in k for k in metrics)
        if has_loss and trains(metrics):
            self._trained_at_step = True  # (a loss: an evaluation's `mrr` trains nothing)
        if step is not None and (step > 0 or self.step_found or (bar is None and has_loss)):
            # (a bar drawn once at its start, `0/1075`, then lines with no step of their
            # own, a log of stdout, has found no step: the records are the progress; so
            # has an engine's status at its start, DeepSpeed's `step=0, skipped=0,
            # lr=[0.0]` before the Trainer's loss dicts: a step 0 says something only
            # beside a loss, `step 0 loss 2.30`)
            self.step_found = True
        elif step is None and self._count_records and not self.step_found and bar is None \
                and metrics and not (epoch is None and self._epochs_counted) \
                and trains(metrics) and (own_epoch is None or own_epoch != int(own_epoch)
                                          or self._records_counted) \
                and not (own_epoch is None
                         and (names_best_value(line) or names_best_epoch(line)
                              or sums_up_folds(line) or self._saved_alone(line))) \
                and not ((not self._losses() & metrics.keys() or self._restated(metrics))
                         and (self._endings.completed or self._endings.closing.pending())):
            # The log prints no step of its own: its training records are the progress
            # (a log whose records each count a whole epoch has its epochs for that; a
            # record after them naming no epoch is no more of its training: Mult-VAE's
            # `F1@5: 0.0925` under `End. Best Iteration 141: …` after epoch 191).
            # After a completion line, a record without the training's loss is the final
            # evaluation (`MSE: 14.2`, the validation metrics again), not more training;
            # so after a closing line not yet judged (`Final results:`, then `Accuracy =
            # 0.85   Kappa = 0.80`), and a record there most of whose names no training
            # record carried, the loss among them restated (TF Model Garden's `Run stats:`, then
            # `{'accuracy_top_1': 0.2499, 'eval_loss': 7.27, 'loss': 5.378, …}`).
            self._records_counted += 1 + self._shapes.rows_unread
            self._saves_counted += says_saved(line)
            step = self._records_counted
            for reader in self._training_listeners:
                reader.trained()
            if len(self._train_names) < 64:
                self._train_names.update(metrics)
        if metrics and trains(metrics):
            self._nan_words.latest(metrics)
            if epoch is not None:
                self._endings.epoch_seen(epoch)
        # (Nielsen's `Epoch 7: 969 / 10000` is an evaluation, printed once per epoch
        # trained: in a log without steps, how far training went.)
        # (Not the best so far, restated after each epoch: Pointnet2's `Best accuracy is:
        # 0.91321` under the epoch's header is no more of its training.)
        # (So is an evaluation that names its own epoch in a log that has printed no
        # training figure: OneIE's `{"epoch": 0, "dev": {…}, "test": {…}}`, one an epoch, no
        # loss anywhere; its epochs are how far training went.)
        # (From the second on: a run may evaluate once before it trains, UniRec's `epoch 0
        # evaluating […]` before `epoch 1 training […]`; a second evaluation with no
        # training between says the run prints none, and the first counts then too.)
        # (asked only while the answer can matter: before the first training figure, or
        # while evaluations alone mark the epochs; a hot path)
        figures = bool(metrics) and (not self._training_figures or self._epochs_by_evaluations) \
            and _trains_visibly(metrics)
        alone = own_epoch is not None and epoch is not None and bool(metrics) \
            and not self._train_names and not self._training_figures and not figures \
            and not self.step_found
        self._training_figures = self._training_figures or figures
        # One an epoch: the second the epoch after the first (a table of evaluations every
        # 20th epoch, SASRec's, says nothing of where its training stopped; a resume's jump
        # later on does not undo it).
        if alone and not self._epochs_by_evaluations:
            first = self._first_evaluated
            if self._each_epoch_evaluated is None and first is None:
                self._first_evaluated, alone = epoch, False
            elif self._each_epoch_evaluated is None and first is not None \
                    and epoch == first + 1:
                self._each_epoch_evaluated = True
                self._endings.epoch_record(first, self.plan.epochs)
            else:
                self._each_epoch_evaluated, alone = False, False
        epoch_evaluation = epoch is not None and not self.step_found and (
            marks_epoch(fmt) or alone) and not (own_epoch is None and names_best_value(line))
        if self._epochs_by_evaluations and figures:
            # Training records after all: the evaluations before them were the run's
            # before it trained (UniRec's `epoch 0 evaluating […]`, then `epoch 1
            # training […]`), no epochs trained.
            self._endings.forget_epochs()
            self._epochs_by_evaluations = self._epochs_recorded = False
        # (and in a log whose steps have no total, its epochs against the plan its
        # configuration or command line gives: `--epochs=40`, then `{"epoch": 39,
        # "step": 235, …}` is its last planned epoch)
        if epoch is not None and metrics and step is not None:
            self._cadence.seen(epoch)
        by_epochs = not self.step_found or (
            self.target is None and bool(self.plan.epochs) and self._cadence.one_an_epoch)
        if epoch is not None and by_epochs and metrics \
                and (trains(metrics) or epoch_evaluation):
            first = self._cadence.first
            if self.step_found and not self._epochs_recorded and first is not None:
                # (where the run's epochs began, for how it counts them: 0 or 1)
                self._endings.epoch_record(first, self.plan.epochs)
            self._epochs_recorded = True
            self._epochs_by_evaluations = alone and not marks_epoch(fmt)
            self._endings.epoch_record(epoch, part.total_epochs or self.plan.epochs)
        elif part.unnamed and epoch is None and step is not None and metrics \
                and trains(metrics):
            self._unnamed_counter(step)
        if metrics and len(self.metric_names) < 256:
            self.metric_names.update(metrics)
        if metrics:
            self._failures.start.measured()
            goal = self._facts.facts.get("desired_error")
            if goal is not None and not self._goal_reached and step is None and bar is None:
                reached = next((v for k, v in metrics.items() if GOAL_FIGURE.search(k)
                                and not is_eval_metric(k) and 0 <= v <= goal), None)
                if reached is not None:
                    # The error the run set out to reach, reached (FANN's `Desired error:
                    # 0.001`, then `Current error: 0.0000001738` at epoch 69 of 500,000):
                    # its own stop criterion ends the loop.
                    self._goal_reached = True
                    events.append(LogEvent(EventKind.COMPLETED, line.strip()[:500],
                                           EARLY_STOP))
        written = None
        if own_epoch is None and epoch is not None and bar is None:
            self._header_epoch_of_plan(epoch, step is not None and (
                self.step is None or step > self.step))
        # (an evaluation's record at a later step, with none of the names that moved the
        # step before: Lightning's `trainer.test()` row after the fit's last, one step on,
        # in its metrics.csv; evaluating is no training)
        evaluation_only = step is not None and bar is None and bool(metrics) \
            and bool(self._stepped_names) and not trains(metrics) \
            and any(EVALISH.search(k) for k in metrics) and self._stepped_names.isdisjoint(metrics)
        if step is not None and not evaluation_only:
            if self.step is not None and step < self.step:
                self._step_restarts += 1
            if self.step is None or step > self.step:
                self._failures.progressed()
                self.phase = "train"
                written = line_time(line)
                self._endings.stepped(step, metrics, epoch)
                for reader in self._training_listeners:
                    reader.trained()
                self._advanced = self._trained = True
                if metrics and len(self._stepped_names) < 64:
                    # the training's own names, not a bar's rate or timings
                    self._stepped_names.update(training_names(metrics))
                self._stepped_epoch = epoch
                self._metric_lines.evaluations.trained()
            self.step = step
        elif epoch_evaluation or (epoch is not None and metrics and trains(metrics) and (
                not self._stepped_names or not self._stepped_names.isdisjoint(metrics)
                or (self._stepped_epoch is not None
                    and epoch > math.ceil(self._stepped_epoch)))):
            # A training record of a log that counts epochs, not steps: the lines after
            # it are not yet the run's closing block. (Not a line without any of the
            # names the records that moved the step carry: that epoch's evaluation; unless
            # the epoch moved on since the step last did: ST-GCN's `Iter 0 Done. | loss:
            # 1.4058` once, its epochs then summed up by `mean_loss` alone under each
            # `Training epoch: N`, the step printed every 100 iterations of an epoch of
            # fewer. A summary at the end of the epoch the step stood in, `==> Epoch 6/6 |
            # Avg Loss` after `Epoch 6 | Step 2440/2449` placed at 5.996, is that epoch's.)
            self._endings.epoch_trained(epoch, metrics)
            self._epochs_counted = True
            self._advanced = self._trained = True
        if target is not None:
            self.target = target
        step = step if step is not None else self.step
        target = target if target is not None else self.target
        after = self._after_bar
        if after is not None and not after.events and after.step == step \
                and after.rank == rank and epoch is not None and after.epoch is None:
            metrics = {**after.metrics, **metrics}  # as _with_bar does, in this one record
            target = target or after.target_steps
            self._bar_folded = True
        metrics = self._epoch_totals(part, bar, own_epoch, metrics)
        withdrawn, self._withdrawn = self._withdrawn, False
        return Record(
            step=step,
            target_steps=target,
            epoch=epoch,
            total_epochs=part.total_epochs,
            metrics=metrics,
            events=tuple(events),
            rank=rank,
            fmt=fmt,
            time=written,
            target_withdrawn=withdrawn,
        )
