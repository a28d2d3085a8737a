"""A step's duration printed bare in parentheses at the end of its line, with no name:
NiftyNet's `Training iter 3151, loss=0.31178414821624756 (3.145937s)`.

The formats read the line's named values and leave the parenthesis (no key, no `=`), so
a run that prints its time per step only this way looked to babysit as if it printed
none. Read as `step_time` (seconds), only on a record of a training step (a step
number and a loss, no epoch: an epoch line's `(12s)` is the epoch's time, not a
step's) that names no time of its own.
"""

from __future__ import annotations

from dataclasses import replace

from babysit import lazy_re
from babysit.metric_names import step_time_key
from babysit.model import Record
from babysit.parsing.readers import Line, ParseContext

_TRAILING = lazy_re.compile(r"\(\s*(\d+(?:\.\d+)?)\s?(ms|s|sec|secs|seconds)\s*\)\s*$")
_KEY = "step_time"


def trailing_seconds(text: str) -> float | None:
    """The seconds a line's closing parenthesis gives (`(3.145937s)`, `(812 ms)`), or
    None."""
    found = _TRAILING.search(text)
    if found is None:
        return None
    value = float(found.group(1))
    return value / 1000.0 if found.group(2) == "ms" else value


class TrailingDuration:
    """Adds `step_time` from a bare trailing `(…s)` (see the module)."""

    def wants(self, line: Line) -> bool:
        text = line.text
        return text.endswith(")") and "s)" in text[-8:]

    def amend(self, line: Line, record: Record | None, context: ParseContext) -> Record | None:
        if record is None or record.step is None or record.epoch is not None:
            return record
        metrics = record.metrics
        if not any("loss" in k for k in metrics) or step_time_key(metrics) is not None:
            return record
        seconds = trailing_seconds(line.text)
        if seconds is None:
            return record
        return replace(record, metrics={**metrics, _KEY: seconds})
