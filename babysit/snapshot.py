"""What a target sees of a run in one poll: a `Snapshot` of three parts — what the run
wrote (its log, or a tracker's metric rows), its process and GPUs, and what its service
says of it — and the values they carry. Targets make them; the run reads them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from babysit.model import AnomalyType, ExitInfo, Reading, Record, Severity, TerminalState


@dataclass(frozen=True)
class ProcessView:
    """What the target saw of the run's process this poll."""

    pid: int
    alive: bool
    status: str  # psutil's: running, sleeping, disk-sleep, zombie, stopped...
    command: str  # redacted command line, for people
    tree: tuple[int, ...] = ()  # the process and its descendants
    cpu_seconds: float | None = None  # user+system time of the whole tree
    exit: ExitInfo | None = None
    oom_killed: bool | None = None  # the kernel log names it (None: could not tell)


@dataclass(frozen=True)
class ServiceAnomaly:
    """A problem the run's service reports itself (a cloud job or one of a pipeline's
    tasks failed, ERROR entries in its logs), with the cause it points to."""

    type: AnomalyType
    severity: Severity
    description: str
    key: str = ""


@dataclass(frozen=True)
class TimeLimit:
    """The run's time limit as its scheduler counts it (Slurm's TimeLimit, a Kubernetes
    Job's activeDeadlineSeconds, a Vertex AI job's scheduling.timeout)."""

    limit_seconds: float  # the whole allowance
    elapsed_seconds: float  # used so far, by the scheduler's own count
    source: str  # for people: "Slurm TimeLimit"
    # How a person extends the limit or resumes past it (never run by babysit). `{minutes}`
    # and `{seconds}` in them stand for the limit the run needs, filled in when it is known.
    commands: tuple[str, ...] = ()

    @property
    def left_seconds(self) -> float:
        return max(0.0, self.limit_seconds - self.elapsed_seconds)


@dataclass(frozen=True)
class GpuSample:
    """The run's GPUs at one poll, as a process probe or a tracker's system metrics saw
    them: a line for people, utilisation and memory (None where the source does not say)."""

    text: str
    util_percent: float | None = None
    mem_used_mib: float | None = None
    mem_total_mib: float | None = None
    gpus: tuple[int, ...] = ()  # device indices
    # MiB each of the run's PIDs holds; None when the source sees no processes (a tracker).
    process_mib: Mapping[int, float] | None = None

    def as_json(self) -> dict[str, object]:
        """As the JSON lines and the dashboard carry it."""
        out: dict[str, object] = {"text": self.text, "util_percent": self.util_percent,
                                  "mem_used_mib": self.mem_used_mib,
                                  "mem_total_mib": self.mem_total_mib, "gpus": list(self.gpus)}
        if self.process_mib is not None:
            out["process_mib"] = {str(pid): mib for pid, mib in self.process_mib.items()}
        return out


@dataclass(frozen=True)
class LogSnapshot:
    """What the run wrote since the previous poll (its log, or a tracker's metric rows)
    and what babysit made of it."""

    records: tuple[Record, ...] = ()
    new_bytes: int = 0
    new_lines: int = 0
    formats: tuple[str, ...] = ()
    # Seconds since the source last changed (file mtime), when the target knows it.
    quiet_for: float | None = None
    # The records' steps are indices counted from 0 (a tracker's own numbering, kept so
    # anomalies match its charts): the steps completed are the last step + 1. False
    # when a step is already a count of steps completed (a log's `step 30/30`).
    steps_from_zero: bool = False
    # What the run was doing at the end of what was read: "setup" (no step yet),
    # "train", "eval" or "save". Stalls get a longer allowance during the last three.
    phase: str | None = None
    lr_schedule: str | None = None  # the scheduler the run's config names, when it does
    reading: Reading | None = None  # how much of the log was understood, so far
    # Whether a process on this machine holds the log open for writing; None when it was
    # not looked for (the log was written lately) or could not be told.
    writer_on_host: bool | None = None


@dataclass(frozen=True)
class ProcessSnapshot:
    """What the target saw of the run's process and its GPUs."""

    # False when the target knows the run's process is gone; None when it cannot tell.
    alive: bool | None = None
    view: ProcessView | None = None
    gpu: GpuSample | None = None


@dataclass(frozen=True)
class ServiceSnapshot:
    """What a tracker or a cloud service says of the run itself."""

    # Trackers (W&B, MLflow) report the run's state themselves.
    run_state: TerminalState | None = None  # None: running, or not known
    run_state_detail: str = ""  # e.g. "W&B state: crashed"
    run_state_source: str = ""  # who reported it, for people: "MLflow", "W&B"
    evidence_url: str | None = None  # the run's page, kept as evidence
    # Cloud services (Vertex AI) describe the run themselves: a block of lines for the
    # full reports (`Pipeline: …`, `State: RUNNING | Elapsed: …`, `Tasks: …`) and one
    # line for each poll.
    status: tuple[str, ...] = ()
    headline: str = ""
    raised: tuple[ServiceAnomaly, ...] = ()
    # The service's own state, in words (job state and every task's): a change resets
    # the backoff, as the spec asks for cloud state changes.
    service_state: str | None = None
    # The service shows the run doing something this poll (new log entries, a task
    # moving, a job still queued): not stuck, whether or not a step was seen.
    activity: bool = False
    commands: tuple[str, ...] = ()  # next steps the service offers (describe, logs, console)
    cancel_command: str | None = None  # how a person cancels the run (never run by babysit)
    time_limit: TimeLimit | None = None  # when the scheduler will end the run, if it will


@dataclass(frozen=True)
class Snapshot:
    """One observation of a target: everything new since the previous poll, in three
    parts (each empty when the target has nothing of that kind to say)."""

    log: LogSnapshot = LogSnapshot()
    process: ProcessSnapshot = ProcessSnapshot()
    service: ServiceSnapshot = ServiceSnapshot()
    notices: tuple[str, ...] = ()
    stall_hint: str = ""  # added to a stall report: why the source may mislead
    # Set when the main source could not be reached and a fallback answered instead.
    degraded: str | None = None
