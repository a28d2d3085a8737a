"""What the text of a line (after any progress bar) says in a metric format.

The formats in `formats` and `frameworks` are tried in `LINE_PARSERS` order, the one
that matched last first; a line none of them knows is read by its shape (`shapes`):
a table row, a line the run prints over and over, a boxed block. What a format read
is then placed in the run (an epoch's batch counter becomes a step of the run) and told
from an evaluation's lines (`evaluation`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import replace

from babysit import lazy_re
from babysit.model import EventKind, LogEvent
from babysit.parsing.correct_counts import parse_correct_count
from babysit.parsing.counter_blocks import CounterBlocks
from babysit.parsing.dl4j_scores import parse_dl4j_score
from babysit.parsing.endings import ETA_ZERO
from babysit.parsing.eval_battery import Batteries
from babysit.parsing.eval_results import EvalResults
from babysit.parsing.evaluated_on import parse_evaluated_on
from babysit.parsing.evaluation import (
    VALIDATION_HEAD,
    EvaluationSummaries,
    as_eval,
    pass_in_progress,
    says_training,
    trains,
)
from babysit.parsing.fairseq_json import parse_fairseq_json
from babysit.parsing.final_epoch import FINAL_EPOCH
from babysit.parsing.formats import (
    LineParser,
    Parsed,
    batch_of,
    looks_like_metrics,
    names_a_measure,
    parse_hf_dict,
    parse_json_line,
    parse_key_values,
)
from babysit.parsing.frameworks import (
    FRAMEWORK_PARSERS,
    parse_epoch_step,
    parse_megatron,
    parse_nanogpt,
    parse_torchtitan,
)
from babysit.parsing.headed_pairs import parse_headed_pairs
from babysit.parsing.is_sentences import (
    EpochLocalSteps,
    parse_is_sentences,
    parse_run_on_sentences,
)
from babysit.parsing.json_document import JsonDocument
from babysit.parsing.kaldi import parse_kaldi_objective
from babysit.parsing.leading_counter import LeadingCounter
from babysit.parsing.list_cells import ListCells
from babysit.parsing.llmc import ValidationCadence, parse_llmc_main_log
from babysit.parsing.log_prefix import message
from babysit.parsing.long_rows import LongRows
from babysit.parsing.marian import parse_marian
from babysit.parsing.metric_rows import MetricRows
from babysit.parsing.mlperf import (
    FORMAT,
    TAG,
    MlperfEvent,
    QualityTarget,
    ended,
    parsed_from,
    read_event,
)
from babysit.parsing.pass_counters import PassCounters
from babysit.parsing.plan import RunPlan
from babysit.parsing.readers import Line
from babysit.parsing.report_blocks import ReportBlocks
from babysit.parsing.series_reprs import SeriesReprs
from babysit.parsing.shapes import ShapeReader
from babysit.parsing.spaced_fields import parse_spaced_fields
from babysit.parsing.split_table import SplitTable
from babysit.parsing.stats_blocks import StatsBlocks
from babysit.parsing.text import normalise_key
from babysit.parsing.trailing_names import parse_trailing_names

# Specific shapes first; the permissive key/value parser last.
LINE_PARSERS: tuple[LineParser, ...] = (
    parse_json_line, parse_fairseq_json, parse_hf_dict, parse_megatron, parse_nanogpt,
    parse_epoch_step, parse_torchtitan, parse_llmc_main_log, parse_marian, parse_is_sentences,
    parse_evaluated_on,
    parse_kaldi_objective, parse_trailing_names,
    *FRAMEWORK_PARSERS,
    parse_correct_count,
    parse_headed_pairs, parse_key_values, parse_dl4j_score, parse_run_on_sentences)


# Formats whose step and target may be a batch of its epoch and the epoch's batches.
_EPOCH_BATCH = frozenset(("bracket-counters", "epoch-batch", "kv-epoch-batch", "epoch-step"))
# An epoch's batch, read by these formats (and what the line is read as while the batch
# is never seen below its total).
_BATCH_OF_EPOCH = {"epoch-batch": "spaced-fields", "kv-epoch-batch": "key-value"}


# Names of an epoch's measures that are none: a counter's own (`starting epoch: 1`), and
# a logger's source location read as a name (`train_net.py:  692:` in a head the prefix
# reader does not know: a file and its line).
_COUNTER_NAME = lazy_re.compile(r"epoch|step|iter|batch")
# A split's label alone on its line, heading an indented block of its figures.
# (or the split and its error: the PyTorch quickstart tutorial's `Test Error: `, then `
# Accuracy: 45.4%, Avg loss: 2.153527` indented under it. Not `Validation Results:`, whose
# figures a run often restates as `Val Loss` on its epoch's summary: one evaluation, not
# two series.)
_SECTION_LABEL = lazy_re.compile(r"^\s*(train(?:ing)?|valid(?:ation)?|val|dev|test|eval(?:uation)?)"
                                 r"(?:\s+(?:set\s+)?errors?)?\s*:\s*$",
                                 re.IGNORECASE)
# A profiler's or a timer's report heading the block of timings under it (Sample Factory's
# `Learner 0 profile tree view:`, then `train: 2393.3579` and `  calculate_losses: 476.9`
# unprefixed and indented; a `Timing breakdown:`, `Timers:`): seconds spent, no metrics.
_TIMINGS_LABEL = lazy_re.compile(r"\b(?:profil\w*|timings?|timers?|time\s+(?:breakdown|spent|"
                                 r"profile))\b[^:]{0,40}:$", re.IGNORECASE)
_SOURCE_FILE = lazy_re.compile(r"\.(?:py|cc|cpp|c|h|lua|jl|java|go|rs|scala|m)$")


# A value that is not finite, as a word of its own (not `INFO`, `inference`).
_NONFINITE_WORD = lazy_re.compile(r"(?<![A-Za-z])(?:nan|inf(?:inity)?)(?![A-Za-z])", re.IGNORECASE)


def _mlperf_line(event: MlperfEvent, line: Line, events: list[LogEvent],
                 target: QualityTarget) -> Parsed | None:
    """An MLPerf event (`mlperf`): its `run_stop` added to `events`, an evaluation or an
    epoch's end as what it says of training; any other event (a setting, a size) is
    claimed, understood and nothing about training. No other format reads these lines:
    their JSON values are no metrics of a step."""
    target.see(event)
    stop = ended(event, line.text, target.reached)
    if stop is not None:
        events.append(stop)
        return Parsed(FORMAT)
    parsed = parsed_from(event)
    if parsed is None:
        line.claimed = True
    return parsed


class MetricLineReader:
    """Reads a line's text in the formats, with the context they need: the format that
    matched last, how `[e/E][n/N]` counts epochs, the names of the last evaluation pass,
    and the shapes and the plan it shares with the parser."""

    def __init__(self, shapes: ShapeReader, plan: RunPlan,
                 header_epoch: Callable[[], int | None] = lambda: None) -> None:
        self._shapes = shapes
        self._plan = plan
        self._header_epoch = header_epoch  # the epoch a header line announced, if any
        # The `N/M` an evaluation's line opened on (`[7 / 10]: Accuracy on test set: 98.6
        # %`), dropped from its record: no training step.
        self.eval_counter: tuple[int, int] | None = None
        self._preferred: LineParser | None = None
        self._batches_move = False  # an epoch's batch counter seen below its total
        self._bracket_base: int | None = None  # 0 or 1: how `[e/E][n/N]` counts epochs
        # How `[e/E][n/N]` counts an epoch's batches: the batch each epoch's last line
        # showed (epoch, batch), and how many epochs ended one short of N, or at N.
        self._epoch_end: tuple[int, int] | None = None
        self._ended_short = self._ended_full = 0
        self._epoch_lines = 0  # records in the latest epoch; more than one: not this shape
        self._one_an_epoch = True
        self.evaluations = EvaluationSummaries()
        self._local_steps = EpochLocalSteps()  # `Epoch 1, Step 25`: a step within its epoch
        self._epoch_steps = EpochLocalSteps()  # the same, in `key: value` lines
        self._llmc_validations = ValidationCadence()  # llm.c's last step validates off cadence
        self._leading = LeadingCounter()
        self._validates = False  # a line headed by a validation split's word was read
        self._body = ""  # the last line's message, without its logger's head
        self._blocks = ReportBlocks()  # `REPORT` / `  Batch = 100` / `  alpha = 3e-7`
        self._stats = StatsBlocks()  # PyMARL's `Recent Stats | t_env: N`, cells by tabs
        self._series = SeriesReprs()  # a pandas Series printed: `name  value`, `dtype: …`
        self._counter_blocks = CounterBlocks()  # `Timestep 70000` / `episodes 74` / …
        self._document = JsonDocument()  # trainer_state.json's `"log_history": [{…}, …]`
        self._passes = PassCounters()  # `(3708/3708)` training, `(493/493)` evaluation
        self._results = EvalResults()  # TF1's `***** Eval results *****` and its dict
        self._batteries = Batteries()  # a suite's per-task evaluation lines
        self._quality_target = QualityTarget()  # an MLPerf benchmark's target, reached?
        self._record_names: frozenset[str] = frozenset()  # the last counted record's names
        self._read_first = ""  # a template's first line read at once (see `_restyled`)
        # The line read before as none, a record after all (see `_first_of_template`),
        # for the parser to take before the line just read.
        self.earlier: tuple[str, Parsed] | None = None
        # The split an indented block's label named (`valid:`): None outside a block, ""
        # under a training label (see `_sections`).
        self._section: str | None = None
        self._split_table = SplitTable()  # AllenNLP's `Training | Validation` rows
        self._list_cells = ListCells()  # DeepXDE's `0   [5.35e-03, 7.96e-01]   […]` rows
        self._metric_rows = MetricRows()  # `| metric | head | tail | mean |`, a row a metric
        self._long_rows = LongRows()  # `test_loss,469,0.1088`: a figure a row
        self._timings = False  # inside a profiler's block of timings (see `_timing`)
        self._timings_indent = 0  # its label's indentation
        self._timings_headed = False  # its label came with a logger's head

    def read(self, line: Line, beside_bar: bool, events: list[LogEvent]) -> Parsed | None:
        """What the line's text says (`beside_bar`: a bar was read before it). A line
        taken in as context (a table's header, part of a boxed block) is claimed, with
        nothing to return; a table's planned last row adds its COMPLETED to `events`."""
        text = line.text
        self.earlier = None
        self.eval_counter = None
        if (text.endswith(":") or self._timings) and self._timing(text):
            line.claimed = True
            return None
        if (text.rstrip().endswith(":") or self._section is not None) and self._sections(text):
            line.claimed = True  # (understood: a label said again is no quiet repeat)
            return None
        if TAG in text:
            event = read_event(text)
            if event is not None:
                return _mlperf_line(event, line, events, self._quality_target)
        self._results.see(text)
        # Multi-line shapes first: a JSON document's elements, a report's blocks (each
        # reader says True for a line it took in as context, a Parsed for a record).
        for reader in () if beside_bar else (self._stats, self._series, self._document,
                                              self._blocks, self._counter_blocks,
                                              self._split_table, self._list_cells,
                                              self._metric_rows,
                                              self._long_rows):
            if reader.wants(text):
                found = reader.read(text)
                if found is True:
                    line.claimed = True
                    return None
                if found is not None and found is not False:
                    return self._results.place(found)
        parsed = self._results.place(self._parse_text(text))  # `eval_results`
        if parsed is not None and parsed.fmt == "llmc":
            final = self._llmc_validations.final(parsed, text)
            if final is not None:
                events.append(final)
        # (fields apart by a bar too: `Epoch 1/30 | Train 0.2174 | Val 0.1509`)
        # (and after a bar: what a loop prints once its bar has drawn, `100%|…| 1/250
        # [00:10<42:21, 10.21s/it][  1], time: 10.205, train: 5.005e-01, test: 1.399e-01`
        # in an FNO's Slurm output, its line glued to the bar's redraw)
        fielded = parsed is None and ("=" in text or ":" in text or "  " in text
                                       or "\t" in text or ", " in text or "|" in text
                                       or " - " in text)
        if fielded and not self._shapes.recurring(text) and not self._restyled(text):
            # a template's first line is read as none (nothing says it is a metric line
            # yet), but a bare counter at its start there is where the next line's rises
            # from (`[   1] obj=53109.96`, then `[   2] obj=16052.89`: step 2)
            self._leading.first(self._body)
        elif fielded:
            # A line the run prints over and over, with a step: its names need not be
            # known ones (`iter: 649, l_pix: 0.03`; Torch7's `epoch 80  running_average
            # 0.7634`, its fields apart by spaces).
            parsed = parse_key_values(text, known_names=False)
            counterless = parsed if parsed is not None and parsed.step is None \
                and parsed.epoch is None and looks_measured(parsed.metrics) else None
            if parsed is not None and (parsed.fmt == "kv-epoch-batch" or (
                    parsed.step is not None and parsed.epoch is not None)):
                # (`[epoch: 17/200, iter: 425/489] total: 1.33`: the batch of its epoch
                # once the counter starts again, as for known names)
                parsed = self._placed(parsed)
            elif parsed is not None and parsed.step is None and parsed.epoch is None \
                    and parsed.metrics and (lead := self._leading.read(self._body)) is not None:
                # `[   2] obj=16052.89   err= 3.71%/25.41%`: a bare counter first (see
                # `leading_counter`), any names after it
                parsed = replace(parsed, step=lead[0], target=parsed.target or lead[1],
                                 unnamed=lead[1] is None and parsed.target is None)
            if parsed is None or parsed.step is None:
                by_epoch = self._epoch_measures(text, parsed)
                parsed = parse_headed_pairs(text, known_names=False)  # `Epoch 3: Train_rf 0.48`
                # `[epoch 36] FG-ARI=0.1310 mBO=0.3587`: an epoch's measures by any name
                parsed = parsed or by_epoch
            if parsed is None:
                parsed = parse_spaced_fields(self._body, known_names=False)
            if parsed is None and counterless is not None and self._header_epoch() is not None:
                # Measures with no counter of their own under an epoch's header line
                # (`Epoch of: 5 Perf:`, then `Aligned R-Squared: -50.6 | Aligned RMSE:
                # 12.6`): that epoch's (the parser places them in it).
                parsed = counterless
            self.earlier = self._first_of_template(parsed)
            if parsed is not None and parsed.step is not None and parsed.metrics:
                self._record_names = frozenset(parsed.metrics)
        if parsed is None and not beside_bar:
            # (the message, not its logger's head: a table printed through a logger,
            # robust_overfitting's `[2020/04/27 12:22:28] - 0 \t 518.4 \t …` under its
            # `… - Epoch \t Train Time \t …` header, is a table all the same)
            # (only a head taken off: a tensor's repr the message rewrote to its number,
            # `tensor(0.6973, grad_fn=<NllLossBackward>)`, is no lone value of a column)
            body = self._body
            shaped = self._shapes.read(body if body and text.rstrip().endswith(body.rstrip())
                                       else text)
            if shaped is True and self._shapes.table_closed:
                events.append(LogEvent(EventKind.COMPLETED, text.strip()[:500], "table-closed"))
                return Parsed("table")
            if shaped is True:
                line.claimed = True
                return None
            parsed = shaped if isinstance(shaped, Parsed) else None
            if parsed is not None and self._shapes.final_row:
                events.append(LogEvent(EventKind.COMPLETED, text.strip()[:500], FINAL_EPOCH))
            elif parsed is not None and self._shapes.time_left_zero:
                events.append(LogEvent(EventKind.COMPLETED, text.strip()[:500], ETA_ZERO))
        elif parsed is not None and parsed.fmt == "key-value" and parsed.metrics:
            parsed = self._in_section(parsed)
            self._validates = self._validates or VALIDATION_HEAD.match(self._body) is not None
            evaluated = as_eval(self._body, parsed, self._validates)
            if evaluated.step is None and parsed.step is not None and parsed.target:
                # (the counter an evaluation's line opens on: the parser tells whether it
                # is the epoch of a plan, `eval_counter`)
                self.eval_counter = (parsed.step, parsed.target)
            parsed = self._passes.place(text, evaluated)
            if self._batteries.breakdown(self._body, parsed.metrics, _indented(text, self._body)):
                # one task's row of a suite's evaluation: no series (a NaN still counts)
                parsed = replace(parsed, metrics={k: v for k, v in parsed.metrics.items()
                                                  if not math.isfinite(v)})
            if says_training(self._body):
                self.evaluations.trained()  # `Train -   loss: 5.02`: never a pass's summary
            else:
                parsed = self.evaluations.summary(parsed, self._body)
                if pass_in_progress(self._body) and not trains(parsed.metrics):
                    # a batch's figures part way through the pass: the pass's summary is
                    # its evaluation (a NaN still counts)
                    parsed = replace(parsed, metrics={k: v for k, v in parsed.metrics.items()
                                                      if not math.isfinite(v)})
            if parsed.step is None and parsed.epoch is None \
                    and not all(map(math.isfinite, parsed.metrics.values())) \
                    and not self._shapes.printed_before(text):
                # `grad_norm_max: inf`, `max_norm = inf`: a setting printed once, not a
                # value the run measured (a metric line comes back). A NaN is no
                # setting, nor is a loss's infinity: they stay, in a line without a
                # step all the same (`train_loss[loss=nan, acc=0.01, …]`, Keras's
                # one-line epoch `1/1 - 3s - loss: nan` under Horovod).
                parsed = replace(parsed, metrics={
                    k: v for k, v in parsed.metrics.items()
                    if math.isfinite(v) or math.isnan(v) or "loss" in k})
        return parsed

    def _sections(self, text: str) -> bool:
        """A split's label alone on its line (`valid:`, then `      loss: 1.3156` and
        `  accuracy: 0.5279` indented under it, a notebook loop's epoch block): the
        figures under it are that split's; the section ends at the first line not
        indented. Whether the line was such a label."""
        label = _SECTION_LABEL.match(text) if text.rstrip().endswith(":") else None
        if label is not None:
            word = label.group(1).lower()
            self._section = "" if word.startswith("train") else word
            return True
        if text[:1] not in (" ", "\t"):
            self._section = None
        return False

    def _timing(self, text: str) -> bool:
        """A profiler's block of timings: its label, and every line indented under it or,
        after a label with a logger's head, every line up to the next one with a head
        (the block's own lines have none, indented or not). Whether the line was one."""
        indent = len(text) - len(text.lstrip())
        if text.endswith(":") and _TIMINGS_LABEL.search(message(text)) is not None:
            self._timings = True
            # (a label indented in a nested report, RLlib's `  timers:` in its result
            # block: its block is the lines indented under it, and no further)
            self._timings_indent = indent
            self._timings_headed = message(text) != text
            return True
        if self._timings and text.strip() and (
                indent > self._timings_indent
                or (self._timings_headed and message(text) == text
                    and not text.lstrip().startswith("["))):
            return True
        self._timings = False
        return False

    def _in_section(self, parsed: Parsed) -> Parsed:
        """An indented record's figures named for the split its section's label names."""
        if not self._section or not parsed.metrics:
            return parsed
        prefix = self._section + "/"
        return replace(parsed, metrics={k if k.startswith(prefix) else prefix + k: v
                                        for k, v in parsed.metrics.items()})

    def _restyled(self, text: str) -> bool:
        """Whether a line of a template not seen before is the run's record line with a
        field printed another way, and a value that is not finite (CatBoost's `60: learn:
        nan  total: 7m 2s` after `59: learn: 0.12  total: 413s`): read at once, since a
        template's first line waits for its second and the log may end on it. A finite
        one waits as any first line does."""
        if not self._record_names or _NONFINITE_WORD.search(text) is None:
            return False
        parsed = parse_key_values(text, known_names=False)
        restyled = parsed is not None and parsed.step is not None \
            and frozenset(parsed.metrics) == self._record_names \
            and not all(map(math.isfinite, parsed.metrics.values()))
        if restyled:
            self._read_first = text  # (not read again once its template's second comes)
        return restyled

    def _first_of_template(self, parsed: Parsed | None) -> tuple[str, Parsed] | None:
        """The template's first line, read as none when it came (see `recurring`), as
        the record it was, now that its second line shows it a metric line: the same
        names, its counter the one before (`Epoch: 0  Train rel: 0.158`, then `Epoch: 1
        …`): else the run's first point is lost, and a run counting from 0 looks as if
        it counted from 1, one epoch short of its plan at its end."""
        first = self._shapes.first_line
        if first is None or parsed is None or parsed.fmt != "key-value" or not parsed.metrics \
                or first == self._read_first:
            return None
        earlier = parse_key_values(message(first), known_names=False)
        if earlier is None or earlier.fmt != parsed.fmt \
                or earlier.metrics.keys() != parsed.metrics.keys():
            return None
        if parsed.epoch is not None and parsed.step is None:
            before = earlier.step is None and earlier.epoch == parsed.epoch - 1
        else:
            # (a step counter beside an epoch counter: the same epoch, or the one before)
            before = parsed.step is not None and earlier.step is not None \
                and earlier.step < parsed.step and (
                    earlier.epoch == parsed.epoch
                    or (earlier.epoch is not None and parsed.epoch is not None
                        and 0 < parsed.epoch - earlier.epoch <= 1))
        if not before:
            return None
        return first, as_eval(message(first), earlier, self._validates)

    @property
    def block_unfinished(self) -> bool:
        """Whether the log ends inside a counter's block (`CounterBlocks.unfinished`)."""
        return self._counter_blocks.unfinished

    @property
    def in_block(self) -> bool:
        """Whether a multi-line block headed by a counter is being read (see
        `counter_blocks`), or a JSON document's brackets are open: its repeated member
        lines are not the quiet repeats they look (a config's `    },` printed a third
        time, passed over, left the document open for the rest of the log and every
        training line after it taken for one of its fields)."""
        return self._counter_blocks.open or self._document.open

    def _epoch_measures(self, text: str, parsed: Parsed | None) -> Parsed | None:
        """An epoch's measures by any names (`[epoch 36] FG-ARI=0.1310 mBO=0.3587`), read
        from the run's message without its logger's head (whose `train_net.py:  692` is
        a source line, not a measure)."""
        if parsed is None or parsed.epoch is None:
            return None
        if self._body is not text:
            parsed = parse_key_values(self._body, known_names=False)
        if parsed is None or parsed.epoch is None \
                or all(_COUNTER_NAME.search(name) for name in parsed.metrics) \
                or any(_SOURCE_FILE.search(name) for name in parsed.metrics):
            return None  # (`starting epoch: 1` names its counter only: no measure)
        return parsed

    @property
    def unnamed_from(self) -> int | None:
        """Where the unnamed counter began (see `LeadingCounter.first_count`; or a bare
        table's first column, `ShapeReader.bare_first`)."""
        first = self._leading.first_count
        return first if first is not None else self._shapes.bare_first

    def _parse_text(self, text: str) -> Parsed | None:
        # What the run printed, without a logger's head (`log_prefix`): a timestamp, a
        # level or a source location is no metric, and spoils a line of fields. The
        # whole line is still read when its message alone says nothing.
        body = self._body = message(text)
        parsed = self._parse_formats(body) if body is not text else None
        if parsed is None:
            parsed = self._parse_formats(text)
            if parsed is not None and parsed.metrics and body is not text:
                parsed = _without_location(parsed, text[:len(text) - len(body)])
        if parsed is not None and parsed.step is None and parsed.metrics:
            # `[12/540] | loss: 2.28`: a counter with no name (`leading_counter`)
            lead = self._leading.read(body)
            batch = batch_of(body) if lead is not None and lead[1] is not None else None
            if lead is not None and batch is not None:
                # `[5/100] batch 1850/4337 loss=…`: the bare counter is the epoch, the
                # batch its batch, placed in the run as `[e/E][n/N]` is
                parsed = self._placed(Parsed(
                    "epoch-batch", batch[0], batch[1], float(lead[0]), lead[1],
                    parsed.metrics, per_epoch=batch[1]))
            elif lead is not None:
                parsed = replace(parsed, step=lead[0], target=parsed.target or lead[1],
                                 unnamed=lead[1] is None and parsed.target is None)
            elif parsed.epoch is None and (outer := self._leading.outer(body)) is not None:
                # `[2/41] 1300), Loss: 0.066`: the epoch of a plan, then the step
                parsed = self._placed(Parsed(
                    "epoch-batch", outer[2], None, float(outer[0]), outer[1],
                    parsed.metrics))
        return parsed

    def _parse_formats(self, text: str) -> Parsed | None:
        # The format that matched last is tried first, unless it is the permissive
        # key/value fallback, which must never shadow a specific format.
        preferred = self._preferred
        if preferred is not None:
            parsed = preferred(text)
            if parsed is not None:
                return self._placed(parsed)
        for parser in LINE_PARSERS:
            if parser is preferred:
                continue
            parsed = parser(text)
            if parsed is not None:
                self._preferred = parser if parser is not parse_key_values else None
                return self._placed(parsed)
        return None

    def _placed(self, parsed: Parsed) -> Parsed:
        """A line's counters in terms of the whole run."""
        if parsed.fmt in _BATCH_OF_EPOCH and parsed.step is not None and parsed.target:
            # An epoch's batch counts steps once it is seen inside an epoch; a counter
            # always at its total (Theano's `epoch 305, minibatch 120/120` once an
            # epoch) only says the epoch ended: its lines are the epochs' records.
            self._batches_move = self._batches_move or parsed.step < parsed.target
            if not self._batches_move:
                return Parsed(_BATCH_OF_EPOCH[parsed.fmt], epoch=parsed.epoch,
                              total_epochs=parsed.total_epochs, metrics=parsed.metrics)
        if parsed.fmt == "is-sentences":
            return self._local_steps.place(parsed)
        if parsed.fmt in ("key-value", "jsonl") and parsed.step is not None \
                and parsed.epoch is not None:
            # `Epoch 2 | iter 100/500 | loss: 0.4`: once the counter starts again with the
            # next epoch it is the batch of its epoch, and its total the epoch's, not the
            # run's plan (a counter that goes on across epochs is left as it is).
            placed = self._epoch_steps.place(parsed)
            if placed is not parsed and placed.per_epoch:
                epochs = parsed.total_epochs
                return replace(placed, target=epochs * placed.per_epoch if epochs else None)
            return placed
        if parsed.fmt in _EPOCH_BATCH and parsed.step is not None and parsed.target \
                and parsed.epoch is not None and parsed.target != self._plan.announced:
            # `[e/E][n/N]` where N is not the planned total: n is the batch of epoch e
            # (counted from 0 or from 1, as the run's first epoch shows).
            epoch, n = int(parsed.epoch), parsed.target
            if self._bracket_base is None:
                self._bracket_base = 0 if epoch == 0 else 1
            done = epoch - self._bracket_base
            total = parsed.total_epochs * n if parsed.total_epochs else None
            batch = parsed.step + (1 if self._batches_from_zero(epoch, parsed.step, n) else 0)
            return Parsed(parsed.fmt, done * n + batch, total, done + batch / n,
                          parsed.total_epochs, parsed.metrics, per_epoch=n)
        return parsed


    def _batches_from_zero(self, epoch: int, batch: int, batches: int) -> bool:
        """Whether a log of one line an epoch, at its end, counts the epochs' batches
        from 0: two epochs or more ended on batch N-1 of N and none on N (FairMOT's bar,
        `train: [3][92/93]` the only line of each epoch, then `[4][…]`): the last batch is
        N-1, and the epoch done there. (A log of many lines an epoch keeps its count as it
        reads: its steps are in order already, and its plan judged as before.)"""
        last = self._epoch_end
        if last is not None and epoch > last[0]:
            if last[1] == batches - 1:
                self._ended_short += 1
            elif last[1] >= batches:
                self._ended_full += 1
            self._epoch_lines = 0
        self._epoch_lines += 1
        self._one_an_epoch = self._one_an_epoch and self._epoch_lines == 1
        self._epoch_end = (epoch, batch)
        return self._one_an_epoch and self._ended_short >= 2 and not self._ended_full


# A source location in a logger's head (loguru's `__main__:train_val:131 - `): its
# module, its function and its line number.
_LOCATION = lazy_re.compile(r"([\w.]+):([\w<>]+):\d+")


def _without_location(parsed: Parsed, head: str) -> Parsed | None:
    """A line read whole (its message alone said nothing) keeps no figure its logger's
    head made: loguru's `__main__:train_val:131 - [Net][ 1/12] bit:16, training....` is
    no `train_val` of 131 at each epoch's start (read so, a loss exactly 131.0 on every
    one). None when nothing measured is left."""
    if ":" not in head:
        return parsed
    named = {normalise_key(name) for found in _LOCATION.finditer(head) for name in found.groups()}
    if not named or named.isdisjoint(parsed.metrics):
        return parsed
    kept = {k: v for k, v in parsed.metrics.items() if k not in named}
    return replace(parsed, metrics=kept) if looks_measured(kept) else None


def looks_measured(metrics: Mapping[str, float]) -> bool:
    """Whether a line's names include a measure (a loss, an accuracy, an RMSE...)."""
    return bool(metrics) and (looks_like_metrics(metrics) or names_a_measure(metrics))


def _indented(text: str, body: str) -> bool:
    """Whether a line's message is indented past its logger's head (`… - INFO -   data:
    loss=13.3, weight=35.2`): a row of a block under a heading line."""
    if not body:
        return False
    at = len(text) - len(body) if text.endswith(body) else text.rfind(body)
    return at >= 2 and text[at - 2:at] == "  "
