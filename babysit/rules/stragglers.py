"""Ranks that fall behind the others: by the step they are at, and by how long their
steps take.

In synchronous data-parallel training every rank waits for the slowest at each
collective, so one slow GPU or host slows the whole run. A rank's pace is read from
what it prints of itself (a time per step, a throughput) or, failing that, from its
own timestamps between steps; it is compared with the other ranks' paces, beyond
their spread. The host is named where the record says where it came from.
"""

from __future__ import annotations

import statistics
from collections import deque
from dataclasses import dataclass

from babysit.metric_names import step_time_key, throughput_key
from babysit.model import Record
from babysit.parsing.task_labels import is_nested
from babysit.rules import trends

_START = 20  # steps the ranks must be in before one can be said to lag
_BEHIND = 0.8  # below this share of the others' median step: behind
_CAUGHT_UP = 0.9
_SAMPLES = 8  # the recent step times a rank's pace is the median of
_LEAST_SAMPLES = 3
# A step this much slower than the other ranks' (and beyond their spread) straggles; a
# rank back within the second has caught up.
_SLOWER = 0.2
_RECOVERED = 0.1
_NOISE_K = 3.0


def rank_named(rank: int | None, source: str = "") -> str:
    """How a finding names where it happened: `rank 2 (pod trainer-worker-1)`, `rank 2`,
    or the source alone for a record of no rank or of a local rank of an srun task
    (`local rank 3 of task 1 on node gpu-12`: its key is no rank); "" when neither is
    known."""
    if rank is None or is_nested(rank):
        return source
    return f"rank {rank} ({source})" if source else f"rank {rank}"


@dataclass(frozen=True)
class Lagging:
    """One rank's state, judged: `behind` True raises, False resolves."""

    rank: int
    step: int | None
    key: str
    behind: bool
    description: str


class RankPace:
    """Every rank's latest step and recent time per step (seconds, or the inverse of
    the throughput it prints: only the ratio between ranks counts)."""

    def __init__(self) -> None:
        self.steps: dict[int, int] = {}
        self._paces: dict[int, deque[float]] = {}
        self._unit: dict[int, str] = {}  # where each rank's pace comes from
        self._timed: dict[int, tuple[float, int]] = {}  # (time, step) of its last timed step
        self._hosts: dict[int, str] = {}
        self._slow: set[int] = set()

    def observe(self, record: Record) -> None:
        rank = record.rank
        if rank is None:
            return
        if record.source:
            self._hosts[rank] = record.source
        if record.step is None or (record.events and not record.metrics):
            return  # an event's step is the last any rank printed, not this rank's
        previous = self.steps.get(rank)
        self.steps[rank] = record.step
        if record.metrics:
            took = _printed_pace(record)
            if took is not None:
                self._add(rank, *took)
                return
        if record.time is None or (previous is not None and record.step <= previous):
            return
        last = self._timed.get(rank)
        self._timed[rank] = (record.time, record.step)
        if last is not None and record.step > last[1] and record.time > last[0]:
            self._add(rank, (record.time - last[0]) / (record.step - last[1]), "timestamps")

    def _add(self, rank: int, seconds: float, unit: str) -> None:
        if self._unit.get(rank, unit) != unit:
            self._paces.pop(rank, None)  # a rank that changed what it prints: start again
        self._unit[rank] = unit
        self._paces.setdefault(rank, deque(maxlen=_SAMPLES)).append(seconds)

    def judge(self) -> list[Lagging]:
        """Each rank found behind or caught up, by its step and by its pace."""
        return self._by_step() + self._by_pace()

    def _where(self, rank: int) -> str:
        return rank_named(rank, self._hosts.get(rank, ""))

    def _by_step(self) -> list[Lagging]:
        if len(self.steps) < 2:
            return []
        steps = sorted(self.steps.values())
        median = steps[len(steps) // 2]  # the upper one: with two ranks, the leader
        out: list[Lagging] = []
        for rank, step in self.steps.items():
            key = f"rank{rank}"
            if median >= _START and step < _BEHIND * median:
                out.append(Lagging(rank, step, key, True, (
                    f"{self._where(rank)} is at step {step} while the other ranks are at step "
                    f"{median} (median): it runs {100 * (1 - step / median):.0f} % behind")))
            elif step >= _CAUGHT_UP * median:
                out.append(Lagging(rank, step, key, False,
                                   f"{self._where(rank)} caught up (step {step} of {median})"))
        return out

    def _by_pace(self) -> list[Lagging]:
        paces = {rank: statistics.median(samples) for rank, samples in self._paces.items()
                 if len(samples) >= _LEAST_SAMPLES and min(samples) > 0}
        out: list[Lagging] = []
        for rank, pace in paces.items():
            others = [p for r, p in paces.items()
                      if r != rank and self._unit.get(r) == self._unit.get(rank)]
            if not others:
                continue
            usual = statistics.median(others)
            # The others' spread, and this rank's own noise: one slow step (a save, an
            # evaluation on rank 0) moves neither median.
            own = self._paces[rank]
            noise = trends.spread(others) + trends.spread(own) / len(own) ** 0.5
            key = f"rank{rank} pace"
            if pace > usual * (1 + _SLOWER) and pace - usual > _NOISE_K * noise:
                self._slow.add(rank)
                out.append(Lagging(rank, self.steps.get(rank), key, True, (
                    f"{self._where(rank)} is {100 * (pace / usual - 1):.0f} % slower per step "
                    f"than the other ranks ({_describe(pace, self._unit[rank])} against "
                    f"{_describe(usual, self._unit[rank])}, median of the last {len(own)} "
                    f"steps): the whole run waits for it at every synchronisation")))
            elif rank in self._slow and pace <= usual * (1 + _RECOVERED):
                self._slow.discard(rank)
                out.append(Lagging(rank, self.steps.get(rank), key, False,
                                   f"{self._where(rank)} is back to the others' pace"))
        return out


def _printed_pace(record: Record) -> tuple[float, str] | None:
    """The time one step took, as the rank printed it (seconds), or the inverse of its
    throughput (in its own unit's inverse); None when it prints neither."""
    timed = step_time_key(record.metrics)
    if timed is not None:
        key, scale = timed
        value = record.metrics[key]
        return (value * scale, "step time") if value > 0 else None
    rated = throughput_key(record.metrics)
    if rated is not None:
        key, unit = rated
        value = record.metrics[key]
        return (1.0 / value, unit) if value > 0 else None
    return None


def _describe(pace: float, unit: str) -> str:
    if unit in ("step time", "timestamps"):
        return f"{pace:.3g} s/step"
    return f"{1 / pace:.4g} {unit}"
