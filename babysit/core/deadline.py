"""Deadline: whether the run, at its present rate, reaches its last step before its
scheduler's time limit ends it — and if not, which step it will reach, and when the
last checkpoint before the limit is due.

Pure: the time limit comes from the target (Slurm's TimeLimit and RunTime, …), the
rate and the steps from the run, the save steps from its checkpoints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from babysit.snapshot import TimeLimit
from babysit.units import format_duration

# A run expected to finish within this share of its time left is not warned about: a
# rate measured over a few polls is not that precise.
_MARGIN = 0.02


@dataclass(frozen=True)
class DeadlineWarning:
    step_at_limit: int
    finish_in: float  # seconds to the last step at the present rate
    left: float  # seconds until the limit
    description: str


def save_every(save_steps: Sequence[int]) -> int | None:
    """The run's checkpoint cadence in steps (the most common gap between saves)."""
    steps = sorted(set(save_steps))
    gaps = [b - a for a, b in pairwise(steps) if b > a]
    if not gaps:
        return None
    return max(set(gaps), key=lambda gap: (gaps.count(gap), gap))


def deadline_warning(limit: TimeLimit, step: int | None, target_steps: int | None,
                     steps_per_second: float | None,
                     save_steps: Sequence[int]) -> DeadlineWarning | None:
    """None while the run will make it, or while its rate or its last step is unknown."""
    if step is None or not target_steps or not steps_per_second or steps_per_second <= 0 \
            or step >= target_steps:
        return None
    left = limit.left_seconds
    finish_in = (target_steps - step) / steps_per_second
    if finish_in <= left * (1 + _MARGIN):
        return None
    at_limit = min(target_steps, step + int(steps_per_second * left))
    text = (f"at {steps_per_second:.3g} steps/s the run needs {format_duration(finish_in)} "
            f"more to reach step {target_steps}, but its time limit ({limit.source}, "
            f"{format_duration(limit.limit_seconds)}) ends it in {format_duration(left)}: "
            f"it will stop near step {at_limit} of {target_steps}")
    text += "; " + _checkpoint_words(step, at_limit, steps_per_second, save_steps)
    needed = math.ceil((limit.elapsed_seconds + finish_in * 1.1) / 60) * 60
    text += f"; it needs a limit of about {format_duration(needed)}"
    if limit.commands:
        filled = [c.replace("{minutes}", str(needed // 60)).replace("{seconds}", str(needed))
                  for c in limit.commands]
        text += " — to act: " + " / ".join(filled) + " (babysit runs none of these)"
    return DeadlineWarning(at_limit, finish_in, left, text)


def _checkpoint_words(step: int, at_limit: int, rate: float,
                      save_steps: Sequence[int]) -> str:
    every = save_every(save_steps)
    if every is None:
        last = max(save_steps) if save_steps else None
        return ("no checkpoint save has been seen yet" if last is None else
                f"the last checkpoint seen is at step {last}, and when the next one comes "
                f"is not known")
    newest = max(save_steps)
    last_before = newest + ((at_limit - newest) // every) * every
    if last_before <= step:
        return (f"no checkpoint is due before the limit (every {every} steps, the last at "
                f"step {newest})")
    return (f"the last checkpoint before the limit is due at step {last_before} (every "
            f"{every} steps), in about {format_duration((last_before - step) / rate)}")
