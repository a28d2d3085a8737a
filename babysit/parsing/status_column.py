"""A status column in brackets at the head of every line, taken off before the line is read.

Some C++ programs print a fixed-width box before each line, the way googletest does
(`[ RUN      ]`, `[       OK ]`, `[----------]`): xLearn prints its epoch table as

    [------------] Epoch      Train log_loss       Test log_loss            Test AUC
    [    1%      ]     1            0.615199            0.614211            0.632410
    [ ACTION     ] Early-stopping at epoch 3

The box is the program's, not the run's text: left on, the table's header began with
`[------------]` and its rows with `[ 1% ]`, so no table was found and babysit read
nothing from the log. A box is recognised by its shape alone: brackets padded with two
or more spaces around one upper-case word or a percentage, or holding only dashes or
equals signs. A counter in brackets (`[ 12/540]`, `[5]`), a rank (`[rank0]:`) or a level
(`[INFO]`) is none of these and stays for the readers that know it.
"""

from __future__ import annotations

from babysit import lazy_re

_BOX = lazy_re.compile(
    r"\[(?:[-=]{4,}|(?=[^\]]* {2})\s*(?:[A-Z]{2,}|\d{1,3}(?:\.\d+)?%)\s*)\] ?")


def without_status_box(line: str) -> str:
    """`line` without a googletest-style status box at its head (the same string when it
    has none)."""
    head = line[:20]
    if not line.startswith("[") or not ("  " in head or "----" in head or "====" in head):
        return line
    box = _BOX.match(line)
    return line if box is None else line[box.end():]
