"""A tracker's picture of a metric over the whole run, printed when the run ends.

The W&B client closes a run with its `Run history:`, one sparkline a metric, each bar one
of eight heights between the metric's least and greatest value over the run:

    wandb: Run history:
    wandb: loss ▃▆█▆▅▂▅▆▅▇▇▅▃▇▆█▄▅▇▆▇▆▃▂▄▇█▅▄█▃▃▃▃▆▄▆▄▄▁
    wandb:   lr ███████▇▇▇▇▇▆▆▆▆▅▅▅▅▄▄▄▄▃▃▃▃▂▂▂▂▂▁▁▁▁▁▁▁

A script that prints nothing per step (a JAX fine-tune on LSF) leaves only that as
evidence of how its loss went. The line is read as a `HISTORY` event whose detail is the
metric's name and its heights (0 to 7, `loss 257541…`); whether the curve shows
learning is the rules' to judge (`rules/history_shape`). No value is read: the bars have
no scale.
"""

from __future__ import annotations

from dataclasses import replace

from babysit import lazy_re
from babysit.model import EventKind, LogEvent, Record
from babysit.parsing.readers import Line, ParseContext

BARS = "▁▂▃▄▅▆▇█"
_SPARKLINE = lazy_re.compile(r"wandb:\s+(?P<name>\S+)\s+(?P<bars>[▁▂▃▄▅▆▇█]{2,})\s*$")


class TrackerHistory:
    """A RecordReader: a metric's sparkline in W&B's closing `Run history:`."""

    def wants(self, line: Line) -> bool:
        return "wandb:" in line.text and "▁" in line.text

    def amend(self, line: Line, record: Record | None, context: ParseContext) -> Record | None:
        found = _SPARKLINE.search(line.text)
        if found is None:
            return record
        heights = "".join(str(BARS.index(bar)) for bar in found.group("bars"))
        line.claimed = True
        event = LogEvent(EventKind.HISTORY, line.text.strip()[:500],
                         f"{found.group('name')} {heights}")
        if record is None:
            # No step: the history is printed after the run, at no step of its own.
            return Record(events=(event,))
        return replace(record, events=(*record.events, event))
