"""Model FLOPs utilisation: useful FLOPs of a window of updates over the time they took
and the peak of the GPUs that did them — a ratio of totals, never a mean of
per-step percentages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Update:
    """Some updates of the run: the tokens they trained on and the seconds they took."""

    tokens: float
    seconds: float


@dataclass(frozen=True)
class Mfu:
    value: float  # a fraction; not clamped (above 1 means an input is wrong)
    tokens_per_second: float
    window: int  # updates in the window


def mfu(updates: Sequence[Update], flops_per_token: float, gpus: int,
        peak_tflops: float) -> Mfu | None:
    """None when the window holds no time."""
    tokens = sum(u.tokens for u in updates)
    seconds = sum(u.seconds for u in updates)
    if seconds <= 0 or gpus <= 0 or peak_tflops <= 0:
        return None
    achieved = tokens * flops_per_token / seconds
    return Mfu(achieved / (gpus * peak_tflops * 1e12), tokens / seconds, len(updates))
