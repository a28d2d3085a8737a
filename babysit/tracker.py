"""RunTracker: what babysit knows about the run so far, and the rules applied to it.

Records arrive in log order. The tracker keeps only bounded windows (the last
`spike_window` losses, the last few grad norms and evaluations), so watching a
month-long run costs the same memory as watching a short one.
"""

from __future__ import annotations

import bisect
import math
import signal
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, replace

from babysit.config import RuleSettings
from babysit.metric_names import (
    GRAD_NORM_KEYS,
    LOSS_KEYS,
    LR_KEYS,
    eval_direction,
    first_present,
    throughput_key,
)
from babysit.model import (
    Anomaly,
    AnomalyType,
    EventKind,
    ExitInfo,
    LogEvent,
    ProcessView,
    Record,
    Severity,
    TerminalState,
)
from babysit.rules import metric_rules as mr
from babysit.rules.event_rules import CAUSE_BY_EXCEPTION, EVENT_RULES

# Anomaly types that a later step advance shows were survived.
_RECOVER_ON_PROGRESS = (AnomalyType.OOM, AnomalyType.CUDA_ERROR, AnomalyType.NCCL,
                        AnomalyType.CRASH, AnomalyType.STALLED)
MAX_PER_TYPE = 25  # keep the artifact readable when a run spikes all day


@dataclass(frozen=True)
class Crash:
    evidence: LogEvent
    step: int | None
    cancelled: bool  # the run was stopped on purpose (KeyboardInterrupt, SIGTERM)

    @property
    def traceback(self) -> str:
        """The closing line of the traceback it died on ('' when it left none)."""
        return self.evidence.detail if self.evidence.kind is EventKind.EXCEPTION else ""


