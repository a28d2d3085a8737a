"""A trained model's closing figures, read in a log that printed nothing else of training.

Some trainers print no line per step, only what the trained model scores at the end
(NAM, neural-amp-modeler's A2: `Error-signal ratio (channels_3) = 0.02888`, `Error-signal
ratio (channels_8) = 0.007281`, `Aggregate error-signal ratio = 0.03616`, then `Model
training complete!`). The generic key/value format leaves such a line alone (its name is
no known metric, and a figure without a step is a summary, not a training record), so
babysit read no metric at all and could not tell a finished run from one that never
trained. A figure that names what it measures (an error, a loss, a score...) is the
model's evaluation: read as one (`eval/…`), it is what a completion line is checked
against, never a training record or a step.

Only a line that is wholly one such figure (a sentence that holds a number is not), and
only in a log whose progress babysit has not read otherwise: a run with steps or
training records of its own has its evaluations read by the formats.
"""

from __future__ import annotations

import re
from dataclasses import replace

from babysit import lazy_re
from babysit.model import Record
from babysit.parsing.log_prefix import message
from babysit.parsing.readers import STEP_UNITS, Line, ParseContext
from babysit.parsing.text import normalise_key, to_number

# `Aggregate error-signal ratio = 0.03616`, `Error-signal ratio (channels_3) = 0.02888`,
# `Test MSE: 14.2`: up to six words, an optional qualifier in brackets, then the number.
_FIGURE = lazy_re.compile(
    r"(?P<name>[A-Za-z][\w.-]*(?: [A-Za-z][\w.-]*){0,5})(?:\s*\((?P<qual>[\w .,/-]{1,30})\))?"
    r"\s*(?P<sep>[=:]|,)\s*(?P<value>[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*%?")
# What a trained model is scored by, as a whole word (or a hyphenated word's part) of
# the figure's name.
_MEASURE = lazy_re.compile(r"(?:^|[\s_-])(?:error|loss|accuracy|acc|score|mse|mae|rmse|psnr|"
                           r"ssim|auc|f1|bleu|rouge|wer|cer|perplexity|ppl|esr|precision|"
                           r"recall|iou|dice|map)(?:$|[\s_-])", re.IGNORECASE)

# A setting that names a measure (`max error = 0.01`, `loss weight: 0.5`): the run's
# configuration, printed before it trains, not what it scored.
_SETTING = lazy_re.compile(r"\b(?:max|min|target|threshold|tolerance|tol|weight|coef\w*|"
                           r"type|mode|scale|factor|patience|delta)\b", re.IGNORECASE)

# A figure's name that says an evaluation scored it (`Detection evaluation mAp`, `val mAP`).
_EVALUATED = lazy_re.compile(r"\b(?:eval\w*|val|valid|validat\w+|test|testing|dev)\b",
                             re.IGNORECASE)


class ClosingMeasures:
    """A RecordReader: an evaluation's figure (`eval/<name>`) from a line that is only a
    named measure and its number, in a log that gave no step or training record."""

    def wants(self, line: Line) -> bool:
        text = line.text
        return ("=" in text or ":" in text or ", " in text) and not line.in_traceback

    def amend(self, line: Line, record: Record | None, context: ParseContext) -> Record | None:
        unit = context.progress_unit
        stepped = unit in STEP_UNITS
        if record is not None and (stepped or unit == "epoch" or record.metrics):
            return record
        figure = _FIGURE.fullmatch(message(line.text).strip())
        if figure is None or _MEASURE.search(figure.group("name")) is None \
                or _SETTING.search(figure.group("name")) is not None:
            return record
        evaluated = _EVALUATED.search(figure.group("name")) is not None
        if (stepped or figure.group("sep") == ",") and not evaluated:
            # (in a log with steps, only a figure its name says an evaluation scored:
            # `Detection evaluation mAp=0.0003` under a rule after `iter: 5000`; a bare
            # `Loss: 0.5` there may be the training's own; and a name set off by a comma
            # only so: DyGLib's `validate average_precision, 0.97262706`)
            return record
        value = to_number(figure.group("value"))
        if value is None or "." not in figure.group("value"):
            return record  # a whole number is a count or a setting (`Mixed precision: 16`)
        name = normalise_key(figure.group("name"))
        qualifier = figure.group("qual")
        if qualifier:
            name = f"{name}_{normalise_key(qualifier)}"
        line.claimed = True
        metrics = {f"eval/{name}": value}
        if evaluated and (stepped or unit == "epoch"):
            # an evaluation in a log counted in steps, records or epochs: a point of the
            # run's curve, at where it stands
            return Record(step=context.step, metrics=metrics, rank=line.rank)
        # An isolated figure, not a point of a curve (`sparse`): the rules that judge a
        # series over time (an evaluation getting worse) do not weigh it.
        if record is None:
            return Record(step=context.step, metrics=metrics, rank=line.rank, sparse=True)
        return replace(record, metrics=metrics, sparse=True)
