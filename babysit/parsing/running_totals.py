"""A counter `a/b` whose left number stands while its right one grows from print to print:
an outer count and a running one, not a step of a planned total.

DeepSpeed's throughput timer prints `0/170, SamplesPerSec=3344.09`, then `0/180, …`,
`0/190, …` — its epoch, then its global step. Read as step 0 of 200, a run stopped part
way through its first epoch was at its plan (`step=200` from the logger beside it), and
so finished. The shape says it, whatever prints it: a plan does not move with the step,
and a step does not stand still while the run trains.
"""

from __future__ import annotations

from babysit.parsing.log_prefix import message
from babysit.parsing.shapes import template

_TEMPLATES = 256  # templates remembered at most (a log prints a handful of counters)
_GROWN = 2  # prints in a row whose right number grew under a standing left one


class RunningTotals:
    """Per line template, the counter it printed last, and whether it was seen running."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[int, int, int]] = {}  # (left, right, grown in a row)
        self._running: set[str] = set()

    def outer_and_count(self, line: str, left: int, right: int) -> bool:
        """Whether this line's `left/right` is an outer count and a running one: its
        template printed the same left number with a smaller right one twice in a row
        (once is a new plan: a script's `Episode 1/1` session, then `Episode 1/10`), and
        has not since moved its left number under a standing right one."""
        key = template(message(line))
        last = self._last.get(key)
        if len(self._last) >= _TEMPLATES:
            self._last.clear()
        grown = last[2] + 1 if last is not None and last[0] == left and right > last[1] else 0
        self._last[key] = (left, right, grown)
        if key in self._running:
            if last is not None and left > last[0] and right == last[1]:
                self._running.discard(key)  # a step of a plan after all
                return False
            return True
        if grown >= _GROWN:
            self._running.add(key)
            return True
        return False
