"""RunView: the run as one poll left it, frozen, for the reports and the supervision.

Built from the `Run` in one place (`RunView.of`), so the presenter and the supervisor
read plain values and never reach into the run's parts; the run is changed only
through its own methods, by the loop, when an effect says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from babysit.core.checkpoints import CheckpointChoice
from babysit.core.efficiency_meter import Efficiency
from babysit.core.lifecycle import Ending
from babysit.core.run import Run
from babysit.model import Anomaly, Reading, Severity, TerminalState
from babysit.snapshot import Snapshot


@dataclass(frozen=True)
class RunView:
    state: TerminalState
    running: bool
    ending: Ending | None
    step: int | None
    target_steps: int | None
    steps_from_zero: bool
    epoch: float | None
    total_epochs: int | None
    metrics: Mapping[str, float]
    loss_key: str | None
    lr_key: str | None
    grad_key: str | None
    lr_peak: float | None
    saw_training: bool
    new_epoch: bool
    anomalies: tuple[Anomaly, ...]
    unresolved: tuple[Anomaly, ...]  # oldest first
    suppressed: int
    checkpoint: CheckpointChoice | None
    steps_per_second: float | None
    quiet_polls: int  # polls in a row without progress
    quiet_since_progress: float  # seconds since the last progress
    cpu_idle_since_progress: bool  # no CPU time to speak of since the last progress
    state_changed_by_service: bool
    formats: tuple[str, ...]
    evidence_url: str | None
    reading: Reading | None
    efficiency: Efficiency
    history: Mapping[str, list[tuple[int, float]]] | None
    cancel_command: str | None
    service_commands: tuple[str, ...]
    recent_losses: tuple[float, ...]  # the last ten, for a reviewer
    recent_evals: Mapping[str, list[float]]

    @classmethod
    def of(cls, run: Run, snapshot: Snapshot, now: float, keep_history: bool) -> RunView:
        """The run now; `snapshot` is this poll's (its CPU time tells a hang)."""
        series, progress, lifecycle, ledger = run.series, run.progress, run.lifecycle, run.ledger
        process = snapshot.process.view
        return cls(
            state=run.state,
            running=lifecycle.running,
            ending=lifecycle.ending,
            step=series.step,
            target_steps=series.target_steps,
            steps_from_zero=run.steps_from_zero,
            epoch=series.epoch,
            total_epochs=series.total_epochs,
            metrics=dict(series.metrics),
            loss_key=series.loss_key,
            lr_key=series.lr_key,
            grad_key=series.grad_key,
            lr_peak=series.lr_peak(),
            saw_training=series.saw_training,
            new_epoch=series.new_epoch,
            anomalies=tuple(ledger.anomalies),
            unresolved=tuple(ledger.unresolved()),
            suppressed=ledger.suppressed,
            checkpoint=run.checkpoints.choice(),
            steps_per_second=progress.steps_per_second(series.metrics.get("it/s")),
            quiet_polls=progress.quiet_polls,
            quiet_since_progress=progress.quiet_for(now),
            cpu_idle_since_progress=progress.hung(
                process.cpu_seconds if process is not None else None),
            state_changed_by_service=run.service_state_changed,
            formats=run.formats,
            evidence_url=run.evidence_url,
            reading=run.reading,
            efficiency=run.efficiency.now(),
            history=run.curves.series() if keep_history else None,
            cancel_command=run.cancel_command,
            service_commands=run.service_commands,
            recent_losses=tuple(series.recent_losses(10)),
            recent_evals=series.recent_evals(3),
        )

    @property
    def good_checkpoint(self) -> str | None:
        return self.checkpoint.path if self.checkpoint is not None else None

    @property
    def blockers(self) -> tuple[Anomaly, ...]:
        return tuple(a for a in self.unresolved if a.severity is Severity.BLOCKER)

    def metric(self, key: str | None) -> tuple[str, float] | None:
        """(key, value) of a metric the run reports now, else None."""
        return (key, self.metrics[key]) if key and key in self.metrics else None
