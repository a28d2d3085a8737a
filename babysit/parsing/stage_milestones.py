"""A pipeline's numbered stages as the training babysit saw, for a log with no step or metric.

Some scripts announce only their stages (AD-Styles/gpt2-korean-finetuning, python
logging over CRLF: `Step 5: Starting fine-tuning process...`, `Step 6: Saving fine-tuned
model to './gpt2-korean-finetuned'`, `Step 7: Running inference tests...`, then `Process
completed successfully.`). No loss is printed, but a stage that trains followed by a
later stage of the same launch is training that returned: the pipeline went on past it.

A training stage with nothing after it is no such evidence (a launch that stops at
`Step 5: Starting fine-tuning process...` and is launched again). Stage numbers going
back (`Step 1` again) begin a new launch, whose training stage must itself be passed.

Only for a log whose progress babysit has not read otherwise: a run that prints steps
or training records says how far it got by them.
"""

from __future__ import annotations

import re
from dataclasses import replace

from babysit import lazy_re
from babysit.model import EventKind, LogEvent, Record
from babysit.parsing.log_prefix import message
from babysit.parsing.readers import STEP_UNITS, Line, ParseContext

# The detail of the NEW_STAGE event this reader adds: the run's training stage is over.
TRAINING_STAGE_PASSED = "a training stage finished"

# `Step 5: Starting fine-tuning process...`, `Stage 2 - Training the model`: a number,
# then words (not `Step 5: loss=0.3`, which the formats read as a step).
_STAGE = lazy_re.compile(r"(?:Step|STEP|Stage|STAGE|Phase|PHASE)\s+(?P<n>\d{1,2})\s*"
                         r"(?::|\.|\)|-)\s+(?P<what>[A-Za-z][^=]*)$")
# A stage that is the training itself, by its first words: `Starting fine-tuning`,
# `Training the model`, `Fine-tuning...`; not `Loading training data`.
_TRAINS = lazy_re.compile(r"(?:(?:Start(?:ing|ed)?|Begin(?:ning)?|Running|Launching|Run)\s+"
                          r"(?:the\s+)?(?:model\s+)?)?(?:fine[- ]?tun|finetun|train(?:ing)?\b|"
                          r"fit(?:ting)?\b)", re.IGNORECASE)


class StageMilestones:
    """A RecordReader: a NEW_STAGE event (detail `TRAINING_STAGE_PASSED`) at the first
    stage after a launch's training stage, in a log that gives no other progress."""

    def __init__(self) -> None:
        self._last: int | None = None  # the latest stage number of this launch
        self._training: int | None = None  # this launch's training stage, once announced
        self._passed = False  # this launch's training stage was followed by another

    def wants(self, line: Line) -> bool:
        text = line.text
        return ("tep " in text or "TEP " in text or "tage " in text or "TAGE " in text
                or "hase " in text or "HASE " in text) and not line.in_traceback

    def amend(self, line: Line, record: Record | None, context: ParseContext) -> Record | None:
        if context.progress_unit in STEP_UNITS or (record is not None and record.metrics):
            return record
        stage = _STAGE.match(message(line.text).strip())
        if stage is None:
            return record
        number = int(stage.group("n"))
        if self._last is not None and number <= self._last:  # `Step 1` again: a new launch
            self._training, self._passed = None, False
        self._last = number
        line.claimed = True
        if self._training is not None and number > self._training and not self._passed:
            self._passed = True
            event = LogEvent(EventKind.NEW_STAGE, line.text.strip()[:500], TRAINING_STAGE_PASSED)
            if record is None:
                return Record(step=context.step, events=(event,), rank=line.rank)
            return replace(record, events=(*record.events, event))
        if self._training is None and _TRAINS.match(stage.group("what")):
            self._training = number
        return record
