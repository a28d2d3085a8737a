"""Rules over the run's metric stream, behind one small protocol.

Each rule sees one `Observation` at a time (what one record said, with the keys the
run uses for loss, learning rate and gradient norm already picked), keeps the small
window it needs, and answers with signals: raise this anomaly, resolve that one. The
judging itself is done by the pure evaluators in `metric_rules`. Adding a rule is one
class here and one line in `METRIC_RULES`.
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from babysit.config import RuleSettings
from babysit.metric_names import eval_direction
from babysit.model import AnomalyType, Severity
from babysit.rules import metric_rules as mr


@dataclass(frozen=True)
class Observation:
    """One record's metrics, as the rules see them."""

    step: int | None
    metrics: Mapping[str, float]
    loss: float | None = None  # the training loss, under the key the run uses
    lr: float | None = None
    grad_norm: float | None = None
    throughput: float | None = None
    throughput_unit: str = ""
    train_loss: float | None = None  # the newest finite training loss known
    target_steps: int | None = None
    lr_schedule: str | None = None  # the scheduler the run's config names


@dataclass(frozen=True)
class Raise:
    type: AnomalyType
    description: str
    key: str = ""
    severity: Severity | None = None  # None: the catalogue's


@dataclass(frozen=True)
class Resolve:
    type: AnomalyType
    how: str
    key: str = ""


Signal = Raise | Resolve


class MetricRule(Protocol):
    # Windowed rules judge a series; isolated points picked out of a long history by
    # the fast scan must not feed them.
    windowed: ClassVar[bool]

    def observe(self, point: Observation) -> Sequence[Signal]: ...


class NonFiniteRule:
    windowed: ClassVar[bool] = False

    def __init__(self, rules: RuleSettings) -> None:
        pass

    def observe(self, point: Observation) -> Sequence[Signal]:
        metrics = point.metrics
        bad = mr.nonfinite_metrics(metrics)
        if bad:
            values = ", ".join(f"{k}={metrics[k]}" for k in bad)
            return [Raise(AnomalyType.NAN_INF, f"non-finite metric: {values}")]
        skipped = metrics.get("number_of_nan_iterations", 0)
        if skipped > 0:
            # Megatron-LM skips a NaN iteration and counts it instead of printing nan.
            return [Raise(AnomalyType.NAN_INF, f"Megatron-LM reports {skipped:g} NaN "
                                               f"iteration(s) in this logging interval")]
        return []


