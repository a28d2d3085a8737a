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

# `Evaluating on val.`, `Validating on the dev set`, `Running evaluation on test:`; or
# the pass named by its verb and the epoch it runs in (DiffV2IQA's `Running testing in
# epoch 54`, then `Epoch:54 ===== loss:7.944 ===== SRCC:-0.2564` under the names its
# training line `train epoch:55 / loss:0.01411 / SRCC:0.8721` uses).
_ANNOUNCED = lazy_re.compile(
    r"^\W*(?:(?:INFO|DEBUG|NOTICE)\W*)?"
    r"(?:(?:Evaluating|Validating|Testing|Running (?:evaluation|validation))\s+on\s+(?:the\s+)?"
    r"(?P<split>val|valid|validation|dev|test|eval)\b(?:\s+(?:set|split|data(?:set)?))?|"
    r"(?:Running |Starting |Start )?(?P<verb>[Ee]valuat(?:ing|ion)|[Vv]alidat(?:ing|ion)|"
    r"[Tt]esting)\s+(?:in|at|after|for)\s+(?P<counter>epoch|step|iter(?:ation)?)\s*(?P<n>\d+))"
    r"[\s.:!…]*$")
_SPLIT_NAME = {"valid": "val", "validation": "val", "eval": "val"}
_VERB_SPLIT = {"e": "val", "v": "val", "t": "test"}


class AnnouncedEvals:
    """The split an announcement named, until the next record takes it."""

    def __init__(self) -> None:
        self.split: str | None = None
        # The epoch the announcement named (`Running testing in epoch 54`): a log that
        # prints no step still knows which record is the pass's, the one of that epoch.
        self.epoch: int | None = None

    def line(self, text: str) -> bool:
        """Whether the line announces an evaluation (then the split waits for its record)."""
        if not ("valuat" in text or "alidat" in text or "esting" in text) \
                or not (" on " in text or " in " in text or " at " in text
                        or " after " in text or " for " in text):
            return False
        found = _ANNOUNCED.match(message(text))
        if found is None:
            return False
        split = found.group("split")
        self.split = _SPLIT_NAME.get(split, split) if split is not None \
            else _VERB_SPLIT[found.group("verb")[0].lower()]
        self.epoch = int(found.group("n")) if found.group("counter") == "epoch" else None
        return True

    def take(self) -> str | None:
        """The split waiting for its record, once (the next record is the evaluation's or
        the announcement was of something else)."""
        split, self.split, self.epoch = self.split, None, None
        return split
