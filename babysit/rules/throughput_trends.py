"""Slow throughput without a fast start to fall from: a rate that falls steadily over a
short log, and steps that spend most of their time waiting for data.

The medians rule (`metric_rules.evaluate_throughput`) needs a baseline and a recent
window far apart; a log of ten readings whose time per iteration grows 85 → 202 s has
neither, yet every reading is slower than the one before. Here the trend is fitted
robustly (Theil–Sen on the log of the rate: one slow save moves no median of slopes),
must be steady (most pairs of readings fall), large (the fitted fall beyond
`slow_drop`) and beyond the run's own noise (`slow_noise_k` robust σ of the residuals).

A step whose data time is most of its time is input-bound whatever its rate: the GPU
waits for the loader (YOLOX's `iter_time: 1.046s, data_time: 0.823s`; MMEngine's and
detectron2's `time … data_time …`). Evaluation passes are left out: a test loader
often waits on data while the model is cheap.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Mapping, Sequence
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.metric_names import step_time_key
from babysit.model import AnomalyType
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_MAD_TO_SIGMA = 1.4826
_FEWEST, _MOST = 5, 30  # readings a steady fall is judged on (more: the medians rule)
_STEADY = 0.6  # Kendall's tau of the rate against time, at most -this
_SHARE_OF_DROP = 0.8  # the last third must be this share of `slow_drop` below the first


def steady_fall(samples: Sequence[float], rules: RuleSettings) -> str | None:
    """A rate (higher is faster) that fell steadily over 5 to 30 readings by more than
    `slow_drop`, beyond its noise; None otherwise."""
    count = len(samples)
    if not _FEWEST <= count <= _MOST or min(samples) <= 0:
        return None
    logs = [math.log(s) for s in samples]
    pairs = [(i, j) for i in range(count) for j in range(i + 1, count)]
    slope = statistics.median((logs[j] - logs[i]) / (j - i) for i, j in pairs)
    fitted = 1 - math.exp(slope * (count - 1))  # the fall from first to last, fitted
    if fitted < rules.slow_drop:
        return None
    falls = sum(1 for i, j in pairs if logs[j] < logs[i])
    rises = sum(1 for i, j in pairs if logs[j] > logs[i])
    if (falls - rises) / len(pairs) < _STEADY:
        return None
    level = statistics.median(logs[i] - slope * i for i in range(count))
    residuals = [logs[i] - level - slope * i for i in range(count)]
    centre = statistics.median(residuals)
    sigma = _MAD_TO_SIGMA * statistics.median(abs(r - centre) for r in residuals)
    if -slope * (count - 1) <= rules.slow_noise_k * sigma:
        return None
    third = max(1, count // 3)
    first, last = statistics.median(samples[:third]), statistics.median(samples[-third:])
    if last > first * (1 - _SHARE_OF_DROP * rules.slow_drop):
        return None
    return (f"throughput {samples[-1]:.3g} is {100 * (1 - last / first):.0f}% below where "
            f"this log began ({first:.3g}), falling steadily over its {count} readings "
            f"(a fitted {100 * fitted:.0f}% fall)")


_STALL_LEAST = 8  # readings before most of them can be said to stall
_STALL_WINDOW = 30  # the recent readings judged
_STALL_FACTOR = 5.0  # a reading this many times slower than the fast steps: a stall
_STALL_SHARE = 1 / 3  # the share of readings (overall, and of the recent half) that stall


def stalled_steps(samples: Sequence[float], rules: RuleSettings) -> str | None:
    """Steps that stall, interleaved with fast ones: a rate whose median is more than
    `slow_drop` below the median of its fastest quarter, with a third of the readings
    (and of the recent half) `_STALL_FACTOR` times slower than those fast ones, and a
    quarter within 2× of them (some in the recent half). The fast
    steps show what a step costs; a stall is time spent waiting (input pipeline, I/O,
    contention): NiftyNet's iterations of 3 s between ones of 35-108 s. Steps that merely
    vary (a progress bar's rate, twice as slow now and then) are not this; nor is a slow
    one now and then (an evaluation, a save) or a slow start. None otherwise."""
    recent = list(samples[-_STALL_WINDOW:])
    count = len(recent)
    if count < _STALL_LEAST or min(recent) <= 0:
        return None
    ranked = sorted(recent, reverse=True)
    fast = statistics.median(ranked[:max(2, count // 4)])
    median = statistics.median(recent)
    if median >= fast * (1 - rules.slow_drop):
        return None
    stalled = [v * _STALL_FACTOR < fast for v in recent]
    half = stalled[count // 2:]
    if sum(stalled) < _STALL_SHARE * count or sum(half) < _STALL_SHARE * len(half):
        return None
    # Interleaved: fast steps recur, in the recent half too. One fast reading among slow
    # ones is another bar's rate (a shard loader's 40 it/s before a fine-tune's 0.4).
    quick = [2 * v >= fast for v in recent]
    if sum(quick) < count / 4 or not any(quick[count // 2:]):
        return None
    return (f"throughput: {sum(stalled)} of the last {count} readings are more than "
            f"{_STALL_FACTOR:g}× slower than the run's own fast steps ({fast:.3g}), "
            f"interleaved with them, median {median:.3g}: much of the run's time is spent "
            f"waiting (input pipeline, I/O, contention), not computing")


class StallWatch:
    """The readings of each shape of record apart, for `stalled_steps`: a log that
    prints its evaluation's rate in records of their own (torchtitan's `validate step:
    10 … tps: 350,762` between training steps at ~50,000) would otherwise look like fast
    steps between stalls. A shape is the set of a record's metric names."""

    def __init__(self) -> None:
        self._samples: dict[frozenset[str], deque[float]] = {}

    def stalled(self, metrics: Mapping[str, float], value: float,
                rules: RuleSettings) -> str | None:
        shape = frozenset(metrics)
        samples = self._samples.get(shape)
        if samples is None:
            if len(self._samples) >= 16:
                return None  # a log of ever new shapes: no series to judge
            samples = self._samples[shape] = deque(maxlen=_STALL_WINDOW)
        samples.append(value)
        return stalled_steps(list(samples), rules)


