"""Run: everything babysit knows about the run, in one place.

It is made of small parts, each with one job — the anomaly ledger, the lifecycle (is
it going, how did it end), the metric series and its rules, progress, checkpoints —
and it is the only thing that feeds them. The watch loop (core/loop.py) hands it each
snapshot; fixes and the reviewer report back through its methods; the verdict reads a
frozen outcome built from it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from babysit.config import EfficiencySettings, RuleSettings
from babysit.core.after_end import restated_after_the_end, table_after_the_end
from babysit.core.checkpoints import Checkpoints
from babysit.core.curves import MetricCurves
from babysit.core.deadline import deadline_warning
from babysit.core.efficiency_meter import EfficiencyMeter
from babysit.core.ledger import AnomalyLedger
from babysit.core.lifecycle import Ending, EndingSource, PlanPosition, RunLifecycle, premature
from babysit.core.progress import Progress, ProgressSample, stall_allowance
from babysit.core.series import MetricSeries
from babysit.metric_names import is_eval_metric
from babysit.model import (
    Anomaly,
    AnomalyType,
    EventKind,
    LogEvent,
    Reading,
    Record,
    Severity,
    TerminalState,
)
from babysit.parsing.class_accuracies import ANSWERED
from babysit.parsing.events import EARLY_STOP, OBJECTIVE_CHANGED, SUMMARY, exception_line
from babysit.parsing.stage_milestones import TRAINING_STAGE_PASSED
from babysit.parsing.start_loops import GOT_THROUGH
from babysit.rules.catalog import CATALOG, entry
from babysit.rules.chance_level import chance_metric
from babysit.rules.collapse import COLLAPSE
from babysit.rules.eval_names import evaluation_direction
from babysit.rules.event_rules import CAUSE_BY_EXCEPTION, EVENT_RULES
from babysit.rules.final_test import FAR_DROP, final_test_below_evaluations
from babysit.rules.history_shape import restarted_counter, unlearned_history
from babysit.rules.last_weights import (
    best_long_behind,
    final_evaluation_fell,
    last_beyond,
    last_far_from_best,
    patience_spent,
)
from babysit.rules.metric_floor import floored_metric, nothing_held_out
from babysit.rules.nonfinite_roles import severity_of
from babysit.rules.stragglers import RankPace, rank_named
from babysit.rules.stream import GAP_AT_BEST, GAP_LEFT_BEST, Raise, Reassess, Signal
from babysit.snapshot import Snapshot, TimeLimit
from babysit.units import count, format_duration
from babysit.user_alerts import UserAlert

# An evaluation's decline at the end that is a notice only: it gave back at most this
# share of what it gained, and is at most this far below its best.
_SLIGHT_SHARE_OF_GAIN = 0.1
_SLIGHT_DROP = 0.05
# Bars of a tracker's sparkline (W&B draws 40): a log that printed as many losses gives
# more than its picture does.
_HISTORY_BARS = 40
# How near its best (in `eval_min_worsening`s of it) an early-stopped metric must end for
# the stop to have been the patience working.
_NEAR_BEST = 3


def _near_best(values: list[float], direction: int, share: float) -> bool:
    """Whether the last value is within `share` of the best (higher is better when
    `direction` is +1)."""
    if direction == 0 or not values:
        return False
    best = max(v * direction for v in values) * direction
    return abs(values[-1] - best) <= share * abs(best)


_RECOVERS = tuple(t for t, e in CATALOG.items() if e.recovers_on_progress)
# Out-of-memory errors a framework survived by skipping their batches (fairseq's
# `attempting to recover from OOM`): past this many, and this share of the steps, the run
# is not training on what it was given (the longest sequences, the largest images skipped
# each time they come), whatever training goes on to do. Kept open once raised, under
# this key: progress is what the run does between them.
_SKIPPED_BATCHES = "skipped batches"
_SKIPPED_AT_LEAST = 10
_SKIPPED_SHARE = 0.01
_NAN = (AnomalyType.NAN_INF,)
_NOT_LEARNING = (AnomalyType.NOT_LEARNING,)
# A step this low after the steps went back: a launch from the start, not a resume.
_FROM_SCRATCH = 1
_FIRST_BEST_EPOCHS = 20  # epochs trained before a best put back from the first says it
# Evaluations after the first, none better, before a run's own early stop on them says
# its first was all it learned.
_FIRST_BEST_EVALS = 10
_FIRST_SHARE = 0.1  # and made within this share of the run's steps: its first
_LAST_EVALS = 8  # evaluations in the window before a finished run's end is judged so
_ENDED_WORSE = 0.03  # of the best: a finished run's last evaluations this much worse
_EARLY_BEST_SHARE = 0.25  # ... than a best within this share of its evaluations
_MAIN_AT_BEST_EVALS = 5  # evaluations of the main one before its best at the end says so
_EVAL_WINDOW = 24  # the evaluations a final test is set against (the rule's window)
# What a launch's failure raised, which a new launch in the same log leaves behind (a
# hardware fault or a failed save says something about the machine or the files the
# next launch uses, and stays).
_ENDED_WITH_A_LAUNCH = (AnomalyType.CRASH, AnomalyType.OOM, AnomalyType.CUDA_ERROR,
                        AnomalyType.NCCL)
_CLEARED_BY_RESTART = tuple(t for t, e in CATALOG.items() if e.cleared_by_restart)


def _bar_tick(record: Record) -> bool:
    """Whether a record is no more than a progress bar's count: no figure but its rate."""
    return record.fmt == "tqdm" and all(key == "it/s" for key in record.metrics)


def _trains(metrics: Mapping[str, float]) -> bool:
    """Whether a record carries a training loss (not only an evaluation's)."""
    return any("loss" in key.lower() and not is_eval_metric(key) for key in metrics)


@dataclass(frozen=True)
class PollContext:
    now: float
    baseline: bool
    final: bool  # no more input will come (--once, or the watch is ending)
    interval: float  # the initial poll interval, the unit of the stall rule
    log_only: bool  # a log whose process babysit cannot see


