"""Which lines of a stretch of log a parser must read, and which bar redraws it may skip.

tqdm redraws its bar at every step, each frame on a line of its own (ended by a
carriage return), and prints a metric line only every so many steps. A frame that
the next line redraws again says nothing that one does not, so of a run of redraws of
one bar only the last is read. Telling the frames apart is a good part of what a poll of
such a log costs (64 KiB of the Hugging Face shape is ~950 lines, ~870 of them redraws),
so it is written for speed: `str.partition`, which runs in C and takes its one argument
without the argument parsing that `str.find(sub, start)` pays (a quarter fewer
instructions a line), no regular expression, and the pairs compared in one
comprehension. `tests/parsing/test_redraws.py` holds it to a plain reference version on
every fixture log and on Hypothesis' text.
"""

from __future__ import annotations

from itertools import compress, repeat
from operator import is_, ne, or_


def redraw_key(line: str) -> tuple[str, str] | None:
    """For a line that is nothing but a tqdm bar, what names the bar (its description
    and total); None for any other line, including a bar with text glued after it (a
    loss dict, a traceback)."""
    if line[-1:] != "]":
        line = line.rstrip()
        if line[-1:] != "]":
            return None
    head, percent_bar, tail = line.partition("%|")
    if not percent_bar:
        return None
    inner, bracket, after = tail.partition(" [")
    if not bracket:
        inner, bracket, after = tail.partition("[")
        if not bracket:
            return None
    if "=" in after:
        return None  # a postfix (`loss=0.52`) makes every frame worth reading
    _, slash, total = inner.rpartition("/")
    # The description is what stands before the three characters of the percentage.
    return head[:-3], (total if slash else f"{head}%|{inner}")


def kept_lines(lines: list[str]) -> list[tuple[int, bool]]:
    """(index, is_bar) of each line to read: every line but a bar frame that the next
    line redraws (a frame of the same bar)."""
    keys = list(map(redraw_key, lines))
    following = keys[1:]
    following.append(None)
    # Kept: not a bar, or a bar the next line does not redraw. Decided by `map` over
    # operators, in C, so that Python runs only for the few lines kept (~1 in 5 here).
    not_bars = list(map(is_, keys, repeat(None)))
    kept = compress(range(len(keys)), map(or_, not_bars, map(ne, keys, following)))
    return [(index, not not_bars[index]) for index in kept]
