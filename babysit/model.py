"""Values that flow from a target, through the rules, to the verdict.

Everything here is a frozen dataclass (or, for the values made per log line, a
`line_value`: frozen to the type checker, slotted at run time) or a closed enum:
targets produce them, the run and the rules read them, the artifact writer
serialises them.
"""

from __future__ import annotations

import signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, TypeVar

from babysit._compat import StrEnum

_T = TypeVar("_T")

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform

    @dataclass_transform(frozen_default=True, field_specifiers=(field,))
    def line_value(cls: type[_T]) -> type[_T]:
        """A frozen dataclass to the type checker: nothing may assign to one."""
else:
    # For the values made once per log line (Record, and the parsers' own): a frozen
    # dataclass's __init__ goes through object.__setattr__ for every field, ~3× the cost
    # of a slotted one, and a busy log makes thousands a second. The type checker still
    # sees them frozen (above), so no code can assign to one.
    line_value = dataclass(slots=True)


class Severity(StrEnum):
    BLOCKER = "blocker"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @property
    def rank(self) -> int:
        """Higher is worse; lets callers sort or take the worst."""
        return {"blocker": 3, "high": 2, "medium": 1, "low": 0}[self.value]


class AnomalyType(StrEnum):
    NAN_INF = "nan-inf"
    OOM = "oom"
    DIVERGENCE = "divergence"
    STALLED = "stalled"
    CRASH = "crash"
    CHECKPOINT_FAILURE = "checkpoint-failure"
    SLOW_THROUGHPUT = "slow-throughput"
    LOSS_SPIKE = "loss-spike"
    GRAD_EXPLOSION = "grad-explosion"
    CUDA_ERROR = "cuda-error"
    NCCL = "nccl"
    EVAL_DEGRADATION = "eval-degradation"
    LR_SCHEDULE = "lr-schedule"
    GPU_IDLE = "gpu-idle"
    PIPELINE_FAILURE = "pipeline-failure"
    TASK_FAILURE = "task-failure"
    JOB_FAILURE = "job-failure"
    CONNECTIVITY = "connectivity"
    LOSS_SCALE = "loss-scale"
    NOT_LEARNING = "not-learning"
    HARDWARE_FAULT = "hardware-fault"
    USER_ALERT = "user-alert"  # one of the user's own [[alerts]]
    DEADLINE = "deadline"
    STRAGGLER = "straggler"  # one rank falls behind the others
    # A metric outside the range its name allows (an accuracy of 113 %): its computation
    # is wrong, so what it says of the run cannot be trusted.
    IMPOSSIBLE_METRIC = "impossible-metric"


class TerminalState(StrEnum):
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    TIMEOUT = "TIMEOUT"
    RUNNING = "RUNNING"
    # The run is over (its process is gone, or it printed its end-of-training summary
    # early), but nothing shows it finished what it set out to do.
    ENDED = "ENDED"


class Decision(StrEnum):
    GO = "GO"
    NO_GO = "NO-GO"
    CONDITIONAL = "CONDITIONAL"


class FixKind(StrEnum):
    """Everything babysit may do, or propose, about a run (the artifact's `actions[].kind`)."""

    RESTART = "restart-crashed-process"
    RESTART_HUNG = "restart-hung-process"
    FREE_GPU = "free-gpu-memory"
    # Only ever with the user's approval:
    ROLLBACK = "rollback-to-checkpoint"
    LOWER_LR = "lower-learning-rate"
    SMALLER_BATCH = "smaller-batch-size"
    CANCEL = "cancel-run"


