"""RunLifecycle: the one place that decides whether the run is going, and how it ended.

Evidence comes from everywhere — log lines (tracebacks, completion lines, steps), the
process and its exit status, a tracker's or cloud job's own state, restarts, the
user's cancel — and the rules below hold whatever the target:

- A run ends once, with an `Ending` that says how babysit knows (exit status, the
  service's reported state, a completion line, the log alone, the user).
- An ending the OS, the service or the user confirmed is final: a log line read after
  it was written before it, and cannot bring the run back. An ending read from a
  quiet log alone is not: if training goes on, something restarted the run.
- SUCCEEDED needs evidence: a completion line, the planned steps reached in the current
  attempt, an exit status 0 babysit saw, or the service's own word. A run that is over
  without any of these is ENDED ("outcome not confirmed"), never SUCCEEDED; so is one
  that printed its end-of-training summary well before its planned total.
- A restart by babysit starts a new attempt that has to earn its own ending; one that
  ends without training at all leaves the run where the previous attempt left it.

Each handler below decides what its evidence is (`transitions.Evidence`); where the
run then stands — running, failing, finishing, ended on the log's word, closed — is
the table in `transitions`, and nowhere else.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass, replace

from babysit.core.ending import (
    STOP_SIGNALS,
    Ending,
    EndingAnomaly,
    EndingSource,
    PendingFailure,
    after_banner,
)
from babysit.core.futile_restarts import UNCHANGED_RESTART, MemoryFailures
from babysit.core.transitions import Evidence, Phase, next_phase
from babysit.model import AnomalyType, EventKind, ExitInfo, LogEvent, Severity, TerminalState
from babysit.parsing.closing import CELL_ENDED, CLOSING, says_over
from babysit.parsing.endings import (
    AFTER_PLAN,
    AFTER_TRAINING,
    FINAL_SAVE,
    PLAN_REACHED,
    SAID,
)
from babysit.parsing.events import EARLY_STOP, NAN_GUARD_STOP, SUMMARY
from babysit.parsing.failures import CUT_OFF
from babysit.parsing.final_epoch import FINAL_EPOCH, LAST_EPOCH, LAST_PRINT
from babysit.parsing.loop_over import LOOP_LEFT, LOOP_OVER, SHELL_BACK
from babysit.parsing.mlperf import RUN_STOP
from babysit.parsing.runner_exits import runner_exit
from babysit.parsing.scheduler_cancels import restates_cancel
from babysit.parsing.signal_reports import ABSEIL_STOP
from babysit.parsing.start_failures import NEXT_COMMAND

# What an ending is lives in `ending`; its callers know it from here.
__all__ = ["Ending", "EndingAnomaly", "EndingSource", "RunLifecycle", "premature"]

# Failures that end a process when nothing follows them: an OOM, a CUDA error, a
# collective that timed out (the NCCL watchdog takes the process down).
# What a stop itself makes a run print before its own traceback (a peer's interrupt, a
# pipe or connection closed under it, a worker killed by the signal): no failure before it.
# A Python exception's own closing line (`RuntimeError: DataLoader worker … exited`), not
# a logger's report of a worker's exit.
_RAISED = re.compile(r"[A-Za-z_][\w.]*(?:Error|Exception)\b")
_STOP_ECHOES = re.compile(r"Interrupt|BrokenPipe|ConnectionReset|EOFError|"
                          r"killed by signal|SystemExit")



def _echo(event: LogEvent) -> bool:
    """Whether an exception is one a stop or a peer's death makes a process print."""
    return bool(_STOP_ECHOES.search(event.detail or event.line))


_FATAL = (EventKind.OOM, EventKind.CUDA_ERROR)
# Steps short of the planned total a completion may be printed at: a run logs every so
# many steps, so its last logged step is a little below the total.
_NEAR_END = 0.98
# The run's own word that its training is over, said this near a planned total babysit
# worked out (epochs times one epoch's batches): the plan the script itself kept may be
# a few batches shorter (GluonNLP's `Finish training step: 389`, its last epoch cut at
# batch 60 of 82 to make the 389 updates it planned, against 5 × 82 = 410).
_SAID_NEAR_END = 0.9


# Completion lines that end a run wherever it stands (see `parsing.events`).
# (MLPerf's `run_stop` with `status: success`: the run reached its quality target, which
# is a time-to-train run's plan, however few of its budgeted steps it took)
_DELIBERATE = (EARLY_STOP, FINAL_SAVE, FINAL_EPOCH, LAST_EPOCH, PLAN_REACHED, RUN_STOP)
# Of those, the ones that say the run's own plan was done (its outer counter at its total,
# or its own word that it reached it).
_AT_PLAN = (FINAL_EPOCH, LAST_EPOCH, PLAN_REACHED, RUN_STOP)
# Evidence that the run is over with nothing said of how: ENDED once the log stops, never
# SUCCEEDED, and the weakest of all (it never hides a completion read before it).
_UNCONFIRMED = (LAST_PRINT, LOOP_OVER, LOOP_LEFT, NEXT_COMMAND, NAN_GUARD_STOP, SHELL_BACK)
# Of those, the loop seen over: by what it did last, or by the shell taking the terminal back.
_SEEN_OVER = (LOOP_OVER, LOOP_LEFT, SHELL_BACK)


@dataclass(frozen=True)
class PlanPosition:
    """Where a run stands against its plan, in the unit the plan was announced in: steps,
    or epochs for a log that prints no step (Keras' `Epoch 125/1000` lines)."""

    done: int | None
    planned: int | None
    unit: str = "step"


def premature(step: int | None, target: int | None) -> bool:
    """Whether a run at `step` is well short of its planned total. A counter that starts
    at 0 ends one short of it (detectron2's `iter: 39` of `MAX_ITER: 40`), however small
    the plan."""
    return step is not None and target is not None and target > 0 \
        and step < min(_NEAR_END * target, target - 1)


