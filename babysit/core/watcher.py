"""The watch loop: a baseline, then polls with backoff until a stop condition.

The watcher owns cadence, stop conditions and telling the observer; what the run is
doing is the `Run`'s business, acting on it the fixer's, judging it the verdict's.
Time comes from an injected Clock, so tests drive hours of watching in milliseconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from babysit.clock import Clock, SleepingWaker, SystemClock, Waker
from babysit.config import Settings
from babysit.core.backoff import PollOutcome, next_interval, reset_reason
from babysit.core.fixer import Approver, FixEffects, Fixer, FixView
from babysit.core.outcome import WatchOutcome
from babysit.core.reports import (
    LiveView,
    Observer,
    OutputClosed,
    PollReport,
    SummaryReport,
    interruption,
)
from babysit.core.reviewer import AMBIGUOUS, Answer, Reviewer
from babysit.core.run import PollContext, Run
from babysit.metric_names import key_metrics, throughput_key
from babysit.model import (
    Action,
    ActionStatus,
    Anomaly,
    AnomalyType,
    Severity,
    Snapshot,
    TerminalState,
)
from babysit.sanitise import outbound_value
from babysit.targets.base import HasLogPath, Target, TargetError, TargetUnavailable
from babysit.units import count, format_duration, format_interval

# Training problems a cancel (with the user's approval) is about.
_PROBLEMS = frozenset({AnomalyType.NAN_INF, AnomalyType.DIVERGENCE, AnomalyType.GRAD_EXPLOSION,
                       AnomalyType.LOSS_SCALE,
                       AnomalyType.LOSS_SPIKE, AnomalyType.OOM})


@dataclass(frozen=True)
class WatchStop:
    reason: str
    interrupted: bool


class Watcher:
    def __init__(self, target: Target, settings: Settings, observer: Observer,
                 clock: Clock | None = None, fixer: Fixer | None = None,
                 reviewer: Reviewer | None = None,
                 known_anomalies: frozenset[tuple[str, int | None]] = frozenset(),
                 waker: Waker | None = None,
                 output_gone: Callable[[], str | None] | None = None) -> None:
        self.target = target
        self.settings = settings
        self.observer = observer
        self.clock = clock or SystemClock()
        # Between polls: a local log's changes end the wait early (see reading.changes).
        self.waker = waker or SleepingWaker(self.clock)
        if output_gone is not None:
            self.waker = _OutputWatchingWaker(self.waker, output_gone, self.clock)
        self.fixer = fixer
        self.reviewer = reviewer
        # (type, step) of anomalies an agent already heard about (--until-event).
        self.known_anomalies = known_anomalies
        self.actions: list[Action] = []  # decisions not made by the fixer (the reviewer's)
        self.awaiting: list[str] = []  # proposals waiting for the user (without a fixer)
        self._log_path = target.log_path if isinstance(target, HasLogPath) else None
        self._started = self.clock.monotonic()
        self.run_state = Run(settings.rules, settings.target_steps, self._started,
                             settings.efficiency, keep_history=settings.serve,
                             alerts=settings.alerts)
        self._polls = 0
        self._last_loss: float | None = None
        self._flushed = False
        self._lines_read_early = 0  # by early reads since the last report
        self._summary_at: int | None = None  # the poll the last summary was printed at
        # A question to the user comes after the lines that explain it: the poll's report
        # and its anomalies are shown first, and not again when the poll is emitted.
        self._asking_about: tuple[Snapshot, list[Anomaly], float, bool] | None = None
        self._shown: set[int] = set()  # ids of anomalies already shown
        self._poll_shown = False
        if fixer is not None:
            fixer.approver = _ShowFirst(fixer.approver, self._show_before_asking)

    def run(self) -> WatchStop:
        """Watch until a stop condition. Raises TargetError if there is no baseline;
        returns normally on Ctrl-C (with `interrupted` set)."""
        poll_settings = self.settings.poll
        interval = poll_settings.interval
        stop_reason = ""
        try:
            try:
                snapshot = self.target.poll(final=poll_settings.once)
            except TargetUnavailable as error:
                raise TargetError(str(error)) from error
            self._flushed = poll_settings.once
            report, outcome = self._digest(snapshot, baseline=True, interval=interval)
            while True:
                stop_reason = self._stop_reason() or self._wake_reason(report)
                if stop_reason:
                    self._emit(report, None, "", baseline=self._polls == 0)
                    break
                note = self._interval_note(interval, outcome)
                interval = next_interval(interval, outcome, poll_settings)
                self._emit(report, interval, note, baseline=self._polls == 0)
                early = self._wait(interval)
                self._polls += 1
                report, outcome = early or self._poll_once(interval)
        except KeyboardInterrupt:
            return WatchStop(interruption(), interrupted=True)
        except OutputClosed as closed:
            return WatchStop(str(closed), interrupted=True)
        if not self._flushed:
            try:
                self._final_flush()
            except KeyboardInterrupt:
                return WatchStop(interruption(), interrupted=True)
            except OutputClosed as closed:
                return WatchStop(str(closed), interrupted=True)
        return WatchStop(stop_reason, interrupted=False)

    def outcome(self, stop: WatchStop, rewatch: tuple[str, ...] = ()) -> WatchOutcome:
        """What the watch established, frozen for the verdict."""
        run = self.run_state
        run.severities_at_end()
        series = run.series
        actions = sorted([*(self.fixer.actions if self.fixer else ()), *self.actions],
                         key=lambda a: a.at)
        awaiting = [*(self.fixer.awaiting if self.fixer else ()), *self.awaiting]
        return WatchOutcome(
            target=self.target.label,
            target_type=self.target.target_type,
            state=run.state,
            ending=run.lifecycle.ending,
            step=series.step,
            steps_from_zero=run.steps_from_zero,
            target_steps=series.target_steps,
            metrics=dict(series.metrics),
            saw_training=series.saw_training,
            anomalies=run.ledger.anomalies,
            suppressed=run.ledger.suppressed,
            checkpoint=run.checkpoints.choice(),
            actions=tuple(actions),
            awaiting=tuple(awaiting),
            commands=(*(self.fixer.commands if self.fixer else ()), *run.service_commands),
            log_path=self._log_path,
            rewatch=rewatch,
            stop_reason=stop.reason,
            watched_seconds=self.clock.monotonic() - self._started,
            polls=self._polls + 1,
            interrupted=stop.interrupted,
            formats=run.formats,
            evidence_url=run.evidence_url,
            efficiency=run.efficiency.now(),
            reading=run.reading,
        )

    # --- one poll -----------------------------------------------------------------

    def _time_left(self) -> float | None:
        """Seconds left before --timeout (None without one)."""
        timeout = self.settings.poll.timeout
        if timeout is None:
            return None
        return max(0.0, timeout - (self.clock.monotonic() - self._started))

    def _wait(self, interval: float) -> tuple[PollReport, PollOutcome] | None:
        """Wait for the next poll, reading what a local log gains as it comes. What
        would reset the backoff (an anomaly, a state change, a new epoch, a big loss
        change) or end the watch is reported at once, as this interval's poll; anything
        else waits for the report the backoff asked for."""
        left = self._time_left()
        deadline = self.clock.monotonic() + (interval if left is None else min(interval, left))
        while True:
            remaining = deadline - self.clock.monotonic()
            if remaining <= 0 or not self.waker.wait(remaining):
                return None
            report, outcome = self._poll_once(interval)
            if reset_reason(outcome, self.settings.poll) is not None or self._stop_reason():
                return report, outcome
            self._lines_read_early += report.new_lines
            if isinstance(self.observer, LiveView) and report.new_lines:
                # The printed report waits for the backoff; a live page need not.
                self.observer.between(replace(report, state=self.run_state.state,
                                              next_poll_seconds=max(0.0, remaining)))

    def _poll_once(self, interval: float) -> tuple[PollReport, PollOutcome]:
        try:
            snapshot = self.target.poll()
        except TargetUnavailable as error:
            fresh = self.run_state.unreachable_now(str(error))
            report = self._report(Snapshot(notices=(f"unreachable: {error}",)), fresh, interval)
            return report, PollOutcome(anomaly=bool(fresh))
        if snapshot.degraded is None:
            self.run_state.reachable_again()
        return self._digest(snapshot, baseline=False, interval=interval)

    def _final_flush(self) -> None:
        """Hand over a last unterminated line and settle what is still pending."""
        self._flushed = True
        try:
            snapshot = self.target.poll(final=True)
        except TargetUnavailable:
            snapshot = Snapshot()
        report, _ = self._digest(snapshot, baseline=False, interval=self.settings.poll.interval,
                                 final=True)
        for anomaly in report.new_anomalies:
            self.observer.anomaly(anomaly, report)

    def _digest(self, snapshot: Snapshot, baseline: bool, interval: float,
                final: bool = False) -> tuple[PollReport, PollOutcome]:
        run = self.run_state
        now = self.clock.monotonic()
        state_before = run.state
        ctx = PollContext(now=now, baseline=baseline,
                          final=final or self.settings.poll.once,
                          interval=self.settings.poll.interval,
                          log_only=self.target.target_type.endswith("-log"))
        fresh = run.observe(snapshot, ctx)
        for notice in (*snapshot.notices, *run.notices):
            self.observer.notice(notice)
        run.notices.clear()
        if self.fixer is not None:
            self._asking_about = (snapshot, list(fresh), interval, baseline)
            fresh += self._apply(self.fixer.consider(self._fix_view(snapshot)))
            self._asking_about = None
        else:
            self._propose_cancel()
        look_sooner = self._consult_reviewer(fresh, snapshot)
        report = self._report(snapshot, fresh, interval)
        outcome = PollOutcome(
            anomaly=bool(fresh),
            loss_change=self._loss_change(),
            new_epoch=run.series.new_epoch,
            state_changed=run.state is not state_before or run.service_state_changed,
            look_sooner=look_sooner,
        )
        run.series.new_epoch = False
        return report, outcome

    def _fix_view(self, snapshot: Snapshot) -> FixView:
        run = self.run_state
        ending = run.lifecycle.ending
        view = snapshot.process.view
        open_now = run.ledger.unresolved()
        stalled = any(a.type is AnomalyType.STALLED for a in open_now)
        cpu = view.cpu_seconds if view is not None else None
        series = run.series
        return FixView(
            process=view,
            failed=ending is not None and ending.state is TerminalState.FAILED,
            traceback=ending.traceback if ending is not None else "",
            exit_signal=ending.exit.signal if ending is not None and ending.exit else None,
            exit_code=ending.exit.code if ending is not None and ending.exit else None,
            # Never during a save: writing a checkpoint (to NFS, say) looks like a hang.
            hung=(stalled and snapshot.process.alive is True and run.progress.hung(cpu)
                  and snapshot.log.phase != "save"),
            step=series.step,
            checkpoint=run.checkpoints.good_path(),
            open_types=frozenset(a.type for a in open_now),
            open_problems=frozenset(a.type for a in open_now if a.type in _PROBLEMS
                                    and a.severity in (Severity.BLOCKER, Severity.HIGH)),
            lr=series.metrics.get(series.lr_key) if series.lr_key else None,
            lr_peak=series.lr_peak(),
        )

    def _apply(self, effects: FixEffects) -> list[Anomaly]:
        """Carry a fix's effects into what babysit knows about the run."""
        run = self.run_state
        for kind, note in effects.notes:
            run.ledger.annotate(kind, note)
        if effects.restarted is not None:
            run.restarted(effects.restarted, self.clock.monotonic())
        if effects.cancelled is not None:
            run.cancelled_by_user(effects.cancelled, ())
        return run.ledger.take_fresh()

    def _consult_reviewer(self, fresh: list[Anomaly], snapshot: Snapshot) -> bool:
        """Ask the reviewer (--judge) about an ambiguous anomaly. True when it said WAIT."""
        if self.reviewer is None:
            return False
        ambiguous = [a for a in fresh if a.type in AMBIGUOUS]
        if not ambiguous:
            return False
        concern = ambiguous[0]
        run = self.run_state
        packet = {
            "run": self.target.label,
            "url": run.evidence_url,
            "step": run.step,
            "target_steps": run.series.target_steps,
            "run_state": run.state.value,
            "concern": f"{concern.type.value}: {concern.description}",
            "severity": concern.severity.value,
            "last_losses": [round(x, 6) for x in run.series.recent_losses(10)],
            "last_evals": run.series.recent_evals(3),
            "answer": "Reply with exactly one word: STOP (clearly problematic, stop the run), "
                      "CONTINUE (fine, check again next interval) or WAIT (not enough data, "
                      "check again sooner).",
        }
        judgment = self.reviewer.review(outbound_value(packet))
        at = self._now()
        if judgment.answer is None:
            self.observer.notice(f"reviewer ignored: {judgment.detail}")
            self.actions.append(Action("ask-reviewer", ActionStatus.FAILED,
                                       f"about {concern.type.value}: {judgment.detail}", at))
            return False
        said = f"reviewer said {judgment.answer.value}"
        self.observer.notice(f"reviewer says {judgment.answer.value} about {concern.type.value}")
        if judgment.answer is not Answer.STOP:
            self.actions.append(Action("ask-reviewer", ActionStatus.APPLIED,
                                       f"about {concern.type.value}: {judgment.answer.value}",
                                       at))
            run.ledger.annotate(concern.type, said)
            return judgment.answer is Answer.WAIT
        if not run.lifecycle.running:
            # Nothing left to stop: the concern stands in the verdict instead.
            self.actions.append(Action("ask-reviewer", ActionStatus.APPLIED,
                                       f"about {concern.type.value}: STOP (the run had already "
                                       f"ended: nothing to stop)", at))
            run.reviewer_stopped(concern.type, f"{said} after the run had ended")
            return False
        self.actions.append(Action("ask-reviewer", ActionStatus.APPLIED,
                                   f"about {concern.type.value}: STOP", at))
        run.ledger.annotate(concern.type, said)
        reason = (f"the reviewer said STOP about {concern.type.value} at step {concern.step}: "
                  f"{concern.description}")
        if self.fixer is not None:
            self._apply(self.fixer.propose_stop(reason, self._fix_view(snapshot)))
        else:
            self.actions.append(Action("cancel-run", ActionStatus.NEEDS_APPROVAL,
                                       f"stop the run — because {reason}", at))
            self.awaiting.append(f"stop the run — because {reason}")
        return False

    def _propose_cancel(self) -> None:
        """A run babysit cannot act on (a cloud job) that keeps going with a blocker open:
        cancelling it is the user's call; babysit names the exact command."""
        run = self.run_state
        command = run.cancel_command
        if command is None or not run.lifecycle.running or self.awaiting:
            return
        blocker = next((a for a in run.ledger.unresolved()
                        if a.severity is Severity.BLOCKER), None)
        if blocker is None:
            return
        proposal = (f"cancel the run ({command}) — because {blocker.type.value}: "
                    f"{blocker.description}")
        self.actions.append(Action("cancel-run", ActionStatus.NEEDS_APPROVAL, proposal,
                                   self._now()))
        self.awaiting.append(proposal)

    def _now(self) -> str:
        return self.clock.now().isoformat().replace("+00:00", "Z")

    def _loss_change(self) -> float | None:
        series = self.run_state.series
        key = series.loss_key
        value = series.metrics.get(key) if key else None
        previous, self._last_loss = self._last_loss, value
        if value is None or previous is None or not math.isfinite(value):
            return None
        if not math.isfinite(previous) or previous == 0:
            return None
        return abs(value - previous) / abs(previous)

    def _wake_reason(self, report: PollReport) -> str:
        """With --until-event: the first anomaly not already reported to the agent in an
        earlier invocation ends the wait."""
        if not self.settings.poll.until_event:
            return ""
        for anomaly in report.new_anomalies:
            if (anomaly.type.value, anomaly.step) not in self.known_anomalies:
                at = f" at step {anomaly.step}" if anomaly.step is not None else ""
                return f"event: {anomaly.type.value} ({anomaly.severity.value}){at}"
        return ""

    def _stop_reason(self) -> str:
        run = self.run_state
        if not run.lifecycle.running:
            return f"the run ended: {run.state.value}"
        waiting = [*(self.fixer.awaiting if self.fixer else ()), *self.awaiting]
        if waiting:
            return f"waiting for your approval: {waiting[0]}"
        blockers = [a for a in run.ledger.unresolved() if a.severity is Severity.BLOCKER]
        if blockers:
            first = blockers[0]
            at = f" at step {first.step}" if first.step is not None else ""
            return f"unrecoverable problem: {first.type.value}{at}"
        if self.settings.poll.once:
            return "--once: single snapshot taken"
        limit = self.settings.poll.max_polls
        if limit is not None and self._polls + 1 >= limit:
            return f"--max-polls {limit} reached"
        if self._time_left() == 0:
            return f"--timeout {format_duration(self.settings.poll.timeout or 0)} reached"
        return ""

    # --- reporting -----------------------------------------------------------------

    def _steps_per_second(self) -> float | None:
        return self.run_state.progress.steps_per_second(self.run_state.series.metrics.get("it/s"))

    def _report(self, snapshot: Snapshot, fresh: list[Anomaly], interval: float) -> PollReport:
        series = self.run_state.series
        metrics = series.metrics

        def pick(key: str | None) -> tuple[str, float] | None:
            return (key, metrics[key]) if key and key in metrics else None

        throughput = None
        rate = self._steps_per_second()
        found = throughput_key(metrics)
        if found is not None:
            throughput = (metrics[found[0]], found[1])
        elif rate is not None:
            throughput = (rate, "steps/s")
        eta = None
        progress = self.run_state.progress
        # A rate and an ETA from before the run went quiet would be stale: say so instead.
        quiet = self._no_progress_for(snapshot, interval) if progress.quiet_polls else None
        if quiet is not None:
            throughput, rate = None, None
        if rate and series.step is not None and series.target_steps:
            remaining = series.target_steps - series.step
            eta = remaining / rate if remaining > 0 else 0.0
        return PollReport(
            poll=self._polls,
            time=self.clock.now(),
            target=self.target.label,
            state=self.run_state.state,
            step=series.step,
            target_steps=series.target_steps,
            epoch=series.epoch,
            total_epochs=series.total_epochs,
            loss=pick(series.loss_key),
            lr=pick(series.lr_key),
            grad_norm=pick(series.grad_key),
            throughput=throughput,
            metrics=dict(metrics),
            eta_seconds=eta,
            next_poll_seconds=None,
            interval_note="",
            new_lines=snapshot.log.new_lines + self._take_early_lines(),
            new_anomalies=tuple(fresh),
            notices=snapshot.notices,
            formats=self.run_state.formats,
            quiet_seconds=snapshot.log.quiet_for,
            gpu=snapshot.process.gpu,
            log_path=self._log_path,
            status=snapshot.service.status,
            headline=snapshot.service.headline,
            no_progress_for=quiet,
            subject=snapshot.process.view.command if snapshot.process.view is not None else "",
            efficiency=self.run_state.efficiency.now(),
            url=self.run_state.evidence_url,
            history=self.run_state.curves.series() if self.settings.serve else None,
            reading=self.run_state.reading,
        )

    def _no_progress_for(self, snapshot: Snapshot, interval: float) -> float | None:
        """How long the run has shown no progress, when that is worth saying: counted
        from its last progress or, when longer, from the source's last change (a log last
        written before babysit started has been quiet since then, not since babysit's
        start); None while that is under one polling interval (progress read early, a
        moment ago, is not "no progress for 0s")."""
        since = self.run_state.progress.quiet_for(self.clock.monotonic())
        if snapshot.log.quiet_for is not None:
            since = max(since, snapshot.log.quiet_for)
        return since if since >= max(interval, 1.0) else None

    def _take_early_lines(self) -> int:
        lines, self._lines_read_early = self._lines_read_early, 0
        return lines

    def _interval_note(self, interval: float, outcome: PollOutcome) -> str:
        """What happened to the interval, only when it changed: the backoff's step, the
        schedule's next entry, or the reset and why."""
        settings = self.settings.poll
        new = next_interval(interval, outcome, settings)
        if new == interval:
            return ""
        reason = reset_reason(outcome, settings)
        if reason is not None:
            return f"interval reset to {format_interval(new)} ({reason})"
        verb = "schedule" if settings.schedule else "backed off"
        return f"{verb} {format_interval(interval)}→{format_interval(new)}"

    def _show_before_asking(self) -> None:
        if self._asking_about is None or self._poll_shown:
            return
        snapshot, fresh, interval, baseline = self._asking_about
        report = self._report(snapshot, fresh, interval)
        if baseline:
            self.observer.baseline(report)
        else:
            self.observer.poll(report)
        for anomaly in fresh:
            self.observer.anomaly(anomaly, report)
            self._shown.add(id(anomaly))
        self._poll_shown = True

    def _emit(self, report: PollReport, next_poll: float | None, note: str,
              baseline: bool) -> None:
        report = replace(report, next_poll_seconds=next_poll, interval_note=note,
                         state=self.run_state.state)
        if not self._poll_shown:
            if baseline:
                self.observer.baseline(report)
            else:
                self.observer.poll(report)
        self._poll_shown = False
        for anomaly in report.new_anomalies:
            if id(anomaly) not in self._shown:
                self.observer.anomaly(anomaly, report)
        self._shown.clear()
        every = self.settings.poll.summary_every
        last = self._summary_at
        due = every > 0 and self._polls > 0 and self._polls - (last or 0) >= every
        # An anomaly earns a summary too, but never two in a row (its own line says it).
        notable = bool(report.new_anomalies) and (last is None or self._polls - last >= 2)
        if due or notable or next_poll is None:
            reason = ("stopping" if next_poll is None else
                      "anomaly" if report.new_anomalies else f"every {count(every, 'poll')}")
            self._summary_at = self._polls
            self.observer.summary(self.summary(reason))

    def summary(self, reason: str) -> SummaryReport:
        run = self.run_state
        ledger = run.ledger
        return SummaryReport(
            time=self.clock.now(),
            target=self.target.label,
            polls=self._polls + 1,
            watched_seconds=self.clock.monotonic() - self._started,
            state=run.state,
            step=run.series.step,
            target_steps=run.series.target_steps,
            steps_per_second=self._steps_per_second(),
            metrics=key_metrics(run.series.metrics),
            open_anomalies=tuple(ledger.unresolved()),
            resolved_anomalies=tuple(a for a in ledger.anomalies if a.resolved),
            checkpoint=run.checkpoints.good_path(),
            formats=run.formats,
            reason=reason,
            efficiency=run.efficiency.now(),
        )


class _ShowFirst:
    """An approver that first has the watcher show what the question is about."""

    def __init__(self, inner: Approver, show: Callable[[], None]) -> None:
        self.inner = inner
        self.show = show

    def ask(self, question: str) -> bool | None:
        self.show()
        return self.inner.ask(question)


class _OutputWatchingWaker:
    """Waits as `inner` does, looking at babysit's output every `every` seconds: when its
    reader went away (`babysit … | head -3`), the watch ends then, with its verdict,
    rather than at the next print, which may be minutes away."""

    def __init__(self, inner: Waker, gone: Callable[[], str | None], clock: Clock,
                 every: float = 0.5) -> None:
        self.inner = inner
        self.gone = gone
        self.clock = clock
        self.every = every

    def wait(self, seconds: float) -> bool:
        deadline = self.clock.monotonic() + seconds
        while True:
            reason = self.gone()
            if reason is not None:
                raise OutputClosed(reason)
            left = deadline - self.clock.monotonic()
            if left <= 0:
                return False
            if self.inner.wait(min(left, self.every)):
                return True
