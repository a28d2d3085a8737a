"""The run's lifecycle as a table: in each phase, what each kind of evidence moves it to.

`RunLifecycle` decides *what* a piece of evidence is (a traceback is a failure; a
completion line said at step 2,099 of 17,000 settles as an early end, not a success;
a step after a scheduler's end that does not go back is the dying job's output) and
*how* the run ended (the `Ending`); this table alone says where the run stands after
it. A pair that is not in the table leaves the phase as it is: evidence that changes
nothing there (a failure after a confirmed end was written before it).

Modelled on NVIDIA's fault-tolerance rank monitor (`nvidia-resiliency-ext`
`RankMonitorState`): a few named states, and every move between them written down
once, so that each can be tested on its own (tests/core/test_lifecycle_table.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from babysit._compat import StrEnum


class Phase(StrEnum):
    RUNNING = "running"  # training, as far as babysit knows
    FAILING = "failing"  # a failure was read: a crash, unless training goes on
    FINISHING = "finishing"  # a completion was read: the end, once the log settles
    # A failure after a completion (stopped by hand after finishing, or a crash in the
    # final evaluation): the log settles which.
    FAILING_FINISHED = "failing after a completion"
    ENDED = "ended"  # ended on the log's evidence alone: a later step reopens it
    CLOSED = "closed"  # ended for good: the OS, the service or the user said so


class Evidence(StrEnum):
    TRAINED = "training moved"  # a step, forward or back after a resume, short of the plan
    TRAINED_TO_PLAN = "training reached its plan"  # a step at or past the planned total
    EPOCH_MOVED = "an epoch moved"  # in a log without a step (a completion stands)
    LATE_LINE = "a late line"  # a step after a scheduler's end, not behind it: its output
    FAILURE = "a failure"  # a traceback, a fatal error or signal, a launcher stopping
    COMPLETION = "a completion"  # the run said it finished (see parsing.endings)
    LOG_ENDING = "an ending read from the log"  # a crash confirmed, a completion, the plan
    SCHEDULER_END = "a scheduler's end in the log"  # Slurm, LSF: the job's state
    FINAL_ENDING = "a confirmed ending"  # an exit status, the service's own state
    USER_CANCEL = "cancelled with the user's approval"
    LAUNCHER_RESTART = "a launcher restarted the workers"  # torchrun's restart_count
    # The run's start-up printed again after a failure (parsing.launches): relaunched
    # into the same log by someone other than babysit.
    RELAUNCHED = "the run was launched again"
    RESTART = "babysit restarted the run"


_LIVE = (Phase.RUNNING, Phase.FAILING, Phase.FINISHING, Phase.FAILING_FINISHED)
_TRAINING = (Evidence.TRAINED, Evidence.TRAINED_TO_PLAN, Evidence.EPOCH_MOVED)
# Evidence of training that lets a completion stand: the plan reached, or epochs in a
# log without a step (an evaluation script reloading the epochs it trained).
_KEEPS_COMPLETION = (Evidence.TRAINED_TO_PLAN, Evidence.EPOCH_MOVED)

TRANSITIONS: Mapping[tuple[Phase, Evidence], Phase] = {
    # Training going on survives the failure before it and drops a completion said too
    # early (an epoch's, a stage's); at its plan the completion stands. After an end read
    # from the log alone, training means something restarted the run.
    **{(phase, e): Phase.RUNNING for phase in (Phase.RUNNING, Phase.FAILING, Phase.ENDED)
       for e in _TRAINING},
    (Phase.FINISHING, Evidence.TRAINED): Phase.RUNNING,
    (Phase.FAILING_FINISHED, Evidence.TRAINED): Phase.RUNNING,
    **{(phase, e): Phase.FINISHING for phase in (Phase.FINISHING, Phase.FAILING_FINISHED)
       for e in _KEEPS_COMPLETION},
    # A failure waits for what follows it; the last one read is the one that counts.
    (Phase.RUNNING, Evidence.FAILURE): Phase.FAILING,
    (Phase.FAILING, Evidence.FAILURE): Phase.FAILING,
    (Phase.FINISHING, Evidence.FAILURE): Phase.FAILING_FINISHED,
    (Phase.FAILING_FINISHED, Evidence.FAILURE): Phase.FAILING_FINISHED,
    (Phase.RUNNING, Evidence.COMPLETION): Phase.FINISHING,
    (Phase.FINISHING, Evidence.COMPLETION): Phase.FINISHING,
    (Phase.FAILING, Evidence.COMPLETION): Phase.FAILING_FINISHED,
    (Phase.FAILING_FINISHED, Evidence.COMPLETION): Phase.FAILING_FINISHED,
    # The log's own evidence, settled: provisional, as training may yet go on. A
    # scheduler's line in the log may be followed by the requeued job.
    **{(phase, Evidence.LOG_ENDING): Phase.ENDED for phase in _LIVE},
    **{(phase, Evidence.SCHEDULER_END): Phase.ENDED for phase in (*_LIVE, Phase.ENDED)},
    # Confirmed ends are final.
    **{(phase, Evidence.FINAL_ENDING): Phase.CLOSED for phase in _LIVE},
    **{(phase, Evidence.USER_CANCEL): Phase.CLOSED for phase in Phase},
    # A restart opens a new attempt, which has to earn its own end; a launcher's, only
    # while babysit has not seen the run end for good.
    **{(phase, Evidence.LAUNCHER_RESTART): Phase.RUNNING for phase in (*_LIVE, Phase.ENDED)},
    **{(phase, Evidence.RESTART): Phase.RUNNING for phase in Phase},
    # A new launch after a failure replaces the dead process: the failure is no longer
    # the run's end, and the new launch has to earn its own. Where nothing failed, its
    # steps (they go back) show it; an ending the OS or the service confirmed stands.
    # After a completion the new launch is the run the log now holds, as yet unfinished.
    **{(phase, Evidence.RELAUNCHED): Phase.RUNNING
       for phase in (Phase.FAILING, Phase.FINISHING, Phase.FAILING_FINISHED, Phase.ENDED)},
}


def next_phase(phase: Phase, evidence: Evidence) -> Phase:
    """Where the run stands after `evidence` in `phase` (unchanged if the table has no
    such move)."""
    return TRANSITIONS.get((phase, evidence), phase)
