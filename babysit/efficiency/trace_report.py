"""A trace summary as people read it (lines of text) and as programs read it (a JSON
object, printed or written atomically). Times become milliseconds here."""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from babysit.artifact import write_text_atomically
from babysit.efficiency.trace import DeviceBusy, EventTotal, Step, TraceSummary
from babysit.units import count

_STEPS_LISTED = 20  # more than this and the text shows the first ones; --json has all
_NO_DEVICE = ("no device events (no kernel, memcpy or memset): a CPU-only trace, so there "
              "is no device busy time to report")


def summary_to_dict(summary: TraceSummary, source: str) -> dict[str, Any]:
    """`windows` holds the steps, or the whole trace as one window where none is marked
    (then `step_marker` is null and `step_count` 0)."""
    marked = summary.step_marker is not None
    durations = [step.duration_us for step in summary.steps]
    return {
        "source": source,
        "step_marker": summary.step_marker,
        "step_count": len(summary.steps) if marked else 0,
        "step_ms": ({name: _ms(value) for name, value in _stats(durations).items()}
                    if marked else None),
        "windows": [_step_dict(step) for step in summary.steps],
        "device_events": summary.device_events,
        "devices": [_device_dict(device) for device in summary.devices],
        "note": None if summary.devices else _NO_DEVICE,
        "top_device_events": [_total_dict(total, "kind") for total in
                              summary.top_device_events],
        "top_host_ranges": [_total_dict(total, "category") for total in
                            summary.top_host_ranges],
        "skipped_events": summary.skipped_events,
    }


def render_lines(summary: TraceSummary, source: str) -> list[str]:
    lines = [f"Trace: {source}"]
    lines += _step_lines(summary)
    lines += _device_lines(summary)
    lines += _top_lines("Top device events (whole trace)", summary.top_device_events)
    lines += _top_lines("Top host ranges (whole trace; inclusive, so nested ranges overlap; "
                        "step ranges left out)", summary.top_host_ranges)
    if summary.skipped_events:
        lines.append(f"Skipped {summary.skipped_events} event(s) without a usable start or "
                     f"duration.")
    return lines


def write_json(data: Mapping[str, Any], path: Path) -> None:
    """Atomically (see artifact.write_text_atomically). Raises OSError."""
    write_text_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _step_lines(summary: TraceSummary) -> list[str]:
    if summary.step_marker is None:
        whole = summary.steps[0]
        return [f"Steps: none marked (no perf::step or ProfilerStep#N ranges), so the whole "
                f"trace, {_time(whole.duration_us)}, is one window."]
    stats = _stats([step.duration_us for step in summary.steps])
    marker = "ProfilerStep#N" if summary.step_marker == "ProfilerStep#" else "perf::step"
    lines = [f"Steps: {len(summary.steps)} ({marker} ranges); median "
             f"{_time(stats['median'])}, mean {_time(stats['mean'])}, min "
             f"{_time(stats['min'])}, max {_time(stats['max'])}"]
    for step in summary.steps[:_STEPS_LISTED]:
        busy = "  ".join(f"{d.device} busy {_percent(d.busy_fraction)}" for d in step.devices)
        lines.append(f"  step {step.number:<4} {_time(step.duration_us):>10}  {busy}".rstrip())
    if len(summary.steps) > _STEPS_LISTED:
        lines.append(f"  … {len(summary.steps) - _STEPS_LISTED} more (all of them in --json)")
    return lines


def _device_lines(summary: TraceSummary) -> list[str]:
    if not summary.devices:
        return [f"Devices: {_NO_DEVICE}."]
    within = "the steps" if summary.step_marker else "the whole trace"
    lines = [f"Devices ({count(summary.device_events, 'event')}; busy = kernels, memcpy and "
             f"memset, overlaps counted once, within {within}):"]
    lines += [f"  {d.device}: busy {_percent(d.busy_fraction)} ({_time(d.busy_us)} of "
              f"{_time(d.window_us)}); kernels {_time(d.kernel_us)}, memcpy "
              f"{_time(d.memcpy_us)}, memset {_time(d.memset_us)}" for d in summary.devices]
    return lines


def _top_lines(title: str, totals: tuple[EventTotal, ...]) -> list[str]:
    if not totals:
        return []
    lines = [f"{title}:", f"  {'total':>10}  {'count':>6}  name"]
    lines += [f"  {_time(t.total_us):>10}  {t.count:>6}  {t.name}" for t in totals]
    return lines


def _stats(durations: list[float]) -> dict[str, float]:
    return {"median": statistics.median(durations), "mean": statistics.fmean(durations),
            "min": min(durations), "max": max(durations)}


def _step_dict(step: Step) -> dict[str, Any]:
    return {"number": step.number, "name": step.name, "start_us": step.start_us,
            "duration_ms": _ms(step.duration_us),
            "devices": [_device_dict(device) for device in step.devices]}


def _device_dict(device: DeviceBusy) -> dict[str, Any]:
    return {"device": device.device, "window_ms": _ms(device.window_us),
            "busy_ms": _ms(device.busy_us), "busy_fraction": round(device.busy_fraction, 4),
            "kernel_ms": _ms(device.kernel_us), "memcpy_ms": _ms(device.memcpy_us),
            "memset_ms": _ms(device.memset_us)}


def _total_dict(total: EventTotal, category_key: str) -> dict[str, Any]:
    return {"name": total.name, category_key: total.category,
            "total_ms": _ms(total.total_us), "count": total.count}


def _ms(microseconds: float) -> float:
    return round(microseconds / 1000, 6)  # to the nanosecond, a trace's finest grain


def _time(microseconds: float) -> str:
    """`850 µs`, `4.42 ms`, `12.3 ms`, `1.25 s`: three figures are plenty to compare."""
    if microseconds < 999.5:
        return f"{microseconds:.0f} µs"
    if microseconds < 999_500:
        return _three_figures(microseconds / 1e3, "ms")
    return _three_figures(microseconds / 1e6, "s")


def _three_figures(value: float, unit: str) -> str:
    decimals = 2 if value < 9.995 else 1 if value < 99.95 else 0
    return f"{value:.{decimals}f} {unit}"


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.1f}%"
