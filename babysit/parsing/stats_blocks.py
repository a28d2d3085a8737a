"""A block of statistics under a head that says where the run is: one record.

PyMARL (and the Sacred-logged trainers built on it) reports every so often as a head,
`[INFO 14:00:41] my_main Recent Stats | t_env:      30049 | Episode:     1330`, then a few
lines of statistics, four to a line, each `name:` and its value padded into columns and
set apart by tabs (`battle_won_mean:           0.0005	cpu_usage:  47.1667	…`, then
`ep_length_mean: …	epsilon: …	grad_norm: …	loss: …`, then `… return_mean: …`). Read
a line at a time, only the line holding `loss` was a record, and the returns, the win
rates and the TD errors on the others were lost: a TD loss that rises as the returns grow
then read as divergence. The lines are one report, at the head's step.

A block is no report until a second one came with the same names (a configuration's
dump is printed once): the first is read then, the later ones as soon as they hold all
the names the first one had.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.formats import Parsed, key_values, split_counters
from babysit.parsing.text import normalise_key, to_number

_NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+|nan|inf)"
# Two cells or more, each a name, a colon and its number, apart by tabs.
_MEMBER = lazy_re.compile(rf"^\s*[A-Za-z_][\w./-]*:\s+{_NUMBER}\s*"
                          rf"(?:\t\s*[A-Za-z_][\w./-]*:\s+{_NUMBER}\s*)+$")
_CELL = lazy_re.compile(rf"(?<![\w./-])([A-Za-z_][\w./-]*):\s+({_NUMBER})")
# The counter of the environment's steps, where the head says no step by its usual names.
_ENV_STEPS = ("t_env", "timesteps", "timestep", "env_steps", "total_steps", "frames")


class StatsBlocks:
    """The block being read, the names of the first complete one, and the first block
    itself until a second one shows the shape is the run's."""

    def __init__(self) -> None:
        self._previous = ""  # the line before the block: its head
        self._head: Parsed | None = None
        self._values: dict[str, float] = {}
        self._names: frozenset[str] | None = None
        self._first: Parsed | None = None  # the first block, waiting for a second
        self._read = False  # the block being read was returned already

    def wants(self, text: str) -> bool:
        """Whether the line may be a block's member; any other line closes the block
        and is kept as the next block's head (every line passes here)."""
        if "\t" in text and ":" in text:
            return True
        if self._values:
            self._close()
        self._previous = text
        return False

    def read(self, text: str) -> Parsed | bool | None:
        """True for a member taken in, a Parsed when a block is complete, None for a
        line that is no member."""
        if _MEMBER.match(text) is None:
            if self._values:
                self._close()
            self._previous = text
            return None
        out: Parsed | None = None
        if not self._values:
            self._head = _counters(self._previous)
            if self._first is not None:
                out, self._first = self._first, None
        for name, value in _CELL.findall(text):
            number = to_number(value)
            if number is not None:
                self._values.setdefault(normalise_key(name), number)
        if out is None and self._names is not None and not self._read \
                and self._names <= self._values.keys():
            self._read = True
            out = self._record()
        return out if out is not None else True

    def _close(self) -> None:
        if self._head is not None and len(self._values) >= 4:
            if self._names is None:
                self._names = frozenset(self._values)
                self._first = self._record()
            elif not self._read and self._names <= self._values.keys():
                self._first = None
        self._values, self._read, self._head = {}, False, None

    def _record(self) -> Parsed:
        head = self._head or Parsed("")
        step = head.step
        if step is None:
            step = next((int(head.metrics[k]) for k in _ENV_STEPS if k in head.metrics), None)
        return Parsed("stats-block", step, head.target, head.epoch,
                      metrics=dict(self._values))


def _counters(head: str) -> Parsed | None:
    """The counters the head line names (`t_env: 30049 | Episode: 1330`), or None for a
    head that names none."""
    values = key_values(head)
    if not values:
        return None
    parsed = split_counters(values)
    if parsed.step is None and parsed.epoch is None \
            and not any(k in parsed.metrics for k in _ENV_STEPS):
        return None
    return parsed
