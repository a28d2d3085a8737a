"""A NaN said in words: an error or a warning sentence that a loss, a gradient or a
value is, or became, NaN, Inf or non-finite — not a number in a metric's slot.

Frameworks stop (or skip) on a non-finite value and say so in a sentence: detectron2
`FloatingPointError: Loss became infinite or NaN at iteration=12!`, fairseq
`FloatingPointError: gradients are Nan/Inf`, SpeechBrain `ValueError: Loss is not finite
and patience is exhausted`, autograd's anomaly mode `Function 'LogSoftmaxBackward0'
returned nan values in its 0th output`, TensorFlow `Tensor had NaN values` and `Nan in
summary histogram for: layer1/weights`,
tensorboardX `NaN or Inf found in input tensor`, Vowpal Wabbit `NAN prediction in
example 1, forcing 0` (a model's prediction is the loss's input: the loss is computed on
a number the model did not give). Each is a non-finite value of the
metric it names, at the step it names (else the run's current step).

Some trainers skip the update instead and go on (ESPnet `The grad norm is nan. Skipping
updating the model.`, AMP's first steps): one skip is routine, the same skip again and
again with no training record in between is a run that no longer learns anything.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from babysit import lazy_re
from babysit.metric_names import BEST_SO_FAR_WORDS
from babysit.model import EventKind, LogEvent, Record
from babysit.parsing.events import exception_line
from babysit.parsing.readers import Line, ParseContext

# `<subject> … is/became/… nan|inf|infinite|non-finite`
_SUBJECT_SAYS = lazy_re.compile(
    r"\b(?P<name>loss(?:es)?(?![ _]?scal)|grad(?:ient)?s?(?:[ _]norms?)?|outputs?|logits|weights|"
    r"activations?|tensor|values|predictions?|updates?)\b[^.;!?]{0,40}?\b(?:is|are|was|were|became|becomes|"
    r"ha(?:s|ve|d) become|went|turned|ha[sd]|contains?|returned|got)\s+(?:a\s+|an\s+)?"
    r"(?:infinite\s+or\s+|inf\s+or\s+)?(?:nan|inf|infinite|non-?finite|not\s+finite)\b",
    re.IGNORECASE)
# `nan or inf in input tensor`, `NaN detected in loss`, `Detected inf/nan in gradients`,
# `Function 'XBackward0' returned nan values`.
_VALUE_IN = lazy_re.compile(
    r"\b(?:nan|inf|non-?finite)(?:\s*(?:or|/)\s*(?:nan|inf))?\s+(?:values?\s+)?"
    r"(?:(?:detected|found|encountered|appeared|occurred)\s+)?in\s+(?:the\s+|its\s+)?"
    r"(?P<name>input tensor|loss|grad(?:ient)?s?|outputs?|logits|weights|tensor)|"
    r"\b(?:detected|found|encountered)\s+(?:a\s+)?(?:nan|inf|non-?finite)(?:\s*(?:or|/)\s*"
    r"(?:nan|inf))?\s+(?:values?\s+)?(?:in\s+)?(?:the\s+)?"
    r"(?P<name2>loss|grad(?:ient)?s?|outputs?|logits|weights)|"
    r"\breturned\s+(?P<name3>nan|inf)\s+values\b|"
    r"\bnan in summary histogram for:?\s*(?P<name4>[\w/.-]+)|"
    # `NaN loss detected! Skipping batch.`, `inf grad norm`, Keras' and fastai's
    # TerminateOnNaN `Batch 3: Invalid loss, terminating training` (not a loss function
    # or a setting that is invalid)
    r"\b(?:(?:nan|inf|non-?finite|invalid)\s+(?P<name5>loss(?:es)?|grad(?:ient)?s?(?:\s+norms?)?)|"
    r"(?:nan|inf|non-?finite)\s+(?P<name8>predictions?|updates?))"
    r"\b(?!\s*(?:function|fn|type|name|class|config|argument|reduction|[:'\"=(]))|"
    # the value in brackets after its name (a SimVP trainer's `⚠️ Abnormal GradNorm (inf),
    # skipping step`)
    r"\b(?P<name9>loss|grad(?:ient)?[ _]?norm)\s*\(\s*[-+]?(?:nan|inf)\s*\)|"
    # Lightning's EarlyStopping(check_finite=True): `Monitored metric val_loss = nan is not
    # finite.`
    r"\bmetric\s+(?P<name6>[\w/.-]+)\s*=\s*[-+]?(?:nan|inf)\b|"
    # ESPnet2: `The gradients at all steps are invalid in this epoch.`
    r"\b(?P<name7>loss(?:es)?|grad(?:ient)?s?(?:[ _]norms?)?)\b[^.;!?]{0,40}?"
    r"\b(?:is|are|was|were)\s+invalid\b", re.IGNORECASE)
# An exception that says it in its name or its message: TensorFlow's
# `NanLossDuringTrainingError: NaN loss during training.` (`NanTensorHook`), Estimator's
# `Model diverged with loss = NaN.`, `tf.debugging.check_numerics`' `InvalidArgumentError:
# Checking loss : Tensor had NaN values [Op:CheckNumerics]`, JAX's debug_nans
# `FloatingPointError: invalid value (nan) encountered in mul`, any
# `<Name>(Error|Exception): … nan …` whose name or message says non-finite or diverged.
_EXCEPTION_SAYS = lazy_re.compile(
    r"\b(?P<name>\w*?(?:NaN|Nan|NAN|Inf|NonFinite|Nonfinite|NotFinite|Diverge[dn]?\w*?))"
    r"(?:Loss)?\w*?(?:Error|Exception)\b|"
    r"\b(?:[Mm]odel|[Tt]raining|[Ll]oss|[Oo]ptimi[sz]ation)\s+(?:has\s+)?diverged\b"
    r"(?:[^.;!?]{0,40}?\b(?P<name2>loss)\b)?|"
    r"^(?:[\w.]+\.)?(?!(?:Key|Attribute|Import|ModuleNotFound|Name|Syntax|FileNotFound|Index)"
    r"Error\b)\w*(?:Error|Exception):\s(?:.*?\b(?P<name3>loss|grad(?:ient)?s?)\b)?"
    r".*?(?:\b(?:nan|NaN|NAN|Inf|inf|infinity|Infinity)\b(?!\s*(?:=|:)\s*(?:True|False))|"
    r"\bdiverged\b)")
# An exception about the data fed in (`ValueError: Input contains NaN, infinity or a value
# too large for dtype('float64')`, `Input X contains NaN`, `array must not contain infs or
# NaNs`): a data error, which fails as a crash of its own, not a value of the training.
_DATA_SUBJECT = lazy_re.compile(r"\b(?:[Ii]nput|[Aa]rray|[Dd]ata(?:set|frame)?|[Ll]abels?|"
                                r"[Ff]eatures?|[Cc]olumns?|X|y)\b\s+(?:[Xy]\s+)?"
                                r"(?:contains?|must not contain|has)\b")
# What a framework's NaN guard says when it ends training (the run is then FAILED). Some
# stop the loop and let the process exit cleanly: Keras' and fastai's TerminateOnNaN
# `Invalid loss, terminating training`, ESPnet2's `This training was stopped`, Lightning's
# `Signaling Trainer to stop`. Others raise: TensorFlow's coordinator (`Error reported to
# Coordinator`, re-raised when the threads join) and NanTensorHook (`Model diverged with
# loss = NaN.`, then NanLossDuringTrainingError), DeepSpeed's `Exiting run`.
_GUARD_STOPS = lazy_re.compile(r"\bterminat(?:e|es|ed|ing)\s+(?:the\s+)?(?:training|run)\b|"
                               r"\b(?:training|run)\s+(?:(?:was|is|has\s+been|will\s+be)\s+)?"
                               r"(?:stopped|terminated|aborted|halted|suspend(?:s|ed)?)\b|"
                               r"\bsuspend(?:s|ing|ed)?\s+(?:the\s+)?training\b|"
                               r"\b(?:stop|stops|stopping|stopped|halting)\s+(?:the\s+)?"
                               r"training\b|Signaling Trainer to stop", re.IGNORECASE)
_RAISES = lazy_re.compile(r"Error reported to Coordinator|\b[Mm]odel diverged\b|"
                          r"\bExiting (?:the )?run\b|\babort(?:ing|ed)?\s+(?:the\s+)?training\b",
                          re.IGNORECASE)
# How a stop is named in its failure event: a guard's clean stop is explained by the NaN
# itself (no crash beside it); a raised one is a crash as well.
GUARD_STOP = "a NaN guard stopped training"
RAISED_STOP = "training ended on a non-finite value"
# A progress bar's counter before text glued to it (`  3/234 [....] - loss: 44.4Batch 3:
# Invalid loss, terminating training`): indented, yet not a traceback's line.
_BAR_START = lazy_re.compile(r"^\s+\d+/\d+\s")
_STEP = lazy_re.compile(r"\b(?:iteration|iter|step|global_step)\s*[=:#]?\s*(\d+)", re.IGNORECASE)
# (Vowpal Wabbit zeroes a NaN update and goes on: `update is NAN, replacing with 0`)
_SKIPPED = lazy_re.compile(r"\b(?:skip(?:s|ping|ped)?|ignor(?:e|es|ing|ed)|"
                           r"replac(?:e|es|ing|ed)\s+(?:it\s+)?with\s+0)\b", re.IGNORECASE)
# Where a sentence about a NaN is code or a setting, not an event.
_NOT_AN_EVENT = lazy_re.compile(r"^\s*(?:if|elif|while|assert|#)\b|[=:]\s*(?:True|False)\b|"
                                r"\b(?:check|detect)_(?:nan|anomaly)\s*[=:]|\?$")
# What a sentence about a non-finite value needs (checked first: most lines lack it;
# `INFO` is no `inf`).
SAID_HINT = lazy_re.compile(
    r"\b(?:nan|NaN|NAN|Nan|inf|Inf|INF|infinite|Infinite|Infinity)s?\b|finite|"
                       r"(?:NaN|Nan|NAN|Inf)\w*(?:Error|Exception)\b|diverged|[Ii]nvalid")
# Skips said again and again with no training record in between: a run that updates
# nothing any more.
SKIPS_IN_A_ROW = 3


def _metric(name: str) -> str:
    name = name.lower()
    if name.startswith("loss"):
        return "loss"
    if name.startswith("grad"):
        return "grad_norm"
    if name in ("nan", "inf"):
        return "grad_norm"  # autograd's anomaly mode: a backward function's output
    return name.replace(" ", "_")


# A computation that says it produced NaNs: DifferentialEquations.jl's solver inside a
# neural-ODE loss (`┌ Warning: First function call produced NaNs. Exiting.` — the solver
# gives up on this solve, the training loop goes on), a forward pass or a model that
# `produced nan`. What it produced is what the loss is computed from: the loss's NaN.
_PRODUCED = lazy_re.compile(r"\b(?:produced|produces|yielded|yields)\s+(?:a\s+)?"
                            r"(?:nan|inf|non-?finite)s?\b(?!\s*(?:=|:)\s*(?:True|False))",
                            re.IGNORECASE)


# A line that is nothing but the report, naming no value: a hand-written loop's guard
# (`NaN detected`, `inf found!`, `[train] NaN encountered.`). Anchored at both ends, so
# that prose around it (`no NaN detected so far`) is not one.
_BARE_REPORT = lazy_re.compile(
    r"^\W*(?:\[[^\]]{0,40}\]\s*)?(?:nan|inf|non-?finite)(?:\s*(?:or|/)\s*(?:nan|inf))?"
    r"\s+(?:values?\s+)?(?:detected|found|encountered)\b[\s.!]*$", re.IGNORECASE)


# A row of a figures table that is a name and a non-finite value alone, padded apart
# (rlpyt's and rllab's tabular dump behind their logger's head, `2020-12-08 21:40:45.48  |
# model_loss/Average              nan`; `tabulate`'s plain rows; a `| name | nan |` box),
# its name a loss or a gradient's: that figure's NaN, whether or not the table around it
# was read (an excerpt cut inside one, with no counter over it).
_TABLE_ROW = lazy_re.compile(r"^(?:.*?\|\s*)?(?P<name>[A-Za-z][\w./-]*)(?:\s{2,}|\s*\|\s*)"
                             r"[-+]?(?:nan|inf)\s*\|?\s*$", re.IGNORECASE)
_TABLE_NAME = lazy_re.compile(r"loss|grad", re.IGNORECASE)


# A denial just before what the sentence names: the check found nothing.
_DENIED = lazy_re.compile(r"\b(?:no|not|without|never|zero)\s+(?:\w+\s+)?$", re.IGNORECASE)


# A best-so-far or a bound named just before the subject (`lowest train loss is inf`):
# infinite until the first value, by design.
_BEST_SO_FAR = lazy_re.compile(rf"\b(?:{'|'.join(BEST_SO_FAR_WORDS)})[ _]", re.IGNORECASE)


def said_non_finite(line: str) -> tuple[str, int | None, bool] | None:
    """`(metric, step or None, skipped)` when the line says a value is non-finite;
    `skipped`: the trainer says it skipped the update and went on. A report that names
    no value is the loss's (what a loop's guard checks), reported all the same."""
    row = _TABLE_ROW.match(line)
    if row is not None and _TABLE_NAME.search(row.group("name")) \
            and not _BEST_SO_FAR.search(row.group("name")):  # (`best_loss  inf`: a sentinel)
        return (row.group("name").lower(), None, False)
    match = _SUBJECT_SAYS.search(line) or _VALUE_IN.search(line)
    if match is None:
        if _BARE_REPORT.match(line):
            return ("loss", None, _SKIPPED.search(line) is not None)
        if _PRODUCED.search(line) and not _NOT_AN_EVENT.search(line):
            step = _STEP.search(line)
            return ("loss", int(step.group(1)) if step else None, False)
        return _exception_says(line)
    if _NOT_AN_EVENT.search(line):
        return None
    if _BEST_SO_FAR.search(line, max(0, match.start() - 30), match.start() + 1):
        return None  # `Last lowest train loss is inf.`: a best-so-far's starting sentinel
    if _DENIED.search(line[max(0, match.start() - 24):match.start()]) is not None:
        return None  # `No NaN gradients found`, `without nan predictions`: a check passed
    name = next(g for g in match.groups() if g is not None)
    step = _STEP.search(line)
    return (_metric(name), int(step.group(1)) if step else None,
            _SKIPPED.search(line) is not None)


def _exception_says(line: str) -> tuple[str, int | None, bool] | None:
    """An exception (or a framework's error sentence) that names a NaN, an Inf or a
    divergence without a subject `_SUBJECT_SAYS` knows: the loss, unless it names the
    gradients."""
    match = _EXCEPTION_SAYS.search(line)
    if match is None or _NOT_AN_EVENT.search(line) or _DATA_SUBJECT.search(line):
        return None
    said = (match.group("name3") or match.group("name2") or "loss").lower()
    step = _STEP.search(line)
    return (_metric(said), int(step.group(1)) if step else None, False)


def stops_training(line: str) -> str | None:
    """How a line that says a value is non-finite also says training ends on it
    (`GUARD_STOP`: a guard stopped the loop; `RAISED_STOP`: it raised, or an exception
    at the top level names the NaN), or None. Training that goes on after it undoes it."""
    if _GUARD_STOPS.search(line) is not None:
        return GUARD_STOP
    if _RAISES.search(line) is not None:
        return RAISED_STOP
    raised = exception_line(line.strip())
    if raised is not None and not raised[0].endswith("Warning"):  # a warning goes on
        return RAISED_STOP
    return None


# What a sentence that training stops has (checked only right after a non-finite value).
_STOP_WORD = lazy_re.compile(r"[Ss]top|[Ss]uspend|[Tt]erminat|[Hh]alt|[Aa]bort")
# A sentence about a non-finite value has one of these (`INFO` has none of them).
_SAID_WORD = lazy_re.compile(r"nan|NaN|NAN|Nan|inf|Inf|finite")


class NonFiniteWords:
    """The reader of sentences that say a value is non-finite (see the module): counts
    the skip sentences between training records, and holds a NaN guard's stop until the
    bar's last redraw after it has been read."""

    def __init__(self) -> None:
        self._skips = 0
        self._skipped_now = False  # the line being read said its update was skipped
        self._after_nan = False  # the latest training record had a non-finite value
        # A NaN guard's stop, and the lines left in which a record may still be the bar's
        # last redraw of the batch it stopped on (see `after_guard`).
        self._guard: tuple[LogEvent, int] | None = None

    def wants(self, line: Line) -> bool:
        text = line.text
        if self._after_nan and _STOP_WORD.search(text) is not None:
            return True
        return ("finite" in text or "nvalid" in text
                or (line.hints_non_finite and _SAID_WORD.search(text) is not None)) \
            and SAID_HINT.search(text) is not None

    def latest(self, metrics: dict[str, float]) -> None:
        """The latest training record's values: a sentence that training stops, said
        right after a non-finite one, is the guard that stopped it on that value."""
        self._after_nan = any(not math.isfinite(v) for v in metrics.values())

    def amend(self, line: Line, record: Record | None, context: ParseContext) -> Record | None:
        """A sentence that says a value is NaN or Inf: that metric is non-finite, at the
        step the sentence names when it is not behind."""
        text = line.text
        self._skipped_now = False
        said = self.read(text)
        if said is None and self._skipped_now and record is not None:
            # The value the line names is the skipped update's (`Abnormal GradNorm (inf),
            # skipping step`, read as a figure too): the guard at work, no value of the
            # training's.
            return replace(record, metrics={k: v for k, v in record.metrics.items()
                                            if math.isfinite(v)})
        if said is None:
            if self._after_nan and not text[:1].isspace() and _GUARD_STOPS.search(text):
                # `LOSS : nan`, then `Loss got n a n, training suspends..`: the loop's own
                # guard, whatever it calls the value.
                return self._guard_stop(line, record, context, {}, GUARD_STOP, context.step)
            return record
        metrics, named = said
        step = context.step
        if record is not None and any(not math.isfinite(v) for v in record.metrics.values()):
            metrics, named = {}, None  # the line's own values say it already
        if named is not None and (step is None or named >= step):
            step = context.step = named
        stop = stops_training(text)
        if stop is None and _BARE_REPORT.match(text) and not _SKIPPED.search(text):
            # A loop's guard that says nothing else (`NaN detected`) returns from the
            # loop in the code that prints it (Nematus-style `if isnan(cost): print('NaN
            # detected'); return`): a stop, undone by training that goes on after it.
            stop = GUARD_STOP
        return self._guard_stop(line, record, context, metrics, stop, step)

    def _guard_stop(self, line: Line, record: Record | None, context: ParseContext,
                    metrics: dict[str, float], stop: str | None,
                    step: int | None) -> Record | None:
        """The line's record with the NaN it says and, when it also says training stops
        on it, the stop as a failure."""
        text = line.text
        line.claimed = True
        events: tuple[LogEvent, ...] = ()
        if stop is not None:
            # A NaN guard ended training: a failure, as a traceback's last line is one
            # (training that goes on after it drops it), unless the line said it already
            # (parsing.said_failures); either way it is said again after the bar's redraw.
            said_already = None if record is None else next(
                (e for e in record.events if e.kind is EventKind.EXCEPTION), None)
            if said_already is None:
                events = (LogEvent(EventKind.EXCEPTION, text.strip()[:500],
                                   f"{stop}: {text.strip()[:280]}"),)
            self._guard = (said_already or events[0], 3)
        if record is None:
            return Record(step=step, target_steps=context.target, metrics=metrics,
                          rank=line.rank, fmt="words", events=events)
        return replace(record, step=step if record.step is None or (step is not None
                       and step > record.step) else record.step,
                       metrics={**record.metrics, **metrics},
                       events=(*record.events, *events))

    @property
    def guarding(self) -> bool:
        """Whether a NaN guard's stop waits to be said again (see `after_guard`)."""
        return self._guard is not None

    def after_guard(self, record: Record | None) -> Record | None:
        """The record right after a NaN guard's stop is the progress bar's last redraw of
        the batch it stopped on (Keras prints `Batch 3: Invalid loss, terminating
        training`, then `4/234 … loss: inf`), not training going on: the stop is said
        again after its step, so that it stands."""
        assert self._guard is not None
        event, lines_left = self._guard
        if record is not None and record.step is not None and event not in record.events:
            self._guard = None
            return replace(record, events=(*record.events, event))
        self._guard = (event, lines_left - 1) if lines_left > 1 else None
        return record

    def trained(self) -> None:
        self._skips = 0

    def read(self, line: str) -> tuple[dict[str, float], int | None] | None:
        """The non-finite metric a line says it saw, with the step it names."""
        if line[:1].isspace() and _BAR_START.match(line) is None:
            return None  # a traceback's frame or a quoted source line
        said = said_non_finite(line)
        if said is None:
            return None
        name, step, skipped = said
        # A loss is never made non-finite by fp16 loss scaling (the forward pass is not
        # scaled): a batch skipped for a NaN loss is the model or the data going wrong.
        # A skipped gradient is what a loss scaler does; only a run of them counts.
        if skipped and name != "loss":
            self._skips += 1
            if self._skips < SKIPS_IN_A_ROW:
                self._skipped_now = True
                return None
        return {name: math.nan}, step
