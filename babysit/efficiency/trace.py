"""Where the time of a training step goes, read from a PyTorch profiler Chrome trace
(what `torch.profiler.profile(...).export_chrome_trace(path)` writes).

An importer, not a profiler: the steps are the host ranges the training marked
(`record_function("perf::step")`, or the profiler's own `ProfilerStep#N`); each
device's busy time is the union of its kernels, memcpys and memsets (two streams
running at once keep the device busy once, not twice), clipped to each step's wall
window — a kernel that outlives the step it was launched in counts in the step it ran
in. Every time here is in microseconds, as in the trace."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from babysit.efficiency.trace_intervals import Interval, covered_each, merge
from babysit.efficiency.trace_load import TraceError, load_events

# Looked for in this order: a `perf::step` the user wrote is what they mean by a step,
# even where the profiler's schedule also left its ProfilerStep#N ranges around it.
STEP_MARKERS = ("perf::step", "ProfilerStep#")
DEVICE_KINDS = ("kernel", "memcpy", "memset")
_HOST_CATEGORIES = frozenset({"cpu_op", "python_function", "user_annotation"})
# Categories compared lower-cased: older PyTorch wrote "Kernel", "Memcpy", "Memset".
_DEVICE_CATEGORIES = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset",
                      "memcpy": "memcpy", "memset": "memset"}
_UNNAMED = "(unnamed)"


@dataclass(frozen=True)
class DeviceBusy:
    """One device over one window (a step, or all of them)."""

    device: str
    window_us: float
    busy_us: float  # kernels, memcpys and memsets together, overlaps counted once
    kernel_us: float
    memcpy_us: float
    memset_us: float

    @property
    def busy_fraction(self) -> float:
        return self.busy_us / self.window_us if self.window_us > 0 else 0.0


@dataclass(frozen=True)
class Step:
    number: int  # 1-based, in trace order
    name: str  # "perf::step", "ProfilerStep#12", or "whole trace"
    start_us: float
    duration_us: float
    devices: tuple[DeviceBusy, ...]


@dataclass(frozen=True)
class EventTotal:
    """All the events of one name and category: their summed duration and number."""

    name: str
    category: str
    total_us: float
    count: int


@dataclass(frozen=True)
class TraceSummary:
    step_marker: str | None  # None: no step ranges, so `steps` is one whole-trace window
    steps: tuple[Step, ...]
    devices: tuple[DeviceBusy, ...]  # over all the steps together
    device_events: int
    top_device_events: tuple[EventTotal, ...]  # over the whole trace
    top_host_ranges: tuple[EventTotal, ...]  # over the whole trace, step ranges left out
    skipped_events: int  # complete events without a usable start or duration


# (start, duration, name). The duration is kept as the trace wrote it: end - start
# loses digits on timestamps of 13 figures.
_Range = tuple[float, float, str]


@dataclass(frozen=True)
class _Scan:
    """What one pass over the events keeps: a few floats per device event, totals per
    name, never the events themselves."""

    step_ranges: Mapping[str, list[_Range]]  # marker -> its ranges
    device_intervals: Mapping[str, Mapping[str, list[Interval]]]  # device -> kind -> ...
    device_labels: Mapping[str, str]
    device_totals: Mapping[tuple[str, str], list[float]]  # (name, kind) -> [us, count]
    host_totals: Mapping[tuple[str, str], list[float]]  # (name, category) -> [us, count]
    span: Interval | None  # first start to last end of all the complete events
    skipped: int


def summarize_file(path: Path, top: int = 10) -> TraceSummary:
    """Raises TraceError (one line, naming the file) when there is nothing to read."""
    try:
        return summarize(load_events(path), top)
    except TraceError as error:
        if str(error).startswith(f"{path}:"):
            raise
        raise TraceError(f"{path}: {error}") from None


def summarize(events: Iterable[Any], top: int = 10) -> TraceSummary:
    scan = _scan(events)
    if scan.span is None:
        raise TraceError("no complete events with a start and a duration: nothing to "
                         "summarize")
    marker, windows = _windows(scan.step_ranges, scan.span)
    devices = _device_order(scan.device_intervals)
    merged = {device: _merged(scan.device_intervals[device]) for device in devices}
    labels = [scan.device_labels.get(device, f"device {device}") for device in devices]
    busy = [_busy_each(label, merged[device], windows) for label, device in
            zip(labels, devices, strict=True)]
    steps = tuple(
        Step(number, name, start, duration, tuple(per_device[number - 1]
                                                  for per_device in busy))
        for number, (start, duration, name) in enumerate(windows, start=1))
    return TraceSummary(
        step_marker=marker,
        steps=steps,
        devices=tuple(_added(label, [step.devices[i] for step in steps])
                      for i, label in enumerate(labels)),
        device_events=sum(len(i) for kinds in scan.device_intervals.values()
                          for i in kinds.values()),
        top_device_events=_top(scan.device_totals, top),
        top_host_ranges=_top(scan.host_totals, top),
        skipped_events=scan.skipped,
    )


def step_marker_of(name: str) -> str | None:
    for marker in STEP_MARKERS:
        if name == marker or (marker.endswith("#") and name.startswith(marker)):
            return marker
    return None


def _scan(events: Iterable[Any]) -> _Scan:
    step_ranges: dict[str, list[_Range]] = {marker: [] for marker in STEP_MARKERS}
    intervals: dict[str, dict[str, list[Interval]]] = {}
    labels: dict[str, str] = {}
    device_totals: dict[tuple[str, str], list[float]] = {}
    host_totals: dict[tuple[str, str], list[float]] = {}
    first, last, skipped = math.inf, -math.inf, 0
    for event in events:
        if not isinstance(event, dict):
            skipped += 1
            continue
        phase = event.get("ph")
        if phase == "M":
            _note_label(event, labels)
            continue
        if phase != "X":  # flows, instants, counters: no duration to account for
            continue
        start, duration = _number(event.get("ts")), _number(event.get("dur"))
        if start is None or duration is None or duration < 0:
            skipped += 1
            continue
        end = start + duration
        first, last = min(first, start), max(last, end)
        name = event.get("name")
        name = name if isinstance(name, str) and name else _UNNAMED
        category = event.get("cat")
        category = category.lower() if isinstance(category, str) else ""
        kind = _DEVICE_CATEGORIES.get(category)
        if kind is not None:
            device = _device_key(event.get("pid"))
            per_kind = intervals.setdefault(device, {k: [] for k in DEVICE_KINDS})
            per_kind[kind].append((start, end))
            _add(device_totals, (name, kind), duration)
        elif category in _HOST_CATEGORIES or not category:
            marker = step_marker_of(name)
            if marker is not None:
                step_ranges[marker].append((start, duration, name))
            elif category:
                _add(host_totals, (name, category), duration)
    span = (first, last) if first <= last else None
    return _Scan(step_ranges, intervals, labels, device_totals, host_totals, span, skipped)


def _windows(step_ranges: Mapping[str, list[_Range]],
             span: Interval) -> tuple[str | None, list[_Range]]:
    for marker in STEP_MARKERS:
        if step_ranges[marker]:
            return marker, _outermost(step_ranges[marker])
    return None, [(span[0], span[1] - span[0], "whole trace")]


def _outermost(ranges: list[_Range]) -> list[_Range]:
    # A step range inside another (a helper that marks a step its caller marked
    # already) is the same step: counting it again would count its time twice.
    kept: list[_Range] = []
    for start, duration, name in sorted(ranges, key=lambda r: (r[0], -r[1])):
        if kept and start + duration <= kept[-1][0] + kept[-1][1]:
            continue
        kept.append((start, duration, name))
    return kept


def _merged(intervals: Mapping[str, list[Interval]]) -> dict[str, list[Interval]]:
    """Each kind's union, and "any": the union of all of them."""
    merged = {kind: merge(intervals[kind]) for kind in DEVICE_KINDS}
    merged["any"] = merge(i for kind in DEVICE_KINDS for i in merged[kind])
    return merged


