"""What an ending is: how a run ended and how babysit knows, and a failure that will be
a crash unless training goes on (see `lifecycle`)."""

from __future__ import annotations

import signal
from dataclasses import dataclass

from babysit import lazy_re
from babysit._compat import StrEnum
from babysit.model import AnomalyType, EventKind, ExitInfo, LogEvent, Severity, TerminalState
from babysit.parsing.events import EXIT_BANNER
from babysit.parsing.thread_failures import IN_THREAD


class EndingSource(StrEnum):
    EXIT_STATUS = "exit status"  # the OS showed how the process ended
    REPORTED = "reported state"  # the tracker or cloud service said so
    COMPLETION = "completion line"  # the run said it finished
    STEPS = "planned steps"  # the planned number of steps was reached
    LOG = "log"  # the log alone (a traceback and then silence, a `Killed` line)
    USER = "user"  # cancelled with the user's approval


@dataclass(frozen=True)
class EndingAnomaly:
    """What an ending means as an anomaly, when it is one."""

    type: AnomalyType
    description: str
    severity: Severity | None = None  # None: the catalogue's
    key: str = ""
    # How it was already resolved when it is raised ('' while it stands): a failure that
    # a later launch replaced is the run's history, not its state.
    resolved: str = ""


@dataclass(frozen=True)
class Ending:
    state: TerminalState
    source: EndingSource
    evidence: str  # "exited with code 0", "KeyError: 'x'", "W&B state: crashed"
    step: int | None
    attempt: int
    confirmed: bool = True  # SUCCEEDED only: a completion line or the planned steps
    exit: ExitInfo | None = None
    traceback: str = ""  # the closing exception line it died on ('' if none)
    inferred: bool = False  # the process's exit status was not visible to babysit
    final: bool = True  # a later log line cannot undo it
    anomaly: EndingAnomaly | None = None
    # A restart by babysit that ended without training: how it ended (else '').
    futile_restart: str = ""


@dataclass(frozen=True)
class PendingFailure:
    """A traceback or fatal signal in the log: a crash, unless training goes on."""

    event: LogEvent
    step: int | None
    # A step was read after it: the dying process's own last output, until training
    # shows it going on (see `RunLifecycle.on_step`).
    stepped_after: bool = False
    flushed: int = 0  # records read after it that may be stdout's buffer, flushed at exit

    def flush_budget(self, stamped: bool) -> int:
        """Records after it that may still be the dying process's own output. A Python
        exception nothing caught (its traceback opens at the script's top level) ends the
        process: stdout, buffered by the block when it goes to a file, is flushed as the
        process exits, after stderr's traceback, so up to a buffer of the run's last
        records (8 KiB; `FLUSHED_RECORDS` lines) comes after the traceback in a log of
        both. Not a record with its own time (`stamped`): a logger's line, which its
        handler flushes as it writes it, was written when it says, not held. Anything
        else (a traceback a handler printed, from where it caught it): one record, the
        batch it died on."""
        if self.event.uncaught and not stamped and not self.in_helper_thread \
                and not self.provisional:
            return FLUSHED_RECORDS
        return 1

    @property
    def cancelled(self) -> bool:
        """Stopped from outside: Ctrl-C, a launcher's death signal, SIGTERM/SIGHUP (a
        scheduler, the owner), torchelastic's `SignalException: Process N got signal: 15`
        (the launcher that received the signal) — not a failure of the run's own."""
        detail = self.event.detail
        return (self.event.kind is EventKind.STOPPED_BY_SIGNAL
                or detail.startswith("KeyboardInterrupt")
                or "SignalException" in detail.partition(":")[0]
                or _STOP_SIGNAL_TEXT.search(detail) is not None)

    @property
    def exit_banner(self) -> bool:
        """A trainer's words as it exits on an exception (Coqui/Mozilla TTS's `! Run is
        kept in <dir>`), printed before the traceback of any exception but Ctrl-C's: with
        no traceback after it, the run was stopped by hand; with one, even cut off, that
        exception is how it ended (see `after_banner`)."""
        return self.event.kind is EventKind.STOPPED_BY_SIGNAL \
            and self.event.detail == EXIT_BANNER

    @property
    def provisional(self) -> bool:
        """Whether the exception that decides this failure is still to be read: an exit
        banner, or the traceback that opened after one."""
        return self.exit_banner or self.event.detail == AFTER_BANNER

    @property
    def in_helper_thread(self) -> bool:
        """The exception escaped a helper thread (see `parsing.thread_failures`): the
        process went on without it."""
        return self.event.kind is EventKind.EXCEPTION and self.event.detail.endswith(IN_THREAD)

    @property
    def traceback(self) -> str:
        return self.event.detail if self.event.kind is EventKind.EXCEPTION else ""


# Records of a run's stdout an 8 KiB buffer holds (its lines mostly over 128 bytes).
FLUSHED_RECORDS = 64

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# An exception that says the process was sent one of those (torch.distributed.elastic's
# `SignalException: Process 123 got signal: 15`), or that its DataLoader workers were:
# `DataLoader worker (pid N) is killed by signal: Terminated.` is the job stopped as a
# whole (a scheduler's or the owner's SIGTERM reaches every process of it); a worker
# killed by `Killed` (SIGKILL) is the kernel's OOM killer instead. `subprocess`'s
# `CalledProcessError: Command '[…]' died with <Signals.SIGTERM: 15>.` is the child the
# script ran, stopped the same way.
_STOP_SIGNAL_TEXT = lazy_re.compile(r"got signal:? (?:SIG(?:INT|TERM|HUP)|15|2|1)\b|"
                                    r"SignalException.*\bSIG(?:INT|TERM|HUP)\b|"
                                    r"killed by signal: (?:Terminated|Interrupt|Hangup)\b|"
                                    r"died with <Signals\.SIG(?:INT|TERM|HUP):")


# A traceback that opened after a trainer's exit banner: an exception other than
# Ctrl-C's, named once its last line is read.
AFTER_BANNER = "an exception other than Ctrl-C (its traceback follows the trainer's exit banner)"


def after_banner(pending: PendingFailure, traceback_start: LogEvent) -> PendingFailure:
    """The failure an exit banner becomes once a traceback opens after it: a crash until
    the traceback's own last line says which exception it was."""
    return PendingFailure(LogEvent(EventKind.EXCEPTION, traceback_start.line, AFTER_BANNER),
                          pending.step, pending.stepped_after)
