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

A script may name its phases without numbers (a Keras CheXNet run with `verbose=0`:
`Training model..`, then 22 minutes later `Model saved..`, then the test's `loss: 0.79,
Accuracy: 0.89`). The model saved after the training phase it announced, with no record
between, and then something else printed (the test's figures, the next phase) is the
training call returned and the script gone on past it: the loop is done (LOOP_DONE,
SUCCEEDED once the log has stopped). A save with nothing after it may be a periodic
checkpoint's, and is no such evidence.
"""

from __future__ import annotations

import re
from dataclasses import replace

from babysit import lazy_re
from babysit.model import EventKind, LogEvent, Record
from babysit.parsing.log_prefix import message
from babysit.parsing.loop_over import LOOP_DONE
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


# The training phase announced in words alone (`Training model..`, `Start training`,
# `Fitting the model...`), and the model saved (`Model saved..`, `Saving final model`).
_TRAINING_PHASE = lazy_re.compile(r"^(?:Start(?:ing|ed)?\s+)?(?:the\s+)?(?:training|fitting|"
                                  r"fine-?tuning)(?:\s+(?:the\s+)?(?:model|network|"
                                  r"classifier))?\s*(?:\.{2,}|…|:|!)?$", re.IGNORECASE)
_MODEL_SAVED = lazy_re.compile(r"^(?:(?:the\s+)?(?:final\s+)?(?:model|weights|network|"
                               r"classifier)\s+(?:was\s+|has been\s+)?saved|"
                               r"sav(?:ed|ing)\s+(?:the\s+)?(?:final\s+)?(?:model|weights))\b",
                               re.IGNORECASE)


class StageMilestones:
    """A RecordReader: a NEW_STAGE event (detail `TRAINING_STAGE_PASSED`) at the first
    stage after a launch's training stage, in a log that gives no other progress."""

    def __init__(self) -> None:
        self._last: int | None = None  # the latest stage number of this launch
        self._training: int | None = None  # this launch's training stage, once announced
        self._passed = False  # this launch's training stage was followed by another
        # An unnumbered training phase: announced, then its model saved, then said done.
        self._phase: str | None = None  # None, "announced", "saved", "done"

    def wants(self, line: Line) -> bool:
        text = line.text
        return (self._phase == "saved" or "tep " in text or "TEP " in text or "tage " in text
                or "TAGE " in text or "hase " in text or "HASE " in text or "rain" in text
                or "itting" in text or "ave" in text) and not line.in_traceback

    def amend(self, line: Line, record: Record | None, context: ParseContext) -> Record | None:
        if self._phase == "saved" or (self._phase != "done"
                                       and context.progress_unit not in STEP_UNITS):
            # (what follows the save is read whatever it is: the test's figures too)
            record = self._unnumbered(line, record, context)
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

    def _unnumbered(self, line: Line, record: Record | None,
                    context: ParseContext) -> Record | None:
        """An unnumbered training phase's course (see the module's note)."""
        said = message(line.text).strip()
        if self._phase == "saved" and said:
            self._phase = "done"
            event = LogEvent(EventKind.COMPLETED, line.text.strip()[:500], LOOP_DONE)
            if record is None:
                return Record(step=context.step, events=(event,), rank=line.rank)
            return replace(record, events=(*record.events, event))
        if record is not None and record.metrics:
            self._phase = None  # a record inside the phase: its progress is the records'
        elif _TRAINING_PHASE.match(said):
            self._phase = "announced"
        elif self._phase == "announced" and _MODEL_SAVED.match(said):
            self._phase = "saved"
        return record
