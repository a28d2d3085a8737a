"""A change of what the run optimises, read from a setting its records carry.

Some runs print, beside the loss, a setting of the objective that holds for a long stretch
and then steps to a new value: a curriculum's rollout horizon (a soil-moisture model's
`K= 1` for twelve epochs, then `K= 7` to the end, sealed-18), a progressive GAN's
resolution, a stage number. The loss after the step measures another task: its level is
not comparable with the level before (0.000165 at K = 1, 0.00046 at K = 7), and a rule that
compared the two would call the new task's first epochs a divergence.

What marks such a setting, whatever its name: a whole number that held one value over many
records with a loss, then took another and held that too — a step, not a blip (an outcome
count such as a multi-agent run's `Collisions: 0` goes to 1 for an episode and back).
Counters move at every record or every few (steps, epochs, iterations), and measures of
the machine (memory, time, throughput, counts of samples or tokens) are no setting of the
objective: their names leave them out. The step is known only once the new value held: the
rules then forget what they judged of the phase before, the few points since included.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

# Records a setting must hold its value over before a step of it is a new phase, and
# records the new value must hold for the step to count.
_HELD = 8
_NEW_HELD = 3
# Words of a name that is a counter or a measure of the machine, not a setting.
_NOT_A_SETTING = ("step", "iter", "epoch", "episode", "round", "update", "tick", "kimg",
                  "sample", "token", "time", "mem", "speed", "count", "num", "total",
                  "seen", "idx", "index", "rank", "worker", "gpu", "loss", "acc", "err",
                  "lr", "norm", "grad", "batch_id", "frame", "/s", "sec", "ms", "fps")
_LARGEST = 10_000  # a setting's values stay small (a horizon, a stage, a resolution)
_KEYS = 32  # settings followed at once (a record's names are few)


class PhaseWatch:
    """Follows the whole-number settings a run's records carry; `changed` says when one
    stepped to a new value after holding the old one."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[float, int]] = {}  # key: (value, records held)
        self._before: dict[str, tuple[float, int]] = {}  # key: the value held before it
        self._skipped: set[str] = set()

    def changed(self, metrics: Mapping[str, float]) -> str | None:
        """`K 1 → 7` at the record where a setting that held its value for `_HELD`
        records has held a new one for `_NEW_HELD`; None otherwise."""
        found = None
        for key, value in metrics.items():
            if key in self._skipped:
                continue
            if not _setting_like(key, value):
                if len(self._skipped) < 4 * _KEYS:
                    self._skipped.add(key)
                self._held.pop(key, None)
                continue
            held = self._held.get(key)
            if held is None:
                if len(self._held) < _KEYS:
                    self._held[key] = (value, 1)
                continue
            if held[0] != value:
                self._before[key] = held
                self._held[key] = (value, 1)
                continue
            self._held[key] = (value, held[1] + 1)
            before = self._before.get(key)
            if held[1] + 1 == _NEW_HELD and before is not None and before[1] >= _HELD \
                    and before[0] != value and found is None:
                found = f"{key} {before[0]:g} → {value:g}"
        return found


def _setting_like(key: str, value: float) -> bool:
    low = key.lower()
    return math.isfinite(value) and value == int(value) and 0 <= value <= _LARGEST \
        and not any(word in low for word in _NOT_A_SETTING)