def _busy_each(label: str, merged: Mapping[str, list[Interval]],
               windows: list[_Range]) -> list[DeviceBusy]:
    """The device's busy time in every window (sorted by start, as `_outermost` leaves
    them): one walk per kind over the windows and the intervals together."""
    bounds = [(start, start + duration) for start, duration, _ in windows]
    kinds = [covered_each(merged[kind], bounds) for kind in ("any", *DEVICE_KINDS)]
    return [DeviceBusy(label, duration, *(k[i] for k in kinds))
            for i, (_, duration, _) in enumerate(windows)]


def _added(label: str, parts: list[DeviceBusy]) -> DeviceBusy:
    """Steps do not nest (nested ones were dropped), so their times add."""
    return DeviceBusy(label, sum(p.window_us for p in parts), sum(p.busy_us for p in parts),
                      sum(p.kernel_us for p in parts), sum(p.memcpy_us for p in parts),
                      sum(p.memset_us for p in parts))


def _device_order(devices: Iterable[str]) -> list[str]:
    # Numerically where the ids are numbers: device 10 comes after device 2.
    return sorted(devices, key=lambda d: (not d.isdecimal(), int(d) if d.isdecimal() else 0, d))


def _top(totals: Mapping[tuple[str, str], list[float]], top: int) -> tuple[EventTotal, ...]:
    ranked = sorted(totals.items(), key=lambda item: (-item[1][0], item[0]))
    return tuple(EventTotal(name, category, total, int(count))
                 for (name, category), (total, count) in ranked[:top])


def _add(totals: dict[tuple[str, str], list[float]], key: tuple[str, str],
         duration: float) -> None:
    entry = totals.setdefault(key, [0.0, 0])
    entry[0] += duration
    entry[1] += 1


def _note_label(event: Mapping[str, Any], labels: dict[str, str]) -> None:
    # Kineto names every process "python" and puts "GPU 0" in its process_labels.
    args = event.get("args")
    if event.get("name") == "process_labels" and isinstance(args, dict):
        label = args.get("labels")
        if isinstance(label, str) and label:
            labels[_device_key(event.get("pid"))] = label


def _device_key(pid: Any) -> str:
    return "?" if pid is None or isinstance(pid, (dict, list)) else str(pid)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None
