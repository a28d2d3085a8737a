"""Which lines of a stretch of log a parser must read, and which bar redraws it may skip.

tqdm redraws its bar at every step, each frame on a line of its own (ended by a
carriage return), and prints a metric line only every so many steps. A frame that
the next line redraws again says nothing that one does not, so of a run of redraws of
one bar only the last is read. Telling the frames apart is most of what a poll of such
a log costs, so it is also compiled (`_redraws.c`, built where a C compiler is at hand
at install time); `python_kept_lines` below is the reference the tests hold it to.
"""

from __future__ import annotations

from collections.abc import Callable


def redraw_key(line: str) -> tuple[str, str] | None:
    """For a line that is nothing but a tqdm bar, what names the bar (its description
    and total); None for any other line, including a bar with text glued after it (a
    loss dict, a traceback)."""
    if line[-1:] != "]":
        end = line.rstrip()
        if not end.endswith("]"):
            return None
    else:
        end = line
    bar_at = end.find("%|")
    if bar_at < 0:
        return None
    bracket = end.find(" [", bar_at)
    if bracket < 0:
        bracket = end.find("[", bar_at)
        if bracket < 0:
            return None
    if "=" in end[bracket:]:
        return None  # a postfix (`loss=0.52`) makes every frame worth reading
    slash = end.rfind("/", bar_at, bracket)
    return end[: max(0, bar_at - 3)], end[slash + 1 : bracket]


def python_kept_lines(lines: list[str]) -> list[tuple[int, bool]]:
    """(index, is_bar) of each line to read: every line but a bar frame that the next
    line redraws (a frame of the same bar)."""
    kept: list[tuple[int, bool]] = []
    following = redraw_key(lines[0]) if lines else None
    last = len(lines) - 1
    for index in range(len(lines)):
        key = following
        following = redraw_key(lines[index + 1]) if index < last else None
        if key is None or key != following:
            kept.append((index, key is not None))
    return kept


def _compiled() -> Callable[[list[str]], list[tuple[int, bool]]] | None:
    try:
        from babysit.parsing import _redraws  # type: ignore[attr-defined]
    except ImportError:
        return None
    found: Callable[[list[str]], list[tuple[int, bool]]] = _redraws.kept_lines
    return found


COMPILED = _compiled()
kept_lines = COMPILED or python_kept_lines