class Confidence(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class EventKind(StrEnum):
    """Things a log line can say besides metrics."""

    OOM = "oom"
    HOST_KILL = "host-kill"  # SIGKILL / "Killed": usually the kernel's OOM killer
    CUDA_ERROR = "cuda-error"
    HARDWARE_FAULT = "hardware-fault"  # ECC, a GPU off the bus, NVLink, a hardware Xid
    WORKER_KILLED = "worker-killed"  # a DataLoader worker killed by the kernel (SIGKILL)
    NCCL = "nccl"
    TRACEBACK_START = "traceback-start"
    EXCEPTION = "exception"  # the closing `SomeError: message` line of a traceback
    # An exception that ended a helper thread (`Exception in thread X:`): the process
    # goes on without the thread.
    THREAD_FAILED = "thread-failed"
    SEGFAULT = "segfault"
    CHECKPOINT_SAVED = "checkpoint-saved"
    BEST_CHECKPOINT = "best-checkpoint"
    # The run put its best-evaluated weights back before it ended (Keras's EarlyStopping
    # with `restore_best_weights`; detail: the epoch they are from, when it says).
    BEST_RESTORED = "best-restored"
    CHECKPOINT_ERROR = "checkpoint-error"
    DISK_FULL = "disk-full"
    COMPLETED = "completed"
    NEW_STAGE = "new-stage"
    LOSS_SCALE = "loss-scale"  # fp16 overflow: the dynamic loss scale changed (detail: to what)
    LOSS_SCALE_FLOOR = "loss-scale-floor"  # the loss scale hit its minimum: fp16 cannot go on
    STOPPED_BY_SIGNAL = "stopped-by-signal"  # a launcher was told to stop (death signal)
    WORKERS_STOPPED = "workers-stopped"  # a launcher is stopping its workers
    RESTARTED = "restarted"  # a launcher restarted its workers (a new attempt)
    REQUEUED = "requeued"  # the scheduler stopped the job to run it again (Slurm requeue)
    # The run's start-up lines printed again after a failure: someone launched it again
    # into the same log (see parsing.launches).
    LAUNCHED = "launched"
    JOB_STATE = "job-state"  # a scheduler's own word on the job (detail: a TerminalState)
    # The run says it is stuck waiting: ranks that never joined a collective (Horovod's
    # stall inspector), a collective that ran for its whole timeout (NCCL's watchdog).
    STALL = "stall"
    EMPTY_EPOCH = "empty-epoch"  # an epoch ended without an iteration: no data
    ONE_CLASS = "one-class"  # per-class accuracies: one class answered for everything
    CRASH_LOOP = "crash-loop"  # the run started again and again, never trained past its start
    # A tracker's picture of one metric over the whole run (W&B's closing sparkline;
    # detail: the metric's name and its bars' heights, 0-7: parsing/tracker_history).
    HISTORY = "history"


@dataclass(frozen=True)
class LogEvent:
    """One notable line: what kind it is, the line itself, and an extracted detail
    (checkpoint path, exception name) when the line has one."""

    kind: EventKind
    line: str
    detail: str = ""
    # A Python exception that reached the top of the program (its traceback opens at the
    # script's `<module>`): it ended the process, whatever the log shows after it.
    uncaught: bool = False
    # Raised while handling the exception of the traceback above it (Python's `During
    # handling of the above exception, another exception occurred:`).
    chained: bool = False
    # An import that failed while the program was still loading its modules (every frame
    # a module's top level or the import machinery's): the program never began its work.
    at_import: bool = False
    # Every frame of its traceback in installed packages (`site-packages`, the standard
    # library): an exception a library raised and caught within itself, its handler then
    # interrupted (PIL's `fp.fileno()` AttributeError, then a KeyboardInterrupt during
    # its fallback), not the program's own failure.
    library_only: bool = False


@line_value
class Record:
    """What one log line (or one tracker row) told us.

    Fields a line does not carry are None / empty: a metric the run does not report
    is absent, never a made-up zero.
    """

    step: int | None = None
    target_steps: int | None = None
    epoch: float | None = None
    total_epochs: int | None = None
    metrics: Mapping[str, float] = field(default_factory=dict)
    events: tuple[LogEvent, ...] = ()
    rank: int | None = None
    fmt: str = ""
    # Set on records picked out of a long history by the fast scan: they are
    # isolated points, so windowed rules (spikes, trends) must not use them.
    sparse: bool = False
    time: float | None = None  # when the line was written, from its own timestamp
    # What the run says about itself once (its parameter count, tokens per step): not
    # metrics of a step, inputs to the efficiency figures.
    facts: Mapping[str, float] = field(default_factory=dict)
    # The planned total said before was an inner loop's (a bar that came round again):
    # the run's own total is not known.
    target_withdrawn: bool = False
    # Where the line came from, when the target knows and a person needs it to find it
    # (`task model-training` of a pipeline): anomalies the record raises name it.
    source: str = ""
    # Which of several runs, experiments or workers printing into one log the record is
    # (a sweep's `Run: XOR_QFNN_All_fold_1`, an agent's `[035420]` worker): "" for a log
    # of one series. Only the first series' metrics make the run's (parsing/series_labels).
    series: str = ""


@dataclass(frozen=True)
class ExitInfo:
    """How the run's process ended, and how babysit knows."""

    code: int | None  # exit status when it exited normally
    signal: int | None  # the signal that killed it
    source: str  # "own child", "zombie", or "unknown"

    def describe(self) -> str:
        if self.signal is not None:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = f"signal {self.signal}"
            return f"killed by {name}"
        if self.code is not None:
            return f"exited with code {self.code}"
        return "exit status unknown"


def _size(count: int) -> str:
    """A byte count as people say it: `840 KB`, `14.6 MB`, `1.2 GB`."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{count} bytes"


@dataclass(frozen=True)
class Reading:
    """How much of a log babysit understood: the lines it read, those it could place (a
    step, a metric, an event, a bar, a table header...), the metric names it found, and
    what its progress counts — the run's own `step`, the training `record`s babysit
    counted for a log that prints no step, or `none`."""

    lines: int
    lines_read: int
    metrics: tuple[str, ...]
    progress: str
    # Lines babysit's own reading failed on (a bug of babysit's, read past), and the first
    # failure named (`ZeroDivisionError at is_sentences.py:134`).
    lines_failed: int = 0
    failure: str = ""
    # Bytes before the lines counted above that the history scan searched rather than
    # parsed (a long log's first poll: only its last lines are parsed in full).
    searched_bytes: int = 0

    @property
    def share(self) -> float | None:
        return self.lines_read / self.lines if self.lines else None

    @property
    def found_progress(self) -> bool:
        return self.progress != "none" or bool(self.metrics)

    def to_json(self) -> dict[str, object]:
        share = self.share
        out: dict[str, object] = {
            "lines": self.lines, "lines_understood": self.lines_read,
            "share_understood": None if share is None else round(share, 3),
            "metrics_found": list(self.metrics), "progress": self.progress}
        if self.lines_failed:
            out["lines_failed"] = self.lines_failed
            out["failure"] = self.failure
        if self.searched_bytes:
            out["bytes_searched"] = self.searched_bytes
        return out

    def describe(self) -> str:
        """`read 96% of 1,204 lines: step; loss, lr, grad_norm`"""
        share = self.share
        if share is None:
            return "no lines read yet"
        names = ", ".join(self.metrics[:6]) + (" …" if len(self.metrics) > 6 else "")
        progress = {"step": "its own step", "record": "no step printed: records counted",
                    "epoch": "its own epoch, no step printed",
                    "none": "no progress counter found"}[self.progress]
        what = f"{progress}; {names}" if names else f"{progress}; no metric found"
        said = f"understood {share:.0%} of {self.lines:,} lines ({what})"
        if self.searched_bytes:
            # (the share is of the lines parsed in full, not of the whole log: said so)
            said = (f"understood {share:.0%} of the last {self.lines:,} lines, parsed in full "
                    f"({what}); the {_size(self.searched_bytes)} before them were searched for "
                    f"failures, non-finite values, saves and endings")
        if self.lines_failed:
            said += (f"; babysit failed on {self.lines_failed:,} line(s) and read past them "
                     f"({self.failure}: a bug in babysit, please report it)")
        return said


@dataclass(frozen=True)
class Anomaly:
    type: AnomalyType
    severity: Severity
    step: int | None
    description: str
    key: str = ""
    action_taken: str = "none"
    resolved: bool = False


class ActionStatus(StrEnum):
    APPLIED = "applied"
    SKIPPED = "skipped"
    NEEDS_APPROVAL = "needs-approval"
    FAILED = "failed"


@dataclass(frozen=True)
class Action:
    kind: str
    status: ActionStatus
    reason: str
    at: str  # ISO-8601 UTC


@dataclass(frozen=True)
class Finding:
    id: str
    severity: Severity
    title: str
    description: str
    fix: str


@dataclass(frozen=True)
class Verdict:
    """Everything the artifact and the final summary need, already decided."""

    run_id: str
    target: str
    target_type: str
    terminal_state: TerminalState
    decision: Decision
    confidence: Confidence
    summary: str
    total_steps: int | None
    target_steps: int | None
    final_metrics: Mapping[str, float]
    best_checkpoint: str | None
    anomalies: tuple[Anomaly, ...]
    findings: tuple[Finding, ...]
    next_commands: tuple[str, ...]
    actions: tuple[Action, ...]
    duration_seconds: float
    stop_reason: str
    unreachable: str | None = None  # why the target could not be read at all
    # MFU, tokens/s and goodput, with their inputs (core.efficiency_meter.Efficiency.to_json).
    efficiency: Mapping[str, object] | None = None
    reading: Reading | None = None  # how much of the log babysit understood


def utc_text(moment: datetime) -> str:
    """A moment as ISO-8601 UTC ending in `Z`: the one spelling of a time in everything
    babysit writes (the verdict, every JSON event, the dashboard's API)."""
    # (A moment without a zone is UTC already: a clock's; never the machine's local time.)
    moment = moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None \
        else moment.astimezone(timezone.utc)
    return moment.isoformat().replace("+00:00", "Z")
