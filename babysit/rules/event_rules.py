"""Which anomaly each kind of log event raises, and with what title: a table.
(How serious each anomaly type is, and its fix, are in `rules.catalog`.)"""

from __future__ import annotations

from dataclasses import dataclass

from babysit.model import AnomalyType, EventKind, Severity


@dataclass(frozen=True)
class EventRule:
    type: AnomalyType
    title: str
    severity: Severity | None = None  # the type's own (rules.catalog) unless given
    key: str = ""  # apart from the type's other findings (each resolves on its own)


EVENT_RULES: dict[EventKind, EventRule] = {
    EventKind.OOM: EventRule(AnomalyType.OOM, "out of memory"),
    EventKind.HOST_KILL: EventRule(
        AnomalyType.OOM,
        "process killed with SIGKILL and no traceback: most likely the host's OOM killer"),
    EventKind.CUDA_ERROR: EventRule(AnomalyType.CUDA_ERROR, "CUDA error"),
    EventKind.HARDWARE_FAULT: EventRule(
        AnomalyType.HARDWARE_FAULT,
        "hardware fault (a GPU's ECC, Xid, bus or NVLink error, or its node failed)"),
    EventKind.WORKER_KILLED: EventRule(
        AnomalyType.OOM,
        "a DataLoader worker was killed by the kernel (SIGKILL): host memory (or /dev/shm) "
        "ran out"),
    # Not the process's end: its severity is the consequence's (a run that waits on the
    # thread hangs, which the stall rule catches); training after it resolves it.
    EventKind.THREAD_FAILED: EventRule(
        AnomalyType.CRASH,
        "an exception ended a helper thread (the process goes on without it)",
        Severity.HIGH, key="thread"),
    # Nothing trains however long the run goes on (parsing/empty_epochs.py).
    EventKind.EMPTY_EPOCH: EventRule(
        AnomalyType.NOT_LEARNING,
        "not learning: an epoch ran no iteration (the data loader yields nothing: an empty "
        "or fully filtered dataset, batches larger than any bucket)", Severity.BLOCKER),
    # A classifier whose per-class accuracies show it answers one class for everything
    # (parsing/class_accuracies.py); a later evaluation that tells them apart resolves it.
    EventKind.ONE_CLASS: EventRule(
        AnomalyType.NOT_LEARNING,
        "not learning: the model answers one class for every input", Severity.BLOCKER,
        key="one class"),
    # Every start of the run dies before it trains (parsing/start_loops.py); a start that
    # gets through resolves it.
    EventKind.CRASH_LOOP: EventRule(
        AnomalyType.CRASH,
        "crash loop: the run was started again and again and no start trained past its "
        "first record (each start died or was stopped before it trained)",
        Severity.HIGH, key="crash loop"),
    EventKind.NCCL: EventRule(AnomalyType.NCCL,
                              "collective communication (NCCL/Gloo) error or timeout"),
    # Training that moves on after it resolves it (a stall recovers on progress).
    EventKind.STALL: EventRule(AnomalyType.STALLED,
                               "the run reports it is stuck waiting on other ranks"),
    EventKind.CHECKPOINT_ERROR: EventRule(AnomalyType.CHECKPOINT_FAILURE,
                                          "checkpoint save failed"),
    EventKind.DISK_FULL: EventRule(AnomalyType.CHECKPOINT_FAILURE,
                                   "disk full or quota exceeded: checkpoints cannot be written"),
    EventKind.LOSS_SCALE_FLOOR: EventRule(
        AnomalyType.LOSS_SCALE,
        "the fp16 loss scale reached its minimum: every step overflows, nothing is learned"),
}

# Exceptions whose text already names a cause with its own anomaly type.
CAUSE_BY_EXCEPTION: tuple[tuple[str, AnomalyType], ...] = (
    # Before "CUDA error": `CUDA error: uncorrectable ECC error encountered` is hardware.
    ("uncorrectable ECC", AnomalyType.HARDWARE_FAULT),
    ("fallen off the bus", AnomalyType.HARDWARE_FAULT),
    ("is killed by signal: Killed", AnomalyType.OOM),
    ("OutOfMemory", AnomalyType.OOM),
    ("out of memory", AnomalyType.OOM),
    ("can't allocate memory", AnomalyType.OOM),
    ("not enough memory", AnomalyType.OOM),
    ("CUDA error", AnomalyType.CUDA_ERROR),
    ("device-side assert", AnomalyType.CUDA_ERROR),
    ("NCCL", AnomalyType.NCCL),
    ("DistBackendError", AnomalyType.NCCL),
    ("Gloo", AnomalyType.NCCL),
    # A NaN guard that stopped the loop (parsing.nonfinite_words.GUARD_STOP): the NaN is
    # the story, the process did not crash.
    ("a NaN guard stopped training", AnomalyType.NAN_INF),
)