_DATA_KEYS = ("data_time", "time_data", "data_wait", "dataloader_time", "data_loading_time",
              "load_time", "data")
_TIME_KEYS = ("time", "batch_time", "train_time")
_EVAL_PREFIXES = ("eval", "val", "test", "valid", "dev")
_WINDOW = 8  # the recent readings a share is the median of
_LEAST = 5
_BOUND = 0.5  # data time above this share of the step's time: input-bound
_FREED = 0.3  # below it again: resolved
_LEAST_SECONDS = 0.01  # a data time this small is timer noise, whatever its share


def data_share(metrics: Mapping[str, float]) -> tuple[float, float] | None:
    """(data time, step time) in the same unit, when a training record prints both."""
    data_key = next((k for k in _DATA_KEYS if k in metrics), None)
    if data_key is None:
        return None
    timed = step_time_key(metrics)
    time_key = timed[0] if timed else next((k for k in _TIME_KEYS if k in metrics), None)
    if time_key is None or time_key == data_key:
        return None
    data, took = metrics[data_key], metrics[time_key]
    if not (math.isfinite(data) and math.isfinite(took)) or took <= 0 or data < 0:
        return None
    return data, took


class DataWaitRule:
    """Steps that spend most of their time waiting for the data loader."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._shares: deque[tuple[float, float]] = deque(maxlen=_WINDOW)
        self._raised = False

    def observe(self, point: Observation) -> Sequence[Signal]:
        metrics = point.metrics
        if "data" not in "".join(metrics) or any(k.startswith(_EVAL_PREFIXES) for k in metrics):
            return []
        found = data_share(metrics)
        if found is None:
            return []
        self._shares.append(found)
        if len(self._shares) < _LEAST:
            return []
        share = statistics.median(d / t for d, t in self._shares)
        data = statistics.median(d for d, _ in self._shares)
        took = statistics.median(t for _, t in self._shares)
        if not self._raised and share > _BOUND and data >= _LEAST_SECONDS:
            self._raised = True
            return [Raise(AnomalyType.SLOW_THROUGHPUT, (
                f"slow throughput: the steps wait on data — data loading takes "
                f"{100 * share:.0f}% of each step ({data:.3g} of {took:.3g}, median of the "
                f"last {len(self._shares)}): the accelerator idles while the loader works"),
                key="data")]
        if self._raised and share < _FREED:
            self._raised = False
            return [Resolve(AnomalyType.SLOW_THROUGHPUT,
                            f"data loading down to {100 * share:.0f}% of each step", key="data")]
        return []
