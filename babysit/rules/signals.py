"""What a metric rule sees (one `Observation` per record) and what it answers with
(signals: raise this anomaly, resolve that one, judge an open one again)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from babysit.model import AnomalyType, Severity


@dataclass(slots=True)
class Observation:
    """One record's metrics, as the rules see them (made for every record, so slotted
    rather than frozen: a frozen dataclass is several times slower to build)."""

    step: int | None
    metrics: Mapping[str, float]
    loss: float | None = None  # the training loss, under the key the run uses
    lr: float | None = None
    grad_norm: float | None = None
    throughput: float | None = None
    throughput_unit: str = ""
    measured: bool = False  # the throughput is babysit's own, between polls
    train_loss: float | None = None  # the newest finite training loss known
    target_steps: int | None = None
    lr_schedule: str | None = None  # the scheduler the run's config names
    vocab_size: int | None = None  # the model's vocabulary, when the run says it
    configured_lr: float | None = None  # the learning rate the run's config or CLI gives
    advanced: bool = True  # the step moved since the previous record (or has no number)
    epoch: float | None = None  # the record's own epoch, when it says one


class Reprints:
    """Each metric's last evaluation as (value, epoch, step): the same evaluation printed
    again (a bar and its summary, a restated line) is no new one."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[float, float | None, int | None]] = {}

    def fresh(self, key: str, value: float, point: Observation) -> bool:
        """Whether `value` of `key` at `point` is a new evaluation (noted if so)."""
        at = (value, point.epoch, point.step)
        if self._last.get(key) == at:
            return False
        self._last[key] = at
        return True


def at_run_start(point: Observation, start_steps: int) -> bool:
    """Whether a record comes at the run's start: its epoch is the first (0 or 1) or, with
    no epoch, its step within the run's first `start_steps` (an excerpt from mid-run is
    not)."""
    if point.epoch is not None:
        return point.epoch <= 1
    return point.step is not None and point.step <= start_steps


@dataclass(frozen=True)
class Raise:
    type: AnomalyType
    description: str
    key: str = ""
    severity: Severity | None = None  # None: the catalogue's
    # How serious it is if still open when the run ends, when the evidence itself says
    # more than the type does (None: the catalogue's `severity_at_end`).
    severity_at_end: Severity | None = None


@dataclass(frozen=True)
class Resolve:
    type: AnomalyType
    how: str
    key: str = ""


@dataclass(frozen=True)
class Reassess:
    """An open anomaly judged again on new evidence: its severity becomes this (up, or
    down when the evidence says it matters less, e.g. validation kept improving)."""

    type: AnomalyType
    severity: Severity
    why: str
    key: str = ""


Signal = Raise | Resolve | Reassess


class MetricRule(Protocol):
    # Windowed rules judge a series; isolated points picked out of a long history by
    # the fast scan must not feed them.
    windowed: ClassVar[bool]

    def observe(self, point: Observation) -> Sequence[Signal]: ...
