"""What the watch tells its observer: the poll, summary and final reports, built from a
RunView, and the order they are shown in.

Building is pure (a view in, a report out); `Presenter` adds the little memory showing
needs — which poll and anomalies were already shown (before a question to the user),
when the last summary was, the lines read early since the last report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from babysit.clock import Clock
from babysit.config import PollSettings
from babysit.core.backoff import PollOutcome, next_interval, reset_reason
from babysit.core.outcome import WatchOutcome
from babysit.core.reports import Observer, PollReport, SummaryReport
from babysit.core.run_view import RunView
from babysit.metric_names import key_metrics, throughput_key
from babysit.model import Action, Anomaly
from babysit.snapshot import Snapshot
from babysit.units import count, format_interval


@dataclass(frozen=True)
class Subject:
    """What is watched, as the reports name it."""

    label: str
    target_type: str
    log_path: str | None  # the run's log on this machine, when there is one


def no_progress_for(view: RunView, snapshot: Snapshot, interval: float) -> float | None:
    """How long the run has shown no progress, when that is worth saying: counted from
    its last progress or, when longer, from the source's last change (a log last written
    before babysit started has been quiet since then, not since babysit's start); None
    while that is under one polling interval (progress read early, a moment ago, is not
    "no progress for 0s")."""
    since = view.quiet_since_progress
    if snapshot.log.quiet_for is not None:
        since = max(since, snapshot.log.quiet_for)
    return since if since >= max(interval, 1.0) else None


def interval_note(interval: float, outcome: PollOutcome, settings: PollSettings) -> str:
    """What happened to the interval, only when it changed: the backoff's step, the
    schedule's next entry, or the reset and why."""
    new = next_interval(interval, outcome, settings)
    if new == interval:
        return ""
    reason = reset_reason(outcome, settings)
    if reason is not None:
        return f"interval reset to {format_interval(new)} ({reason})"
    verb = "schedule" if settings.schedule else "backed off"
    return f"{verb} {format_interval(interval)}→{format_interval(new)}"


