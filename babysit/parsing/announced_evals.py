"""An evaluation announced on its own line, then its figures under the training's names.

The Open Catalyst trainers (fairchem's `ocp`, and the benchmarks built on them) print
`Evaluating on val.` and then one line of the evaluation's figures, with the very names
the training's lines use and no step (`forces_mae: 0.2706, …, loss: 150.9494, epoch:
1.0000` between training lines `…, loss: 6.71e+01, lr: 1.00e-03, epoch: 2.00e+00, step:
3.00e+03`). Read as the training's, every evaluation was a loss spike (a DimeNet++ run's
validation loss of 131-140 beside a training loss of 7: twenty-five spikes, and no
validation curve to see it overfit). The record that follows such a line without a step,
in a run that prints one, is the evaluation's: its names take the split's.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.log_prefix import message

# `Evaluating on val.`, `Validating on the dev set`, `Running evaluation on test:`.
_ANNOUNCED = lazy_re.compile(
    r"^\W*(?:(?:INFO|DEBUG|NOTICE)\W*)?"
    r"(?:Evaluating|Validating|Testing|Running (?:evaluation|validation))\s+on\s+(?:the\s+)?"
    r"(?P<split>val|valid|validation|dev|test|eval)\b(?:\s+(?:set|split|data(?:set)?))?"
    r"[\s.:!…]*$")
_SPLIT_NAME = {"valid": "val", "validation": "val", "eval": "val"}


class AnnouncedEvals:
    """The split an announcement named, until the next record takes it."""

    def __init__(self) -> None:
        self.split: str | None = None

    def line(self, text: str) -> bool:
        """Whether the line announces an evaluation (then the split waits for its record)."""
        if " on " not in text or not ("valuat" in text or "alidat" in text or "esting" in text):
            return False
        found = _ANNOUNCED.match(message(text))
        if found is None:
            return False
        split = found.group("split")
        self.split = _SPLIT_NAME.get(split, split)
        return True

    def take(self) -> str | None:
        """The split waiting for its record, once (the next record is the evaluation's or
        the announcement was of something else)."""
        split, self.split = self.split, None
        return split
