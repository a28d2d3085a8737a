"""Turning a tracker's metric points into Records, and its system metrics into the GPU
line; and saying in a few words why a tracker's server could not be reached. Shared by
the MLflow and W&B targets."""

from __future__ import annotations

import errno
import math
import socket
import ssl
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from babysit import lazy_re
from babysit.model import Record
from babysit.parsing.text import number_from
from babysit.snapshot import GpuSample


@dataclass(frozen=True)
class Point:
    key: str
    step: int
    value: float
    timestamp: float  # seconds since the epoch (0 when unknown)


def records_from_points(points: Iterable[Point], fmt: str) -> list[Record]:
    """One Record per step, steps in order, each with every metric logged at it."""
    by_step: dict[int, dict[str, float]] = {}
    for point in points:
        by_step.setdefault(point.step, {})[point.key] = point.value
    return [Record(step=step, metrics=by_step[step], fmt=fmt) for step in sorted(by_step)]


class StepOrigin:
    """Whether a tracker's run numbers its steps from 0, which a snapshot says as
    `steps_from_zero`: records keep the tracker's own step numbers (as its charts show
    them), and only the count of steps completed is the last index + 1.

    A tracker keeps the step the script passed (MLflow, W&B's `step=`) or counts
    `wandb.log` calls from 0 (W&B's `_step`). The first step seen decides: 0 means the
    run counts from 0; 1 or later, that it already counts completed steps. A 0-based run
    never logs its planned number of steps as an index, so one that does (a point logged
    at step 0 before training, then steps 1..N) counts completed steps after all."""

    def __init__(self) -> None:
        self._from_zero: bool | None = None  # decided by the first step seen

    @property
    def from_zero(self) -> bool:
        return bool(self._from_zero)

    def see(self, steps: Iterable[int | None], target: int | None) -> bool:
        """Take in steps, in order; returns whether the run counts from 0."""
        for step in steps:
            if step is None:
                continue
            if self._from_zero is None:
                self._from_zero = step == 0
            if self._from_zero and target is not None and step >= target:
                self._from_zero = False
        return self.from_zero

    def counts(self) -> None:
        """The run's steps are counts of completed steps (a trainer's own step)."""
        self._from_zero = False


def unreachable_reason(error: BaseException) -> str | None:
    """A few words on why a server could not be reached ("connection refused", "timed
    out", …) when `error`, or what it wraps, says so; None for any other error. Never the
    wrapped text itself: HTTP clients put their own class names and the whole request
    URL, query string included, into their messages."""
    links = list(_wrapped(error))
    for link in links:
        if isinstance(link, socket.gaierror):
            return "host name not found"
        if isinstance(link, ConnectionRefusedError):
            return "connection refused"
        if isinstance(link, ConnectionResetError) and type(link).__name__ == \
                "RemoteDisconnected":
            return "the server closed the connection without answering"
        if isinstance(link, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError)):
            return "connection lost"
        if isinstance(link, TimeoutError):
            return "timed out"
        if isinstance(link, ssl.SSLError):
            return "TLS error"
        if isinstance(link, OSError) and link.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
            return "no route to the host"
    for link in links:  # HTTP clients' own failures, known by name (not imported here)
        names = {cls.__name__ for cls in type(link).__mro__}
        if names & {"Timeout", "ReadTimeout", "ConnectTimeout", "TimeoutError",
                    "ReadTimeoutError", "ConnectTimeoutError"}:
            return "timed out"
        if names & {"NameResolutionError"}:
            return "host name not found"
        if names & {"SSLError"}:
            return "TLS error"
        if names & {"NewConnectionError", "MaxRetryError", "ProtocolError",
                    "ChunkedEncodingError", "ProxyError"} or (
                "ConnectionError" in names and "requests" in type(link).__module__):
            return "connection failed"
    return None


def _wrapped(error: BaseException) -> Iterator[BaseException]:
    """`error` and every exception it wraps (cause, context, arguments, `reason`)."""
    seen: set[int] = set()
    todo = [error]
    while todo and len(seen) < 50:
        link = todo.pop(0)
        if id(link) in seen:
            continue
        seen.add(id(link))
        yield link
        inner = [link.__cause__, link.__context__, getattr(link, "reason", None),
                 *link.args]
        todo.extend(e for e in inner if isinstance(e, BaseException))


_GPU_UTIL = lazy_re.compile(r"^(?:system/)?gpu[._](\d+)[._](?:utilization_percentage|gpu)$")
_GPU_MEM_MB = lazy_re.compile(r"^(?:system/)?gpu[._](\d+)[._]memory_usage_megabytes$")
_GPU_MEM_PCT = lazy_re.compile(r"^(?:system/)?gpu[._](\d+)[._](?:memory_usage_percentage|"
                               r"memoryAllocated)$")


def gpu_from_system(latest: Mapping[str, float]) -> GpuSample | None:
    """The GPU line from a tracker's system metrics (MLflow `system/gpu_0_…`, W&B
    `gpu.0.gpu`), or None when the run logs none."""
    util: dict[str, float] = {}
    used: dict[str, float] = {}
    percent: dict[str, float] = {}
    for key, value in latest.items():
        if not math.isfinite(value):
            continue
        for pattern, sink in ((_GPU_UTIL, util), (_GPU_MEM_MB, used), (_GPU_MEM_PCT, percent)):
            match = pattern.match(key)
            if match:
                sink[match.group(1)] = value
    if not util:
        return None
    mean = sum(util.values()) / len(util)
    text = f"GPU: {mean:.0f}% util"
    if len(util) > 1:
        text = f"GPU: {len(util)}× {mean:.0f}% util"
    mem_used = mem_total = None
    if used and all(gpu in percent and percent[gpu] > 0 for gpu in used):
        mem_used = sum(used.values())
        mem_total = sum(used[gpu] * 100.0 / percent[gpu] for gpu in used)
        text += f", {mem_used / 1024:.1f}/{mem_total / 1024:.0f} GB VRAM"
    return GpuSample(text=text, util_percent=mean, mem_used_mib=mem_used,
                     mem_total_mib=mem_total, gpus=tuple(sorted(int(g) for g in util)))


_TARGET_PARAMS = ("max_steps", "num_train_steps", "total_steps", "train_iters", "max_iters",
                  "num_training_steps", "training_steps", "steps")


def target_from_params(params: Mapping[str, object]) -> int | None:
    """The planned number of steps, from a run's params/config when it says."""
    flat = {k.lower().split("/")[-1].split(".")[-1]: v for k, v in params.items()}
    for key in _TARGET_PARAMS:
        value = number_from(flat.get(key))
        if value is not None and math.isfinite(value) and value > 0:
            return int(value)
    return None


def schedule_from_params(params: Mapping[str, object]) -> str | None:
    """The learning-rate scheduler a run's params/config name (HF `lr_scheduler_type`...)."""
    flat = {k.lower().split("/")[-1].split(".")[-1]: v for k, v in params.items()}
    for key in ("lr_scheduler_type", "lr_scheduler", "scheduler", "lr_schedule",
                "lr_decay_style"):
        value = flat.get(key)
        if isinstance(value, str) and value:
            return value.split(".")[-1].lower()
    return None
