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


# How far behind the run's last step a figure restated after its end may stand: a share.
_RESTATED_NEAR = 0.01


def restated_after_the_end(record: Record, said_finished: bool, step: int | None) -> bool:
    """Whether `record`, read after the run said it finished, names a step just behind the
    last one (within a hundredth of it): the closing summary restating where the result
    came from (ACT's `Training finished:`, then `Seed 0, val loss 0.373114 at step 1000`
    after its bar's 1001/1001), not a run gone back to train again (a relaunch starts far
    behind, at its first step or a checkpoint's)."""
    return said_finished and record.step is not None and step is not None \
        and step * (1 - _RESTATED_NEAR) <= record.step < step