class RunLifecycle:
    def __init__(self) -> None:
        self.attempt = 1
        # This attempt said it stopped on purpose (an early stop, MLPerf's `run_stop` with
        # `status: success`, its plan reached), though lines after it may have taken that
        # word back (other ranks' output flushed after it).
        self.stopped_on_purpose = False
        self.ending: Ending | None = None
        self._pending: PendingFailure | None = None
        self._failed_after_completion = False  # the pending failure came after a completion
        self._completion: LogEvent | None = None  # seen in the current attempt
        self._completion_at: int | None = None  # the step it was said at
        self.step_interval = 1  # the steps between the run's prints (see `_note_interval`)
        self._last_step: int | None = None
        self._step_gap = 0
        self._attempt_advances = 0
        # The last thread's death, with the attempt and its advances then (see `_failure`).
        self._thread_death: tuple[LogEvent, int, int] | None = None
        # Exceptions that escaped a helper thread and that training went on after: the
        # same one again is no death (a DataLoader's feeder thread, `BrokenPipeError`
        # after each of 89 worker restarts, the last of them at the log's end).
        self._outlived_in_threads: set[str] = set()
        # The failures the run went on past in this attempt to fail again (a step, then a
        # new traceback), by what they said, numbers masked (see COMPLETED).
        self._outlived_failures: set[str] = set()
        self._before_restart: Ending | None = None  # how the attempt babysit restarted ended
        self.launcher_restarts = 0  # times a launcher (torchrun) restarted the workers
        self.relaunches = 0  # new launches after a failure, read from the log
        self._wind_down = ""  # an exception raised after the run was stopped from outside
        self._requeued = False  # the scheduler requeued the job; no training since
        self._memory_failures = MemoryFailures()  # an OOM a launcher restart cannot cure
        self._at_plan = False  # the last step reached the planned total
        # A new launch began after the plan was reached, and has not trained yet: the
        # plan reached was the earlier launch's, no word on this one.
        self._launched_after_plan = False

    @property
    def state(self) -> TerminalState:
        return self.ending.state if self.ending is not None else TerminalState.RUNNING

    @property
    def running(self) -> bool:
        return self.ending is None

    @property
    def crash_pending(self) -> bool:
        return self._pending is not None

    @property
    def pending_unsure(self) -> bool:
        """The failure waiting to be confirmed may be a helper's, not the run's: Abseil's
        report of a stop signal, which Ray prints for each worker it tears down while the
        driver trains on. A quiet poll does not confirm it; the log's end or a long
        silence does."""
        pending = self._pending
        return pending is not None and pending.event.kind is EventKind.STOPPED_BY_SIGNAL \
            and ABSEIL_STOP in pending.event.line

    @property
    def said_finished(self) -> bool:
        """The run said its training is over (the end may still wait for the log)."""
        return self._completion is not None

    @property
    def phase(self) -> Phase:
        """Where the run stands (see `transitions`)."""
        if self.ending is not None:
            return Phase.CLOSED if self.ending.final else Phase.ENDED
        if self._pending is not None:
            return Phase.FAILING_FINISHED if self._completion is not None else Phase.FAILING
        return Phase.FINISHING if self._completion is not None else Phase.RUNNING

    # --- evidence from the log ----------------------------------------------------------

    def on_step(self, step: int, target: int | None, stamped: bool = False,
                bare: bool = False) -> bool:
        """The step moved (forward, or back after a resume). True when that shows the
        run going on — surviving what came before it; False for a late line from a run
        whose end is final."""
        evidence = Evidence.TRAINED_TO_PLAN if target and step >= target else Evidence.TRAINED
        self._at_plan = evidence is Evidence.TRAINED_TO_PLAN
        self._launched_after_plan = False
        self._requeued = False
        self._note_interval(step)
        if self._late_line(step):
            evidence = Evidence.LATE_LINE
        elif self._last_output(step, stamped):
            return False
        elif bare and self._completion is not None and self._completion_at is not None \
                and step == self._completion_at + 1:
            # The loop's bar ticks once its iteration's body is over: after the sentence
            # the last iteration printed (trlx's `FINISHED TRAINING`, then `10it [00:15,
            # 1.24s/it]`), a step with no figures is that tick, not training going on.
            self._completion_at = None
            return False
        return self._trained(evidence)

    def _note_interval(self, step: int) -> None:
        """The run's logging interval: the move between its last steps when the two
        moves before were the same (a loop printing every 100 steps)."""
        last, gap = self._last_step, self._step_gap
        if last is not None and step > last:
            moved = step - last
            self.step_interval = moved if moved == gap else 1
            self._step_gap = moved
        self._last_step = step

    def _reach(self, step: int | None) -> int | None:
        """The furthest step a run logged at `step` may have trained to: a loop printing
        every k steps trains up to k - 1 past its last print (TF's Estimator: `step =
        901`, then the checkpoint and evaluation at step 1000 of 1000)."""
        return step + self.step_interval - 1 if step is not None and self.step_interval > 1 \
            else step

    def _last_output(self, step: int, stamped: bool = False) -> bool:
        """Whether a step forward right after a failure is the dying process's own last
        output rather than training going on: stdout flushed after stderr's traceback
        (the bar row of the batch that ran out of memory, the last buffer of a script's
        prints), the batch a callback stopped training on. A failure is outlived by more
        steps than that (`PendingFailure.flush_budget`); a step back is a resume."""
        pending = self._pending
        if pending is None or pending.flushed >= pending.flush_budget(stamped) \
                or (pending.step is not None and step <= pending.step):
            return False
        self._pending = replace(pending, stepped_after=True, flushed=pending.flushed + 1)
        return True

    def on_record(self, stamped: bool = False) -> bool:
        """A training record in a log whose records give no step (and whose epoch stood
        still): after a failure, a second one shows training going on, as a second step
        would (TensorFlow's `failed call to cuInit`, then the run trains on the CPU)."""
        pending = self._pending
        if pending is None:
            return False
        if pending.flushed < pending.flush_budget(stamped):
            self._pending = replace(pending, stepped_after=True, flushed=pending.flushed + 1)
            return False
        return self._trained(Evidence.TRAINED)

    def on_epoch(self, trains_again: bool = False) -> bool:
        """The epoch moved in a log that prints no step: training went on, past what came
        before it (a traceback, a scheduler's end), as a step would show. A completion
        stands (the epochs an evaluation script reloads are not training), unless the
        epochs went back and climb again with a training loss (`trains_again`): a new
        run trains after the one that said it finished."""
        ending = self.ending
        late = ending is not None and ending.source is EndingSource.REPORTED
        return self._trained(Evidence.LATE_LINE if late else
                             Evidence.TRAINED if trains_again else Evidence.EPOCH_MOVED)

    def _trained(self, evidence: Evidence) -> bool:
        before = self.phase
        after = next_phase(before, evidence)
        if after is before and before in (Phase.ENDED, Phase.CLOSED):
            return False  # a late line from a run whose end stands
        if self.ending is not None:
            # Training went on after an ending read from the log alone: the run was
            # restarted by something other than babysit.
            self._new_attempt()
        pending = self._pending
        if pending is not None and pending.in_helper_thread \
                and len(self._outlived_in_threads) < 64:
            self._outlived_in_threads.add(pending.event.detail)
        self._pending = None  # training went on: that failure was not fatal
        self._attempt_advances += 1
        if after is Phase.RUNNING:
            self._completion = None  # "finished" said too early (an epoch, a stage)
        return True

    def _late_line(self, step: int) -> bool:
        """Whether a step read after a scheduler's word on the job (in the log) is that
        job's buffered output, flushed as it died; a requeued job starts again from a
        checkpoint, behind it."""
        ending = self.ending
        return ending is not None and ending.source is EndingSource.REPORTED \
            and (ending.step is None or step > ending.step)

    def on_event(self, event: LogEvent, step: int | None) -> Ending | None:
        """A notable log line. Returns the ending when the line itself ends the run (a
        scheduler's own word on the job)."""
        if self.phase is Phase.CLOSED:
            return None
        kind = event.kind
        if kind is EventKind.EXCEPTION and event.detail.endswith(CUT_OFF) \
                and self._pending is not None and not self._pending.provisional:
            return None  # the log ends in the traceback of a failure already noted
        if kind is EventKind.TRACEBACK_START and self._pending is not None \
                and self._pending.stepped_after and len(self._outlived_failures) < 64:
            # A step after the failure, then a new traceback begins: the process lived past
            # that failure to raise again (not the step a failure's own line names,
            # `FloatingPointError: … at iteration=14671`, inside the traceback already open).
            self._outlived_failures.add(_said_alike(self._pending.event))
        self._memory_failures.seen(event, self.attempt, self._attempt_advances)
        if kind is EventKind.THREAD_FAILED:
            self._thread_death = (event, self.attempt, self._attempt_advances)
        failure = self._failure(event, step)
        if failure is not None and failure.in_helper_thread \
                and failure.event.detail in self._outlived_in_threads:
            failure = None  # a helper thread's failure the run outlived before
        if failure is not None:
            if next_phase(self.phase, Evidence.FAILURE) in (Phase.FAILING,
                                                            Phase.FAILING_FINISHED):
                self._pending = failure
                self._failed_after_completion = self._completion is not None
        elif kind is EventKind.REQUEUED:
            # Slurm stopped this allocation's processes to run the job again: the run is
            # not over (what it said before stands as history); the tasks' exits that follow
            # are the stop's, not failures (`_failure`).
            if self._requeued:
                return None  # the banner for the job's other steps: the same requeue
            self._new_attempt()
            self._requeued = True
            return Ending(TerminalState.RUNNING, EndingSource.LOG, event.line, step,
                          self.attempt, anomaly=EndingAnomaly(
                              AnomalyType.JOB_FAILURE,
                              f"the scheduler requeued the job ({event.line[:200]}): this "
                              f"allocation's processes were stopped, and the job waits to run "
                              f"again (preempted, or `scontrol requeue`); the run is not over — "
                              f"it resumes from its last checkpoint if it saves and restores one",
                              Severity.LOW, key="requeued",
                              resolved=""))
        elif kind is EventKind.RESTARTED and self._pending is not None \
                and self._memory_failures.since_training(self.attempt, self._attempt_advances):
            # Restarted unchanged after running out of memory: the same batch fails
            # again, so the failure stands until training goes on (`futile_restarts`).
            oom = self._pending
            self._pending = replace(oom, event=replace(
                oom.event, detail=f"{oom.event.detail or oom.event.line[:300]}; "
                                  f"{UNCHANGED_RESTART}"))
            self.launcher_restarts += 1
        elif kind is EventKind.RESTARTED:
            # The launcher itself started the run again: a new attempt, after a failure
            # that stands until training goes on.
            died = self._pending.event.detail if self._pending is not None else ""
            assert next_phase(self.phase, Evidence.LAUNCHER_RESTART) is Phase.RUNNING
            self._new_attempt()
            count = event.detail.partition("restart_count=")[2]
            self.launcher_restarts = max(self.launcher_restarts + 1,
                                         int(count) if count.isdecimal() else 0)
            return Ending(TerminalState.RUNNING, EndingSource.LOG, event.line, step,
                          self.attempt, anomaly=EndingAnomaly(
                              AnomalyType.CRASH,
                              f"a worker failed{f': {died}' if died else ''}; the "
                              f"launcher restarted the workers ({event.detail or 'restart'}"
                              f", {self.launcher_restarts} so far)",
                              Severity.HIGH if self.launcher_restarts < 2 else None),
                          final=False)
        elif kind is EventKind.LAUNCHED:
            return self._relaunched(event, step)
        elif kind is EventKind.COMPLETED:
            held = self._completion
            if self.phase is Phase.ENDED:
                return None  # the next attempt, if any, has to say it again
            pending = self._pending
            if pending is not None and pending.cancelled and not pending.stepped_after \
                    and event.detail not in _AT_PLAN:
                # A stop signal the process handled, then its own closing words with
                # nothing trained between: a clean exit of a stopped run, not a finished
                # one — status 0 (W&B's `(success)` after Ray's `*** SIGTERM received …`),
                # or the trainer's end of loop (Caffe's `^C…Test interrupted.`, then
                # `Optimization stopped early.`, `Optimization Done.`). Only its word that
                # the plan was done stands.
                return None
            if pending is not None and event.detail not in AFTER_TRAINING and (
                    pending.stepped_after or (
                        not pending.cancelled
                        and _said_alike(pending.event) in self._outlived_failures)):
                # The step read after the failure was training after all: the run says
                # it went on to finish (a library's traceback it recovered from). So after
                # the same failure, numbers aside, as one the run already went on past in
                # this attempt (a Flower simulation's clients out of memory in every
                # round, the server aggregating on, then `Run finished 3 round(s)` right
                # after the last round's failures: the server caught them all).
                self._trained(Evidence.TRAINED)
            if held is not None and event.detail in _UNCONFIRMED:
                return None  # the weakest evidence never hides a stronger one
            if held is not None and held.detail in _AT_PLAN \
                    and event.detail not in _DELIBERATE:
                # The outer counter at its total already proves the end: a sentence
                # after it (`274 epochs completed in 35.9 hours`) is no early one, however
                # an inner bar's total compares with the step (the final evaluation).
                return None
            if held is not None and held.detail == EARLY_STOP and event.detail == FINAL_SAVE:
                return None  # the model saved once the early stop ended the loop: that end
            if held is not None and held.detail in (EARLY_STOP, FINAL_SAVE) \
                    and event.detail not in _DELIBERATE and event.detail not in AFTER_TRAINING:
                # The early stop says why the run ends short of its plan: the sentence
                # after it (`Validation loss has not improved for 3 epochs. Stopping
                # training.`, then `Training finished.`) is that end said again; so after
                # the final model's save (`Saved checkpoint: …/final_model.pth`, then
                # `Training complete!`).
                return None
            if held is None or held.detail in AFTER_TRAINING or held.detail in _UNCONFIRMED \
                    or event.detail not in AFTER_TRAINING:
                # What a run does after training never hides its own word that it
                # finished (a summary line, then the final evaluation); it does replace
                # what said only that the loop stood still.
                self._completion = event
                self._completion_at = step
                if event.detail in _DELIBERATE:
                    self.stopped_on_purpose = True
        elif kind is EventKind.JOB_STATE:
            state = TerminalState(event.detail)
            told = self.ending
            if told is not None and told.source is EndingSource.REPORTED \
                    and told.attempt == self.attempt and (
                        restates_cancel(told.evidence, event.line)
                        or event.line.startswith("Exited with exit code")):
                # Slurm's plain banner for the job's other steps, after the one that gave
                # the reason (`DUE TO TIME LIMIT`), LSF's exit code after its `TERM_…`
                # reason: the same end, said again.
                return None
            if state is TerminalState.SUCCEEDED:
                self._pending = None
            elif self._pending is not None and not self._pending.cancelled:
                # The scheduler cancelled a job that was already dying (a memory kill).
                return self._end(replace(self._crash_from_pending("", inferred=False,
                                                                  final=False),
                                         source=EndingSource.REPORTED),
                                 Evidence.SCHEDULER_END)
            # Read from the log: training after it in the same file is the job requeued
            # (Slurm `--requeue`, `--open-mode=append`), a new attempt.
            return self._end(Ending(state, EndingSource.REPORTED, event.line, step,
                                    self.attempt), Evidence.SCHEDULER_END)
        return None

    def _relaunched(self, event: LogEvent, step: int | None) -> Ending | None:
        """The run's start-up printed again after a failure or a completion (see
        `parsing.launches`): a new launch replaced the earlier process. A failure is the
        earlier launch's, kept as history; the new launch has to earn its own end."""
        phase = self.phase
        if phase is Phase.RUNNING and self._at_plan and not self._launched_after_plan:
            # Started again once its steps had reached the plan (PreSumm's `Start
            # training...` for a new task after `Step 200000/200000` and its save): the
            # log now holds a launch that has trained nothing yet.
            self._launched_after_plan = True
            self.relaunches += 1
            return None
        if phase is Phase.RUNNING or next_phase(phase, Evidence.RELAUNCHED) is not Phase.RUNNING:
            return None
        if self._pending is None and (self._completion is not None or (
                self.ending is not None and self.ending.state in (TerminalState.SUCCEEDED,
                                                                  TerminalState.ENDED))):
            # The earlier launch finished (or ended): nothing died; the new one has to
            # earn its own end.
            self._new_attempt()
            self.relaunches += 1
            return None
        if self._pending is not None:
            died, at = self._pending.event.detail or self._pending.event.line, self._pending.step
        else:
            assert self.ending is not None
            died, at = self.ending.evidence, self.ending.step
        self._new_attempt()
        self.relaunches += 1
        return Ending(TerminalState.RUNNING, EndingSource.LOG, event.line, at, self.attempt,
                      final=False, anomaly=EndingAnomaly(
                          AnomalyType.CRASH,
                          f"an earlier launch of the run died ({died[:200]}); the log then "
                          f"shows the run launched again ({event.line[:120]})",
                          Severity.MEDIUM, key=f"launch {self.attempt - 1}",
                          resolved="the run was launched again; its latest launch is judged"))

    def _failure(self, event: LogEvent, step: int | None) -> PendingFailure | None:
        """The failure a log event is, if any: a crash unless training goes on."""
        kind = event.kind
        pending = self._pending
        if pending is not None and runner_exit(event.line):
            return None  # the console's exit line under a failure: the same death, said again
        if self._requeued and kind in (EventKind.EXCEPTION, EventKind.SEGFAULT,
                                       EventKind.STOPPED_BY_SIGNAL):
            return None  # the requeue stopped the tasks (`srun: error: …: Exited with exit code 1`)
        if kind is EventKind.EXCEPTION and event.chained and pending is not None \
                and not pending.cancelled and not pending.stepped_after \
                and PendingFailure(event, step).cancelled and not pending.event.library_only:
            # Stopped while the failure above was still being handled (Paddle's `Blocking
            # queue is killed`, then `During handling of the above exception …
            # KeyboardInterrupt` in a notebook): the run had failed already; the stop
            # only ended its dying. (Not an exception a library raised and caught within
            # itself, every frame of its traceback the library's: PIL's `fp.fileno()`
            # AttributeError is how it picks a way to write a file; the stop came while
            # it wrote the plot.)
            return None
        if kind is EventKind.EXCEPTION and not event.chained and pending is not None \
                and not pending.cancelled and not pending.stepped_after \
                and _RAISED.match(pending.event.detail) and not _echo(pending.event) \
                and (PendingFailure(event, step).cancelled or _echo(event)):
            # Stopped after a failure with nothing trained between (torch_xla's loader
            # threads: `DataLoader worker … exited unexpectedly` in each process, then the
            # notebook's KeyboardInterrupt, sealed-130): the run had failed and hung; the
            # stop only ended the process; the broken pipes between are its peers' echoes.
            # (Not a broken pipe or a worker's interrupt before the stop: those are the
            # stop's own echoes, printed as it took effect.)
            return None
        if kind in (EventKind.EXCEPTION, EventKind.SEGFAULT) and pending is not None \
                and pending.cancelled and not pending.exit_banner \
                and not (pending.flushed and event.uncaught):
            # Stopped by its owner or its scheduler, then an exception as it wound down
            # (SafeLife's `Keyboard Interrupt. Ending early.`, then a KeyError in the
            # run's summary): the stop is how it ended; the exception is the shutdown's.
            if not PendingFailure(event, step).cancelled:  # (not the stop's own traceback)
                self._wind_down = event.detail or event.line
            return None
        if pending is not None and not pending.cancelled and not pending.stepped_after and (
                (pending.event.uncaught and kind in (
                    EventKind.EXCEPTION, EventKind.SEGFAULT, EventKind.STOPPED_BY_SIGNAL))
                or (pending.in_helper_thread and kind is EventKind.STOPPED_BY_SIGNAL)):
            # More failure right after the run's own uncaught exception, nothing trained
            # between (Paddle's `FatalError: Termination signal` and the SIGTERM its
            # launcher sends a worker whose ValueError it saw; torchrun's to its peers):
            # the exception is how it ended, the rest its aftermath. So after a thread's
            # (Paddle's DataLoader thread, `cv2.imread` giving None, then the launcher's
            # SIGTERM before the first iteration): the feeder died, and the job with it.
            return None
        death = self._thread_death
        interrupt = kind is EventKind.EXCEPTION and PendingFailure(event, step).cancelled \
            and not event.chained and death is not None and not _echo(death[0]) \
            and (pending is None or _echo(pending.event))
        if ((kind is EventKind.STOPPED_BY_SIGNAL and pending is None) or interrupt) \
                and death is not None and death[1:] == (self.attempt, self._attempt_advances):
            # A thread's exception, then the process stopped by a signal with nothing
            # trained between (Paddle's DataLoader thread: `cv2.imread` gave None, the
            # reader's C++ traceback, then the launcher's SIGTERM before the first
            # iteration): the feeder died and the job was torn down for it, a failure. So
            # a loader thread's `DataLoader worker … exited unexpectedly`, then the
            # owner's Ctrl-C with only broken pipes between: the run hung for it.
            thread = death[0]
            return PendingFailure(LogEvent(
                EventKind.EXCEPTION, thread.line,
                f"{thread.detail} (in a thread; the process was then stopped by "
                f"{event.detail or 'a signal'})", uncaught=True), step)
        if kind in (EventKind.EXCEPTION, EventKind.SEGFAULT, EventKind.HOST_KILL,
                    EventKind.STOPPED_BY_SIGNAL):
            return PendingFailure(event, step)
        if kind is EventKind.TRACEBACK_START and self._pending is not None \
                and self._pending.exit_banner:
            return after_banner(self._pending, event)
        if self._pending is not None:
            return None  # an OOM or a stopping launcher after a traceback: the same failure
        if kind in _FATAL or (kind is EventKind.NCCL and "WARN" not in event.line):
            return PendingFailure(event, step)  # fatal unless training goes on after it
        if kind is EventKind.WORKERS_STOPPED:
            # The launcher stops the other workers because one of them failed.
            return PendingFailure(LogEvent(
                EventKind.EXCEPTION, event.line,
                f"the launcher stopped its workers with {event.detail} (a worker failed)"),
                step)
        return None

    def settle_from_log(self, *, step: int | None, reached: bool, confirm_pending: bool,
                        settled: bool, target: int | None = None,
                        position: PlanPosition | None = None) -> Ending | None:
        """For a run whose process babysit cannot see: end it on the log's evidence.
        `confirm_pending`: nothing followed the traceback for long enough; `settled`:
        the log has stopped moving (or no more input will come). `position`: where the
        run stands against its plan when that is not `step` of `target`."""
        if self.ending is not None:
            return None
        at = position if position is not None else PlanPosition(step, target)
        next_failed: PendingFailure | None = None
        if self._pending is not None:
            if not confirm_pending:
                return None
            if self._completion is not None and self._failed_after_completion \
                    and self._completion.detail not in _UNCONFIRMED \
                    and self._pending.event.at_import:
                # Training said it finished, then a program failed as it loaded its
                # modules (an evaluation script's `ModuleNotFoundError: No module named
                # 'colorama'` at its line 5, after the Trainer's summary and the model's
                # save): the next step of the job failed, not the training.
                next_failed, self._pending = self._pending, None
            elif self._completion is not None \
                    and self._completion.detail not in _UNCONFIRMED \
                    and (self._pending.in_helper_thread or (
                        self._pending.cancelled
                        and not (self._completion.detail == SAID
                                 and premature(at.done, at.planned)))):
                # (not a sentence said well short of the plan: Tunix's `Train loop finished
                # in: 0.11 seconds` after each of 6 steps of 20000, then Ctrl-C — the stop
                # is how it ended)
                # Stopped by hand after training had finished (closing a UI, say), or a
                # helper thread torn down at exit after it (the process went on). Not
                # after what says only that the process is over (the shell's prompt
                # after a Ctrl-C's traceback): that is the stop's own aftermath.
                self._pending = None
            else:
                return self._end(self._crash_from_pending("", inferred=False, final=False),
                                 Evidence.LOG_ENDING)
        if self._completion is not None \
                and not (reached and self._completion.detail in _UNCONFIRMED):
            ended = self._from_completion(self._completion, step, at, settled)
            if ended is not None and next_failed is not None and ended.anomaly is None:
                failed = next_failed.event.detail or next_failed.event.line[:300]
                ended = replace(ended, anomaly=EndingAnomaly(
                    AnomalyType.CRASH,
                    f"training finished, then a program run after it failed as it loaded "
                    f"its modules ({failed}): what it was to do (an evaluation, an export) "
                    f"did not happen", Severity.HIGH, key="after training"))
                self.ending = ended
            return ended
        if reached and settled and not self._launched_after_plan:
            return self._end(Ending(TerminalState.SUCCEEDED, EndingSource.STEPS,
                                    "the planned steps were reached", step, self.attempt,
                                    final=False), Evidence.LOG_ENDING)
        return None

    def on_log_abandoned(self, why: str, step: int | None) -> Ending | None:
        """A log watched alone that nobody writes any more (long unwritten, and no process
        on this machine holds it open): the run is over, and the log does not say how.
        Not a success, not a failure: ENDED, provisional like every ending read from a
        log (a step written later reopens it)."""
        if self.ending is not None or self._pending is not None \
                or self._completion is not None:
            return None
        return self._end(Ending(TerminalState.ENDED, EndingSource.LOG, why, step,
                                self.attempt, confirmed=False, final=False),
                         Evidence.LOG_ENDING)

    def _from_completion(self, completion: LogEvent, step: int | None,
                         at: PlanPosition, settled: bool) -> Ending | None:
        """What a completion line proves. Said well before the planned total, a sentence
        ("training done") may be a stage's or a sub-task's: while the log moves it is not
        the end, and once it stops the run is over without its plan done (ENDED). The
        trainer's own end-of-training summary that early says the run stopped early.
        An early stop, or the final model saved, ends a run wherever it stands."""
        target = at.planned
        where = f"{at.unit} {at.done} of {target} planned"
        if completion.detail in AFTER_TRAINING:
            # What a run does after training (a test pass, a line past its last step at
            # the planned total): the end once nothing more comes, and no evidence at all
            # for a run well short of its plan. A line past the last step at its planned
            # total was checked against the run's own logging interval, not a share of
            # the plan (`190000/200000`, printed every 10000, is the loop's last print).
            if settled and completion.detail == CELL_ENDED and premature(at.done, target):
                # A notebook cell returned well short of the plan: over, not confirmed.
                return self._end(Ending(
                    TerminalState.ENDED, EndingSource.COMPLETION,
                    f"the notebook cell returned ({completion.line[:160]}) at {where}", step,
                    self.attempt, confirmed=False, final=False),
                    Evidence.LOG_ENDING)
            short = premature(at.done, target) and not (
                completion.detail == SAID and at.done is not None and target is not None
                and at.done >= _SAID_NEAR_END * target)
            if settled and short and (completion.detail == SAID or (
                    completion.detail == CLOSING and says_over(completion.line))):
                # The run's own word that its training is over, well short of its plan,
                # and nothing after it (YOLOX's `Training of experiment is done and the
                # best AP is 58.41` at epoch 93 of 300, printed however the loop left; a
                # Keras notebook's `Final validation Mean Intersection Over Union: 47.78%`
                # after epoch 125 of 1000, its early stop silent): over, not the plan
                # done. A late word alone (`Test accuracy: 0.91`) may be a periodic
                # test's, and proves nothing so short of the plan.
                return self._end(Ending(
                    TerminalState.ENDED, EndingSource.COMPLETION,
                    f"{completion.line[:200]} — said at {where}",
                    step, self.attempt, confirmed=False, final=False), Evidence.LOG_ENDING)
            if not settled or (short and completion.detail != AFTER_PLAN):
                return None
            return self._end(Ending(TerminalState.SUCCEEDED, EndingSource.COMPLETION,
                                    completion.line, step, self.attempt),
                                Evidence.LOG_ENDING)
        if completion.detail in _UNCONFIRMED:
            # The log stopped where a finished run's log stops, or after what a finished
            # loop does (see `parsing.loop_over`); nothing says it finished.
            if not settled or (completion.detail == LOOP_OVER and premature(at.done, target)):
                return None  # (well short of a plan the run announced, it stopped mid-run)
            if completion.detail == NEXT_COMMAND:
                return self._end(Ending(
                    TerminalState.ENDED, EndingSource.LOG,
                    f"a later command in the same log was refused before it started "
                    f"({completion.line[:200]}): the training before it is over, and the log "
                    f"does not say how it ended", step, self.attempt, confirmed=False,
                    final=False, anomaly=EndingAnomaly(
                        AnomalyType.CRASH,
                        f"a later command in the same log never started: "
                        f"{completion.line[:200]}", Severity.MEDIUM)), Evidence.LOG_ENDING)
            where = f"{completion.line[:200]}, and the log" if completion.detail in _SEEN_OVER \
                else f"the log stops at {completion.line[:200]},"
            return self._end(Ending(
                TerminalState.ENDED, EndingSource.LOG,
                f"{where} says nothing after it",
                step, self.attempt, confirmed=False, final=False), Evidence.LOG_ENDING)
        if completion.detail == LAST_EPOCH and not settled:
            return None  # read from the order of lines: a live run may print more of it
        reach = self._reach(at.done) if at.unit == "step" else at.done
        early = premature(reach, target) and completion.detail not in _DELIBERATE
        if early and completion.detail != SUMMARY:
            if not settled:
                return None
            return self._end(Ending(
                TerminalState.ENDED, EndingSource.COMPLETION,
                f"{completion.line[:200]} — said at {where}",
                step, self.attempt, confirmed=False, final=False), Evidence.LOG_ENDING)
        if early:
            return self._end(Ending(
                TerminalState.ENDED, EndingSource.COMPLETION, completion.line, step,
                self.attempt, confirmed=False, final=False, anomaly=EndingAnomaly(
                    AnomalyType.CRASH,
                    f"the run printed its end-of-training summary at {where}: it stopped "
                    f"early ({completion.line[:160]})", Severity.HIGH)),
            Evidence.LOG_ENDING)
        return self._end(Ending(TerminalState.SUCCEEDED, EndingSource.COMPLETION,
                                completion.line, step, self.attempt),
                                Evidence.LOG_ENDING)

    # --- evidence from the process -------------------------------------------------------

    def on_process_gone(self, exit_info: ExitInfo | None, oom_killed: bool | None,
                        step: int | None, target: int | None) -> Ending | None:
        """The run's process is gone: decide from its exit status when the OS showed it,
        and from the log otherwise."""
        if self.ending is not None:
            return None
        exit_info = exit_info or ExitInfo(None, None, "unknown")
        reached = step is not None and target is not None and step >= target
        # A loop seen over proves no success: with no exit status, the run ENDED.
        done = reached or (self._completion is not None
                           and self._completion.detail not in _SEEN_OVER and (
            not premature(step, target) or self._completion.detail in _DELIBERATE))
        how = exit_info.describe()
        if exit_info.code == 0:
            self._pending = None  # a traceback it survived
            return self._close(self._success(step, how, exit_info, done, reached, target))
        unknown = exit_info.code is None and exit_info.signal is None
        if self._pending is not None:
            return self._close(self._crash_from_pending(
                "" if unknown else how, inferred=unknown, final=True, exit_info=exit_info))
        if unknown:
            if done:
                by_line = self._completion is not None
                return self._close(Ending(
                    TerminalState.SUCCEEDED,
                    EndingSource.COMPLETION if by_line else EndingSource.STEPS,
                    self._completion.line if self._completion is not None else
                    "the planned steps were reached", step, self.attempt, exit=exit_info,
                    inferred=True))
            over = self._completion is not None and self._completion.detail in _SEEN_OVER
            if target is not None and step is not None and not over:
                return self._close(Ending(
                    TerminalState.FAILED, EndingSource.LOG, "the process is gone", step,
                    self.attempt, exit=exit_info, inferred=True,
                    anomaly=EndingAnomaly(AnomalyType.CRASH, (
                        f"the process is gone at step {step} of {target} planned, with no "
                        f"completion line and no traceback in the log (its exit status is "
                        f"not visible to babysit): it was most likely killed"))))
            return self._close(self._success(step, "the process is gone", exit_info, False,
                                           False, target))
        if exit_info.signal in STOP_SIGNALS:
            return self._close(Ending(TerminalState.CANCELLED, EndingSource.EXIT_STATUS, how,
                                    step, self.attempt, exit=exit_info))
        anomaly = EndingAnomaly(AnomalyType.CRASH,
                                f"the process {how} with no traceback in the log")
        if exit_info.signal == signal.SIGKILL:
            if oom_killed:
                anomaly = EndingAnomaly(AnomalyType.OOM,
                                        "killed by the kernel's OOM killer (kernel log)")
            elif oom_killed is None:
                anomaly = EndingAnomaly(AnomalyType.OOM, (
                    "killed with SIGKILL and no traceback: most likely the host's OOM killer "
                    "(the kernel log could not be read to confirm; whether it was the OOM "
                    "killer is unknown)"))
        return self._close(Ending(TerminalState.FAILED, EndingSource.EXIT_STATUS, how, step,
                                self.attempt, exit=exit_info, anomaly=anomaly))

    def _success(self, step: int | None, how: str, exit_info: ExitInfo, done: bool,
                 reached: bool, target: int | None) -> Ending:
        inferred = exit_info.code is None
        if done:
            evidence = (self._completion.line if self._completion is not None
                        else "the planned steps were reached")
            return Ending(TerminalState.SUCCEEDED, EndingSource.EXIT_STATUS,
                          f"{how}; {evidence}", step, self.attempt, exit=exit_info,
                          inferred=inferred)
        short = (f" at step {step} of {target} planned" if target is not None
                 and step is not None and not reached else "")
        if not inferred and not short:
            # An exit status 0 that babysit saw is the run's own word that it finished.
            return Ending(TerminalState.SUCCEEDED, EndingSource.EXIT_STATUS,
                          "the process exited with code 0", step, self.attempt,
                          exit=exit_info)
        what = ("exited with code 0" if not inferred else
                "is gone (its exit status is not visible to babysit)")
        return Ending(TerminalState.ENDED, EndingSource.EXIT_STATUS,
                      f"the process {what}{short} with no completion line and no traceback "
                      f"in the log: outcome not confirmed", step, self.attempt,
                      confirmed=False, exit=exit_info, inferred=inferred)

    # --- evidence from a tracker or cloud service ------------------------------------

    def on_reported(self, state: TerminalState, detail: str, source: str, step: int | None,
                    target: int | None) -> Ending | None:
        """The run's own service (W&B, MLflow, a cloud job) says it ended."""
        if self.ending is not None or state is TerminalState.RUNNING:
            return None
        if state is TerminalState.SUCCEEDED:
            # One step short is a zero-based counter (W&B's _step), not an early stop.
            short = target is not None and step is not None and step < target - 1
            anomaly = None
            if short:
                anomaly = EndingAnomaly(AnomalyType.CRASH, (
                    f"{detail}, but it stopped at step {step} of {target}: {source} also "
                    f"marks a run finished when its script exits early (early stopping, or an "
                    f"exception after a bare start_run) — check the run's output (evidence: "
                    f"planned steps not reached)"), Severity.HIGH)
            return self._close(Ending(state, EndingSource.REPORTED, detail, step, self.attempt,
                                    confirmed=not short, anomaly=anomaly))
        anomaly = None
        if state is not TerminalState.CANCELLED:
            anomaly = EndingAnomaly(AnomalyType.CRASH,
                                    f"{detail} (evidence: the run's state in {source})")
        return self._close(Ending(state, EndingSource.REPORTED, detail, step, self.attempt,
                                anomaly=anomaly))

    # --- what babysit and the user did ---------------------------------------------------

    def restarted(self) -> None:
        """babysit started the run again: a new attempt, which must earn its own end."""
        self._before_restart = self.ending
        self._new_attempt()

    def cancelled_by_user(self, step: int | None) -> Ending:
        assert next_phase(self.phase, Evidence.USER_CANCEL) is Phase.CLOSED
        self.ending = Ending(TerminalState.CANCELLED, EndingSource.USER,
                             "cancelled by babysit with the user's approval", step,
                             self.attempt)
        return self.ending

    def _new_attempt(self) -> None:
        self.ending = None
        self._pending = None
        self._completion = None
        self.stopped_on_purpose = False
        self.attempt += 1
        self._attempt_advances = 0
        self._outlived_failures.clear()

    def _crash_from_pending(self, how: str, *, inferred: bool, final: bool,
                            exit_info: ExitInfo | None = None) -> Ending:
        pending = self._pending
        assert pending is not None
        self._pending = None
        text = pending.event.detail or pending.event.line
        note = f" ({how})" if how else (" (exit status not visible to babysit: inferred from "
                                        "the log)" if inferred else "")
        if pending.cancelled:
            wind_down, self._wind_down = self._wind_down, ""
            return Ending(TerminalState.CANCELLED, EndingSource.LOG, text, pending.step,
                          self.attempt, exit=exit_info, traceback=pending.traceback,
                          inferred=inferred, final=final, anomaly=EndingAnomaly(
                              AnomalyType.CRASH, f"after it was stopped ({text[:120]}), the "
                              f"run failed as it wound down: {wind_down[:200]} (what it "
                              f"does at its end — a summary, a final save — may be missing)",
                              Severity.MEDIUM) if wind_down else None)
        # A `Killed` line is reported as a likely host OOM kill too: the cause beside
        # the death, as for any other failure with a cause of its own.
        anomaly = EndingAnomaly(AnomalyType.CRASH, f"the run died: {text}{note}",
                                Severity.MEDIUM if runner_exit(pending.event.line) else None)
        return Ending(TerminalState.FAILED, EndingSource.LOG, text, pending.step,
                      self.attempt, exit=exit_info, traceback=pending.traceback,
                      inferred=inferred, final=final, anomaly=anomaly)

    def _close(self, ending: Ending) -> Ending:
        """End the run on confirmed evidence (an exit status, the service's state)."""
        return self._end(ending, Evidence.FINAL_ENDING)

    def _end(self, ending: Ending, evidence: Evidence) -> Ending:
        """End the run as the table says: for good (CLOSED), or on the log's word alone,
        which a later step can reopen (ENDED)."""
        ending = replace(ending, final=next_phase(self.phase, evidence) is Phase.CLOSED)
        previous = self._before_restart
        if self.attempt > 1 and previous is not None and self._attempt_advances == 0:
            # The restart did not train at all (a command that returns at once, or that
            # hands the run to a scheduler babysit cannot see): the run stands where the
            # attempt before it ended.
            ending = replace(previous, attempt=self.attempt, anomaly=None,
                             futile_restart=ending.evidence)
        self.ending = ending
        return ending


_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def _said_alike(event: LogEvent) -> str:
    """A failure as it was said, its numbers masked: the same failure again (`MPS backend
    out of memory (MPS allocated: 8.00 MB …` then `… 40.00 MB …`) says the same."""
    return f"{event.kind.value}:{_DIGITS.sub('#', (event.detail or event.line)[:160])}"
