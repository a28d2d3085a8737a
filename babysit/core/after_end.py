"""Records that follow a run's own word that it finished and are no training: what the
run prints once training is over can look like training rows."""

from __future__ import annotations

from babysit import lazy_re
from babysit.model import Record

# The names babysit gives the columns of a bare row of numbers (no header named them).
_BARE_NAME = lazy_re.compile(r"^col\d+$")


def table_after_the_end(record: Record, said_finished: bool, step: int | None) -> bool:
    """Whether `record` is a bare row of numbers (a table no header named), read after
    the run said it finished, whose leading number is behind the run's step (or gives a
    step to a run that printed none): a results table printed after training (YOLOv5's
    per-class rows, `40  30  10  0.967  1  0.995` for a class named 40), not training
    that went on."""
    return said_finished and record.fmt == "table" and record.step is not None \
        and (step is None or record.step < step) and bool(record.metrics) \
        and all(_BARE_NAME.match(name) for name in record.metrics)
