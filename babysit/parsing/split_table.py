"""A table whose columns are the splits and whose rows are the metrics.

AllenNLP's trainer closes each epoch with one (`allennlp/training/trainer.py`,
`_metrics_to_console`): a header naming the splits, then a row per metric, each value
under its split's column:

                 Training |  Validation
    loss     |     2.876  |     2.958
    accuracy |     0.111  |     0.000

Read one line at a time, a row is a name and two bare numbers, no pair at all: the
epochs were never read, and a name classifier whose validation accuracy never left 0.056
over 38 epochs read as a finished run with one record. Each row is read as the metric
under the first split and the same metric under the second (`loss` and `val_loss`).
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.formats import Parsed
from babysit.parsing.log_prefix import message
from babysit.parsing.text import normalise_key, to_number

# A split's column name, and the prefix its figures take.
_SPLITS = {"training": "", "train": "", "validation": "val_", "valid": "val_", "val": "val_",
           "dev": "val_", "test": "test_", "testing": "test_"}
_HEADER = lazy_re.compile(r"^\s*([A-Za-z]+)\s*\|\s*([A-Za-z]+)\s*$")
_ROW = lazy_re.compile(r"^\s*([A-Za-z_][\w./-]*(?: [A-Za-z_][\w./-]*)?)\s*\|\s*(\S+)\s*\|"
                       r"\s*(\S*)\s*$")


class SplitTable:
    """The columns of the latest split table's header, while its rows follow."""

    def __init__(self) -> None:
        self._prefixes: tuple[str, str] | None = None

    def wants(self, text: str) -> bool:
        """A row while a table is open, else a line that may be a header: it ends on a
        split's name (a cheap test: many lines have a `|`, few are such headers)."""
        if "|" not in text:
            self._prefixes = None
            return False
        if self._prefixes is not None:
            return True
        tail = text.rstrip()
        return tail[tail.rfind(" ") + 1:].lower() in _SPLITS

    def read(self, text: str) -> Parsed | bool | None:
        """True for the header (taken in), a Parsed for a row, None for any other line
        (which ends the table)."""
        text = message(text)
        header = _HEADER.match(text)
        if header is not None:
            first, second = (_SPLITS.get(word.lower()) for word in header.groups())
            if first is not None and second is not None and first != second:
                self._prefixes = (first, second)
                return True
        prefixes = self._prefixes
        row = _ROW.match(text) if prefixes is not None else None
        if row is None or prefixes is None:
            self._prefixes = None
            return None
        name = normalise_key(row.group(1))
        metrics = {}
        for prefix, cell in zip(prefixes, row.groups()[1:], strict=True):
            value = to_number(cell) if cell else None
            if value is not None:
                metrics[f"{prefix}{name}"] = value
        return Parsed("split-table", metrics=metrics) if metrics else True