class LossRule:
    """Spikes against the recent robust spread, and divergence (a loss that keeps
    rising). A spike is not reported while the loss is diverging: that is one problem."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._window: deque[float] = deque(maxlen=rules.spike_window)
        self._sorted: list[float] = []  # the same values, kept sorted
        self._recent: deque[float] = deque(maxlen=rules.divergence_steps + 1)
        self._lrs: deque[float] = deque(maxlen=5)
        self._spiking = False
        self._diverging = False
        self._recovery = math.inf  # a spiked loss has recovered below this

    def observe(self, point: Observation) -> Sequence[Signal]:
        if point.lr is not None and math.isfinite(point.lr):
            self._lrs.append(point.lr)
        value = point.loss
        if value is None or not math.isfinite(value):
            return []
        out: list[Signal] = []
        spike = mr.evaluate_spike(self._sorted, value, self.rules)
        if spike is not None and not self._diverging:
            reason, threshold = spike
            if not self._spiking:
                # Recovered means back to where the loss was just before the spike, not
                # merely under the (wider) detection threshold.
                before = list(self._window)[-5:]
                level = max(before) if before else threshold
                self._recovery = min(threshold, level + abs(level) * self.rules.spike_min_rise)
            self._spiking = True
            out.append(Raise(AnomalyType.LOSS_SPIKE, f"loss spike: {reason}{self._lr_note()}"))
        elif self._spiking and value < self._recovery:
            self._spiking = False
            out.append(Resolve(AnomalyType.LOSS_SPIKE, f"loss back to {value:.4g}"))
        if len(self._window) == self._window.maxlen:
            del self._sorted[bisect.bisect_left(self._sorted, self._window[0])]
        self._window.append(value)
        bisect.insort(self._sorted, value)
        self._recent.append(value)
        rising = mr.evaluate_divergence(list(self._recent), self.rules)
        if rising is not None:
            self._diverging = True
            out.append(Raise(AnomalyType.DIVERGENCE, f"divergence: {rising}"))
        elif self._diverging and len(self._recent) >= 2 and value < self._recent[-2]:
            self._diverging = False
            out.append(Resolve(AnomalyType.DIVERGENCE, f"loss fell again to {value:.4g}"))
        return out

    def recent(self, count: int) -> list[float]:
        return list(self._window)[-count:]

    def _lr_note(self) -> str:
        """A spike right after the learning rate went up may be a planned schedule
        change (a warm restart) or an LR bug; the log cannot tell which, so say it."""
        if len(self._lrs) < 2:
            return ""
        low = min(self._lrs)
        if low > 0 and self._lrs[-1] > 1.5 * low:
            return (f"; it follows a learning-rate increase {low:.3g} → {self._lrs[-1]:.3g} "
                    f"(expected only if that is a planned warm restart)")
        return ""


class GradNormRule:
    """Exploding gradient norms, and norms that collapse towards zero (reported under
    the artifact's one gradient type, with their own key)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._recent: deque[float] = deque(maxlen=rules.grad_norm_window)
        self._baseline: list[float] = []

    def observe(self, point: Observation) -> Sequence[Signal]:
        value = point.grad_norm
        if value is None:
            return []
        out: list[Signal] = []
        reason = mr.evaluate_grad_explosion(self._recent, value, self.rules)
        if reason is not None:
            out.append(Raise(AnomalyType.GRAD_EXPLOSION, f"gradient explosion: {reason}"))
        elif math.isfinite(value):
            out.append(Resolve(AnomalyType.GRAD_EXPLOSION, f"grad_norm back to {value:.4g}"))
        if not math.isfinite(value):
            return out
        self._recent.append(value)
        if len(self._baseline) < self.rules.grad_vanish_points * 2:
            self._baseline.append(value)
        vanished = mr.evaluate_grad_vanishing(self._baseline, self._recent, self.rules)
        if vanished is not None:
            out.append(Raise(AnomalyType.GRAD_EXPLOSION, vanished, key="vanishing"))
        elif value > 0:
            out.append(Resolve(AnomalyType.GRAD_EXPLOSION, f"grad_norm back to {value:.3g}",
                               key="vanishing"))
        return out


class LrScheduleRule:
    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._trace: mr.LrTrace | None = None

    def observe(self, point: Observation) -> Sequence[Signal]:
        value = point.lr
        if value is None or not math.isfinite(value):
            return []
        previous = self._trace
        if previous is None:
            trace = mr.LrTrace(value, value, value, int(value == 0), value > 0, 0)
        else:
            peak = max(previous.peak, value)
            low = value if value >= previous.peak else min(previous.low_after_peak, value)
            trace = mr.LrTrace(
                current=value, peak=peak, low_after_peak=low,
                zero_run=previous.zero_run + 1 if value == 0 else 0,
                was_positive=previous.was_positive or value > 0,
                rising_run=previous.rising_run + 1 if value > previous.current else 0,
            )
        self._trace = trace
        reason = mr.evaluate_lr_schedule(trace, point.step, point.target_steps,
                                         point.lr_schedule, self.rules)
        if reason is not None:
            return [Raise(AnomalyType.LR_SCHEDULE, reason)]
        if trace.zero_run == 0 and trace.rising_run == 0:
            return [Resolve(AnomalyType.LR_SCHEDULE, f"learning rate now {value:.3g}")]
        return []

    @property
    def peak(self) -> float | None:
        """The highest learning rate seen (the configured peak, for most schedules)."""
        return self._trace.peak if self._trace is not None else None


class EvalRule:
    """Evaluation metrics that get worse while the training loss improves."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self.series: dict[str, deque[tuple[float, float | None]]] = {}

    def observe(self, point: Observation) -> Sequence[Signal]:
        out: list[Signal] = []
        for key, value in point.metrics.items():
            direction = eval_direction(key)
            if not direction or not math.isfinite(value):
                continue
            series = self.series.setdefault(
                key, deque(maxlen=self.rules.eval_degradation_evals + 1))
            if series and series[-1][0] == value:
                continue  # the same evaluation printed again (progress bar and summary)
            series.append((value, point.train_loss))
            reason = mr.evaluate_eval_degradation(list(series), direction, self.rules)
            if reason is not None:
                out.append(Raise(AnomalyType.EVAL_DEGRADATION, f"{key} {reason}", key=key))
            elif len(series) >= 2 and (series[-1][0] - series[-2][0]) * direction > 0:
                out.append(Resolve(AnomalyType.EVAL_DEGRADATION, f"{key} improved to "
                                                                 f"{value:.4g}", key=key))
        return out

    def recent(self, count: int) -> dict[str, list[float]]:
        return {key: [value for value, _ in list(series)[-count:]]
                for key, series in self.series.items()}


class ThroughputRule:
    """Throughput far below the run's own early baseline."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._samples: list[float] = []

    def observe(self, point: Observation) -> Sequence[Signal]:
        value = point.throughput
        if value is None or not math.isfinite(value) or value <= 0:
            return []
        self._samples.append(value)
        keep = self.rules.slow_baseline_samples
        if len(self._samples) > keep + 50:
            del self._samples[keep : keep + 10]  # keep the baseline and the recent past
        reason = mr.evaluate_throughput(self._samples, self.rules)
        if reason is not None:
            return [Raise(AnomalyType.SLOW_THROUGHPUT,
                          f"slow throughput: {reason} ({point.throughput_unit})")]
        if len(self._samples) >= keep + self.rules.slow_recent_samples:
            return [Resolve(AnomalyType.SLOW_THROUGHPUT, "throughput recovered")]
        return []


# The registered rules, applied in this order to every record with metrics.
METRIC_RULES: tuple[Callable[[RuleSettings], MetricRule], ...] = (
    NonFiniteRule,
    LossRule,
    GradNormRule,
    LrScheduleRule,
    EvalRule,
    ThroughputRule,
)


@dataclass
class RuleSet:
    """One instance of every registered rule, for one run."""

    rules: RuleSettings
    instances: list[MetricRule] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.instances = [make(self.rules) for make in METRIC_RULES]

    def observe(self, point: Observation, sparse: bool) -> list[Signal]:
        signals: list[Signal] = []
        for rule in self.instances:
            if sparse and rule.windowed:
                continue
            signals.extend(rule.observe(point))
        return signals

    def find(self, kind: type[MetricRule]) -> MetricRule | None:
        return next((r for r in self.instances if isinstance(r, kind)), None)
