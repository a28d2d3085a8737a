"""The watch loop: a baseline, then polls with backoff until a stop condition.

The loop waits, polls once, digests the snapshot into the `Run` and stops when one of
its stop conditions says so; what to show is core.present's business, what to do about
the run core.supervise's, judging it the verdict's. Time comes from an injected Clock,
so tests drive hours of watching in milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from babysit import stopping
from babysit.clock import Clock, SleepingWaker, SystemClock, Waker
from babysit.config import Settings
from babysit.core.backoff import PollOutcome, next_interval, relative_change, reset_reason
from babysit.core.fixer import Fixer
from babysit.core.outcome import WatchOutcome
from babysit.core.present import Presenter, Subject, interval_note
from babysit.core.reports import LiveView, Observer, OutputClosed, PollReport, interruption
from babysit.core.reviewer import Reviewer
from babysit.core.run import PollContext, Run
from babysit.core.run_view import RunView
from babysit.core.stops import LoopState, Stop, stop_conditions
from babysit.core.supervise import Decisions, Effects, Supervisor
from babysit.core.wakers import OutputWatchingWaker
from babysit.model import Anomaly, utc_text
from babysit.snapshot import Snapshot
from babysit.targets.base import HasLogPath, Target, TargetError, TargetUnavailable


@dataclass(frozen=True)
class WatchStop:
    reason: str
    interrupted: bool


@dataclass(frozen=True)
class Digest:
    """One poll taken in: what to show, what it means for the cadence, the run after it."""

    report: PollReport
    outcome: PollOutcome
    view: RunView


class WatchLoop:
    def __init__(self, target: Target, settings: Settings, observer: Observer,
                 clock: Clock | None = None, fixer: Fixer | None = None,
                 reviewer: Reviewer | None = None,
                 known_anomalies: frozenset[tuple[str, int | None]] = frozenset(),
                 known_proposals: frozenset[str] = frozenset(),
                 waker: Waker | None = None,
                 output_gone: Callable[[], str | None] | None = None) -> None:
        self.target = target
        self.settings = settings
        self.observer = observer
        self.clock = clock or SystemClock()
        # Between polls: a local log's changes end the wait early (see reading.changes).
        self.reads_as_written = waker is not None
        self.waker = waker or SleepingWaker(self.clock)
        if output_gone is not None:
            self.waker = OutputWatchingWaker(self.waker, output_gone, self.clock)
        self._started = self.clock.monotonic()
        self.run_state = Run(settings.rules, settings.target_steps, self._started,
                             settings.efficiency, keep_history=settings.serve,
                             alerts=settings.alerts)
        subject = Subject(target.label, target.target_type,
                          target.log_path if isinstance(target, HasLogPath) else None)
        self.presenter = Presenter(observer, subject, self.clock, self._started,
                                   settings.poll.summary_every)
        self.supervisor = Supervisor(fixer, reviewer, target.label, self._now)
        self.decisions = Decisions()  # every action and proposal, whoever decided it
        # known_anomalies: (type, step) of those an agent already heard of (--until-event);
        # known_proposals: what the proposals it was already shown propose.
        self.stop: Stop = stop_conditions(settings.poll, known_anomalies, known_proposals)
        self.polls = 0
        self._last_loss: float | None = None
        self._flushed = False

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
            digest = self._digest(snapshot, baseline=True, interval=interval)
            while True:
                stop_reason = self.stop(self._state(digest))
                if stop_reason:
                    self.presenter.emit(digest.view, digest.report, None, "", self.polls)
                    break
                note = interval_note(interval, digest.outcome, poll_settings)
                interval = next_interval(interval, digest.outcome, poll_settings)
                self.presenter.emit(digest.view, replace(
                    digest.report, reads_as_written=self.reads_as_written), interval, note,
                    self.polls)
                early = self._wait(interval)
                self.polls += 1
                digest = early or self._poll_once(interval)
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
        self.run_state.severities_at_end()
        return self.presenter.outcome(
            self._view(Snapshot()), actions=self.decisions.actions,
            awaiting=self.decisions.awaiting, commands=self.decisions.commands,
            rewatch=rewatch, stop_reason=stop.reason, interrupted=stop.interrupted,
            polls=self.polls)

    # --- wait, poll once, digest ----------------------------------------------------

    def _time_left(self) -> float | None:
        timeout = self.settings.poll.timeout
        if timeout is None:
            return None
        return max(0.0, timeout - (self.clock.monotonic() - self._started))

    def _state(self, digest: Digest) -> LoopState:
        return LoopState(view=digest.view, awaiting=tuple(self.decisions.awaiting),
                         polls=self.polls, elapsed=self.clock.monotonic() - self._started,
                         new_anomalies=digest.report.new_anomalies)

    def _wait(self, interval: float) -> Digest | None:
        """Wait for the next poll, reading what a local log gains as it comes. What
        would reset the backoff (an anomaly, a state change, a new epoch, a big loss
        change) or end the watch is reported at once, as this interval's poll; anything
        else waits for the report the backoff asked for."""
        if stopping.requested():
            raise KeyboardInterrupt  # a stop whose KeyboardInterrupt Python swallowed
        left = self._time_left()
        deadline = self.clock.monotonic() + (interval if left is None else min(interval, left))
        while True:
            remaining = deadline - self.clock.monotonic()
            if remaining <= 0 or not self.waker.wait(remaining):
                return None
            digest = self._poll_once(interval)
            if reset_reason(digest.outcome, self.settings.poll) is not None \
                    or self.stop(self._state(digest)):
                return digest
            report = digest.report
            self.presenter.read_early(report.new_lines)
            if isinstance(self.observer, LiveView) and report.new_lines:
                # The printed report waits for the backoff; a live page need not.
                self.observer.between(replace(report, state=digest.view.state,
                                              next_poll_seconds=max(0.0, remaining)))

    def _poll_once(self, interval: float) -> Digest:
        try:
            snapshot = self.target.poll()
        except TargetUnavailable as error:
            fresh = self.run_state.unreachable_now(str(error))
            snapshot = Snapshot(notices=(f"unreachable: {error}",))
            view = self._view(snapshot)
            report = self.presenter.report(view, snapshot, fresh, interval, self.polls)
            return Digest(report, PollOutcome(anomaly=bool(fresh)), view)
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
        digest = self._digest(snapshot, baseline=False, interval=self.settings.poll.interval,
                              final=True)
        self.presenter.anomalies(digest.report)

    def _digest(self, snapshot: Snapshot, baseline: bool, interval: float,
                final: bool = False) -> Digest:
        run = self.run_state
        state_before = run.state
        ctx = PollContext(now=self.clock.monotonic(), baseline=baseline,
                          final=final or self.settings.poll.once,
                          interval=self.settings.poll.interval,
                          log_only=self.target.target_type.endswith("-log"))
        fresh = run.observe(snapshot, ctx)
        for notice in (*snapshot.notices, *run.notices):
            self.observer.notice(notice)
        run.notices.clear()
        view = self._view(snapshot)
        seen = list(fresh)  # what a question to the user is about: shown before it

        def before_asking() -> None:
            self.presenter.show_first(
                lambda: self.presenter.report(view, snapshot, seen, interval, self.polls),
                baseline)

        fix = self.supervisor.consider(view, snapshot, self.decisions.awaiting, before_asking)
        fresh += self._apply(fix)
        view = self._view(snapshot) if fix.touch_run else view
        review = self.supervisor.review(fresh, view)
        self._apply(review)
        view = self._view(snapshot) if review.touch_run else view
        if review.stop_proposal is not None:
            # Its own anomalies stay in the ledger; this poll reports what it saw.
            stop = self.supervisor.propose_stop(review.stop_proposal, view, snapshot)
            self._apply(stop)
            view = self._view(snapshot) if stop.touch_run else view
        outcome = PollOutcome(
            anomaly=bool(fresh), loss_change=self._loss_change(view), new_epoch=view.new_epoch,
            state_changed=view.state is not state_before or view.state_changed_by_service,
            look_sooner=review.look_sooner)
        run.epoch_reported()
        return Digest(self.presenter.report(view, snapshot, fresh, interval, self.polls),
                      outcome, view)

    def _apply(self, effects: Effects) -> list[Anomaly]:
        """Carry a supervision step's effects out; returns the anomalies they raised."""
        run = self.run_state
        for notice in effects.notices:
            self.observer.notice(notice)
        for kind, note in effects.notes:
            run.annotate(kind, note)
        if effects.restarted is not None:
            run.restarted(effects.restarted, self.clock.monotonic())
        if effects.cancelled is not None:
            run.cancelled_by_user(effects.cancelled, ())
        if effects.reviewer_stopped is not None:
            run.reviewer_stopped(*effects.reviewer_stopped)
        self.decisions.add(effects)
        return run.take_fresh()

    def _view(self, snapshot: Snapshot) -> RunView:
        now, keep = self.clock.monotonic(), self.settings.serve
        return RunView.of(self.run_state, snapshot, now, keep_history=keep)

    def _now(self) -> str:
        return utc_text(self.clock.now())

    def _loss_change(self, view: RunView) -> float | None:
        value = view.metrics.get(view.loss_key) if view.loss_key else None
        previous, self._last_loss = self._last_loss, value
        return relative_change(previous, value)
