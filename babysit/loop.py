"""The polling loop: baseline, then polls with backoff until a stop condition.

The loop owns cadence and stop conditions only. Reading is the target's job, judging
the RunTracker's, rendering the observer's; time comes from an injected Clock, so
tests drive hours of watching in milliseconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from babysit.backoff import PollOutcome, next_interval, reset_reason
from babysit.clock import Clock, SystemClock
from babysit.config import Settings
from babysit.judge import AMBIGUOUS, Answer, Reviewer
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
from babysit.reports import Observer, PollReport, SummaryReport
from babysit.rules.metric_rules import stall_threshold
from babysit.targets.base import Target, TargetError, TargetUnavailable
from babysit.tracker import RunTracker

if TYPE_CHECKING:
    from babysit.fixes import Fixer
from babysit.units import format_duration as _duration

_SOURCE_NAMES = {"mlflow": "MLflow", "wandb": "W&B", "vertex-training": "Vertex AI",
                 "vertex-pipeline": "Vertex AI"}


@dataclass(frozen=True)
class WatchResult:
    """How a watch ended; `verdict.decide` turns it into a Verdict."""

    tracker: RunTracker
    state: TerminalState
    stop_reason: str
    watched_seconds: float
    polls: int
    interrupted: bool
    formats: tuple[str, ...]
    evidence_url: str | None = None


class Watcher:
    def __init__(self, target: Target, settings: Settings, observer: Observer,
                 clock: Clock | None = None, fixer: Fixer | None = None) -> None:
        self.target = target
        self.fixer = fixer
        self.reviewer: Reviewer | None = None
        self.actions: list[Action] = []  # decisions not made by the fixer (the reviewer's)
        self.awaiting: list[str] = []  # proposals waiting for the user (without a fixer)
        # (type, step) of anomalies an agent already heard about (--until-event).
        self.known_anomalies: set[tuple[str, int | None]] = set()
        self.evidence_url: str | None = None
        self._reported: TerminalState | None = None
        self._cpu_at_progress: float | None = None
        self._last_cpu: float | None = None
        self.settings = settings
        self.observer = observer
        self.clock = clock or SystemClock()
        self.tracker = RunTracker(settings.rules, settings.target_steps)
        self._polls = 0
        self._started = 0.0
        self._last_progress_at = 0.0
        self._longest_gap = 0.0
        self._quiet_polls = 0
        self._last_loss: float | None = None
        self._rate_origin: tuple[float, int] | None = None
        self._last_step_seen: tuple[float, int] | None = None
        self._state = TerminalState.RUNNING
        self._formats: tuple[str, ...] = ()
        self._unreachable = False
        self._flushed = False

    def run(self) -> WatchResult:
        """Watch until a stop condition. Raises TargetError if there is no baseline;
        returns normally on Ctrl-C (with `interrupted` set)."""
        poll_settings = self.settings.poll
        self._started = self.clock.monotonic()
        self._last_progress_at = self._started
        interval = poll_settings.interval
        interrupted = False
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
                self.clock.sleep(interval)
                self._polls += 1
                report, outcome = self._poll_once(interval)
        except KeyboardInterrupt:
            interrupted = True
            stop_reason = "interrupted by the user (Ctrl-C)"
        if not self._flushed and not interrupted:
            self._final_flush()
        return WatchResult(self.tracker, self._state, stop_reason,
                           self.clock.monotonic() - self._started, self._polls + 1,
                           interrupted, self._formats, self.evidence_url)

    def result_so_far(self, stop_reason: str) -> WatchResult:
        """What is known now, for a session that has to end abnormally."""
        return WatchResult(self.tracker, TerminalState.RUNNING, stop_reason,
                           self.clock.monotonic() - self._started, self._polls + 1, False,
                           self._formats)

    # --- one poll -----------------------------------------------------------------

    def _poll_once(self, interval: float) -> tuple[PollReport, PollOutcome]:
        try:
            snapshot = self.target.poll()
        except TargetUnavailable as error:
            fresh = self.tracker.add(Anomaly(AnomalyType.CONNECTIVITY, Severity.MEDIUM,
                                             self.tracker.step,
                                             f"cannot reach the target: {error}"))
            self._unreachable = True
            report = self._report(Snapshot(notices=(f"unreachable: {error}",)), fresh, interval)
            return report, PollOutcome(anomaly=bool(fresh))
        if self._unreachable and snapshot.degraded is None:
            self._unreachable = False
            self.tracker.resolve(AnomalyType.CONNECTIVITY, "", "reachable again")
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
        tracker = self.tracker
        final = final or self.settings.poll.once
        now = self.clock.monotonic()
        advances_before = tracker.advances
        step_before = tracker.step
        previous_state = self._state
        # A traceback is a crash only if nothing follows it: confirmed by a later quiet
        # poll, by the process being gone, or by the log staying still for a while.
        pending_before = tracker.crash_pending
        fresh = tracker.ingest(snapshot.records)
        if snapshot.degraded is not None:
            self._unreachable = True
            fresh += tracker.add(Anomaly(AnomalyType.CONNECTIVITY, Severity.MEDIUM,
                                         tracker.step, snapshot.degraded))
        if snapshot.formats:
            self._formats = snapshot.formats
        progressed = tracker.advances > advances_before or (
            tracker.step is None and any(r.metrics for r in snapshot.records))
        view = snapshot.process
        cpu = view.cpu_seconds if view is not None else None
        # A process whose log babysit cannot read: busy CPUs are the only sign of work.
        no_log = view is not None and tracker.step is None and not tracker.metrics
        if no_log and cpu is not None and self._last_cpu is not None \
                and cpu - self._last_cpu > 0.5:
            progressed = True
        self._last_cpu = cpu
        if progressed or self._cpu_at_progress is None:
            self._cpu_at_progress = cpu
        if progressed:
            if not baseline and self._quiet_polls:
                self._longest_gap = max(self._longest_gap, now - self._last_progress_at)
            self._measure_rate(now, step_before)
            self._last_progress_at = now
            self._quiet_polls = 0
        elif not baseline:
            self._quiet_polls += 1

        if snapshot.evidence_url:
            self.evidence_url = snapshot.evidence_url
        if snapshot.lr_schedule:
            tracker.lr_schedule = snapshot.lr_schedule
        if snapshot.run_state is not None and snapshot.run_state is not self._reported:
            self._reported = snapshot.run_state
            source = _SOURCE_NAMES.get(self.target.target_type, self.target.target_type)
            fresh += tracker.reported_state(snapshot.run_state, snapshot.run_state_detail,
                                            source)
        if view is not None:
            # The process decides whether the run ended; a traceback in the log of a
            # process that still lives is not a crash yet.
            if not view.alive and tracker.exit is None and tracker.crash is None:
                fresh += tracker.process_ended(view)
        elif tracker.crash_pending and (
            final or (pending_before and not progressed)
            or (snapshot.quiet_for or 0.0) >= self.settings.rules.crash_grace_seconds
        ):
            fresh += tracker.confirm_crash()
        self._state = self._terminal_state(snapshot, final)
        if self._state is TerminalState.RUNNING and not tracker.crash_pending:
            fresh += self._check_stall(snapshot, baseline, now)
        if snapshot.gpu is not None:
            util = snapshot.gpu.get("util_percent")
            fresh += tracker.gpu_sample(util if isinstance(util, (int, float)) else None,
                                        snapshot.alive)
        if self.fixer is not None:
            fresh += self._fix(snapshot, cpu, now)
        fresh += tracker.ingest(())  # anomalies raised by the loop's own measurements
        look_sooner = self._consult_reviewer(fresh, snapshot)

        for notice in snapshot.notices:
            self.observer.notice(notice)
        report = self._report(snapshot, fresh, interval)
        outcome = PollOutcome(
            anomaly=bool(fresh),
            loss_change=self._loss_change(),
            new_epoch=tracker.new_epoch,
            state_changed=self._state is not previous_state,
            look_sooner=look_sooner,
        )
        tracker.new_epoch = False
        return report, outcome

    def _consult_reviewer(self, fresh: list[Anomaly], snapshot: Snapshot) -> bool:
        """Ask the reviewer (--judge) about an ambiguous anomaly. True when it said WAIT."""
        if self.reviewer is None:
            return False
        ambiguous = [a for a in fresh if a.type in AMBIGUOUS]
        if not ambiguous:
            return False
        concern = ambiguous[0]
        tracker = self.tracker
        packet = {
            "run": self.target.label,
            "url": self.evidence_url,
            "step": tracker.step,
            "target_steps": tracker.target_steps,
            "concern": f"{concern.type.value}: {concern.description}",
            "severity": concern.severity.value,
            "last_losses": [round(x, 6) for x in tracker.recent_losses(10)],
            "last_evals": tracker.recent_evals(3),
            "answer": "Reply with exactly one word: STOP (clearly problematic, stop the run), "
                      "CONTINUE (fine, check again next interval) or WAIT (not enough data, "
                      "check again sooner).",
        }
        judgment = self.reviewer.review(packet)
        at = self.clock.now().isoformat().replace("+00:00", "Z")
        if judgment.answer is None:
            self.observer.notice(f"reviewer ignored: {judgment.detail}")
            self.actions.append(Action("ask-reviewer", ActionStatus.FAILED,
                                       f"about {concern.type.value}: {judgment.detail}", at))
            return False
        self.observer.notice(f"reviewer says {judgment.answer.value} about "
                             f"{concern.type.value}")
        self.actions.append(Action("ask-reviewer", ActionStatus.APPLIED,
                                   f"about {concern.type.value}: {judgment.answer.value}", at))
        tracker.annotate(concern.type, f"reviewer said {judgment.answer.value}")
        if judgment.answer is Answer.STOP:
            reason = (f"the reviewer said STOP about {concern.type.value} at step "
                      f"{concern.step}: {concern.description}")
            if self.fixer is not None and self.fixer.propose_stop(reason, tracker):
                self._state = TerminalState.CANCELLED
            elif self.fixer is None:
                self.actions.append(Action("cancel-run", ActionStatus.NEEDS_APPROVAL,
                                           f"stop the run — because {reason}", at))
                self.awaiting.append(f"stop the run — because {reason}")
        return judgment.answer is Answer.WAIT

    def _fix(self, snapshot: Snapshot, cpu: float | None, now: float) -> list[Anomaly]:
        """Let the fix policy act; after a restart, watch the new process afresh."""
        assert self.fixer is not None
        tracker = self.tracker
        stalled = any(a.type is AnomalyType.STALLED for a in tracker.unresolved())
        hung = (stalled and snapshot.alive is True and cpu is not None
                and self._cpu_at_progress is not None and cpu - self._cpu_at_progress < 1.0)
        if not self.fixer.consider(tracker, snapshot, hung):
            return []
        if tracker.crash is not None and tracker.crash.cancelled:
            self._state = TerminalState.CANCELLED
        else:
            self._state = TerminalState.RUNNING
            self._quiet_polls = 0
            self._last_progress_at = now
            self._cpu_at_progress = None
        return []

    def _check_stall(self, snapshot: Snapshot, baseline: bool, now: float) -> list[Anomaly]:
        rules = self.settings.rules
        threshold = stall_threshold(self.settings.poll.interval, self._longest_gap, rules)
        if baseline:
            quiet = snapshot.quiet_for
            if quiet is None or quiet < threshold:
                return []
            why = f"the log has not been written for {_duration(quiet)}"
        else:
            if self._quiet_polls < rules.stall_polls:
                return []
            quiet = now - self._last_progress_at
            why = (f"no training progress for {_duration(quiet)} "
                   f"({self._quiet_polls} polls)")
        if snapshot.stall_hint:
            why += f"; {snapshot.stall_hint}"
        elif self.target.target_type.endswith("-log") and snapshot.alive is None:
            why += "; babysit cannot see the process (pass --pid to watch it too)"
        return self.tracker.check_stall(quiet, threshold, f"stalled: {why}")

    def _measure_rate(self, now: float, step_before: int | None) -> None:
        step = self.tracker.step
        if step is None:
            return
        if self._rate_origin is None:
            self._rate_origin = (now, step)
        elif self._last_step_seen is not None and step_before is not None:
            then, old_step = self._last_step_seen
            if now > then and step > old_step:
                self.tracker.add_poll_rate((step - old_step) / (now - then))
        self._last_step_seen = (now, step)

    def _steps_per_second(self) -> float | None:
        if self._rate_origin is None or self._last_step_seen is None:
            rate = self.tracker.metrics.get("it/s")
            return rate if rate and math.isfinite(rate) else None
        (t0, s0), (t1, s1) = self._rate_origin, self._last_step_seen
        if t1 > t0 and s1 > s0:
            return (s1 - s0) / (t1 - t0)
        rate = self.tracker.metrics.get("it/s")
        return rate if rate and math.isfinite(rate) else None

    def _loss_change(self) -> float | None:
        key = self.tracker.loss_key
        value = self.tracker.metrics.get(key) if key else None
        previous, self._last_loss = self._last_loss, value
        if value is None or previous is None or not math.isfinite(value):
            return None
        if not math.isfinite(previous) or previous == 0:
            return None
        return abs(value - previous) / abs(previous)

    def _terminal_state(self, snapshot: Snapshot, final: bool) -> TerminalState:
        tracker = self.tracker
        if tracker.crash is not None:
            return TerminalState.CANCELLED if tracker.crash.cancelled else TerminalState.FAILED
        if tracker.crash_pending or snapshot.alive is True:
            return TerminalState.RUNNING  # a live process has not finished, whatever it printed
        if tracker.completed is not None:
            return TerminalState.SUCCEEDED
        reached = (tracker.step is not None and tracker.target_steps is not None
                   and tracker.step >= tracker.target_steps)
        settled = (final or self._quiet_polls >= 1 or snapshot.alive is False
                   or (snapshot.quiet_for or 0.0) >= self.settings.rules.crash_grace_seconds)
        if reached and settled:
            return TerminalState.SUCCEEDED
        return TerminalState.RUNNING

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
        if self._state is not TerminalState.RUNNING:
            return f"the run ended: {self._state.value}"
        if self.fixer is not None and self.fixer.awaiting:
            return f"waiting for your approval: {self.fixer.awaiting[0]}"
        if self.awaiting:
            return f"waiting for your approval: {self.awaiting[0]}"
        blockers = [a for a in self.tracker.unresolved() if a.severity is Severity.BLOCKER]
        if blockers:
            first = blockers[0]
            at = f" at step {first.step}" if first.step is not None else ""
            return f"unrecoverable problem: {first.type.value}{at}"
        if self.settings.poll.once:
            return "--once: single snapshot taken"
        limit = self.settings.poll.max_polls
        if limit is not None and self._polls + 1 >= limit:
            return f"--max-polls {limit} reached"
        return ""

    # --- reporting -----------------------------------------------------------------

    def _report(self, snapshot: Snapshot, fresh: list[Anomaly], interval: float) -> PollReport:
        tracker = self.tracker
        metrics = tracker.metrics

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
        if rate and tracker.step is not None and tracker.target_steps:
            remaining = tracker.target_steps - tracker.step
            eta = remaining / rate if remaining > 0 else 0.0
        return PollReport(
            poll=self._polls,
            time=self.clock.now(),
            target=self.target.label,
            state=self._state,
            step=tracker.step,
            target_steps=tracker.target_steps,
            epoch=tracker.epoch,
            total_epochs=tracker.total_epochs,
            loss=pick(tracker.loss_key),
            lr=pick(tracker.lr_key),
            grad_norm=pick(tracker.grad_key),
            throughput=throughput,
            metrics=dict(metrics),
            eta_seconds=eta,
            next_poll_seconds=None,
            interval_note="",
            new_lines=snapshot.new_lines,
            new_anomalies=tuple(fresh),
            notices=snapshot.notices,
            formats=self._formats,
            quiet_seconds=snapshot.quiet_for,
            gpu=snapshot.gpu,
        )

    def _interval_note(self, interval: float, outcome: PollOutcome) -> str:
        settings = self.settings.poll
        if not settings.backoff:
            return ""
        reason = reset_reason(outcome, settings)
        if reason is not None:
            return f"interval reset to {settings.interval:g}s ({reason})" \
                if interval != settings.interval else ""
        new = min(interval * settings.backoff_factor, settings.max_interval)
        return f"backed off {interval:.0f}s→{new:.0f}s" if new != interval else ""

    def _emit(self, report: PollReport, next_poll: float | None, note: str,
              baseline: bool) -> None:
        report = replace(report, next_poll_seconds=next_poll, interval_note=note,
                         state=self._state)
        if baseline:
            self.observer.baseline(report)
        else:
            self.observer.poll(report)
        for anomaly in report.new_anomalies:
            self.observer.anomaly(anomaly, report)
        every = self.settings.poll.summary_every
        due = every > 0 and self._polls > 0 and self._polls % every == 0
        if due or report.new_anomalies or next_poll is None:
            reason = ("stopping" if next_poll is None else
                      "anomaly" if report.new_anomalies else f"every {every} polls")
            self.observer.summary(self.summary(reason))

    def summary(self, reason: str) -> SummaryReport:
        tracker = self.tracker
        return SummaryReport(
            time=self.clock.now(),
            target=self.target.label,
            polls=self._polls + 1,
            watched_seconds=self.clock.monotonic() - self._started,
            state=self._state,
            step=tracker.step,
            target_steps=tracker.target_steps,
            steps_per_second=self._steps_per_second(),
            metrics=key_metrics(tracker.metrics),
            open_anomalies=tuple(tracker.unresolved()),
            resolved_anomalies=tuple(a for a in tracker.anomalies if a.resolved),
            checkpoint=tracker.good_checkpoint(),
            formats=self._formats,
            reason=reason,
        )