class Run:
    def __init__(self, rules: RuleSettings, target_steps: int | None, started: float,
                 efficiency: EfficiencySettings | None = None,
                 keep_history: bool = False, alerts: tuple[UserAlert, ...] = ()) -> None:
        self.rules = rules
        self.efficiency = EfficiencyMeter(efficiency or EfficiencySettings())
        # The curves cost work on every record: kept only when something shows them.
        self.curves = MetricCurves()
        self._keep_history = keep_history
        self._last_poll_at = started
        self.ledger = AnomalyLedger()
        self.lifecycle = RunLifecycle()
        self.series = MetricSeries(rules, target_steps, alerts)
        self.progress = Progress(started)
        self.checkpoints = Checkpoints()
        self.evidence_url: str | None = None
        self.formats: tuple[str, ...] = ()
        self.reading: Reading | None = None  # how much of the log was understood
        self._resumed_from: int | None = None  # the step the run last went back to
        self._restored_best: str | None = None  # the trainer put its best weights back
        self._ooms = 0  # out-of-memory errors read (see `_SKIPPED_BATCHES`)
        self._first_oom: int | None = None  # the step of the first
        self._records_seen = 0  # records with figures: a position where no step is printed
        self._restored_epoch: int | None = None  # ... from this epoch
        self._restored_after: float | None = None  # ... when it stood at this epoch
        self._ranks = RankPace()  # every rank's step and pace, for stragglers
        self._places: dict[int, str] = {}  # where each rank ran, as its records said
        self.unreachable = False
        # The steps are indices from 0 (a tracker's): the steps completed are step + 1.
        self.steps_from_zero = False
        self._idle_polls = 0
        self._restart_note = ""
        # Why a tracker's closing history holds several trainings (its counter fell back).
        self._history_restarted: str | None = None
        self._cleared_by_restart: list[AnomalyType] = []
        self.notices: list[str] = []  # for people, drained by the watch loop
        self._phase: str | None = None  # what the run was doing at the end of the last read
        self._phase_since = started
        self._longest_phase: dict[str, float] = {}  # the longest save, eval, ... seen
        self._age_noted = False
        self._reported: TerminalState | None = None
        self._service_state: str | None = None
        self._epochs_again = False  # in a log without a step, the epochs went back once
        self._stopped_early = False  # the latest completion was the run's early stop
        # A record of figures none of them training's came after the last step (the epoch's
        # evaluation): the loop got past its last print (see `reached_target`).
        self._evaluated_after_step = False
        self.service_state_changed = False  # at the last poll
        self.service_commands: tuple[str, ...] = ()
        self.cancel_command: str | None = None

    @property
    def state(self) -> TerminalState:
        return self.lifecycle.state

    @property
    def step(self) -> int | None:
        return self.series.step

    # --- one poll ------------------------------------------------------------------------

    def observe(self, snapshot: Snapshot, ctx: PollContext) -> list[Anomaly]:
        """Take in one snapshot; returns the anomalies it raised."""
        lifecycle = self.lifecycle
        pending_before = lifecycle.crash_pending
        advances_before = self.series.advances
        if snapshot.log.lr_schedule:
            # Before the records: the schedule a header named applies to all of them (a
            # --once read gives the header and the points in one snapshot).
            self.series.lr_schedule = snapshot.log.lr_schedule
        self.absorb(snapshot.log.records)
        if any(r.step is not None for r in snapshot.log.records):
            # Said by whoever delivered the latest steps (a tracker, or the log it fell
            # back on); a snapshot with no new step leaves it as it was.
            self.steps_from_zero = snapshot.log.steps_from_zero
        if snapshot.degraded is not None:
            self.unreachable = True
            self.ledger.raise_(AnomalyType.CONNECTIVITY, self.step, snapshot.degraded)
        if snapshot.log.formats:
            self.formats = snapshot.log.formats
        if snapshot.log.reading is not None:
            self.reading = snapshot.log.reading
        phase_before = self._phase
        self._enter_phase(snapshot.log.phase, ctx.now)
        if snapshot.service.evidence_url:
            self.evidence_url = snapshot.service.evidence_url
        view = snapshot.process.view
        progressed = self.progress.observe(ProgressSample(
            now=ctx.now, step=self.step, advanced=self.series.advances > advances_before,
            metrics_without_steps=self.step is None
            and any(r.metrics for r in snapshot.log.records),
            cpu_seconds=view.cpu_seconds if view is not None else None,
            log_visible=view is None or self.series.saw_training, baseline=ctx.baseline,
            activity=snapshot.service.activity))
        if not ctx.baseline:  # the baseline looks back; only time watched counts
            self.efficiency.poll(max(0.0, ctx.now - self._last_poll_at), progressed)
        self._last_poll_at = ctx.now
        # A rate measured across a save or an evaluation is not the training's rate.
        paused = phase_before in ("save", "eval", "setup")
        if progressed and self.step is not None and not paused:
            self._signals(self.series.measured_rate(self.progress.poll_rate)
                          if self.progress.poll_rate else [])
        self._from_service(snapshot)
        if snapshot.service.time_limit is not None and lifecycle.running:
            self._check_deadline(snapshot.service.time_limit)
        reported = snapshot.service
        if reported.run_state is not None and reported.run_state is not self._reported:
            self._reported = reported.run_state
            self._ended(lifecycle.on_reported(reported.run_state, reported.run_state_detail,
                                              reported.run_state_source or "the service",
                                              self.step, self.series.target_steps))
        if view is not None:
            if not view.alive:
                self._ended(lifecycle.on_process_gone(view.exit, view.oom_killed, self.step,
                                                      self.series.target_steps))
        elif snapshot.process.alive is not True:
            quiet_for = snapshot.log.quiet_for or 0.0
            grace = quiet_for >= self.rules.crash_grace_seconds
            if (ctx.final or grace) and lifecycle.running and not lifecycle.crash_pending \
                    and not lifecycle.said_finished:
                # The log stopped where the run's configured early stop stops it, with
                # nothing said (a script that breaks out of its loop silently, then
                # tests): the early stop's end, as if it had said so.
                why = self.series.stopped_by_patience()
                if why is not None:
                    self._stopped_early = True
                    self._ended(lifecycle.on_event(
                        LogEvent(EventKind.COMPLETED, why, EARLY_STOP), self.step))
            self._ended(lifecycle.settle_from_log(
                step=self.step, reached=self.series.reached_target(
                    counted_from_zero=self.steps_from_zero,
                    interval=lifecycle.step_interval if self._evaluated_after_step else 1)
                or self.series.planned_epochs_done(),
                confirm_pending=ctx.final or grace or (
                    pending_before and not progressed and not lifecycle.pending_unsure),
                # The log stopped moving: a poll without progress *and* without new
                # lines (a log babysit reads no progress from is quiet at every poll,
                # and may be printing the traceback after its own "done").
                settled=(ctx.final or (self.progress.quiet_polls >= 1
                                       and not snapshot.log.new_lines)
                         or snapshot.process.alive is False or grace),
                target=(plan := self._plan_of_steps()), position=self._plan_in_epochs(plan)))
            if lifecycle.running and snapshot.log.writer_on_host is False \
                    and quiet_for >= self.rules.abandoned_log_seconds:
                self._ended(lifecycle.on_log_abandoned(
                    f"the log was last written {format_duration(quiet_for)} ago and no "
                    f"process on this machine has it open for writing", self.step))
        if lifecycle.running and not lifecycle.crash_pending:
            self._check_stall(snapshot, ctx)
        if snapshot.process.gpu is not None:
            util = snapshot.process.gpu.util_percent
            self._gpu_sample(util if isinstance(util, (int, float)) else None,
                             snapshot.process.alive)
        fresh = self.ledger.take_fresh()
        for anomaly in fresh:
            self.curves.pin(anomaly.step)
        return fresh

    def _patience_spent(self) -> bool:
        """The run's main evaluation ends as early stopping ends it (rules/last_weights)."""
        main = self.series.main_eval_values()
        return main is not None and patience_spent(main[1], main[2])

    def _weigh_against_early_stop(self) -> None:
        """Each open evaluation decline the run's own early stop ended on, as early
        stopping is meant to: its patience ran out a few evaluations after the metric's
        best, and its last values are still near that best (a five-seed sweep's `Breaking
        due to early stopping at epoch 101`, its validation loss 6.954 against its best
        6.925). Resolved: the run stopped on it. One further from its best stays open: the
        last weights, not the best, are what the run delivers (SpeedTransformer's 0.63
        against its best 0.57, seven epochs after it)."""
        evals = self.series.recent_evals(_EVAL_WINDOW)
        for anomaly in self.ledger.unresolved():
            values = evals.get(anomaly.key) if anomaly.type is AnomalyType.EVAL_DEGRADATION \
                else None
            direction = evaluation_direction(anomaly.key)
            if values and patience_spent(values, direction) \
                    and _near_best(values, direction, _NEAR_BEST * self.rules.eval_min_worsening):
                self.ledger.resolve(anomaly.type, "the run stopped early on it, its last "
                                                  "evaluation still near its best", anomaly.key)

    def _plan_of_steps(self) -> int | None:
        """The planned total a completion is checked against: none for a log whose
        progress is the records babysit counted (record 1 of a plan of 6,250 optimizer
        steps says nothing of how far the run got)."""
        reading = self.reading
        if reading is not None and reading.progress == "record":
            return None
        series = self.series
        if series.total_epochs and series.epoch is not None \
                and series.epoch >= series.total_epochs:
            # Its epochs counted to their planned total (OpenPCDet's outer `epochs: 100%|
            # 11/11` bar over an inner `train: 1058/1856` one): the steps counted were an
            # epoch's, and the plan is done whatever they say.
            return None
        return series.target_steps

    def _short_of_plan(self) -> bool:
        """Whether the run stands well short of its plan, in steps or, for a log that
        prints none, in epochs (an iTransformer's `epoch  69/150`)."""
        steps = self._plan_of_steps()
        if premature(self.step, steps):
            return True
        epochs = self._plan_in_epochs(steps)
        return epochs is not None and premature(epochs.done, epochs.planned)

    def _plan_in_epochs(self, plan_of_steps: int | None) -> PlanPosition | None:
        """Where a log that prints no step stands against the epochs it planned (Keras'
        `Epoch 125/1000` lines, then `Final validation …: 47.78%`): a completion said at
        epoch 125 of 1000 is no plan done. None where the steps and their plan say it, or
        where the run said it stopped on purpose (a time-to-train run's `run_stop` with
        `status: success` at epoch 41 of 128: its quality target was its plan)."""
        series = self.series
        if plan_of_steps is not None or not series.total_epochs \
                or series.planned_epoch is None or self.lifecycle.stopped_on_purpose \
                or (self.step is not None and not (
                    self.reading is not None and self.reading.progress == "record")):
            return None
        # (as far as it may have trained: a loop printing every 40th epoch, `Epoch
        # [161/200]` last, trains on to 200 unseen)
        return PlanPosition(math.floor(series.planned_epoch) + series.epoch_gap - 1,
                            series.total_epochs, "epoch")

    def _check_deadline(self, limit: TimeLimit) -> None:
        warning = deadline_warning(limit, self.step, self.series.target_steps,
                                   self.progress.steps_per_second(),
                                   self.checkpoints.save_steps())
        if warning is not None:
            self.ledger.raise_(AnomalyType.DEADLINE, self.step, warning.description,
                               "deadline")
        self.weigh_slowdown()

    def weigh_slowdown(self) -> None:
        """A slowdown is quality debt (medium) until it threatens the run: with a time
        limit the run will now reach before its planned end, it is high."""
        if self.ledger.is_open(AnomalyType.DEADLINE, "deadline") \
                and self.ledger.any_open((AnomalyType.SLOW_THROUGHPUT,)):
            self.ledger.escalate(AnomalyType.SLOW_THROUGHPUT, Severity.HIGH,
                                 "at this pace the run reaches its time limit before its "
                                 "planned end")

    def _from_service(self, snapshot: Snapshot) -> None:
        """What a cloud service says of the run itself. Its problems are raised before
        its end state is taken in, so a failed job is explained by its cause, not by a
        second, vaguer anomaly."""
        for found in snapshot.service.raised:
            self.ledger.raise_(found.type, self.step, found.description, found.key,
                               found.severity)
        previous, self._service_state = self._service_state, snapshot.service.service_state
        self.service_state_changed = (previous is not None and snapshot.service.service_state
                                      is not None and snapshot.service.service_state != previous)
        if snapshot.service.commands:
            self.service_commands = snapshot.service.commands
        if snapshot.service.cancel_command:
            self.cancel_command = snapshot.service.cancel_command

    def absorb(self, records: Iterable[Record]) -> None:
        """Apply records in log order: events from every rank, steps and metrics from
        the primary one."""
        series = self.series
        efficiency = self.efficiency
        for record in records:
            if table_after_the_end(record, self.lifecycle.said_finished, series.step):
                if not record.events:
                    continue
                record = replace(record, step=None, metrics={})
            elif restated_after_the_end(record, self.lifecycle.said_finished, series.step):
                record = replace(record, step=None)  # (its figures: the result's, said again)
            if record.facts:
                efficiency.observe(record)
                series.note_facts(record.facts)
            if series.is_primary(record):
                if record.metrics:
                    efficiency.observe(record)
                    if record.step is not None and self._keep_history:
                        self.curves.add(record.step, record.metrics)
                # The step first: text glued after a progress bar (a traceback, a launcher
                # stopping) happened after the step the bar shows.
                epoch_before, runs_before = series.epoch, series.new_runs
                change, signals = series.absorb(record)
                if series.new_runs != runs_before:
                    self.ledger.new_run()
                    self._records_seen = 0  # (positions are the new run's own)
                if record.metrics:
                    self._records_seen += 1
                if series.new_runs != runs_before \
                        and self.ledger.any_open((AnomalyType.EVAL_DEGRADATION,)):
                    # A new run from scratch (the next fold, seed or configuration): the
                    # evaluations judged worse were the run before's, or the new run's
                    # first against them; the new run is judged on its own.
                    self.ledger.resolve_type(AnomalyType.EVAL_DEGRADATION,
                                             "a new run began from scratch; what got worse "
                                             "was judged across the run before it")
                step = series.step  # the run's step (self.step), read once a record
                if step is None and record.epoch is not None and epoch_before is not None:
                    self._epoch_moved(math.floor(epoch_before), math.floor(record.epoch),
                                      record.metrics)
                if change.went_back and step is not None:
                    if step <= _FROM_SCRATCH and self.ledger.any_open(_NOT_LEARNING):
                        # A launch from the start: the launch before it did not learn,
                        # and this one is judged on its own points (the rules raise it
                        # again if it does not learn either).
                        self.ledger.resolve_type(
                            AnomalyType.NOT_LEARNING,
                            f"the run started again from step {step}; what did not learn "
                            f"was an earlier launch")
                    self._resumed_from = step
                elif change.advanced and self._resumed_from is not None \
                        and self.ledger.any_open(_NAN):
                    self._trained_past_nan(record)
                moved = (change.advanced or change.went_back) and step is not None
                if moved:
                    self._evaluated_after_step = False
                elif record.metrics and not _trains(record.metrics):
                    self._evaluated_after_step = True
                if step is None and record.step is None and self.lifecycle.crash_pending \
                        and _trains(record.metrics) \
                        and self.lifecycle.on_record(stamped=record.time is not None) \
                        and self.ledger.any_open(_RECOVERS):
                    for kind in _RECOVERS:
                        self.ledger.resolve_type(kind, "training went on",
                                                 keep=_SKIPPED_BATCHES)
                if moved and self.lifecycle.on_step(step or 0, series.target_steps,
                                                    stamped=record.time is not None,
                                                    bare=_bar_tick(record)) \
                        and self.ledger.any_open(_RECOVERS):
                    for kind in _RECOVERS:
                        self.ledger.resolve_type(kind, f"training went on to step {step}",
                                                 keep=_SKIPPED_BATCHES)
                    if self._ooms >= _SKIPPED_AT_LEAST:
                        self._skipping_over(step)
                if change.advanced and self.ledger.is_open(AnomalyType.CRASH, "thread"):
                    # Training after a helper thread died: it did not need the thread.
                    # (Asked first: this runs on every record.)
                    self.ledger.resolve(AnomalyType.CRASH, f"training went on to step "
                                        f"{step} without the thread", "thread")
                if signals:
                    self._signals(signals, record.source)
            elif record.metrics:
                self._other_rank(record)
            for event in record.events:
                self._on_event(event, record.rank, record.step, record.source)
            if record.rank is not None:
                if record.source and record.source != self._places.get(record.rank, ""):
                    self._placed(record.rank, record.source)
                self._ranks.observe(record)
        if len(self._ranks.steps) > 1:
            self._check_stragglers()
        if self.step is not None and self.lifecycle.running:
            late = self.checkpoints.overdue(self.step)
            if late is not None:
                cadence, last = late
                self.ledger.raise_(AnomalyType.CHECKPOINT_FAILURE, self.step, (
                    f"checkpoint overdue: the run saved every ~{cadence} steps, but none since "
                    f"step {last} (now at step {self.step}); a save that fails or stops "
                    f"silently leaves nothing to resume from"), "overdue")

    def _epoch_moved(self, before: int, now: int, metrics: Mapping[str, float]) -> None:
        """In a log without a step, the epochs show training going on (past a crash, a
        relaunch that starts again). Epochs that went back and then climb again with a
        training loss are a new run's training, past any completion said before them
        (a script's next model, after the last one's `Early stopping at epoch 35`)."""
        if now < before:
            self._epochs_again = True
        again = self._epochs_again and now > before and any(
            "loss" in name and not is_eval_metric(name) for name in metrics)
        if now != before and self.lifecycle.on_epoch(again) \
                and self.ledger.any_open(_RECOVERS):
            for kind in _RECOVERS:
                self.ledger.resolve_type(kind, f"training went on to epoch {now}",
                                         keep=_SKIPPED_BATCHES)

    def _placed(self, rank: int, source: str) -> None:
        """Where a rank ran became known (or changed): findings already made on it name
        it so too."""
        old = rank_named(rank, self._places.get(rank, ""))
        self._places[rank] = source
        new = rank_named(rank, source)
        if old and old != new:
            self.ledger.rename(old, new)

    def _check_stragglers(self) -> None:
        """A rank whose step falls behind the others' beyond what interleaved printing
        explains, or whose steps take longer than theirs beyond their spread, is a
        straggler: in synchronous training the whole run waits for it. Resolved once
        it catches up."""
        for found in self._ranks.judge():
            if found.behind:
                self.ledger.raise_(AnomalyType.STRAGGLER, found.step, found.description,
                                   found.key)
            else:
                self.ledger.resolve(AnomalyType.STRAGGLER, found.description, found.key)

    def _trained_past_nan(self, record: Record) -> None:
        """A run that went back to a checkpoint saved before its NaN and trained past the
        step of the NaN with finite values recovered from it: the NaN is resolved, with
        how (the verdict then rests on the rest of the evidence)."""
        values = record.metrics.values()
        total = sum(values)  # finite: every value is (the usual case, in one C loop)
        if (total - total != 0 and any(not math.isfinite(v) for v in values)) \
                or self.step is None:
            return
        for anomaly in self.ledger.unresolved():
            if anomaly.type is AnomalyType.NAN_INF and anomaly.step is not None \
                    and self._resumed_from is not None and self._resumed_from < anomaly.step \
                    < self.step:
                self.ledger.resolve(AnomalyType.NAN_INF, (
                    f"the run resumed from step {self._resumed_from} (before the NaN) and "
                    f"trained past step {anomaly.step} with finite values (now step "
                    f"{self.step})"), anomaly.key)

    def _other_rank(self, record: Record) -> None:
        """Another rank's metrics do not make the run's series (each rank prints its own,
        often identical, losses), but a non-finite value on any rank is the run's: named
        with that rank and its own step."""
        metrics = record.metrics
        # Judged as the rank's own records would be (see rules.nonfinite_roles): a
        # statistic over an empty set is not a broken rank.
        bad = {k: v for k, v in metrics.items() if not math.isfinite(v)
               and severity_of(k, v, metrics)[0] is Severity.BLOCKER}
        if bad:
            values = ", ".join(f"{k}={v}" for k, v in sorted(bad.items())[:6])
            self.ledger.raise_(AnomalyType.NAN_INF, record.step if record.step is not None
                               else self.step, f"non-finite metric on "
                               f"{rank_named(record.rank, record.source)}: {values}",
                               f"rank{record.rank}")

    def _signals(self, signals: Iterable[Signal], source: str = "") -> None:
        for signal in signals:
            if isinstance(signal, Raise):
                where = f"{source}: " if source else ""
                self.ledger.raise_(signal.type, self.step, where + signal.description,
                                   signal.key, signal.severity, signal.severity_at_end)
            elif isinstance(signal, Reassess):
                self.ledger.reassess(signal.type, signal.key, signal.severity, signal.why)
            else:
                self.ledger.resolve(signal.type, signal.how, signal.key)

    def _on_event(self, event: LogEvent, rank: int | None = None,
                  step: int | None = None, source: str = "") -> None:
        rule = EVENT_RULES.get(event.kind)
        if event.kind is EventKind.ONE_CLASS and event.detail == ANSWERED:
            rule = None
            self.ledger.resolve(AnomalyType.NOT_LEARNING, "a later evaluation's per-class "
                                "accuracies tell the classes apart", "one class")
        if event.kind is EventKind.CRASH_LOOP and event.detail == GOT_THROUGH:
            rule = None
            self.ledger.resolve(AnomalyType.CRASH, "a start of the run trained past its "
                                "first record", "crash loop")
        if rule is not None:
            key = "save" if rule.type is AnomalyType.CHECKPOINT_FAILURE else rule.key
            named = rank_named(rank, source)
            where = f"{named}: " if named else ""
            # A failure on another rank is labelled with that rank's own step.
            # (the parser's step is the last any rank printed: the rank's own is its last).
            at = self._ranks.steps.get(rank, step) if rank is not None else None
            at = at if at is not None else self.step
            severity = rule.severity
            if event.kind is EventKind.THREAD_FAILED and self.lifecycle.said_finished:
                severity = Severity.LOW  # a writer thread torn down at exit, after the end
            self.ledger.raise_(rule.type, at, f"{where}{rule.title}: {event.line}", key,
                               severity)
            if event.kind is EventKind.OOM:
                self._skipping(at)
        if event.kind is EventKind.COMPLETED and event.detail == SUMMARY \
                and self._short_of_plan() and self._patience_spent():
            event = replace(event, detail=EARLY_STOP)
        if event.kind is EventKind.COMPLETED:
            self._stopped_early = event.detail == EARLY_STOP
        self._ended(self.lifecycle.on_event(event, self.step))
        blocked = self.ledger.has_open_blocker()
        if event.kind is EventKind.CHECKPOINT_SAVED:
            self.checkpoints.saved(event.detail, self.step, blocked, self.series.main_eval(),
                                   (self.ledger.raised, self._records_seen))
            for key in ("save", "overdue"):
                self.ledger.resolve(AnomalyType.CHECKPOINT_FAILURE,
                                    f"a later checkpoint was saved ({event.detail})", key)
        elif event.kind is EventKind.CHECKPOINT_ERROR:
            self.checkpoints.failed(event.detail)
        elif event.kind is EventKind.DISK_FULL and event.detail:
            self.checkpoints.failed(event.detail)  # the file it could not write
        elif event.kind is EventKind.BEST_CHECKPOINT:
            self.checkpoints.named_best(event.detail, blocked, self.step,
                                        (self.ledger.raised, self._records_seen))
        elif event.kind is EventKind.BEST_RESTORED \
                and (self.series.advances or self.series.epoch is not None):
            # (not before any training: that is another run's best, fine-tuned from)
            self._restored_best = f"epoch {event.detail}" if event.detail else "its best"
            self._restored_epoch = int(event.detail) if event.detail.isdecimal() else None
            self._restored_after = self.series.epoch
        elif event.kind is EventKind.HISTORY:
            self._history(event)
        elif event.kind is EventKind.NEW_STAGE:
            self.series.new_epoch = True
            if event.detail == TRAINING_STAGE_PASSED:
                self.series.passed_training_stage = True
            elif event.detail == OBJECTIVE_CHANGED:
                self.series.objective_changed()

    def _skipping(self, step: int | None) -> None:
        """Another out-of-memory error: many, on a share of the steps, and the run goes on
        without the batches that did not fit (see `_SKIPPED_BATCHES`)."""
        self._ooms += 1
        if self._first_oom is None:
            self._first_oom = step
        if self._ooms < _SKIPPED_AT_LEAST or self.ledger.is_open(AnomalyType.OOM,
                                                                 _SKIPPED_BATCHES):
            return
        share = self._skipped_share(step)
        if share is not None and share < _SKIPPED_SHARE:
            return
        self.ledger.raise_(AnomalyType.OOM, step,
                           f"{self._ooms} out-of-memory errors"
                           + (f", on {share:.1%} of the steps since the first" if share else "")
                           + ": each batch that did not fit was skipped, so the model does not "
                           "train on the largest ones (the longest sequences, the biggest "
                           "images); lower the batch size or cap its tokens per batch",
                           _SKIPPED_BATCHES, Severity.HIGH)

    def _skipped_share(self, step: int | None) -> float | None:
        """Out-of-memory errors per step since the first (None: no steps to count by)."""
        if step is None or self._first_oom is None:
            return None
        return self._ooms / max(step - self._first_oom + 1, 1)

    def _skipping_over(self, step: int | None) -> None:
        """Training went on: the skipped batches are a finding no longer once they are
        few beside the steps since the first (a burst early in a long run)."""
        share = self._skipped_share(step)
        if share is not None and share < _SKIPPED_SHARE / 2:
            self.ledger.resolve(AnomalyType.OOM, f"training went on to step {step}; the "
                                f"{self._ooms} skipped batches are {share:.2%} of its steps",
                                _SKIPPED_BATCHES)

    def _history(self, event: LogEvent) -> None:
        """A tracker's whole-run picture of the training loss that shows no learning (a
        log that printed nothing per step has nothing else to judge it by)."""
        name, _, heights = event.detail.partition(" ")
        restarted = restarted_counter(name, heights)
        if restarted is not None:
            # The rows come in the tracker's (alphabetical) order: the loss's may be
            # judged already, before the counter that says it is no one curve.
            self._history_restarted = restarted
            self.ledger.resolve(AnomalyType.NOT_LEARNING, restarted, "history")
            return
        if len(self.series.recent_losses(_HISTORY_BARS)) >= _HISTORY_BARS:
            # The log printed the loss at least as often as the sparkline has bars: its
            # points were judged one by one, against their own noise, and the sparkline's
            # 8 heights of a noisy loss (a diffusion model's, whose per-step loss varies
            # twentyfold with the sampled timestep) say less than they did.
            return
        found = unlearned_history(name, heights)
        if found is not None and self._history_restarted is None:
            self.ledger.raise_(AnomalyType.NOT_LEARNING, self.step,
                               f"not learning: {found}", "history")

    def _ended(self, ending: Ending | None) -> None:
        if ending is None:
            return
        if ending.state is not TerminalState.RUNNING:
            # An ended run is not stalled: how it ended is the story now.
            self.ledger.resolve_type(AnomalyType.STALLED,
                                     f"the run ended ({ending.state.value})")
        if ending.futile_restart:
            note = (f"{self._restart_note} — but the new attempt ended without training "
                    f"({ending.futile_restart}); if the restart command hands the run to a "
                    f"scheduler or a container (sbatch, docker run -d, nohup … &), babysit "
                    f"cannot follow it")
            for kind in self._cleared_by_restart:
                self.ledger.reopen_latest(kind, "the restart did not help")
                self.ledger.annotate(kind, note)
        found = ending.anomaly
        if found is None:
            return
        if found.type is AnomalyType.CRASH:
            if ending.source is EndingSource.REPORTED \
                    and self.ledger.any_open((*_NAN, AnomalyType.JOB_FAILURE)):
                # A service's FAILED after a NaN (the NaN is the story), or one the service
                # already reported as a failed job (with its cause, if the logs named one).
                return
            # A cause (an OOM, a CUDA or NCCL error) says why; the crash says that the
            # process died of it (an OOM can be caught and the batch skipped), and both
            # are reported. A NaN guard that stopped the loop is no crash: the NaN is it.
            explained = next((t for needle, t in CAUSE_BY_EXCEPTION
                              if needle in ending.evidence), None)
            if explained is AnomalyType.NAN_INF and self.ledger.any_open(_NAN):
                return
            if explained is not None and self.ledger.any_open((explained,)):
                found = replace(found, description=_died_of(found.description, explained,
                                                            ending.evidence))
        self.ledger.raise_(found.type, ending.step, found.description, found.key,
                           severity=found.severity)
        if found.resolved:
            # A failure a later launch replaced: the run's history. What it raised when
            # it happened (an OOM, a CUDA error) was that launch's too.
            self.ledger.resolve(found.type, found.resolved, found.key)
            for kind in _ENDED_WITH_A_LAUNCH:
                self.ledger.resolve_type(kind, f"an earlier launch's: {found.resolved}")

    def _enter_phase(self, phase: str | None, now: float) -> None:
        if phase is None or phase == self._phase:
            return
        if self._phase in ("save", "eval", "setup"):
            took = now - self._phase_since
            self._longest_phase[self._phase] = max(self._longest_phase.get(self._phase, 0.0),
                                                   took)
        self._phase, self._phase_since = phase, now

    def _check_stall(self, snapshot: Snapshot, ctx: PollContext) -> None:
        cadence, source = self.series.logged_cadence(), "from its timestamps"
        if cadence is None:
            cadence, source = self.progress.observed_cadence(), "seen between polls"
        phase = self._phase if self.step is not None or self._phase == "setup" else None
        allowance = stall_allowance(
            interval=ctx.interval, longest_gap=self.progress.longest_gap, cadence=cadence,
            cadence_source=source, phase=phase,
            longest_phase=self._longest_phase.get(phase or "", 0.0), rules=self.rules)
        if ctx.baseline:
            quiet = snapshot.log.quiet_for
            if quiet is None or quiet < allowance.seconds:
                return
            if cadence is None:
                # The file's age alone says nothing about a run that may log once an hour.
                if not self._age_noted:
                    self._age_noted = True
                    self.notices.append(
                        f"the log was last written {format_duration(quiet)} ago; it shows no "
                        f"timestamps to tell how often this run writes, so babysit does not call "
                        f"that a stall yet" + ("" if not ctx.log_only else
                                              " (pass --pid to watch the process too)"))
                return
            why = (f"the log has not been written for {format_duration(quiet)}, while this run "
                   f"wrote a progress line every ~{cadence:.3g}s ({source})")
        else:
            polls = self.progress.quiet_polls
            if polls < self.rules.stall_polls:
                return
            quiet = self.progress.quiet_for(ctx.now)
            if quiet < allowance.seconds:
                return
            why = (f"no training progress for {format_duration(quiet)} "
                   f"({count(polls, 'poll')}), beyond {allowance.why}")
        if snapshot.stall_hint:
            why += f"; {snapshot.stall_hint}"
        elif ctx.log_only and snapshot.process.alive is None:
            why += "; babysit cannot see the process (pass --pid to watch it too)"
        self.ledger.raise_(AnomalyType.STALLED, self.step, f"stalled: {why}")

    def _gpu_sample(self, util_percent: float | None, alive: bool | None) -> None:
        """Idle GPUs for `gpu_idle_polls` polls in a row while the process lives is an
        anomaly (high utilisation proves nothing)."""
        if util_percent is None or alive is not True:
            return
        if util_percent < self.rules.gpu_idle_percent:
            self._idle_polls += 1
            if self._idle_polls >= self.rules.gpu_idle_polls:
                self.ledger.raise_(AnomalyType.GPU_IDLE, self.step, (
                    f"the run's GPUs were under {self.rules.gpu_idle_percent:g}% utilisation "
                    f"for {count(self._idle_polls, 'poll')} while its process was alive (now "
                    f"{util_percent:.0f}%)"))
        else:
            self._idle_polls = 0
            self.ledger.resolve(AnomalyType.GPU_IDLE,
                                f"GPU utilisation back to {util_percent:.0f}%")

    # --- what happened outside the run ------------------------------------------------

    def unreachable_now(self, why: str) -> list[Anomaly]:
        self.unreachable = True
        self.ledger.raise_(AnomalyType.CONNECTIVITY, self.step, f"cannot reach the target: {why}")
        return self.ledger.take_fresh()

    def reachable_again(self) -> None:
        if self.unreachable:
            self.unreachable = False
            self.ledger.resolve(AnomalyType.CONNECTIVITY, "reachable again")

    def restarted(self, note: str, now: float) -> None:
        """babysit started the run again (a fix): a new attempt."""
        self._restart_note = note
        self.lifecycle.restarted()
        self.progress.restarted(now)
        open_now = self.ledger.open_types()
        self._cleared_by_restart = [k for k in _CLEARED_BY_RESTART if k in open_now]
        for kind in self._cleared_by_restart:
            self.ledger.annotate(kind, note)
            self.ledger.resolve_type(kind, note)

    def cancelled_by_user(self, note: str, problems: Iterable[AnomalyType]) -> None:
        self.lifecycle.cancelled_by_user(self.step)
        for kind in problems:
            self.ledger.annotate(kind, note)

    def reviewer_stopped(self, kind: AnomalyType, note: str) -> None:
        """A reviewer said STOP about an anomaly of a run that had already ended: the
        concern stands (at least high), there is nothing left to stop."""
        self.ledger.reopen_latest(kind, note)
        self.ledger.escalate(kind, Severity.HIGH, note)

    def annotate(self, kind: AnomalyType, note: str) -> None:
        """What was done about an open anomaly (a fix, a proposal), kept with it."""
        self.ledger.annotate(kind, note)

    def take_fresh(self) -> list[Anomaly]:
        """The anomalies raised since the last call, for this poll's report."""
        return self.ledger.take_fresh()

    def epoch_reported(self) -> None:
        """This poll's report carried the new epoch; the next poll's starts without it."""
        self.series.new_epoch = False

    def severities_at_end(self) -> None:
        """A problem still open when the run is over weighs more than one that might yet
        pass (a loss still diverging at the last step is a broken run)."""
        if self.lifecycle.running:
            return
        # (not learning judged high while the run went on: see `_never_learned_at_end`)
        judged_high = {a.key for a in self.ledger.unresolved()
                       if a.type is AnomalyType.NOT_LEARNING and a.severity is Severity.HIGH}
        kept = self._kept_from_before(AnomalyType.DIVERGENCE)
        best = self._kept_from_before(AnomalyType.EVAL_DEGRADATION)
        behind: str | None = None
        contradicted = self._final_test_contradicts()
        if contradicted is not None:
            # The test of the kept checkpoint undoes what keeping it was for.
            self.ledger.raise_(AnomalyType.EVAL_DEGRADATION, self.step, contradicted,
                               key="final test")
        elif best is not None and (behind := self._best_long_behind()) is not None:
            # The kept best is an early one and the run spent most of itself getting
            # worse: what it delivers is usable, the run was not (stays open, high).
            behind = f"the run kept its best checkpoint ({best}), but {behind}"
        elif (chooser := self._kept_at_another_best()) is not None:
            # The run kept the checkpoint its own selection metric was best at (a chest
            # X-ray ResNet's `New best AUROC: 0.7831`, `Saved best model`, at epoch 20 of
            # 25, as its val_loss rose): what it delivers is the best by that measure; the
            # other evaluation's decline is not the delivered model's.
            for anomaly in self.ledger.unresolved():
                if anomaly.type is AnomalyType.EVAL_DEGRADATION and anomaly.key != chooser:
                    self.ledger.resolve(AnomalyType.EVAL_DEGRADATION,
                                        f"the run kept the checkpoint its {chooser} was best "
                                        f"at", anomaly.key)
        elif self._restored_best is not None and (early := self._early_restore()) is not None:
            # Put back from early in a long run: what it delivers is usable, the rest of
            # the run was not (stays open, high), as for a kept best long behind; so when
            # the checkpoint it also kept is that early one.
            behind = early
        elif best is not None:
            # The run kept its best-evaluated weights from before the evaluation got
            # worse: what it delivers is the best, not the degraded last weights.
            self.ledger.resolve_type(AnomalyType.EVAL_DEGRADATION,
                                     f"the run kept its best checkpoint ({best}), written "
                                     f"before the evaluation got worse")
        elif self._restored_best is not None:
            # The trainer put its best weights back as it returned: the model it delivers
            # is the best one evaluated, not the worse last one.
            self.ledger.resolve_type(AnomalyType.EVAL_DEGRADATION,
                                     f"the run restored its best weights ({self._restored_best}) "
                                     f"before it ended")
        else:
            if self._stopped_early:
                self._weigh_against_early_stop()
            self._weigh_against_kept_best()
            self._final_evaluation_fell()
            self._ended_worse_than_early_best()
            self._collapsed_at_end()
        self._kept_last_weights()
        self._main_eval_at_best()
        held_out = nothing_held_out(self.series.metrics) \
            if self.lifecycle.state is TerminalState.SUCCEEDED else None
        if held_out is not None:
            self.ledger.raise_(AnomalyType.NOT_LEARNING, self.step, held_out,
                               key="nothing held out", severity=Severity.BLOCKER)
        random_policy = self.series.exploration_still_random()
        if random_policy is not None and self.lifecycle.state is TerminalState.SUCCEEDED:
            why, throughout = random_policy
            self.ledger.raise_(AnomalyType.NOT_LEARNING, self.step, why, key="exploration",
                               severity=Severity.BLOCKER if throughout else Severity.HIGH)
        floor = self.series.score_floor_at_end() \
            if self.lifecycle.state is TerminalState.SUCCEEDED else None
        if floor is not None:
            self.ledger.raise_(AnomalyType.NOT_LEARNING, self.step, floor,
                               key="score floor at end", severity=Severity.BLOCKER)
        self._never_learned_at_end(judged_high)
        first_best = self._first_epoch_restored() or self._stopped_on_first_eval()
        if first_best is not None:
            self.ledger.raise_(AnomalyType.NOT_LEARNING, self.step, first_best,
                               key="first epoch restored", severity=Severity.BLOCKER)
        relapse = self.series.loss_relapsed_at_end() \
            if not self.ledger.any_open((AnomalyType.DIVERGENCE,)) else None
        if relapse is not None:
            self.ledger.raise_(AnomalyType.DIVERGENCE, self.step, relapse,
                               key="relapsed at end", severity=Severity.BLOCKER)
        chosen = self.checkpoints.choice()
        for kind in self.ledger.open_types():
            at_end = entry(kind).severity_at_end
            why = "still open when the run ended"
            if kind is AnomalyType.EVAL_DEGRADATION and behind is not None:
                why = f"{why}; {behind}"
            elif kind is AnomalyType.EVAL_DEGRADATION and chosen is not None \
                    and not chosen.runs_own and chosen.why.startswith("best"):
                # (periodic saves: the best of them is on disk, the run delivers its last)
                why = (f"{why}; of its periodic saves, {chosen.path} ({chosen.why}) is the "
                       f"one to go back to")
            if kind is AnomalyType.EVAL_DEGRADATION:
                self._slight_declines(why)
            rise = self.series.loss_rise_over_best() \
                if kind is AnomalyType.DIVERGENCE else None
            if kind is AnomalyType.DIVERGENCE and kept is not None and (
                    rise is None or rise >= self.rules.divergence_small_rise):
                # The run kept its best weights from before the rise: the final weights
                # are spoiled, its deliverable is not (a strong risk, not a void run).
                at_end = Severity.HIGH
                why = f"{why}; its best checkpoint ({kept}) predates the rise"
                # (a collapse too, whatever its own raiser said of the end)
                self.ledger.hold_at_end(kind, COLLAPSE, why)
            elif rise is not None and rise < self.rules.divergence_small_rise:
                # A level a fifth above its best, far below where the run started: the
                # final weights are somewhat worse than the best ones, not spoiled (a
                # notice the verdict names, not a reason to hold the result back).
                for anomaly in self.ledger.unresolved():
                    if anomaly.type is kind and anomaly.severity is Severity.HIGH \
                            and anomaly.key != COLLAPSE:
                        # (a collapse is judged on its own summaries: its loss stands
                        # above where the run started, its accuracies fell by a third)
                        self.ledger.reassess(kind, anomaly.key, Severity.MEDIUM, (
                            f"{why}, its level {rise:.0%} above its best and below where "
                            f"the run started: the final weights are somewhat worse than "
                            f"its best, not broken"))
                # (what was lowered stays so: the end raises none below the catalogue's)
            self.ledger.escalate_at_end(kind, at_end, why)

    def _slight_declines(self, why: str) -> None:
        """An evaluation that declined from its best by a sliver of what the run gained
        (RotatE's validation MRR 0.3236 at its best, 0.3196 at its end, from 0.0009 at
        step 0: an eightieth of the gain, 1 % of the level): the final weights are
        somewhat worse than the best ones, not spoiled — a notice, kept at medium."""
        for anomaly in self.ledger.unresolved():
            if anomaly.type is not AnomalyType.EVAL_DEGRADATION \
                    or anomaly.severity.rank > Severity.MEDIUM.rank:
                continue
            back = self.series.eval_gave_back(anomaly.key)
            if back is not None and 0 <= back[0] <= _SLIGHT_SHARE_OF_GAIN \
                    and back[1] <= _SLIGHT_DROP:
                self.ledger.hold_at_end(AnomalyType.EVAL_DEGRADATION, anomaly.key, (
                    f"{why}; its latest gave back {back[0]:.0%} of what it gained from its "
                    f"first evaluation to its best, {back[1]:.1%} below that best: the "
                    f"final weights are slightly worse than the best ones, not spoiled"))

    def _never_learned_at_end(self, judged_high: set[str]) -> None:
        """Not learning still open once the run is over, made a blocker where what the run
        delivers never learned: a finding judged high while the run went on (a loss or
        score flat for the whole run, a grad norm of 0 throughout; `judged_high`, their
        keys before anything was judged at the end — one raised as a notice only becomes
        high), and, in a finished run, a held-out score at its floor on every evaluation
        to the end (a detector's `all 4 17 0 0 0 0` after each of its 100 epochs: a notice
        while a slow start could still leave it)."""
        finished = self.lifecycle.state is TerminalState.SUCCEEDED
        for anomaly in self.ledger.unresolved():
            if anomaly.type is not AnomalyType.NOT_LEARNING \
                    or anomaly.severity is Severity.BLOCKER:
                continue
            metric = floored_metric(anomaly.key)
            guessed = chance_metric(anomaly.key)
            if anomaly.key in judged_high:
                why = ("judged high while the run went on, still open when it ended: the "
                       "model it delivers never learned")
            elif finished and metric is not None and is_eval_metric(metric):
                why = (f"the run finished with {metric} still at its floor: the model it "
                       f"delivers gets nothing right on held-out data")
            elif finished and guessed is not None:
                why = (f"the run finished with {guessed} still at a constant guess's share: "
                       f"the model it delivers predicts one class for every input")
            else:
                continue
            self.ledger.reassess(AnomalyType.NOT_LEARNING, anomaly.key, Severity.BLOCKER, why)

    def _stopped_on_first_eval(self) -> str | None:
        """Why what a run that stopped itself early delivers is its first evaluation's
        model: no evaluation after its first improved on it, over `_FIRST_BEST_EVALS` or
        more (BasicSR's early stop, `Patience counter: 26/25`, its best PSNR 19.39 from
        the validation at iteration 2000 of 52000). None otherwise."""
        if self.lifecycle.state is not TerminalState.SUCCEEDED or not self._stopped_early:
            return None
        held = self.series.first_eval_held_best()
        if held is None or held[2] < _FIRST_BEST_EVALS or self.step is None \
                or held[3] is None or held[3] > _FIRST_SHARE * self.step:
            return None  # (an excerpt that began late shows no first evaluation)
        key, first, evaluations, _ = held
        return (f"not learning: {key} was best at the run's first evaluation ({first:.4g}) "
                f"and none of the {evaluations - 1} after it improved on it; the run stopped "
                f"itself on that, so the model it delivers is what its first stretch of "
                f"training made")

    def _first_epoch_restored(self) -> str | None:
        """Why what a finished run delivers is its first epoch's weights: it put back its
        best ones, and they are from its first epoch of many (PINNx's early stop at epoch
        501 of 1000, `Best val_loss: 30.98 at epoch 1`, `Restored best model from epoch
        1`): no evaluation after the first improved on it, whatever the training loss
        did. None otherwise."""
        found = self._restored_in_long_run()
        if found is None or found[0] > 1:
            return None
        restored, after = found
        return (f"not learning: the run restored its best weights from epoch {restored} after "
                f"{after:g} epochs: no evaluation after its first improved on it, so the "
                f"model it delivers is what one epoch of training made")

    def _main_eval_at_best(self) -> None:
        """A finished run whose main evaluation (the first it reported with a direction:
        a DPO fine-tune's `val_loss`) was at its best at its last evaluation or the one
        before: another evaluation that got worse (the same run's `val_ppl` of the chosen
        sequences, which preference training need not keep) is a notice, not a worse
        model (issue 24: a rise the validation metric does not share)."""
        main = self.series.main_eval_values()
        if main is None or self.lifecycle.state is not TerminalState.SUCCEEDED:
            return
        key, values, direction = main
        if len(values) < _MAIN_AT_BEST_EVALS:
            return
        best = max(v * direction for v in values)
        if max(v * direction for v in values[-2:]) < best:
            return
        for anomaly in self.ledger.unresolved():
            # (another evaluation metric of the run; not a test split's, what the model is
            # finally judged by, nor a finding about the final test itself)
            if anomaly.type is AnomalyType.EVAL_DEGRADATION and anomaly.key \
                    and anomaly.key != key and not anomaly.key.startswith(key) \
                    and "test" not in anomaly.key.lower() \
                    and self.series.eval_best(anomaly.key) is not None:
                self.ledger.resolve(AnomalyType.EVAL_DEGRADATION,
                                    f"the run's main evaluation, {key}, was at its best at "
                                    f"its end ({values[-1]:.4g}): {anomaly.key} is a "
                                    f"secondary figure", anomaly.key)

    def _restored_in_long_run(self) -> tuple[int, float] | None:
        """(the epoch a finished run put its best weights back from, the epoch it stood at
        then) when it trained `_FIRST_BEST_EPOCHS` epochs or more; None otherwise."""
        restored, after = self._restored_epoch, self._restored_after
        if self.lifecycle.state is not TerminalState.SUCCEEDED or restored is None \
                or after is None or after < _FIRST_BEST_EPOCHS:
            return None
        return restored, after

    def _early_restore(self) -> str | None:
        """Why the best weights a finished run put back come from early in it: from an
        epoch after its first (that one is `_first_epoch_restored`'s) but within its first
        `_FIRST_SHARE` of `_FIRST_BEST_EPOCHS` epochs or more (a precipitation ConvLSTM
        whose Keras early stop put back epoch 4 after 54: its validation loss only rose
        from there). None otherwise."""
        found = self._restored_in_long_run()
        if found is None or found[0] <= 1 or found[0] > _FIRST_SHARE * found[1]:
            return None
        restored, after = found
        return (f"the run restored its best weights (epoch {restored}), but no evaluation in "
                f"the {after - restored:g} epochs after it improved on it: the model it "
                f"delivers is what {restored} epochs of training made, and the rest of the "
                f"run only made the evaluation worse")

    def _final_test_contradicts(self) -> str | None:
        """A finished run whose final test scores below every evaluation it made
        (rules/final_test): by a little, after its evaluation got worse at some point;
        far, otherwise. Why, else None."""
        if self.lifecycle.state is not TerminalState.SUCCEEDED:
            return None
        evals = self.series.recent_evals(_EVAL_WINDOW)
        # (a decline that came back by itself, in a run that kept no best checkpoint, was
        # the evaluation's noise: the test is then held to the far drop)
        worse = [a for a in self.ledger.anomalies if a.type is AnomalyType.EVAL_DEGRADATION]
        if any(not a.resolved for a in worse) or (worse and self.checkpoints.choice()):
            return final_test_below_evaluations(evals)
        return final_test_below_evaluations(evals, FAR_DROP, scores_only=True)

    def _best_long_behind(self) -> str | None:
        """Why the main evaluation's best lies far behind the run's end (rules/
        last_weights), on a run that finished; None otherwise."""
        main = self.series.main_eval_values()
        chosen = self.checkpoints.choice()
        written = self.checkpoints.written_at(chosen.path) if chosen is not None else None
        if main is None or self.lifecycle.state is not TerminalState.SUCCEEDED:
            return None
        key, values, direction = main
        order = self.checkpoints.written_order(chosen.path) if chosen is not None else None
        if written is None and self.step is None and order is not None:
            # A log that prints no step: how far into its records the best was written.
            found = best_long_behind(values, direction, self.rules, order[1],
                                     self._records_seen, "record")
            return f"{key}: {found}" if found is not None else None
        if written is None or self.step is None:
            return None
        found = best_long_behind(values, direction, self.rules, written, self.step)
        return f"{key}: {found}" if found is not None else None

    def _final_evaluation_fell(self) -> None:
        """A run over whose last evaluation fell far below the level before it, with no
        best checkpoint kept (rules/last_weights `final_evaluation_fell`)."""
        if self.lifecycle.state not in (TerminalState.SUCCEEDED, TerminalState.ENDED):
            return
        main = self._main_eval_of_last_weights()
        if main is None:
            return
        key, values, direction = main
        found = final_evaluation_fell(values, direction)
        if found is not None:
            self.ledger.raise_(AnomalyType.EVAL_DEGRADATION, self.step, f"{key} {found}",
                               key)

    def _ended_worse_than_early_best(self) -> None:
        """A finished run, no best weights kept, whose main evaluation was at its best in
        the first quarter of its steps and whose last five (their median) are worse than
        that best by `_ENDED_WORSE` of it and twice its noise (an xLSTM on Shakespeare:
        `val loss 1.6577` at step 100, then 1.74 to 1.78 to step 3300 as the training loss
        fell 1.33 → 1.14): the weights it delivers are worse on unseen data than the ones it
        had early on, the rest of the run overfitting."""
        if self.lifecycle.state is not TerminalState.SUCCEEDED:
            return
        main = self._main_eval_of_last_weights()
        if main is None:
            return
        key, values, direction = main
        if "loss" not in key.lower() or direction > 0 or len(set(values)) * 4 < len(values) * 3:
            # (a held-out loss, a curve of its own: a score's evaluations across subjects,
            # folds or runs concatenated rise and fall with them, and a figure that takes
            # a few values over and over, an AP table's `IoU=0.50`, is no curve)
            return
        best = self.series.eval_best(key)
        if best is None or best[1] is None or self.step is None or len(values) < _LAST_EVALS \
                or best[1] > _EARLY_BEST_SHARE * self.step:
            return
        value = best[0]
        if not last_beyond(values, direction, value, _ENDED_WORSE):
            return
        self.ledger.raise_(AnomalyType.EVAL_DEGRADATION, self.step,
                           f"{key} ended at {values[-1]:.4g}, its last evaluations worse than "
                           f"its best {value:.4g} at step {best[1]}, early in the run, beyond "
                           f"their noise: the last weights, what it delivers, are worse on "
                           f"unseen data than those it had then (overfitting; keep the best "
                           f"checkpoint or stop early)", key)

    def _collapsed_at_end(self) -> None:
        """A run over, with no best weights kept, whose evaluation ran away and ends
        several times its best (DeepAR's `eval/rmse` from 4.9 to 21,000, held there to
        its last epoch): the weights it delivers are broken on unseen data, a blocker
        however flat the climb's new level (a medium while the run could still recover)."""
        if self.lifecycle.state not in (TerminalState.SUCCEEDED, TerminalState.ENDED):
            return
        for key, last, best in self.series.evals_collapsed_at_end():
            self.ledger.reassess(AnomalyType.EVAL_DEGRADATION, key, Severity.BLOCKER, (
                f"the run ended with {key} at {last:.4g}, {last / best:.0f}× its best "
                f"({best:.4g}), and kept no best weights: the model it delivers is broken "
                f"on unseen data"))

    def _main_eval_of_last_weights(self) -> tuple[str, list[float], int] | None:
        """The main evaluation's (key, values, direction) when the run delivers its last
        weights (no best checkpoint kept) and no degradation of it is open yet; None
        otherwise."""
        chosen = self.checkpoints.choice()
        if chosen is not None and "best" in chosen.why:
            return None
        main = self.series.main_eval_values()
        if main is None or self.ledger.is_open(AnomalyType.EVAL_DEGRADATION, main[0]):
            return None
        return main

    def _kept_last_weights(self) -> None:
        """A run that finished well short of its plan (its own early stop) with no best
        checkpoint kept, its last evaluations far from its best: the weights it kept are
        not its best (rules/last_weights)."""
        target, step = self.series.target_steps, self.step
        if self.lifecycle.state is not TerminalState.SUCCEEDED or not target or step is None \
                or step * 2 > target:
            return
        main = self._main_eval_of_last_weights()
        if main is None:
            return
        key, values, direction = main
        found = last_far_from_best(values, direction, self.rules)
        if found is not None:
            self.ledger.raise_(AnomalyType.EVAL_DEGRADATION, step,
                               f"{key} {found[1]}: the run stopped at step {step} of {target} "
                               f"and kept no best checkpoint, so its last weights are not its "
                               f"best", key)

    def _weigh_against_kept_best(self) -> None:
        """Each open evaluation finding against the best checkpoint the run kept, when
        not all of them came after it: one that began at or after the best was written
        is not in what the run delivers (resolved); a generalisation gap raised as a
        notice while the evaluation was at its best, and grown only because the
        evaluation left its best (not to a leak's ratio), is the notice it was for the
        kept weights (SpeedTransformer: the gap noted at epoch 34, its best
        written at epoch 42 and reloaded for the final test, the evaluation worse after)."""
        chosen = self.checkpoints.choice()
        if chosen is None or not chosen.runs_own:
            return
        written = self.checkpoints.written_at(chosen.path)
        if written is None:
            return
        where = f"the run kept its best checkpoint ({chosen.path}, step {written})"
        for anomaly in self.ledger.unresolved():
            if anomaly.type is not AnomalyType.EVAL_DEGRADATION or anomaly.step is None:
                continue
            if anomaly.step >= written:
                self.ledger.resolve(anomaly.type, f"{where}, written before the evaluation "
                                                  f"got worse", anomaly.key)
            elif GAP_AT_BEST in anomaly.description and \
                    anomaly.description.endswith(GAP_LEFT_BEST):
                self.ledger.reassess(anomaly.type, anomaly.key, Severity.LOW,
                                     f"{where}, from while the evaluation was at its best")

    def _kept_at_another_best(self) -> str | None:
        """The evaluation metric, not itself judged worse, that was at its best where the
        run wrote the checkpoint it keeps as its own best (the metric it selects by);
        None otherwise."""
        chosen = self.checkpoints.choice()
        if chosen is None or not chosen.runs_own or not chosen.why.startswith("best") \
                or self.lifecycle.state is not TerminalState.SUCCEEDED:
            return None
        written = self.checkpoints.written_at(chosen.path)
        if written is None:
            return None
        worse = {a.key for a in self.ledger.unresolved()
                 if a.type is AnomalyType.EVAL_DEGRADATION}
        return next((key for key in self.series.best_at(written) if key not in worse), None)

    def _kept_from_before(self, kind: AnomalyType) -> str | None:
        """The checkpoint the verdict names, when the run last wrote it at or before the
        step every open anomaly of this type began (`path, step N`); else None."""
        chosen = self.checkpoints.choice()
        if chosen is None or (kind is AnomalyType.EVAL_DEGRADATION and not chosen.runs_own):
            # (an evaluation's best among periodic saves is one the user has to go back
            # to: the run delivers its last weights, worse than its best)
            return None
        written = self.checkpoints.written_at(chosen.path)
        began = [a.step for a in self.ledger.unresolved() if a.type is kind]
        if written is not None and began and all(s is not None and s >= written for s in began):
            return f"{chosen.path}, step {written}"
        order = self.checkpoints.written_order(chosen.path)
        serials = self.ledger.open_serials(kind)
        if self.step is None and written is None and order is not None and serials \
                and all(s >= order[0] for s in serials):
            # A log that prints no step (`Epoch 12/50 - loss … val_loss …`, `Saved best
            # model to …`): the order things happened in says the same.
            return chosen.path
        return None


def _died_of(description: str, cause: AnomalyType, evidence: str) -> str:
    """A crash whose cause is already a finding of its own (an OOM that quotes the whole
    message): the crash names the exception and points at that finding, rather than
    printing the same message a second time."""
    said = f"the run died: {evidence}"
    closing = exception_line(evidence)
    if not description.startswith(said) or closing is None:
        return description  # (a death in words of its own says more than a name)
    return f"the run died of the {cause.value} above ({closing[0]}){description[len(said):]}"

