"""A table whose cells are lists: one figure per term of a loss, under the column's name.

A physics-informed network's loss is a sum of terms (the PDE's residual, each boundary
and initial condition), and its trainer may print each term rather than their sum.
DeepXDE, the most used library for them, prints a header and then a row every so many
steps, each loss column a list of its terms:

    Step      Train loss                        Test loss                         Test metric
    0         [5.35e-03, 7.96e-01, 2.28e-01]    [3.56e-03, 7.96e-01, 2.28e-01]    []
    1000      [9.18e-05, 1.04e-03, 1.40e-03]    [6.90e-05, 1.04e-03, 1.40e-03]    []

Read one line at a time, a row is a number and lists nobody names: nothing of the run
was read, and a residual that was NaN from step 0 (`[3.80e+03, nan]`) went unseen. The
header names the columns (two spaces or more apart, the first a counter); each row's first
cell is the step, and each list is its column's figure: the sum of the terms, the loss the
optimiser drives down, non-finite when any term is. An empty list (`[]`, no metric asked
for) is no figure.
"""

from __future__ import annotations

import math
import re

from babysit import lazy_re
from babysit.parsing.formats import Parsed
from babysit.parsing.text import normalise_key, to_number

# Columns two spaces or more apart; the header's first names the counter.
_GAP = lazy_re.compile(r"\s{2,}")
_COUNTERS = frozenset({"step", "steps", "iter", "iteration", "iterations", "epoch", "epochs"})
_NAME = lazy_re.compile(r"^[A-Za-z][\w ./-]{0,40}$")
# A list of numbers (`[5.35e-03, nan]`), or an empty one.
_LIST = lazy_re.compile(r"^\[\s*(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf)?"
                        r"(?:\s*,\s*(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|"
                        r"[-+]?inf))*\s*\]$", re.IGNORECASE)
_HEADER_FIRST = frozenset("SsIiEe")
_LEAST_LISTS = 1  # list cells a row needs to be this table's (else another reader's)


def _terms(cell: str) -> list[float] | None:
    """The numbers of a list cell, None for any other cell."""
    if _LIST.match(cell) is None:
        return None
    values = [to_number(part.strip()) for part in cell[1:-1].split(",") if part.strip()]
    return None if any(v is None for v in values) else [v for v in values if v is not None]


class ListCells:
    """The latest header's column names, while its rows follow."""

    def __init__(self) -> None:
        self._names: tuple[str, ...] | None = None
        self._counter = "step"

    def wants(self, text: str) -> bool:
        """A row while a table is open (a `[` in it), or a header's shape: its first word a
        counter's (a cheap test)."""
        if self._names is not None:
            return "[" in text
        # (the first letter before anything else: asked of most lines a log prints)
        stripped = text.lstrip()
        return stripped[:1] in _HEADER_FIRST \
            and stripped[:5].lower().startswith(("step", "iter", "epoch")) and "  " in text

    def read(self, text: str) -> Parsed | bool | None:
        """A Parsed for a row, None for any other line. A header is remembered, not taken
        in: the same header over plain numbers is another table reader's (fastai's `epoch
        train_loss valid_loss`)."""
        cells = _GAP.split(text.strip())
        if self._names is None or not cells[0].isdigit():
            self._header(cells)
            return None
        names = self._names
        if len(cells) != len(names):
            return None
        metrics: dict[str, float] = {}
        lists = 0
        for name, cell in zip(names[1:], cells[1:], strict=True):
            terms = _terms(cell)
            if terms is not None:
                lists += 1
                if terms:
                    total = sum(terms)
                    metrics[name] = total if all(math.isfinite(t) for t in terms) else math.nan
                continue
            value = to_number(cell)
            if value is None:
                return None
            metrics[name] = value
        if lists < _LEAST_LISTS or not metrics:
            return None
        step = int(cells[0])
        if self._counter == "epoch":
            return Parsed("list-cells", epoch=float(step), metrics=metrics)
        return Parsed("list-cells", step, metrics=metrics)

    def _header(self, cells: list[str]) -> None:
        if len(cells) >= 2 and cells[0].lower() in _COUNTERS \
                and all(_NAME.match(cell) for cell in cells[1:]):
            self._names = tuple(normalise_key(cell) for cell in cells)
            self._counter = "epoch" if cells[0].lower().startswith("epoch") else "step"
            return
        self._names = None
