"""Records of Julia's console logger, drawn over several lines, joined back into one.

Julia's `ConsoleLogger` (`base/logging/ConsoleLogger.jl`, what `@info`, `@warn` and
`@debug` print to by default) writes a record with key/value arguments, or a message of
several lines, as a box: the level and message on a `┌` line, each argument indented
on a `│` line, and the source on a `└` line:

    ┌ Info: Epoch 2
    │   loss = NaN
    │   accuracy = 0.1f0
    └ @ Main ~/train.jl:42

An `@info` record carries no source (the default meta-formatter gives Info-level
records none), so its last argument is on the `└` line itself:

    ┌ Info: Training
    │   iter = 120
    └   loss = NaN

Read line by line, the message names the epoch and each argument is a record of its own
(the loss at no epoch, the epoch with no loss). Joined, the box is one line again, its
arguments separated by commas after the message — `Info: Epoch 2, loss = NaN, accuracy
= 0.1f0` — which the key/value format reads as one record. (A one-line record, `[ Info:
Epoch 2 loss = 0.3`, needs no joining: its `[ ` is dropped as a logger's head is.)
"""

from __future__ import annotations

_OPEN = "┌ "
_MEMBER = "│"
_CLOSE = "└ "
_MAX_MEMBERS = 64  # a box this long is a dump, not a record: left as it is


class JuliaLogBlocks:
    """Joins the boxes of Julia's console logger within the lines it is given (one read
    of the log); a box cut by the end of a read keeps its lines apart."""

    def __init__(self) -> None:
        self._seen = False  # a box was read: look for more

    def join(self, lines: list[str]) -> tuple[list[str], int]:
        """The lines with each box made one line, and how many lines were joined into
        the line above them (its `│` arguments and its `└` line: the source, or the last
        argument of a record that shows none)."""
        if not self._seen and not any(line.startswith(_OPEN) for line in lines[:400]):
            return lines, 0
        self._seen = True
        out: list[str] = []
        joined = 0
        box: list[str] | None = None  # the lines of the box being read, as written
        for line in lines:
            if line.startswith(_OPEN):
                if box is not None:
                    out.extend(box)  # the one before never closed: left apart
                box = [line]
                continue
            if box is not None and line.startswith(_MEMBER) and len(box) <= _MAX_MEMBERS:
                box.append(line)
                continue
            if box is not None and line.startswith(_CLOSE):
                last = line[len(_CLOSE):].strip()
                pieces = [box[0][len(_OPEN):].rstrip(),
                          *(member[len(_MEMBER):].strip() for member in box[1:]),
                          "" if last.startswith("@ ") else last]
                out.append(", ".join(piece for piece in pieces if piece))
                joined += len(box)  # the members and this source line
                box = None
                continue
            if box is not None:
                out.extend(box)
                box = None
            out.append(line)
        if box is not None:
            out.extend(box)
        return out, joined
