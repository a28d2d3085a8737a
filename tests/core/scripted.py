"""Fakes for the loop's own tests: a target that plays back snapshots, an observer that
writes down what a user would see, and a RunView with plain defaults."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from babysit.core.efficiency_meter import Efficiency
from babysit.core.reports import PollReport, SummaryReport
from babysit.core.run_view import RunView
from babysit.model import Anomaly, AnomalyType, Record, Severity, TerminalState, Verdict
from babysit.snapshot import LogSnapshot, ProcessSnapshot, Snapshot
from babysit.targets.base import TargetUnavailable


def steps(step: int, loss: float = 2.0, target: int = 1000) -> Snapshot:
    """A snapshot of a live run at `step`."""
    return Snapshot(log=LogSnapshot(records=(Record(step=step, target_steps=target,
                                                    metrics={"loss": loss}),), new_lines=1),
                    process=ProcessSnapshot(alive=True))


def said(snapshot: Snapshot, **service: Any) -> Snapshot:
    """`snapshot` with what its service says changed (`run_state`, `raised`, ...)."""
    return replace(snapshot, service=replace(snapshot.service, **service))


class ScriptedTarget:
    """Plays back `script` (a snapshot, an exception to raise, or a function of the poll
    number), one item a poll; the last item repeats. Records each poll's `final` flag."""

    target_type = "scripted"
    label = "scripted run"

    def __init__(self, *script: Snapshot | Exception | Callable[[int], Snapshot]) -> None:
        self.script = script
        self.finals: list[bool] = []

    def poll(self, final: bool = False) -> Snapshot:
        index = min(len(self.finals), len(self.script) - 1)
        self.finals.append(final)
        item = self.script[index]
        if isinstance(item, Exception):
            raise item
        return item(len(self.finals) - 1) if callable(item) else item

    def close(self) -> None:
        pass


UNREACHABLE = TargetUnavailable("connection refused")


class Recorder:
    """An observer that keeps, in order, what it was told, as short lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.reports: list[PollReport] = []
        self.summaries: list[SummaryReport] = []

    def baseline(self, report: PollReport) -> None:
        self.reports.append(report)
        self.lines.append(f"baseline step {report.step}")

    def poll(self, report: PollReport) -> None:
        self.reports.append(report)
        self.lines.append(f"poll step {report.step} next {report.next_poll_seconds}")

    def anomaly(self, anomaly: Anomaly, report: PollReport) -> None:
        self.lines.append(f"anomaly {anomaly.type.value}")

    def summary(self, report: SummaryReport) -> None:
        self.summaries.append(report)
        self.lines.append(f"summary ({report.reason})")

    def notice(self, text: str) -> None:
        self.lines.append(f"notice {text}")

    def final(self, verdict: Verdict, artifact: Mapping[str, object],
              artifact_path: str | None) -> None:
        self.lines.append("final")


def anomaly(kind: AnomalyType, severity: Severity = Severity.HIGH, step: int | None = 10,
            resolved: bool = False) -> Anomaly:
    return Anomaly(kind, severity, step, f"{kind.value} seen", resolved=resolved)


def view(**changes: Any) -> RunView:
    """A running run at step 10 of 100 with nothing wrong, but for `changes`."""
    plain = RunView(
        state=TerminalState.RUNNING, running=True, ending=None, step=10, target_steps=100,
        steps_from_zero=False, epoch=None, total_epochs=None, metrics={"loss": 2.0},
        loss_key="loss", lr_key=None, grad_key=None, lr_peak=None, saw_training=True,
        new_epoch=False, anomalies=(), unresolved=(), suppressed=0, checkpoint=None,
        steps_per_second=None, quiet_polls=0, quiet_since_progress=0.0,
        cpu_idle_since_progress=False, state_changed_by_service=False, formats=("plain",),
        evidence_url=None, reading=None, efficiency=Efficiency("unavailable", reason="test"),
        history=None, cancel_command=None, service_commands=(), recent_losses=(2.1, 2.0),
        recent_evals={})
    if "unresolved" in changes and "anomalies" not in changes:
        changes["anomalies"] = changes["unresolved"]
    return replace(plain, **changes)