class RunTracker:
    """Accumulates records and reports the anomalies they reveal."""

    def __init__(self, rules: RuleSettings, target_steps: int | None = None) -> None:
        self.rules = rules
        self.step: int | None = None
        self.target_steps = target_steps
        self._target_fixed = target_steps is not None
        self.epoch: float | None = None
        self.total_epochs: int | None = None
        self.metrics: dict[str, float] = {}
        self.loss_key: str | None = None
        self.lr_key: str | None = None
        self.grad_key: str | None = None
        self.throughput_unit: str | None = None
        self.checkpoint: str | None = None  # newest save while no blocker was open
        self.best_checkpoint: str | None = None
        self.completed: LogEvent | None = None
        self.crash: Crash | None = None
        self.exit: ExitInfo | None = None  # how the process ended, when seen
        self.exit_inferred = False  # the ending was read from the log, not the OS
        self._idle_polls = 0
        self.restarts_seen = 0
        self.anomalies: list[Anomaly] = []
        self.suppressed = 0  # anomalies not listed because their type hit the cap
        self.new_epoch = False  # set when an epoch or stage began; the loop clears it
        self.advances = 0  # how many records moved the step forward, ever
        self._pending_crash: Crash | None = None
        self._primary_rank: int | None = None
        self._active: dict[tuple[AnomalyType, str], int] = {}
        self._losses: deque[float] = deque(maxlen=rules.spike_window)
        self._sorted_losses: list[float] = []  # the same values, kept sorted
        self._spike_recovery = math.inf  # a spiked loss has recovered below this
        self._recent_losses: deque[float] = deque(maxlen=rules.divergence_steps + 1)
        self._grads: deque[float] = deque(maxlen=rules.grad_norm_window)
        self._lrs: deque[float] = deque(maxlen=5)
        self._lr_trace: mr.LrTrace | None = None
        self.lr_schedule: str | None = None  # the configured scheduler, when known
        self._grad_baseline: list[float] = []
        self._evals: dict[str, deque[tuple[float, float | None]]] = {}
        self._throughput: list[float] = []
        self._throughput_key: str | None = None
        self._fresh: list[Anomaly] = []

    # --- feeding ---------------------------------------------------------------

    def ingest(self, records: Iterable[Record]) -> list[Anomaly]:
        """Apply records in order; returns the anomalies they raised."""
        for record in records:
            self._ingest_one(record)
        fresh, self._fresh = self._fresh, []
        return fresh

    def _ingest_one(self, record: Record) -> None:
        if record.rank is not None and (self._primary_rank is None
                                        or record.rank < self._primary_rank):
            self._primary_rank = record.rank
        primary = record.rank is None or record.rank == self._primary_rank
        for event in record.events:
            self._on_event(event)
        if not primary:
            return
        if record.target_steps is not None and not self._target_fixed:
            self.target_steps = record.target_steps
        if record.total_epochs is not None:
            self.total_epochs = record.total_epochs
        if record.epoch is not None:
            if self.epoch is not None and math.floor(record.epoch) > math.floor(self.epoch):
                self.new_epoch = True
            self.epoch = record.epoch
        if record.step is not None:
            self._on_step(record.step)
        if record.metrics:
            self._on_metrics(record)

    def _on_step(self, step: int) -> None:
        if self.step is not None and step == self.step:
            return
        if self.step is not None and step < self.step:
            # The counter went back: the run was restarted (from a checkpoint or anew).
            self.restarts_seen += 1
            self.completed = None
        else:
            self.advances += 1
        self.step = step
        if self._pending_crash is not None:
            self._pending_crash = None  # training went on: that traceback was not fatal
        if self.crash is not None:
            self.crash = None
        if self.completed is not None and self.target_steps and step < self.target_steps:
            self.completed = None
        if self._active:
            for kind in _RECOVER_ON_PROGRESS:
                self._resolve(kind, "", f"training went on to step {step}")

    def _on_metrics(self, record: Record) -> None:
        metrics = record.metrics
        self.metrics.update(metrics)
        step = self.step
        bad = mr.nonfinite_metrics(metrics)
        if bad:
            values = ", ".join(f"{k}={metrics[k]}" for k in bad)
            self._raise(AnomalyType.NAN_INF, Severity.BLOCKER, step,
                        f"non-finite metric: {values}", key="")
        elif metrics.get("number_of_nan_iterations", 0) > 0:
            # Megatron-LM skips a NaN iteration and counts it instead of printing nan.
            self._raise(AnomalyType.NAN_INF, Severity.BLOCKER, step,
                        f"Megatron-LM reports {metrics['number_of_nan_iterations']:g} NaN "
                        f"iteration(s) in this logging interval", key="")
        self.loss_key = self.loss_key or first_present(LOSS_KEYS, metrics)
        self.lr_key = self.lr_key or first_present(LR_KEYS, metrics)
        self.grad_key = self.grad_key or first_present(GRAD_NORM_KEYS, metrics)
        if self.lr_key is not None and self.lr_key in metrics:
            lr_value = metrics[self.lr_key]
            if math.isfinite(lr_value):
                self._lrs.append(lr_value)
                if not record.sparse:
                    self._on_lr(lr_value, step)
        if self.loss_key is not None and self.loss_key in metrics and not record.sparse:
            self._on_loss(metrics[self.loss_key], step)
        if self.grad_key is not None and self.grad_key in metrics and not record.sparse:
            self._on_grad_norm(metrics[self.grad_key], step)
        for key, value in metrics.items():
            direction = eval_direction(key)
            if direction and not record.sparse and math.isfinite(value):
                self._on_eval(key, value, direction, step)
        if record.sparse:
            return
        if self._throughput_key is None:
            found = throughput_key(metrics)
            if found is not None:
                self._throughput_key, self.throughput_unit = found
        if self._throughput_key is not None and self._throughput_key in metrics:
            value = metrics[self._throughput_key]
            if math.isfinite(value) and value > 0:
                self._add_throughput(value)

    def _on_loss(self, value: float, step: int | None) -> None:
        if not math.isfinite(value):
            return
        spike = mr.evaluate_spike(self._sorted_losses, value, self.rules)
        diverging = (AnomalyType.DIVERGENCE, "") in self._active
        if spike is not None and not diverging:
            reason, threshold = spike
            if (AnomalyType.LOSS_SPIKE, "") not in self._active:
                # Recovered means back to where the loss was just before the spike,
                # not merely under the (wider) detection threshold.
                before = list(self._losses)[-5:]
                level = max(before) if before else threshold
                self._spike_recovery = min(threshold,
                                           level + abs(level) * self.rules.spike_min_rise)
            self._raise(AnomalyType.LOSS_SPIKE, Severity.HIGH, step,
                        f"loss spike: {reason}{self._lr_note()}")
        elif value < self._spike_recovery:
            self._resolve(AnomalyType.LOSS_SPIKE, "", f"loss back to {value:.4g}")
        if len(self._losses) == self._losses.maxlen:
            oldest = self._losses[0]
            del self._sorted_losses[bisect.bisect_left(self._sorted_losses, oldest)]
        self._losses.append(value)
        bisect.insort(self._sorted_losses, value)
        self._recent_losses.append(value)
        rising = mr.evaluate_divergence(list(self._recent_losses), self.rules)
        if rising is not None:
            self._raise(AnomalyType.DIVERGENCE, Severity.HIGH, step, f"divergence: {rising}")
        elif len(self._recent_losses) >= 2 and value < self._recent_losses[-2]:
            self._resolve(AnomalyType.DIVERGENCE, "", f"loss fell again to {value:.4g}")

    def _on_lr(self, value: float, step: int | None) -> None:
        previous = self._lr_trace
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
        self._lr_trace = trace
        reason = mr.evaluate_lr_schedule(trace, step, self.target_steps, self.lr_schedule,
                                         self.rules)
        if reason is not None:
            self._raise(AnomalyType.LR_SCHEDULE, Severity.MEDIUM, step, reason)
        elif trace.zero_run == 0 and trace.rising_run == 0:
            self._resolve(AnomalyType.LR_SCHEDULE, "", f"learning rate now {value:.3g}")

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

    def _on_grad_norm(self, value: float, step: int | None) -> None:
        reason = mr.evaluate_grad_explosion(self._grads, value, self.rules)
        if reason is not None:
            self._raise(AnomalyType.GRAD_EXPLOSION, Severity.HIGH, step,
                        f"gradient explosion: {reason}")
        elif math.isfinite(value):
            self._resolve(AnomalyType.GRAD_EXPLOSION, "", f"grad_norm back to {value:.4g}")
        if math.isfinite(value):
            self._grads.append(value)
            if len(self._grad_baseline) < self.rules.grad_vanish_points * 2:
                self._grad_baseline.append(value)
            vanished = mr.evaluate_grad_vanishing(self._grad_baseline, self._grads, self.rules)
            if vanished is not None:
                # The artifact has one gradient-norm type; it covers both directions.
                self._raise(AnomalyType.GRAD_EXPLOSION, Severity.HIGH, step, vanished,
                            key="vanishing")
            elif value > 0:
                self._resolve(AnomalyType.GRAD_EXPLOSION, "vanishing",
                              f"grad_norm back to {value:.3g}")

    def _on_eval(self, key: str, value: float, direction: int, step: int | None) -> None:
        series = self._evals.setdefault(
            key, deque(maxlen=self.rules.eval_degradation_evals + 1))
        if series and series[-1][0] == value:
            return  # the same evaluation printed again (progress bar and summary)
        train = self.metrics.get(self.loss_key) if self.loss_key else None
        series.append((value, train if train is not None and math.isfinite(train) else None))
        reason = mr.evaluate_eval_degradation(list(series), direction, self.rules)
        if reason is not None:
            self._raise(AnomalyType.EVAL_DEGRADATION, Severity.MEDIUM, step,
                        f"{key} {reason}", key=key)
        elif len(series) >= 2 and (series[-1][0] - series[-2][0]) * direction > 0:
            self._resolve(AnomalyType.EVAL_DEGRADATION, key, f"{key} improved to {value:.4g}")

    def _add_throughput(self, value: float) -> None:
        self._throughput.append(value)
        keep = self.rules.slow_baseline_samples
        if len(self._throughput) > keep + 50:
            del self._throughput[keep : keep + 10]  # keep the baseline and the recent past
        reason = mr.evaluate_throughput(self._throughput, self.rules)
        if reason is not None:
            self._raise(AnomalyType.SLOW_THROUGHPUT, Severity.MEDIUM, self.step,
                        f"slow throughput: {reason} ({self.throughput_unit})")
        elif len(self._throughput) >= keep + self.rules.slow_recent_samples:
            self._resolve(AnomalyType.SLOW_THROUGHPUT, "", "throughput recovered")

    def add_poll_rate(self, steps_per_second: float) -> None:
        """Throughput measured by the loop (steps between polls) for logs that print none."""
        if self.throughput_unit in (None, "steps/s (measured)"):
            self.throughput_unit = "steps/s (measured)"
            self._add_throughput(steps_per_second)

    def _on_event(self, event: LogEvent) -> None:
        rule = EVENT_RULES.get(event.kind)
        if rule is not None:
            key = "" if rule.type is not AnomalyType.CHECKPOINT_FAILURE else "save"
            self._raise(rule.type, rule.severity, self.step, f"{rule.title}: {event.line}",
                        key=key)
        if event.kind in (EventKind.EXCEPTION, EventKind.SEGFAULT, EventKind.HOST_KILL):
            cancelled = event.detail.startswith("KeyboardInterrupt")
            self._pending_crash = Crash(event, self.step, cancelled)
        elif event.kind is EventKind.CHECKPOINT_SAVED:
            # A checkpoint written while a blocker is open (after the first NaN, say)
            # holds the damage: it is not one to go back to.
            if event.detail and not self._blocked():
                self.checkpoint = event.detail
            self._resolve(AnomalyType.CHECKPOINT_FAILURE, "save",
                          f"a later checkpoint was saved ({event.detail})")
        elif event.kind is EventKind.BEST_CHECKPOINT:
            if event.detail and not self._blocked():
                self.best_checkpoint = event.detail
        elif event.kind is EventKind.COMPLETED:
            self.completed = event
        elif event.kind is EventKind.NEW_STAGE:
            self.new_epoch = True

    # --- poll-level checks --------------------------------------------------------

    @property
    def crash_pending(self) -> bool:
        return self._pending_crash is not None

    def confirm_crash(self, how: str = "") -> list[Anomaly]:
        """The run ended on the pending traceback / fatal signal: it crashed. `how`
        adds what the process itself said (exit code, signal)."""
        pending, self._pending_crash = self._pending_crash, None
        if pending is None:
            return []
        self.crash = pending
        if pending.cancelled:
            return []
        text = pending.evidence.detail or pending.evidence.line
        explained = next((t for needle, t in CAUSE_BY_EXCEPTION if needle in text), None)
        if explained is not None and (explained, "") in self._active:
            return []
        if pending.evidence.kind is EventKind.HOST_KILL:
            return []  # already reported as a likely host OOM kill
        suffix = f" ({how})" if how else ""
        self._raise(AnomalyType.CRASH, Severity.BLOCKER, pending.step,
                    f"the run died: {text}{suffix}")
        fresh, self._fresh = self._fresh, []
        return fresh

    def process_ended(self, view: ProcessView) -> list[Anomaly]:
        """The run's process is gone: decide, from its exit status when the OS showed
        it and from the log otherwise, whether it finished or crashed."""
        exit_info = view.exit or ExitInfo(None, None, "unknown")
        self.exit = exit_info
        pending = self._pending_crash
        if exit_info.code == 0:
            self._pending_crash = None  # a traceback it survived
            if self.completed is None:
                self.completed = LogEvent(EventKind.COMPLETED, "the process exited with code 0",
                                          "clean exit")
            return []
        if exit_info.code is None and exit_info.signal is None:
            # Not our child and already reaped: only the log can tell.
            reached = (self.step is not None and self.target_steps is not None
                       and self.step >= self.target_steps)
            if (self.completed is not None or reached) and pending is None:
                self.exit_inferred = True
                return []
            if pending is not None:
                self.exit_inferred = True
                return self.confirm_crash("exit status unknown; inferred from the log")
            self.crash = Crash(LogEvent(EventKind.NEW_STAGE, "process gone", "process gone"),
                               self.step, False)
            return self.add(Anomaly(
                AnomalyType.CRASH, Severity.BLOCKER, self.step,
                "the process is gone and the log has no completion line (its exit status "
                "is unknown: it is not babysit's child)"))
        how = exit_info.describe()
        if pending is not None:
            return self.confirm_crash(how)
        evidence = LogEvent(EventKind.NEW_STAGE, how, how)  # not a traceback
        if exit_info.signal in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            self.crash = Crash(evidence, self.step, cancelled=True)
            return []
        self.crash = Crash(evidence, self.step, False)
        if exit_info.signal == signal.SIGKILL:
            if view.oom_killed:
                return self.add(Anomaly(AnomalyType.OOM, Severity.BLOCKER, self.step,
                                        "killed by the kernel's OOM killer (kernel log)"))
            if view.oom_killed is None:
                return self.add(Anomaly(
                    AnomalyType.OOM, Severity.BLOCKER, self.step,
                    "killed with SIGKILL and no traceback: most likely the host's OOM killer "
                    "(the kernel log could not be read to confirm; whether it was the OOM "
                    "killer is unknown)"))
        return self.add(Anomaly(AnomalyType.CRASH, Severity.BLOCKER, self.step,
                                f"the process {how} with no traceback in the log"))

    def reported_state(self, state: TerminalState, detail: str, source: str) -> list[Anomaly]:
        """The run's own tracker (W&B, MLflow) says it ended; `detail` says how."""
        if state is TerminalState.SUCCEEDED:
            self.completed = LogEvent(EventKind.COMPLETED, detail, detail)
            # One step short is a zero-based counter (W&B's _step), not an early stop.
            if self.target_steps and self.step is not None \
                    and self.step < self.target_steps - 1:
                return self.add(Anomaly(
                    AnomalyType.CRASH, Severity.HIGH, self.step,
                    f"{detail}, but it stopped at step {self.step} of {self.target_steps}: "
                    f"{source} also marks a run finished when its script exits early (early "
                    f"stopping, or an exception after a bare start_run) — check the run's "
                    f"output (evidence: planned steps not reached)"))
            return []
        evidence = LogEvent(EventKind.NEW_STAGE, detail, detail)
        if state is TerminalState.CANCELLED:
            self.crash = Crash(evidence, self.step, cancelled=True)
            return []
        self.crash = Crash(evidence, self.step, cancelled=False)
        if any(a.severity is Severity.BLOCKER for a in self.unresolved()):
            return []  # already explained (a NaN, an OOM...)
        return self.add(Anomaly(AnomalyType.CRASH, Severity.BLOCKER, self.step,
                                f"{detail} (evidence: the run's state in {source})"))

    def restarted(self, action: str) -> None:
        """A fix started the run again: the crash is handled, watch the new process."""
        self.crash = None
        self._pending_crash = None
        self.exit = None
        self.exit_inferred = False
        self.completed = None
        for kind in (AnomalyType.CRASH, AnomalyType.NCCL, AnomalyType.CUDA_ERROR,
                     AnomalyType.STALLED):
            self.annotate(kind, action)
            self._resolve(kind, "", action)

    def annotate(self, kind: AnomalyType, action: str) -> None:
        """Record what babysit did about the open anomaly of this type."""
        for key in [k for k in self._active if k[0] is kind]:
            index = self._active[key]
            self.anomalies[index] = replace(self.anomalies[index], action_taken=action)

    def gpu_sample(self, util_percent: float | None, alive: bool | None) -> list[Anomaly]:
        """One poll's GPU utilisation of the run: idle for `gpu_idle_polls` polls in a
        row while the process lives is an anomaly (high utilisation proves nothing)."""
        if util_percent is None or alive is not True:
            return []
        if util_percent < self.rules.gpu_idle_percent:
            self._idle_polls += 1
            if self._idle_polls >= self.rules.gpu_idle_polls:
                self._raise(AnomalyType.GPU_IDLE, Severity.MEDIUM, self.step,
                            f"the run's GPUs were under {self.rules.gpu_idle_percent:g}% "
                            f"utilisation for {self._idle_polls} polls while its process "
                            f"was alive (now {util_percent:.0f}%)")
        else:
            self._idle_polls = 0
            self._resolve(AnomalyType.GPU_IDLE, "", f"GPU utilisation back to "
                                                    f"{util_percent:.0f}%")
        fresh, self._fresh = self._fresh, []
        return fresh

    def check_stall(self, quiet_seconds: float, threshold: float, why: str) -> list[Anomaly]:
        if quiet_seconds >= threshold:
            self._raise(AnomalyType.STALLED, Severity.HIGH, self.step, why)
        fresh, self._fresh = self._fresh, []
        return fresh

    def add(self, anomaly: Anomaly) -> list[Anomaly]:
        """Record an anomaly found outside the log (connectivity, process state)."""
        self._raise(anomaly.type, anomaly.severity, anomaly.step, anomaly.description,
                    anomaly.key)
        fresh, self._fresh = self._fresh, []
        return fresh

    def resolve(self, kind: AnomalyType, key: str, how: str) -> None:
        self._resolve(kind, key, how)

    # --- bookkeeping ---------------------------------------------------------------

    def _raise(self, kind: AnomalyType, severity: Severity, step: int | None,
               description: str, key: str = "") -> None:
        if (kind, key) in self._active:
            return
        if sum(1 for a in self.anomalies if a.type is kind) >= MAX_PER_TYPE:
            self.suppressed += 1
            return
        anomaly = Anomaly(kind, severity, step, description[:600], key)
        self._active[(kind, key)] = len(self.anomalies)
        self.anomalies.append(anomaly)
        self._fresh.append(anomaly)

    def _resolve(self, kind: AnomalyType, key: str, how: str) -> None:
        index = self._active.pop((kind, key), None)
        if index is None:
            return
        old = self.anomalies[index]
        self.anomalies[index] = replace(old, resolved=True,
                                        description=f"{old.description} — resolved: {how}")

    def _blocked(self) -> bool:
        return any(self.anomalies[i].severity is Severity.BLOCKER for i in self._active.values())

    def good_checkpoint(self) -> str | None:
        """The checkpoint to trust: the one the run called best, else the newest saved
        before any blocker appeared."""
        return self.best_checkpoint or self.checkpoint

    def cancelled_by_user(self, how: str) -> None:
        self.crash = Crash(LogEvent(EventKind.NEW_STAGE, how, how), self.step, cancelled=True)

    def recent_losses(self, count: int) -> list[float]:
        return list(self._losses)[-count:]

    def recent_evals(self, count: int) -> dict[str, list[float]]:
        return {key: [value for value, _ in list(series)[-count:]]
                for key, series in self._evals.items()}

    def unresolved(self) -> list[Anomaly]:
        return [a for a in self.anomalies if not a.resolved]
