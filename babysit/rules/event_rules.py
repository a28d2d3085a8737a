"""What each log event means as an anomaly, and what to do about it: a table."""

from __future__ import annotations

from dataclasses import dataclass

from babysit.model import AnomalyType, EventKind, Severity


@dataclass(frozen=True)
class EventRule:
    type: AnomalyType
    severity: Severity
    title: str


EVENT_RULES: dict[EventKind, EventRule] = {
    EventKind.OOM: EventRule(AnomalyType.OOM, Severity.BLOCKER, "out of memory"),
    EventKind.HOST_KILL: EventRule(
        AnomalyType.OOM, Severity.BLOCKER,
        "process killed with SIGKILL and no traceback: most likely the host's OOM killer"),
    EventKind.CUDA_ERROR: EventRule(AnomalyType.CUDA_ERROR, Severity.BLOCKER, "CUDA error"),
    EventKind.NCCL: EventRule(AnomalyType.NCCL, Severity.BLOCKER,
                              "collective communication (NCCL/Gloo) error or timeout"),
    EventKind.CHECKPOINT_ERROR: EventRule(AnomalyType.CHECKPOINT_FAILURE, Severity.MEDIUM,
                                          "checkpoint save failed"),
    EventKind.DISK_FULL: EventRule(AnomalyType.CHECKPOINT_FAILURE, Severity.MEDIUM,
                                   "disk full or quota exceeded: checkpoints cannot be written"),
}

# Exceptions whose text already names a cause with its own anomaly type.
CAUSE_BY_EXCEPTION: tuple[tuple[str, AnomalyType], ...] = (
    ("OutOfMemory", AnomalyType.OOM),
    ("out of memory", AnomalyType.OOM),
    ("can't allocate memory", AnomalyType.OOM),
    ("not enough memory", AnomalyType.OOM),
    ("CUDA error", AnomalyType.CUDA_ERROR),
    ("device-side assert", AnomalyType.CUDA_ERROR),
    ("NCCL", AnomalyType.NCCL),
    ("DistBackendError", AnomalyType.NCCL),
    ("Gloo", AnomalyType.NCCL),
)

FIXES: dict[AnomalyType, str] = {
    AnomalyType.NAN_INF: "Roll back to the last checkpoint before the first non-finite value "
                         "and resume with a lower learning rate (or bf16 instead of fp16, "
                         "gradient clipping); inspect the batch at that step.",
    AnomalyType.OOM: "Reduce the per-device batch size (keep the global batch with gradient "
                     "accumulation), enable gradient checkpointing or mixed precision; for a "
                     "host OOM kill, lower data-loader workers or host-side buffers.",
    AnomalyType.DIVERGENCE: "Lower the learning rate or lengthen warm-up, enable gradient "
                            "clipping, and resume from a checkpoint before the rise.",
    AnomalyType.LOSS_SPIKE: "Check the batch at that step for bad data; if spikes repeat, lower "
                            "the learning rate or clip gradients.",
    AnomalyType.STALLED: "Check that the process is alive and not blocked (data loading, a "
                         "collective waiting on a dead rank, a full disk); py-spy dump helps.",
    AnomalyType.CRASH: "Read the traceback; fix the cause before restarting, since a Python "
                       "exception in the training code will happen again.",
    AnomalyType.CUDA_ERROR: "Re-run with CUDA_LAUNCH_BLOCKING=1 to locate the failing kernel; "
                            "device-side asserts are usually out-of-range labels or indices.",
    AnomalyType.NCCL: "Check every rank's log for the first failure (one dead or slow rank "
                      "times the others out); NCCL_DEBUG=INFO shows the failing link.",
    AnomalyType.GRAD_EXPLOSION: "Enable or tighten gradient clipping and lower the learning "
                                "rate; look for bad samples at that step.",
    AnomalyType.CHECKPOINT_FAILURE: "Free disk space or point checkpoints at a bigger volume; "
                                    "the newest good checkpoint is the one to keep.",
    AnomalyType.SLOW_THROUGHPUT: "Look for data-loader starvation, thermal or power throttling, "
                                 "a noisy neighbour, or extra work (evaluation, logging) per step.",
    AnomalyType.EVAL_DEGRADATION: "Likely overfitting or an eval/train mismatch: keep the "
                                  "checkpoint with the best eval score, add regularisation or "
                                  "stop early.",
    AnomalyType.CONNECTIVITY: "Check the network path or credentials to the target; this says "
                              "nothing about the run itself.",
}
