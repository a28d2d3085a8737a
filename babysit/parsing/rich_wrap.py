"""Records of rich's log handler, wrapped over several lines, joined back into one.

`rich.logging.RichHandler` lays a record out in columns — the time (blank when it is the
same as the line above), the level, the message — and wraps a long message onto lines
indented to the message's column, padding every line with spaces to the console's
width. A long word (a path) is cut where the width ends:

    [04/12/24 17:15:52] INFO     colossalai - colossalai - INFO: Saving model checkpoint to
                                 /home/users/nus/e1216290/scratch/colossalai/ColossalAI/examples/images/dr
                                 eambooth/weight_output/checkpoint-1000

Read line by line, the path is lost (no checkpoint is seen) and its pieces read as
metrics (`eambooth/train_dreambooth_colossalai.py:669` as a value of 669). Joined, the
record is one line again: a piece that ran to the edge of the width (no padding after
it) was cut inside a word and is joined to the next without a space; one that ends in
padding ended a word.
"""

from __future__ import annotations

from babysit import lazy_re

# The time and level columns of a rich record: `[04/12/24 16:45:17] INFO     ` or, under
# the same time, the time column left blank.
_HEADER = lazy_re.compile(r"^(?:\[[^\]\n]{4,40}\]| {6,40}) (?:DEBUG|INFO|WARNING|ERROR|"
                          r"CRITICAL) +(?=\S)")
_LEVELS = ("INFO", "WARNING", "ERROR", "DEBUG", "CRITICAL")


def _header_end(line: str) -> int | None:
    """Where the message column of a rich record's first line begins, if it is one."""
    if not line.startswith(("[", "      ")) or not any(level in line[:64] for level in _LEVELS):
        return None
    match = _HEADER.match(line)
    return match.end() if match is not None else None


class RichWrap:
    """Joins wrapped rich records within the lines it is given (one read of the log); a
    record cut by the end of a read keeps its pieces apart, as before."""

    def __init__(self) -> None:
        self._seen = False  # a rich record was read: look for wrapped ones

    def join(self, lines: list[str]) -> tuple[list[str], int]:
        """The lines with each wrapped record made one, and how many lines were joined
        into the one above them."""
        if not self._seen and not any(_header_end(line) is not None for line in lines[:400]):
            return lines, 0
        self._seen = True
        out: list[str] = []
        column: int | None = None  # the message column of the record being read
        last = ""  # the previous piece of that record, as written (padding kept)
        joined = 0
        for line in lines:
            start = _header_end(line)
            if start is not None:
                column, last = start, line
                out.append(line.rstrip())
                continue
            if column is not None and len(line) > column and line[column] != " " \
                    and not line[:column].strip():
                piece = line[column:].rstrip()
                cut = len(last.rstrip()) == len(last)  # ran to the edge: cut inside a word
                out[-1] = out[-1] + ("" if cut else " ") + piece
                last = line
                joined += 1
                continue
            column = None
            out.append(line)
        return out, joined
