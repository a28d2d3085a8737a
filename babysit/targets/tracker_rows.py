"""Turning a tracker's metric points into Records, and its system metrics into the GPU
line. Shared by the MLflow and W&B targets."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from babysit.model import Record
from babysit.parsing.text import number_from


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


_GPU_UTIL = re.compile(r"^(?:system/)?gpu[._](\d+)[._](?:utilization_percentage|gpu)$")
_GPU_MEM_MB = re.compile(r"^(?:system/)?gpu[._](\d+)[._]memory_usage_megabytes$")
_GPU_MEM_PCT = re.compile(r"^(?:system/)?gpu[._](\d+)[._](?:memory_usage_percentage|"
                          r"memoryAllocated)$")


def gpu_from_system(latest: Mapping[str, float]) -> dict[str, object] | None:
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
    return {"text": text, "util_percent": mean, "mem_used_mib": mem_used,
            "mem_total_mib": mem_total, "gpus": sorted(int(g) for g in util)}


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
