"""How a Vertex AI job is described to people: states, durations, machines, tasks.
Pure functions over plain values."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from babysit.units import format_duration

# Task states in the order a person reads them.
_TASK_ORDER = ("SUCCEEDED", "SKIPPED", "FAILED", "CANCELLED", "CANCELLING", "CANCEL_PENDING",
               "RUNNING", "PENDING", "NOT_TRIGGERED")


@dataclass(frozen=True)
class Task:
    name: str
    state: str  # PENDING, RUNNING, SUCCEEDED, FAILED, …
    started: datetime | None = None
    ended: datetime | None = None
    error: str = ""
    jobs: tuple[str, ...] = ()  # custom jobs that run it (their resource names)
    key: str = ""  # the task's ID: iterations of a ParallelFor share their name


def enum_name(value: Any) -> str:
    """The name of an enum field's value. The REST clients ask for enums as numbers
    (`$alt=json;enum-encoding=int`), so a value newer than the installed
    google-cloud-aiplatform knows arrives as a plain `int` with no `.name`: it is
    written `UNKNOWN_<number>`, never a crash and never mistaken for a known value."""
    name = getattr(value, "name", None)
    if isinstance(name, str):
        return name
    try:
        return f"UNKNOWN_{int(value)}"
    except (TypeError, ValueError):
        return "UNKNOWN"


def is_unknown(name: str) -> bool:
    return name.startswith("UNKNOWN")


def unknown_state_notice(state: str, what: str = "the job") -> str:
    return (f"Vertex AI reports {what} in state {state[len('UNKNOWN_'):] or '?'}, which the "
            f"installed google-cloud-aiplatform does not know (pip install -U "
            f"google-cloud-aiplatform); it is taken as not ended until a known state follows")


def short_state(state: str) -> str:
    """`JOB_STATE_RUNNING` → `RUNNING`; `PIPELINE_STATE_FAILED` → `FAILED`."""
    for prefix in ("JOB_STATE_", "PIPELINE_STATE_"):
        if state.startswith(prefix):
            return state[len(prefix):]
    return state


def accelerator(kind: str) -> str:
    """`NVIDIA_TESLA_T4` → `T4`, `NVIDIA_H100_80GB` → `H100_80GB`, `TPU_V5_LITEPOD` kept;
    a type newer than the installed library → `accelerator #N`."""
    if kind.startswith("UNKNOWN_"):
        return f"accelerator #{kind[len('UNKNOWN_'):]}"
    for prefix in ("NVIDIA_TESLA_", "NVIDIA_"):
        if kind.startswith(prefix):
            return kind[len(prefix):]
    return kind


def machine(machine_type: str, accelerator_type: str, count: int, replicas: int) -> str:
    """`n1-standard-8 + 4x T4`, `2 × (a2-highgpu-8g + 8x A100)`."""
    text = machine_type or "?"
    if count and accelerator_type and accelerator_type != "ACCELERATOR_TYPE_UNSPECIFIED":
        text += f" + {count}x {accelerator(accelerator_type)}"
    return f"{replicas} × ({text})" if replicas > 1 else text


def elapsed(start: datetime | None, end: datetime | None, now: datetime) -> str | None:
    if start is None:
        return None
    return format_duration(((end or now) - start).total_seconds())


def task_counts(tasks: Sequence[Task], now: datetime, brief: bool) -> str:
    """`Tasks: 3 SUCCEEDED, 1 RUNNING (data-preprocessing), 2 PENDING`. Brief (each poll)
    names running tasks with their time so far and failed ones; full (the baseline)
    names every task of a small group."""
    groups: dict[str, list[Task]] = {}
    for task in tasks:
        groups.setdefault(task.state, []).append(task)
    parts = []
    for state in sorted(groups, key=lambda s: _TASK_ORDER.index(s) if s in _TASK_ORDER
                        else len(_TASK_ORDER)):
        members = groups[state]
        text = f"{len(members)} {state}"
        if state == "RUNNING":
            names = []
            for task in members[:3]:
                took = elapsed(task.started, None, now)
                names.append(f"{task.name} — {took} elapsed" if brief and took else task.name)
            text += f" ({', '.join(names)})"
        elif state == "FAILED" or (not brief and state != "PENDING" and len(members) <= 3):
            text += f" ({', '.join(t.name for t in members[:3])})"
        parts.append(text)
    return "Tasks: " + (", ".join(parts) if parts else "none yet")
