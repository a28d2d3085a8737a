"""The steps a run's checkpoints are named by, as its progress when it prints no other.

Some loops log nothing per step but a memory figure (ColossalAI's DreamBooth example:
`max GPU_mem cost is 3812.8 MB`) and name each checkpoint by the step it was saved at
(`Saving model checkpoint to …/weight_output/checkpoint-500`, then `checkpoint-1000`).
Those names are the run's own step counter: read as its steps, a save at the planned
total (`Total optimization steps = 1000`) shows the plan reached.

Only for a log that gives no step or training record of its own (its own counter
decides otherwise), and only once a planned total of steps is known: a checkpoint's
number is then read in the unit of that plan. A Ray Train index (`checkpoint_000009`,
counted from 0) in a run with no plan in steps gives no step.
"""

from __future__ import annotations

from dataclasses import replace

from babysit.model import EventKind, Record
from babysit.parsing.plan import saved_step
from babysit.parsing.readers import STEP_UNITS, Line, ParseContext


class SavedSteps:
    """A RecordReader: the step a saved checkpoint's name gives, for a log whose steps
    only its checkpoints say."""

    def __init__(self) -> None:
        self._given: int | None = None  # the last step this reader gave

    def wants(self, line: Line) -> bool:
        text = line.text
        return ("heckpoint" in text or "ckpt" in text or "aving" in text
                or "aved" in text) and not line.in_traceback

    def amend(self, line: Line, record: Record | None, context: ParseContext) -> Record | None:
        if record is None or not context.target:
            return record
        if context.progress_unit in STEP_UNITS and (context.step is None
                                                or context.step != self._given):
            return record  # the log counts its own steps or records
        for event in record.events:
            if event.kind is not EventKind.CHECKPOINT_SAVED:
                continue
            step = saved_step(event.detail)
            if step is None or step <= (context.step or 0) or step > 1000 * context.target:
                continue
            self._given = context.step = step
            context.step_found = True
            line.advanced = True
            return replace(record, step=step, target_steps=record.target_steps or context.target)
        return record
