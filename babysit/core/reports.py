"""What the loop tells its observer: plain data, rendered by the UI layer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from babysit import stopping
from babysit.core.efficiency_meter import Efficiency
from babysit.model import Anomaly, Reading, TerminalState, Verdict
from babysit.sanitise import outbound, outbound_value
from babysit.snapshot import GpuSample


def interruption() -> str:
    """What stopped the watch, in words: Ctrl-C, unless a signal handler noted the
    signal that arrived (SIGTERM from a scheduler, SIGHUP from a closed terminal)."""
    return stopping.reason()


class OutputClosed(Exception):
    """An observer can no longer write (its reader went away, its disk is full): the
    watch ends the way an interruption does, with its verdict file."""


@dataclass(frozen=True)
class PollReport:
    poll: int  # 0 is the baseline
    time: datetime
    target: str
    state: TerminalState
    step: int | None
    target_steps: int | None
    epoch: float | None
    total_epochs: int | None
    loss: tuple[str, float] | None
    lr: tuple[str, float] | None
    grad_norm: tuple[str, float] | None
    throughput: tuple[float, str] | None
    metrics: Mapping[str, float]
    eta_seconds: float | None
    next_poll_seconds: float | None
    interval_note: str
    new_lines: int
    new_anomalies: tuple[Anomaly, ...]
    notices: tuple[str, ...]
    formats: tuple[str, ...]
    quiet_seconds: float | None
    gpu: GpuSample | None = None
    log_path: str | None = None  # the run's log on this machine, when there is one
    status: tuple[str, ...] = ()  # a cloud service's own description (see ServiceSnapshot.status)
    headline: str = ""
    no_progress_for: float | None = None  # seconds, when this poll saw no progress
    subject: str = ""  # what the target is, in words: a process's command line
    efficiency: Efficiency | None = None
    url: str | None = None  # the run's page on its service, when it has one
    # New lines are read as they are written (a local log): the next poll is only the
    # next report, and anything that needs attention is shown before it.
    reads_as_written: bool = False
    # The metric curves so far (downsampled), only when something shows them (--serve).
    history: Mapping[str, list[tuple[int, float]]] | None = None
    reading: Reading | None = None  # how much of the log babysit understood so far

    @property
    def percent(self) -> float | None:
        if self.step is None or not self.target_steps:
            return None
        return 100.0 * self.step / self.target_steps


@dataclass(frozen=True)
class SummaryReport:
    time: datetime
    target: str
    polls: int
    watched_seconds: float
    state: TerminalState
    step: int | None
    target_steps: int | None
    steps_per_second: float | None
    metrics: Mapping[str, float]
    open_anomalies: tuple[Anomaly, ...]
    resolved_anomalies: tuple[Anomaly, ...]
    checkpoint: str | None
    formats: tuple[str, ...]
    reason: str = ""  # why this summary was printed now
    efficiency: Efficiency | None = None


class Observer(Protocol):
    """Receives the loop's reports. Implementations render them; they never decide. Any
    method may raise OutputClosed when its output is gone."""

    def baseline(self, report: PollReport) -> None: ...

    def poll(self, report: PollReport) -> None: ...

    def anomaly(self, anomaly: Anomaly, report: PollReport) -> None: ...

    def summary(self, report: SummaryReport) -> None: ...

    def notice(self, text: str) -> None: ...

    def final(self, verdict: Verdict, artifact: Mapping[str, object],
              artifact_path: str | None) -> None: ...


@runtime_checkable
class LiveView(Protocol):
    """An observer that shows the run as it is now (the dashboard), not a printed stream:
    it also gets what is read between reports, so it is never staler than the log (a
    report may be minutes away at the backoff's cap; the log is read within a second)."""

    def between(self, report: PollReport) -> None: ...


class NullObserver:
    """Observer that ignores everything (library use, tests)."""

    def baseline(self, report: PollReport) -> None:
        pass

    def poll(self, report: PollReport) -> None:
        pass

    def anomaly(self, anomaly: Anomaly, report: PollReport) -> None:
        pass

    def summary(self, report: SummaryReport) -> None:
        pass

    def notice(self, text: str) -> None:
        pass

    def final(self, verdict: Verdict, artifact: Mapping[str, object],
              artifact_path: str | None) -> None:
        pass


class ScrubbingObserver:
    """The one pass on the way out: every report, notice and verdict is sanitised of
    terminal control and scrubbed of credentials (babysit.sanitise.outbound) before any
    observer (console, JSON lines, notifications, the dashboard) sees it."""

    def __init__(self, inner: Observer) -> None:
        self.inner = inner

    def baseline(self, report: PollReport) -> None:
        self.inner.baseline(outbound_value(report))

    def poll(self, report: PollReport) -> None:
        self.inner.poll(outbound_value(report))

    def anomaly(self, anomaly: Anomaly, report: PollReport) -> None:
        self.inner.anomaly(outbound_value(anomaly), outbound_value(report))

    def summary(self, report: SummaryReport) -> None:
        self.inner.summary(outbound_value(report))

    def between(self, report: PollReport) -> None:
        if isinstance(self.inner, LiveView):  # scrubbed only when someone shows it
            self.inner.between(outbound_value(report))

    def notice(self, text: str) -> None:
        self.inner.notice(outbound(text))

    def final(self, verdict: Verdict, artifact: Mapping[str, object],
              artifact_path: str | None) -> None:
        self.inner.final(outbound_value(verdict), outbound_value(dict(artifact)), artifact_path)
