"""A loop that prints one bare number a line: `print(loss.item())`.

Some scripts print nothing but the number each logging interval (GeNovo's 638 lines of
`2.569945414662361` falling to `0.06…`, dev split; ETCI-2021's flood segmentation on
Windows, `epoch: 5` then the averaged loss `0.12565226978063584` every five epochs,
sealed-11). Such a line is a row of bare columns one cell wide, read as bare columns
are (`shapes`): once the same shape came back a few times close together. Only a
fraction is one (an integer alone is a count, an index, a size: `499`, `3000`); and
the value is not named for what it may be (a loss, most often, but an accuracy prints
the same): it is the run's printed `value`, an unnamed series no trend rule weighs as a
loss.
"""

from __future__ import annotations

from babysit import lazy_re

LONE_VALUE = "value"  # the name the number is read under
# A number with a fraction or an exponent, nothing else (`0.1256`, `-1.5e-03`, `.5`).
_FRACTION = lazy_re.compile(r"^[-+]?(?:\d+\.\d+|\.\d+|\d+(?:\.\d*)?[eE][-+]?\d+)$")


def lone_value(cell: str) -> bool:
    """Whether a line's only cell is a measured value rather than a count."""
    return _FRACTION.match(cell) is not None