class Presenter:
    def __init__(self, observer: Observer, subject: Subject, clock: Clock, started: float,
                 summary_every: int) -> None:
        self.observer = observer
        self.subject = subject
        self.clock = clock
        self.started = started
        self.summary_every = summary_every
        self._early_lines = 0  # read by early reads since the last report
        self._summary_at: int | None = None  # the poll the last summary was shown at
        self._shown: set[int] = set()  # ids of anomalies shown before a question
        self._poll_shown = False

    def read_early(self, lines: int) -> None:
        self._early_lines += lines

    def report(self, view: RunView, snapshot: Snapshot, fresh: Sequence[Anomaly],
               interval: float, poll: int) -> PollReport:
        """This poll's report; it carries the lines read early since the last one."""
        metrics = view.metrics
        throughput = None
        rate = view.steps_per_second
        found = throughput_key(metrics)
        if found is not None:
            throughput = (metrics[found[0]], found[1])
        elif rate is not None:
            throughput = (rate, "steps/s")
        # A rate and an ETA from before the run went quiet would be stale: say so instead.
        quiet = no_progress_for(view, snapshot, interval) if view.quiet_polls else None
        if quiet is not None:
            throughput, rate = None, None
        eta = None
        if rate and view.step is not None and view.target_steps:
            remaining = view.target_steps - view.step
            eta = remaining / rate if remaining > 0 else 0.0
        lines, self._early_lines = snapshot.log.new_lines + self._early_lines, 0
        return PollReport(
            poll=poll, time=self.clock.now(), target=self.subject.label, state=view.state,
            step=view.step, target_steps=view.target_steps, epoch=view.epoch,
            total_epochs=view.total_epochs, loss=view.metric(view.loss_key),
            lr=view.metric(view.lr_key), grad_norm=view.metric(view.grad_key),
            throughput=throughput, metrics=dict(metrics), eta_seconds=eta,
            next_poll_seconds=None, interval_note="", new_lines=lines,
            new_anomalies=tuple(fresh), notices=snapshot.notices, formats=view.formats,
            quiet_seconds=snapshot.log.quiet_for, gpu=snapshot.process.gpu,
            log_path=self.subject.log_path, status=snapshot.service.status,
            headline=snapshot.service.headline, no_progress_for=quiet,
            subject=snapshot.process.view.command if snapshot.process.view is not None else "",
            efficiency=view.efficiency, url=view.evidence_url, history=view.history,
            reading=view.reading,
        )

    def summary(self, view: RunView, reason: str, polls: int) -> SummaryReport:
        return SummaryReport(
            time=self.clock.now(), target=self.subject.label, polls=polls + 1,
            watched_seconds=self.clock.monotonic() - self.started, state=view.state,
            step=view.step, target_steps=view.target_steps,
            steps_per_second=view.steps_per_second, metrics=key_metrics(view.metrics),
            open_anomalies=view.unresolved,
            resolved_anomalies=tuple(a for a in view.anomalies if a.resolved),
            checkpoint=view.good_checkpoint, formats=view.formats, reason=reason,
            efficiency=view.efficiency,
        )

    def outcome(self, view: RunView, *, actions: Sequence[Action], awaiting: Sequence[str],
                commands: Sequence[str], rewatch: tuple[str, ...], stop_reason: str,
                interrupted: bool, polls: int) -> WatchOutcome:
        """What the watch established, frozen for the verdict."""
        return WatchOutcome(
            target=self.subject.label, target_type=self.subject.target_type,
            state=view.state, ending=view.ending, step=view.step,
            steps_from_zero=view.steps_from_zero, target_steps=view.target_steps,
            epoch=view.epoch, total_epochs=view.total_epochs,
            metrics=dict(view.metrics), saw_training=view.saw_training,
            anomalies=view.anomalies, suppressed=view.suppressed, checkpoint=view.checkpoint,
            actions=tuple(sorted(actions, key=lambda a: a.at)), awaiting=tuple(awaiting),
            commands=(*commands, *view.service_commands), log_path=self.subject.log_path,
            rewatch=rewatch, stop_reason=stop_reason,
            watched_seconds=self.clock.monotonic() - self.started, polls=polls + 1,
            interrupted=interrupted, formats=view.formats, evidence_url=view.evidence_url,
            efficiency=view.efficiency, reading=view.reading,
        )

    # --- showing ------------------------------------------------------------------

    def show_first(self, build: Callable[[], PollReport], baseline: bool) -> None:
        """Show a poll (built by `build`) and its anomalies now, ahead of a question to
        the user about them; `emit` then leaves out what was shown."""
        if self._poll_shown:
            return
        report = build()
        self._show(report, baseline)
        for anomaly in report.new_anomalies:
            self.observer.anomaly(anomaly, report)
            self._shown.add(id(anomaly))
        self._poll_shown = True

    def emit(self, view: RunView, report: PollReport, next_poll: float | None, note: str,
             poll: int) -> None:
        """Show a poll (the baseline is poll 0), its anomalies and, when due, a summary;
        `next_poll` None means the watch is stopping."""
        report = replace(report, next_poll_seconds=next_poll, interval_note=note,
                         state=view.state)
        if not self._poll_shown:
            self._show(report, baseline=poll == 0)
        self._poll_shown = False
        for anomaly in report.new_anomalies:
            if id(anomaly) not in self._shown:
                self.observer.anomaly(anomaly, report)
        self._shown.clear()
        every, last = self.summary_every, self._summary_at
        due = every > 0 and poll > 0 and poll - (last or 0) >= every
        # An anomaly earns a summary too, but never two in a row (its own line says it).
        notable = bool(report.new_anomalies) and (last is None or poll - last >= 2)
        if due or notable or next_poll is None:
            reason = ("stopping" if next_poll is None else
                      "anomaly" if report.new_anomalies else f"every {count(every, 'poll')}")
            self._summary_at = poll
            self.observer.summary(self.summary(view, reason, poll))

    def anomalies(self, report: PollReport) -> None:
        """The anomalies of a last read no poll line is shown for."""
        for anomaly in report.new_anomalies:
            self.observer.anomaly(anomaly, report)

    def _show(self, report: PollReport, baseline: bool) -> None:
        if baseline:
            self.observer.baseline(report)
        else:
            self.observer.poll(report)
