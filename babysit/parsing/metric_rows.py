"""A table with a row per metric: its name in the first cell, its figures in the others.

A script that reports its evaluation as a Markdown table (CompGCN's trainer under METIS
clusters: `validation results (filtered) at epoch 0`, then `|  metric  |  head  |  tail
|  mean  |`, `|  ----  |  ----  |`, and a row a measure, `|  mean reciprocal rank (MRR)  |
0.0395  |  0.0587  |  0.0491  |`) prints its names down the first column, not across a
header: read a line at a time, a row was a name and three bare numbers, and a link
predictor's validation MRR over fifty epochs was never seen.

The header is a pipe row whose first cell is the word for the rows (`metric`, `measure`,
`name`) and whose other cells are words. Each row after it is that metric: the figure
under the column that sums the others up (`mean`, `average`, `overall`, `all`, `total`),
or under the only one (`value`, `score`). A table whose columns are parts with no sum
among them gives no figure: which part is the run's is not the table's to say. The split
is the one the line above the header names (`validation results …` gives `val_`, `testing
results` gives `test_`); a name with its abbreviation in brackets takes the abbreviation
(`mean reciprocal rank (MRR)` is `mrr`).
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.formats import Parsed
from babysit.parsing.text import normalise_key, to_number

# The first cell of the header: what the rows are.
_ROW_WORDS = frozenset({"metric", "metrics", "measure", "measures", "name", "key", "stat",
                        "statistic"})
# A column that sums up the others, or a table's only figure.
_SUMS = ("mean", "average", "avg", "overall", "all", "total", "value", "score", "result")
_RULE_CELL = lazy_re.compile(r"^:?-{2,}:?$")
_WORD_CELL = lazy_re.compile(r"^[A-Za-z][\w .@/()-]*$")
_ABBREVIATION = lazy_re.compile(r"\(([A-Za-z][\w@]*)\)\s*$")
_SPLIT_WORDS = (("valid", "val_"), ("dev ", "val_"), ("eval", "val_"), ("test", "test_"))


class MetricRows:
    """The open table's value column and split, and the line before the last one (a
    header's caption)."""

    def __init__(self) -> None:
        self._column: int | None = None  # the figure's cell; -1: a table with no sum
        self._width = 0
        self._prefix = ""
        self._previous = ""

    def wants(self, text: str) -> bool:
        """A row while a table is open, else a pipe row that may be a header (every
        line passes here: the line before a header is its caption)."""
        if "|" in text:
            return True
        self._column = None
        if text.strip():
            self._previous = text
        return False

    def read(self, text: str) -> Parsed | bool | None:
        """True for a header or a rule taken in, a Parsed for a metric's row, None for a
        line that is neither (it closes the table)."""
        cells = _cells(text)
        if self._column is not None and cells is not None and len(cells) == self._width:
            if all(_RULE_CELL.match(cell) for cell in cells):
                return True
            return self._row(cells)
        self._column = None
        if cells is not None and len(cells) >= 2 and cells[0].lower() in _ROW_WORDS \
                and all(_WORD_CELL.match(cell) and to_number(cell) is None for cell in cells):
            self._width = len(cells)
            self._column = _value_column([cell.lower() for cell in cells[1:]])
            self._prefix = _split(self._previous)
            return True
        if text.strip():
            self._previous = text
        return None

    def _row(self, cells: list[str]) -> Parsed | bool:
        column = self._column
        name = cells[0]
        if column is None or column < 0 or not any(c.isalpha() for c in name):
            return True
        value = to_number(cells[1 + column].strip("`"))
        if value is None:
            return True
        short = _ABBREVIATION.search(name)
        key = normalise_key(short.group(1) if short else name)
        return Parsed("metric-rows", metrics={self._prefix + key: value})


def _cells(text: str) -> list[str] | None:
    """A pipe row's cells (`| a | b |`), or None for a line that is no such row."""
    stripped = text.strip()
    if not (stripped.startswith("|") and stripped.endswith("|")) or len(stripped) < 5:
        return None
    return [cell.strip() for cell in stripped[1:-1].split("|")]


def _value_column(columns: list[str]) -> int:
    """Which of the header's figure columns holds the row's figure: the sum of the
    others, or the only one; -1 where neither."""
    for i, column in enumerate(columns):
        if column in _SUMS:
            return i
    return 0 if len(columns) == 1 else -1


def _split(caption: str) -> str:
    """The split the caption above a table names, as a metric's prefix."""
    low = caption.lower() + " "
    for word, prefix in _SPLIT_WORDS:
        if word in low:
            return prefix
    return ""
