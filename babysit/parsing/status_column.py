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

A percentage in the box is the share of the plan that row's epoch completes (`[ 80% ] 8`,
then `[ 100% ] 10`): taken off, it still gives the planned epochs.
"""

from __future__ import annotations

from babysit import lazy_re

_BOX = lazy_re.compile(
    r"\[(?:[-=]{4,}|(?=[^\]]* {2})\s*(?:[A-Z]{2,}|(\d{1,3}(?:\.\d+)?)%)\s*)\] ?")


def split_status_box(line: str) -> tuple[str, float | None]:
    """`line` without a googletest-style status box at its head (the same string when it
    has none), and the percentage of the plan the box gives, if it gives one."""
    head = line[:20]
    if not line.startswith("[") or not ("  " in head or "----" in head or "====" in head):
        return line, None
    box = _BOX.match(line)
    if box is None:
        return line, None
    percent = float(box.group(1)) if box.group(1) is not None else None
    return line[box.end():], percent if percent is not None and 0 < percent <= 100 else None


def planned_from_share(done: float, percent: float) -> int | None:
    """The planned count that `done` is `percent` % of, when the two agree on a whole
    number (epoch 8 at 80 % of 10; epoch 1 at 1 % of 100)."""
    total = done * 100 / percent
    whole = round(total)
    return whole if whole >= done and abs(total - whole) <= 0.05 * max(1, done) else None
