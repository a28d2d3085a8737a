"""An evaluation printed as a count of right answers out of the set's size, one line per
epoch, with nothing else on the line: the `network.py` of Nielsen's "Neural Networks and
Deep Learning" (`print("Epoch {0}: {1} / {2}".format(j, self.evaluate(test_data), n_test))`),
copied into countless hand-written numpy loops, sometimes wrapped in markdown
(`_Epoch 7: 969 / 10000_`).

Read as the epoch and its evaluation's accuracy (`eval_accuracy`, the share right), so the
rules that judge an accuracy see it: 969 of 10,000 right on every epoch is a model at
chance on ten digits, not a run that printed nothing. A line with more on it (a loss, a
rate) is a progress counter's (`epoch 003: 5 / 356 loss=9.44`), not this.

The loop prints the line once an epoch, after training it and before the next: in a log
that prints no step of its own, the line is how far training went (epoch j trained), as
a per-epoch loss line is elsewhere (see `marks_epoch`).
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.formats import Parsed

# The whole line: the epoch, the count right and the set's size (markdown's `_` or `*`
# around it, a tab after it).
_COUNT_RIGHT = lazy_re.compile(
    r"^[\s_*]*Epoch\s+(?P<epoch>\d+)\s*:\s*(?P<right>\d+)\s*/\s*(?P<size>\d+)[\s_*]*$")


FORMAT = "correct-count"


def marks_epoch(fmt: str) -> bool:
    """Whether a record of this format is printed once per epoch trained (see the module),
    an evaluation though it is."""
    return fmt == FORMAT


def parse_correct_count(segment: str) -> Parsed | None:
    """The epoch and `eval_accuracy` of a `Epoch j: right / size` line; None for any
    other line, or a count above the set's size (a counter of batches past its total
    is no evaluation either)."""
    if "Epoch" not in segment or "/" not in segment:
        return None
    match = _COUNT_RIGHT.match(segment)
    if match is None:
        return None
    right, size = int(match.group("right")), int(match.group("size"))
    if size <= 0 or right > size:
        return None
    return Parsed(FORMAT, epoch=float(match.group("epoch")),
                  metrics={"eval_accuracy": right / size})
